"""The scaling commands: `predict --scaling` (curves to P ranks) and `plan` (a job's layout).

`plan` chooses the variant, ranks, threads and nodes for a job: the fastest layout at a stated
parallel efficiency, the absolute fastest beside it, both run by SMPI with --simulate.
"""

from __future__ import annotations

import json
import sys

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.describe.loader import load
from hybridtune.describe.platform import load_platform
from hybridtune.errors import RequestError
from hybridtune.pipeline.job_plan import PlanRequest, plan_job
from hybridtune.pipeline.plan_simulation import check_plan
from hybridtune.pipeline.scaling_studies import scaling_studies
from hybridtune.pipeline.store_policy import open_store
from hybridtune.predict.kerncraft_adapter import check_compiler
from hybridtune.predict.plan import DEFAULT_EFFICIENCY
from hybridtune.predict.scaling_curves import study_json
from hybridtune.report.plan_text import check_lines, plan_json, plan_lines
from hybridtune.report.scaling_text import study_lines
from hybridtune.simulate.smpi import check_platform

RANKS_MAX = 64


def add_predict_arguments(predict) -> None:
    predict.add_argument("--scaling", action="store_true", help="strong and weak scaling curves "
                         "of every variant at 1, 2, 4, ... --ranks-max ranks of one thread")
    predict.add_argument("--ranks-max", type=int, default=RANKS_MAX, metavar="P",
                         help=f"largest rank count of --scaling (default {RANKS_MAX})")
    predict.add_argument("--platform", metavar="FILE", help="a SimGrid platform file whose links "
                         "price the exchanges (default: this machine's fitted exchanges)")


def check_predict_arguments(args) -> None:
    """--ranks-max and --platform only with --scaling (nothing is ignored silently)."""
    if not args.scaling and (args.platform or args.ranks_max != RANKS_MAX):
        raise RequestError("--ranks-max and --platform belong to --scaling: add --scaling, or "
                           "use --ranks P for one rank count")


def check_sizes(scenario, n: int | None) -> None:
    """-n valid for every IVP of the scenario, refused before anything is written."""
    if n is not None:
        for ivp in scenario.ivps:
            ivp.check_n(n)


def check_scaling_arguments(args) -> None:
    if args.ranks_max < 1:
        raise RequestError(f"--ranks-max {args.ranks_max}: expected a rank count of at least 1")
    if args.ranks or args.threads or args.corrected:
        raise RequestError("--scaling chooses the layouts itself (1, 2, 4, ... --ranks-max ranks "
                           "of one thread): drop --ranks, --threads and --corrected")


def cmd_scaling(args) -> int:
    check_scaling_arguments(args)
    scenario = load(args.scenario, "scenario")
    if not any(s.is_mpi for s in scenario.skeletons) and args.ranks_max > 1:
        raise RequestError(f"--scaling: scenario {scenario.name} ({scenario.path}) has no MPI "
                           "skeleton (A-mpi ... H-mpi), and only those run on more than one rank")
    if args.platform:
        load_platform(args.platform).check_ranks(args.ranks_max)      # refused before any write
    check_sizes(scenario, args.n)
    check_compiler(scenario.machine)

    def shown(study) -> None:
        if not args.json:
            print("\n".join(study_lines(study)), flush=True)

    with open_store(args.db, scenario, "predict --scaling") as store:
        studies, note = scaling_studies(scenario, args.ranks_max, store, args.platform, args.n,
                                        args.workers, on_study=shown)
    if args.json:
        print(json.dumps({"platform": args.platform, "communication": note,
                          "machine": scenario.machine.name,
                          "studies": [study_json(s) for s in studies]}, separators=(",", ":")))
    print(f"machine {scenario.machine.name} ({scenario.machine_note}); {note}",
          file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK


def add_arguments(plan) -> None:
    plan.add_argument("scenario")
    plan.add_argument("--nodes-max", type=int, required=True, metavar="N")
    plan.add_argument("--efficiency", type=float, default=DEFAULT_EFFICIENCY, metavar="E",
                      help="the fastest layout whose parallel efficiency over the nodes is at "
                      f"least E (0 < E <= 1; default {DEFAULT_EFFICIENCY:g}); the fastest of all "
                      "is named beside it")
    plan.add_argument("--platform", metavar="FILE", help="a SimGrid platform file whose links "
                      "price the exchanges (default: this machine's fitted exchanges)")
    plan.add_argument("--simulate", action="store_true", help="run the chosen and the fastest "
                      "layout by SimGrid's SMPI on --platform beside their predictions")
    plan.add_argument("-n", type=int, help="one size instead of the scenario's")
    plan.add_argument("--workers", type=int, help="parallel kerncraft analyses (default: cores)")
    plan.add_argument("--json", action="store_true")
    plan.add_argument("--db", metavar="FILE", help="the store (default: data/store/hybridtune.h5)")


def _count(value: int, noun: str) -> str:
    return f"{value} {noun}{'s' * (value != 1)}"


def _check_plan_arguments(args) -> None:
    if args.nodes_max < 1:
        raise RequestError(f"--nodes-max {args.nodes_max}: expected a node count of at least 1")
    if args.efficiency is not None and not 0 < args.efficiency <= 1:
        raise RequestError(f"--efficiency {args.efficiency}: expected a fraction in (0, 1]")
    if args.n is not None and args.n < 1:
        raise RequestError(f"-n: expected a size >= 1, got {args.n}")
    if args.simulate and not args.platform:
        raise RequestError("--simulate runs the layouts on a simulated cluster: give --platform "
                           "FILE")


def _check_platform(args) -> None:
    """A host per node, and with --simulate a file SimGrid itself loads."""
    hosts = len(load_platform(args.platform).hosts)
    if args.nodes_max > hosts:
        raise RequestError(f"{args.platform}: --nodes-max {args.nodes_max} asks for "
                           f"{_count(args.nodes_max, 'node')}, the platform has "
                           f"{_count(hosts, 'host')} (one node per host)")
    if args.simulate:
        check_platform(args.platform)           # SimGrid installed here on first use


def _checked_scenario(args):
    """The scenario, every part of the request refused before anything is written."""
    _check_plan_arguments(args)
    scenario = load(args.scenario, "scenario")
    if not any(s.is_mpi for s in scenario.skeletons):
        raise RequestError(f"plan: scenario {scenario.name} ({scenario.path}) has no MPI "
                           "skeleton (A-mpi ... H-mpi), and only those run on more than one rank")
    if args.platform:
        _check_platform(args)
    check_sizes(scenario, args.n)
    check_compiler(scenario.machine)
    return scenario


def run(args) -> int:
    scenario = _checked_scenario(args)
    request = PlanRequest(args.nodes_max, args.platform, args.n, args.efficiency, args.workers)
    with open_store(args.db, scenario, "plan") as store:
        plans = plan_job(scenario, request, store)
    checks = [check_plan(scenario, plan, args.platform) if args.simulate else ()
              for plan in plans]
    if args.json:
        print(json.dumps({"platform": args.platform, "machine": scenario.machine.name,
                          "efficiency": args.efficiency,
                          "plans": [plan_json(p, c) for p, c in zip(plans, checks)]}, indent=1))
        return EXIT_OK
    for plan, checked in zip(plans, checks):
        print("\n".join(plan_lines(plan, args.efficiency) + check_lines(checked)))
    if plans:
        print(plans[0].note)
    return EXIT_OK
