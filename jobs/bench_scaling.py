"""Validation of the scaling predictions beyond this machine: the analytic step (ECM compute injected, platform exchanges) against SMPI's simulation of the same variants, simulated 2 ranks against real ones, PMNF fits against Extra-P's, and one 256-rank simulation's cost.

Part 1: scenarios/mpi.yaml's variants (the 3 predicted fastest at each rank count and the fastest of
each skeleton form, each then simulated at every rank count where it runs) on 1, 2, 4, ... 64
simulated ranks of each platform file, strong scaling near n = 20000; the communication and
synchronisation time (simulated step minus the injected compute) against the analytic one, and the
fastest variant of the two at each P.
Part 2: simulated 2 ranks (the real computation timed by SMPI, this machine as a platform calibrated
from its 2-rank exchange) against 2 real ranks (mpiexec), the same variants, in rounds one after the
other.
Part 3: leading PMNF terms, ours and Extra-P's, on synthetic sets of known terms, on the simulated
strong-scaling curves of part 1 and on measured one-rank times over 6 sizes.
Part 4: one variant on 256 simulated ranks of the fat tree at n = 16,777,216, 10 steps: wall time and
peak memory. Writes data/bench/scaling.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform as host_platform
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hybridtune.describe.configuration import Configuration                 # noqa: E402
from hybridtune.describe.loader import load                                 # noqa: E402
from hybridtune.describe.platform import load_platform                      # noqa: E402
from hybridtune.pipeline.comm_models import EXCHANGE_SIZES, SWITCH_SIZES        # noqa: E402
from hybridtune.predict.collectives import fit_exchange, protocol_switch    # noqa: E402
from hybridtune.measure.comm_bench import comm_run, pingpong                # noqa: E402
from hybridtune.predict.hockney import fit_hockney                          # noqa: E402
from hybridtune.pipeline.offline_stages import predict_scenario                        # noqa: E402
from hybridtune.pipeline.scaling_studies import communication                           # noqa: E402
from hybridtune.pipeline.simulated_scaling import simulate_scaling                     # noqa: E402
from hybridtune.generate.cvariant import generate_variant                   # noqa: E402
from hybridtune.generate.pool import build_pool                             # noqa: E402
from hybridtune.measure.provenance import hardware_identity                 # noqa: E402
from hybridtune.measure.runner import MeasureOptions, measure               # noqa: E402
from hybridtune.measure.tasks import plan_tasks, stable_step                # noqa: E402
from hybridtune.predict.extrap_adapter import fit_extrap                    # noqa: E402
from hybridtune.predict.pmnf import fit_pmnf                                # noqa: E402
from hybridtune.simulate.smpi import build_simulated                         # noqa: E402
from hybridtune.simulate.smpi_run import simulate                           # noqa: E402
from hybridtune.store import Store                                          # noqa: E402

OUT = ROOT / "data" / "bench" / "scaling.json"
STORE = ROOT / "data" / "bench" / "scaling.h5"
PLATFORMS = ["data/platforms/fat-tree-100g.xml", "data/platforms/ethernet-10g.xml"]
ROUNDS = 5          # real and simulated 2-rank runs of a variant, one after the other
TIE = 0.001         # variants this close to SMPI's fastest count as tied with it
SYNTHETIC = {"p": lambda p: 3 + 0.5 * p, "p * log2(p)": lambda p: 1 + 0.2 * p * np.log2(p),
             "log2(p)": lambda p: 2 + 0.7 * np.log2(p), "p^2": lambda p: 1 + 0.01 * p ** 2,
             "p^(1/2)": lambda p: 1 + 0.5 * p ** 0.5, "p^-1": lambda p: 0.07 + 1.9 / p}


def _median(values) -> float | None:
    values = [v for v in values if v is not None and np.isfinite(v)]
    return statistics.median(values) if values else None


def platforms_part(scenario, store, ranks_max: int, shortlist: int) -> dict:
    out = {}
    for path in PLATFORMS:
        started = time.time()
        points, note = simulate_scaling(scenario, path, ranks_max, store, shortlist=shortlist,
                                        per_skeleton=True,
                                        on_point=lambda p: print(
                                            f"  {Path(path).stem} {p.ivp} P={p.ranks} {p.variant}: "
                                            f"predicted {p.predicted_s:.3e} simulated "
                                            f"{p.simulated_s:.3e} ({p.status})", flush=True))
        ok = [p for p in points if p.status == "ok"]
        errors = [abs(p.predicted_comm_s / p.simulated_comm_s - 1) for p in ok
                  if p.ranks > 1 and p.simulated_comm_s > 0]
        picks = []
        for key in sorted({(p.ivp, p.ranks) for p in ok}):
            here = [p for p in ok if (p.ivp, p.ranks) == key]
            by_model = min(here, key=lambda p: (p.predicted_s, p.variant))
            by_smpi = min(here, key=lambda p: (p.simulated_s, p.variant))
            close = abs(by_model.simulated_s / by_smpi.simulated_s - 1)
            ties = sum(p.simulated_s <= by_smpi.simulated_s * (1 + TIE) for p in here) - 1
            picks.append({"ivp": key[0], "ranks": key[1], "candidates": len(here),
                          "within_0.1%_of_smpi_best": ties, "analytic": by_model.variant,
                          "smpi": by_smpi.variant, "same": by_model.variant == by_smpi.variant,
                          "analytic_pick_slower_by": close})
        out[Path(path).stem] = {
            "platform": path, "note": note, "wall_s": time.time() - started,
            "points": [p.as_json() for p in points], "failed": len(points) - len(ok),
            "comm_error_median": _median(errors), "comm_error_max": max(errors, default=None),
            "comm_within_20": sum(e <= 0.20 for e in errors), "comm_compared": len(errors),
            "same_best": sum(p["same"] for p in picks), "best_compared": len(picks),
            "analytic_pick_slower_max": max((p["analytic_pick_slower_by"] for p in picks),
                                            default=None),
            "analytic_pick_within_1pct": sum(p["analytic_pick_slower_by"] <= 0.01 for p in picks),
            "picks": picks}
        print(f"{Path(path).stem}: communication within 20% in {out[Path(path).stem]['comm_within_20']}"
              f" of {len(errors)}; same best in {out[Path(path).stem]['same_best']} of {len(picks)}",
              flush=True)
    return out


def host_platform_file() -> tuple[Path, tuple, dict]:
    """A two-host platform of this machine and its smpirun options, calibrated as SMPI is: from
    the pairwise exchange the variants' allgathers make on 2 ranks, measured now and fitted
    piecewise (Hockney, its protocol switch where a ping-pong switches). Its links carry the
    first piece; SMPI's latency and bandwidth factors, by message size, turn it into the second
    from the switch on. For the 2-rank check only."""
    probe = pingpong(SWITCH_SIZES, reps=15, target_s=0.01, ranks=2)
    switch = protocol_switch(fit_hockney([(p.bytes, p.median_s) for p in probe.points]))
    run = comm_run("allgather", EXCHANGE_SIZES, reps=15, target_s=0.01, ranks=2)
    fit = fit_exchange("mpi_allgather", run, switch).fit
    first, last = fit.pieces[0], fit.pieces[-1]
    path = ROOT / "data" / "bench" / "host-platform.xml"
    path.write_text(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<!-- This machine as two hosts, from its 2-rank exchange (jobs/bench_scaling.py) -->\n"
        "<platform version=\"4.1\">\n"
        f"  <cluster id=\"host\" prefix=\"rank-\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" "
        f"bw=\"{1 / first.beta_s_per_byte:.6g}Bps\" lat=\"{first.alpha_s / 2:.6g}s\"/>\n"
        "</platform>\n")
    options = ()
    if len(fit.pieces) > 1:
        options = (f"--cfg=smpi/lat-factor:0:1;{last.from_bytes}:"
                   f"{last.alpha_s / first.alpha_s:.6g}",
                   f"--cfg=smpi/bw-factor:0:1;{last.from_bytes}:"
                   f"{first.beta_s_per_byte / last.beta_s_per_byte:.6g}")
    return path, options, {
        "pieces": [[p.from_bytes, p.alpha_s, p.beta_s_per_byte] for p in fit.pieces],
        "fit_error": fit.fit_error, "held_out_error": fit.held_out_error, "options": options}


def two_ranks_part(store, count: int) -> dict:
    scenario = load(ROOT / "scenarios" / "mpi.yaml", "scenario")
    path, options, link = host_platform_file()
    platform = load_platform(path)
    method = scenario.methods[0]
    pool = build_pool(scenario.skeletons, scenario.template_map, method).variants
    skeletons = {s.name: s for s in scenario.skeletons}
    rows = []
    measuring = MeasureOptions(budget_s=2.0)
    for ivp in scenario.ivps:
        n = scenario.sizes.for_ivp(ivp)[0]
        config = Configuration(method, ivp, n, 1, 2)
        chosen = [v for v in pool if skeletons[v.skeleton].is_mpi][::max(1, len(pool) // count)]
        chosen = chosen[:count]
        tasks = plan_tasks(scenario, config, chosen, measuring)
        for variant, task in zip(chosen, tasks):
            halo = ivp.halo(n) if "mpi_neighbour_exchange" in \
                skeletons[variant.skeleton].exchange_kinds() else None
            library = build_simulated(generate_variant(variant, skeletons[variant.skeleton],
                                                       scenario.template_map, method, ivp,
                                                       None, halo))
            reals, runs = [], []
            for _ in range(ROUNDS):       # interleaved: drift falls on both alike
                real = measure(task, measuring)
                reals.append(real.median_s if real.status == "ok" else None)
                runs.append(simulate(library, n, 2, platform, 20, stable_step(ivp, n),
                                     mode="benched", options=options))
            simulated = _median([r.seconds_per_step for r in runs if r.status == "ok"])
            row = {"ivp": ivp.name, "n": n, "variant": variant.id, "real_s": _median(reals),
                   "real_runs": reals, "real_status": real.status,
                   "simulated_s": simulated, "simulated_runs": [r.seconds_per_step for r in runs]}
            if row["real_s"] and simulated:
                row["error"] = simulated / row["real_s"] - 1
            rows.append(row)
            print(f"  2 ranks {ivp.name} {variant.id}: real {row['real_s']} simulated {simulated}",
                  flush=True)
    errors = [abs(r["error"]) for r in rows if "error" in r]
    return {"platform": str(path.relative_to(ROOT)), "link": link, "rows": rows,
            "within_15": sum(e <= 0.15 for e in errors), "compared": len(errors),
            "error_median": _median(errors)}


def _agree(points, negative: bool) -> dict:
    """Both fits of the same points; ours of each point's mean, as Extra-P models the mean of
    a point's repetitions."""
    ours = fit_pmnf([(x, float(np.mean(y))) for x, y in points], negative=negative)
    theirs = fit_extrap(points, negative=negative)
    return {"ours": ours.leading, "extrap": theirs.leading,
            "same": ours.leading == theirs.leading, "ours_model": ours.text(),
            "extrap_model": theirs.text}


