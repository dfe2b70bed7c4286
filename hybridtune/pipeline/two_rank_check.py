"""Two simulated ranks against two real ones, on this machine as a SimGrid platform calibrated here.

The platform's link is the pairwise exchange the variants' allgathers make on 2 ranks, measured now
and fitted piecewise (Hockney, its protocol switch where a ping-pong switches): its links carry the
first piece, SMPI's latency and bandwidth factors by message size turn it into the second from the
switch on. The same variants then run in rounds, really (mpiexec) and benched by SMPI.
"""

from __future__ import annotations

from pathlib import Path

from hybridtune.describe.configuration import Configuration
from hybridtune.describe.platform import load_platform
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import build_pool
from hybridtune.measure.comm_bench import comm_run, pingpong
from hybridtune.measure.runner import MeasureOptions, measure
from hybridtune.measure.tasks import plan_tasks, stable_step
from hybridtune.pipeline.comm_models import EXCHANGE_SIZES, SWITCH_SIZES
from hybridtune.pipeline.smpi_agreement import median
from hybridtune.predict.collectives import fit_exchange, protocol_switch
from hybridtune.predict.hockney import fit_hockney
from hybridtune.simulate.smpi import build_simulated
from hybridtune.simulate.smpi_run import simulate

ROUNDS = 5           # real and simulated 2-rank runs of a variant, one after the other
STEPS = 20
WITHIN = 0.15        # the error the 2-rank simulation is held to


def _platform_text(first) -> str:
    return ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
            "<!-- This machine as two hosts, from its 2-rank exchange "
            "(pipeline/two_rank_check.py) -->\n<platform version=\"4.1\">\n"
            f"  <cluster id=\"host\" prefix=\"rank-\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" "
            f"bw=\"{1 / first.beta_s_per_byte:.6g}Bps\" lat=\"{first.alpha_s / 2:.6g}s\"/>\n"
            "</platform>\n")


def host_platform_file(path: Path) -> tuple[tuple, dict]:
    """This machine as a two-host platform written to path: (its smpirun options, the link's
    fit)."""
    probe = pingpong(SWITCH_SIZES, reps=15, target_s=0.01, ranks=2)
    switch = protocol_switch(fit_hockney([(p.bytes, p.median_s) for p in probe.points]))
    run = comm_run("allgather", EXCHANGE_SIZES, reps=15, target_s=0.01, ranks=2)
    fit = fit_exchange("mpi_allgather", run, switch).fit
    first, last = fit.pieces[0], fit.pieces[-1]
    path.write_text(_platform_text(first))
    options = ()
    if len(fit.pieces) > 1:
        options = (f"--cfg=smpi/lat-factor:0:1;{last.from_bytes}:"
                   f"{last.alpha_s / first.alpha_s:.6g}",
                   f"--cfg=smpi/bw-factor:0:1;{last.from_bytes}:"
                   f"{first.beta_s_per_byte / last.beta_s_per_byte:.6g}")
    return options, {
        "pieces": [[p.from_bytes, p.alpha_s, p.beta_s_per_byte] for p in fit.pieces],
        "fit_error": fit.fit_error, "held_out_error": fit.held_out_error, "options": options}


def _rounds(task, library, config, platform, options: tuple, measuring) -> dict:
    """ROUNDS real and simulated runs one after the other (drift falls on both alike)."""
    reals, runs, real = [], [], None
    for _ in range(ROUNDS):
        real = measure(task, measuring)
        reals.append(real.median_s if real.status == "ok" else None)
        runs.append(simulate(library, config.n, 2, platform, STEPS,
                             stable_step(config.ivp, config.n), mode="benched", options=options))
    simulated = median([r.seconds_per_step for r in runs if r.status == "ok"])
    row = {"ivp": config.ivp.name, "n": config.n, "real_s": median(reals), "real_runs": reals,
           "real_status": real.status, "simulated_s": simulated,
           "simulated_runs": [r.seconds_per_step for r in runs]}
    if row["real_s"] and simulated:
        row["error"] = simulated / row["real_s"] - 1
    return row


def _generated(scenario, variant, config):
    skeleton = next(s for s in scenario.skeletons if s.name == variant.skeleton)
    halo = config.ivp.halo(config.n) if "mpi_neighbour_exchange" in \
        skeleton.exchange_kinds() else None
    return generate_variant(variant, skeleton, scenario.template_map, config.method, config.ivp,
                            None, halo)


def two_rank_check(scenario, count: int, platform_path: Path, on_row=None) -> dict:
    """`count` MPI variants spread over the pool, per IVP at its first size: 2 real ranks against
    2 simulated ones on this machine as a platform (written to platform_path)."""
    options, link = host_platform_file(platform_path)
    platform = load_platform(platform_path)
    method = scenario.methods[0]
    mpi = {s.name for s in scenario.skeletons if s.is_mpi}
    pool = [v for v in build_pool(scenario.skeletons, scenario.template_map, method).variants
            if v.skeleton in mpi]
    chosen = pool[::max(1, len(pool) // count)][:count]
    measuring, rows = MeasureOptions(budget_s=2.0), []
    for ivp in scenario.ivps:
        config = Configuration(method, ivp, scenario.sizes.for_ivp(ivp)[0], 1, 2)
        for variant, task in zip(chosen, plan_tasks(scenario, config, chosen, measuring)):
            library = build_simulated(_generated(scenario, variant, config))
            rows.append({**_rounds(task, library, config, platform, options, measuring),
                         "variant": variant.id})
            if on_row:
                on_row(rows[-1])
    errors = [abs(r["error"]) for r in rows if "error" in r]
    return {"platform": str(platform_path), "link": link, "rows": rows,
            "within_15": sum(e <= WITHIN for e in errors), "compared": len(errors),
            "error_median": median(errors)}
