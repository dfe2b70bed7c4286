"""`hybridtune simulate`: the variants predicted fastest, run by SMPI beside their predictions."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.describe.loader import load
from hybridtune.describe.platform import load_platform
from hybridtune.errors import RequestError
from hybridtune.generate.pool import select_variants
from hybridtune.pipeline.scaling_documents import simulation_document
from hybridtune.pipeline.simulated_scaling import SimulationRequest, simulate_scaling
from hybridtune.pipeline.smpi_agreement import platform_part
from hybridtune.pipeline.store_policy import open_store
from hybridtune.predict.kerncraft_adapter import check_compiler
from hybridtune.report.simulation_text import agreement_lines, point_line, simulation_table
from hybridtune.simulate.smpi import check_platform

BEST = 1             # the variants predicted fastest at each rank count that are simulated
STEPS = 10


def add_arguments(simulate) -> None:
    simulate.add_argument("scenario")
    simulate.add_argument("--platform", required=True, metavar="FILE",
                          help="a SimGrid platform file: the cluster, one rank per host")
    simulate.add_argument("--ranks-max", type=int, required=True, metavar="P",
                          help="the largest rank count (at most the platform's hosts)")
    simulate.add_argument("--variant", action="append", metavar="ID", help="a variant to "
                          "simulate (repeatable; default: the --best predicted fastest)")
    simulate.add_argument("--best", type=int, default=BEST, metavar="K", help="the K variants "
                          f"predicted fastest at each rank count (default {BEST}), each then "
                          "simulated at every rank count")
    simulate.add_argument("-n", type=int, help="one size instead of the scenario's")
    simulate.add_argument("--steps", type=int, default=STEPS,
                          help=f"simulated steps a run (default {STEPS})")
    simulate.add_argument("--json", action="store_true", help="print the scaling document "
                          "(report --scaling draws it); progress goes to stderr")
    simulate.add_argument("--db", metavar="FILE", help="the store (default: "
                          "data/store/hybridtune.h5)")


def _check_numbers(args) -> None:
    for option, value in (("--ranks-max", args.ranks_max), ("--best", args.best),
                          ("--steps", args.steps), ("-n", args.n)):
        if value is not None and value < 1:
            raise RequestError(f"{option} {value}: expected a whole number of at least 1")


def _check_platform(path: str, ranks_max: int) -> None:
    """The platform file as the analytic model and SimGrid read it, with a host per rank."""
    hosts = len(load_platform(path).hosts)
    check_platform(path)                  # SimGrid's own word (installed here on first use)
    if ranks_max > hosts:
        raise RequestError(f"{path}: --ranks-max {ranks_max} asks for {ranks_max} ranks, the "
                           f"platform has {hosts} hosts (one rank per host)")


def _check_variants(scenario, ids: list[str] | None) -> tuple:
    """The named variants' ids in the pool of each method (aliases resolved), MPI ones only."""
    if not ids:
        return ()
    chosen, skeletons = {}, {s.name: s for s in scenario.skeletons}
    for method in scenario.methods:
        for variant in select_variants(scenario, method, ids):
            if not skeletons[variant.skeleton].is_mpi:
                raise RequestError(f"--variant {variant.id}: skeleton {variant.skeleton} is not "
                                   "an MPI skeleton, and only those run on simulated ranks")
            chosen[variant.id] = True
    return tuple(chosen)


def checked_request(args, scenario) -> SimulationRequest:
    """The request, every part of it refused before anything is written."""
    _check_numbers(args)
    if not any(s.is_mpi for s in scenario.skeletons):
        raise RequestError(f"simulate: scenario {scenario.name} ({scenario.path}) has no MPI "
                           "skeleton (A-mpi ... H-mpi), and only those run on simulated ranks")
    variants = _check_variants(scenario, args.variant)
    for ivp in scenario.ivps:
        for n in [args.n] if args.n is not None else scenario.sizes.for_ivp(ivp):
            ivp.check_n(n)
            if n < args.ranks_max:
                raise RequestError(f"scenario {scenario.path}: IVP {ivp.name} at n = {n} has "
                                   f"fewer components than --ranks-max {args.ranks_max} ranks")
    _check_platform(args.platform, args.ranks_max)
    check_compiler(scenario.machine)
    return SimulationRequest(args.platform, args.ranks_max, n=args.n, variants=variants,
                             shortlist=args.best, steps=args.steps)


def run(args) -> int:
    scenario = load(args.scenario, "scenario")
    request = checked_request(args, scenario)
    progress = sys.stderr if args.json else sys.stdout
    started = time.monotonic()
    with open_store(args.db, scenario, "simulate") as store:
        points, note = simulate_scaling(scenario, request, store,
                                        lambda p: print(point_line(p), file=progress,
                                                        flush=True))
    name = Path(args.platform).stem
    part = platform_part(args.platform, note, points, time.monotonic() - started)
    if args.json:
        print(json.dumps(simulation_document({name: part}, scenario=str(scenario.path),
                                             machine=scenario.machine.name), indent=1))
    else:
        print("\n".join(simulation_table(points, name) + agreement_lines(part)))
    print(f"{note}; {part['wall_s']:.0f} s", file=progress)
    return EXIT_OK