def pmnf_part(platform_results: dict, measured_sets: list) -> dict:
    rng = np.random.default_rng(1)
    ps = np.array([2, 4, 8, 16, 32, 64, 128, 256])
    synthetic = []
    for term, law in SYNTHETIC.items():
        for seed in range(10):
            noise = 1 + 0.02 * rng.standard_normal((len(ps), 5))
            points = [(int(p), list(law(p) * noise[i])) for i, p in enumerate(ps)]
            result = _agree(points, negative=term == "p^-1")
            result.update({"true": term, "seed": seed,
                           "ours_right": result["ours"] == term,
                           "extrap_right": result["extrap"] == term})
            synthetic.append(result)
    simulated = []
    for name, part in platform_results.items():
        curves: dict = {}
        for p in part["points"]:
            if p["status"] == "ok":
                curves.setdefault((p["ivp"], p["variant"]), []).append((p["ranks"], p["simulated_s"]))
        for (ivp, variant), points in sorted(curves.items()):
            if len(points) >= 5:
                simulated.append({"platform": name, "ivp": ivp, "variant": variant,
                                  **_agree(sorted(points), negative=True)})
    measured = [{"set": label, **_agree(points, negative=False)} for label, points in measured_sets]
    extrapolated = extrapolations(platform_results)
    return {
        "synthetic": synthetic,
        "synthetic_ours_right": sum(r["ours_right"] for r in synthetic),
        "synthetic_extrap_right": sum(r["extrap_right"] for r in synthetic),
        "synthetic_count": len(synthetic),
        "simulated": simulated, "simulated_same": sum(r["same"] for r in simulated),
        "measured": measured, "measured_same": sum(r["same"] for r in measured),
        "same_on_simulated_and_measured": (sum(r["same"] for r in simulated + measured),
                                           len(simulated) + len(measured)),
        "extrapolated": extrapolated,
        "extrapolation_summary": {
            "sets": len(extrapolated),
            "empirical_error_median": _median([abs(e["empirical_error"]) for e in extrapolated]),
            "analytic_error_median": _median([abs(e["analytic_error"]) for e in extrapolated]),
            "disagree": sum(e["disagree"] for e in extrapolated)}}


def extrapolations(platform_results: dict, last: int = 64, disagree: float = 0.20) -> list:
    """Each simulated strong-scaling curve's PMNF model fitted below `last` ranks, extrapolated to
    it, beside the analytic prediction there; both judged by SMPI's step at `last`, and the pair
    named where they differ by more than `disagree`."""
    out = []
    for name, part in platform_results.items():
        curves: dict = {}
        for p in part["points"]:
            if p["status"] == "ok":
                curves.setdefault((p["ivp"], p["variant"]), {})[p["ranks"]] = p
        for (ivp, variant), points in sorted(curves.items()):
            below = sorted((r, p["simulated_s"]) for r, p in points.items() if r < last)
            if last not in points or len(below) < 5:
                continue
            model = fit_pmnf(below, negative=True)
            empirical = float(model([last])[0])
            at = points[last]
            out.append({"platform": name, "ivp": ivp, "variant": variant, "model": model.text(),
                        "empirical_s": empirical, "analytic_s": at["predicted_s"],
                        "simulated_s": at["simulated_s"],
                        "empirical_error": empirical / at["simulated_s"] - 1,
                        "analytic_error": at["predicted_s"] / at["simulated_s"] - 1,
                        "disagree": abs(empirical / at["predicted_s"] - 1) > disagree})
    return out


def measured_sizes(count: int) -> list:
    """One-rank times of `count` variants of scenarios/mpi.yaml at 6 sizes of Lorenz96."""
    scenario = load(ROOT / "scenarios" / "mpi.yaml", "scenario")
    method = scenario.methods[0]
    ivp = next(i for i in scenario.ivps if i.name == "Lorenz96")
    pool = build_pool(scenario.skeletons, scenario.template_map, method).variants
    chosen = pool[::max(1, len(pool) // count)][:count]
    options = MeasureOptions(budget_s=1.0)
    sets = []
    for variant in chosen:
        points = []
        for n in [2000, 5000, 12000, 30000, 75000, 190000]:
            config = Configuration(method, ivp, ivp.sizes.next_valid(n), 1, 1)
            result = measure(plan_tasks(scenario, config, [variant], options)[0], options)
            if result.status == "ok":
                points.append((config.n, result.median_s))
        print(f"  sizes {variant.id}: {len(points)} of 6 measured", flush=True)
        if len(points) >= 5:
            sets.append((f"Lorenz96 {variant.id}", points))
    return sets


def big_part(store) -> dict:
    """On 256 ranks of the fat tree at n = 16,777,216, 10 steps: the variant predicted fastest
    (a neighbour exchange) and the fastest that gathers (an allgather of every block per row, the
    costliest to simulate)."""
    scenario = load(ROOT / "scenarios" / "mpi.yaml", "scenario")
    one = replace(scenario, ivps=tuple(i for i in scenario.ivps if i.name == "Lorenz96"))
    n, ranks = 16_777_216, 256
    models = communication(one, [ranks], store, PLATFORMS[0])
    ranking, = predict_scenario(one, n, [1], store, ranks=[ranks], communication=models,
                                keep_rankings=False).rankings
    ok = [p for p in ranking.predictions if p.status == "ok"]
    chosen = [ok[0].id, next(p.id for p in ok if "-nx" not in p.skeleton)]
    points, note = simulate_scaling(one, PLATFORMS[0], ranks, store, n=n, variants=chosen,
                                    steps=10, timeout_s=900, only=[ranks])
    return {"note": note, "points": [p.as_json() for p in points]}


PARTS = ("platforms", "two_ranks", "pmnf", "big")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks-max", type=int, default=64)
    parser.add_argument("--shortlist", type=int, default=3)
    parser.add_argument("--variants-2", type=int, default=3, help="variants per IVP, 2-rank check")
    parser.add_argument("--sizes", type=int, default=4, help="variants measured over 6 sizes")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help=f"parts to run (default all: {','.join(PARTS)}); the others are "
                             f"kept from {OUT.relative_to(ROOT)}")
    args = parser.parse_args()
    parts = args.parts.split(",")
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"--parts {args.parts}: unknown {', '.join(unknown)}; expected some of "
                     f"{', '.join(PARTS)}")
    scenario = load(ROOT / "scenarios" / "mpi.yaml", "scenario")
    result = json.loads(OUT.read_text()) if OUT.exists() and set(parts) != set(PARTS) else {}
    result.update({"host": {"cpu": host_platform.processor() or host_platform.machine(),
                            "hardware_id": hardware_identity(),
                            "cpus": len(os.sched_getaffinity(0))}})
    result.setdefault("commands", {})

    def done(part: str, value, started: float) -> None:
        """Each part written as it ends: a run stopped later keeps it."""
        result[part] = value
        result["commands"][part] = "jobs/bench_scaling.sh " + " ".join(sys.argv[1:])
        result.setdefault("wall_s", {})[part] = time.time() - started
        OUT.write_text(json.dumps(result, indent=1, default=str))

    with Store.open(STORE, "a", run={"command": "bench_scaling"}) as store:
        if "platforms" in parts:
            print("part 1: analytic against SMPI on the platforms", flush=True)
            started = time.time()
            done("platforms", platforms_part(scenario, store, args.ranks_max, args.shortlist),
                 started)
        if "two_ranks" in parts:
            print("part 2: 2 simulated ranks against 2 real ones", flush=True)
            started = time.time()
            done("two_ranks", two_ranks_part(store, args.variants_2), started)
        if "pmnf" in parts:
            print("part 3: PMNF, ours and Extra-P's", flush=True)
            started = time.time()
            done("pmnf", pmnf_part(result.get("platforms", {}), measured_sizes(args.sizes)),
                 started)
        if "big" in parts:
            print("part 4: 256 simulated ranks", flush=True)
            started = time.time()
            done("big", big_part(store), started)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
