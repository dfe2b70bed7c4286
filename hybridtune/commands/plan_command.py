"""The scaling commands: `predict --scaling` (curves to P ranks) and `plan` (a job's layout).

`plan` chooses the variant, ranks, threads and nodes for a job.
"""

from __future__ import annotations

import json
import sys

from hybridtune.errors import RequestError

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
    from hybridtune.describe.loader import load
    from hybridtune.describe.platform import load_platform
    from hybridtune.pipeline.store_policy import open_store
    from hybridtune.pipeline.scaling_studies import scaling_studies
    from hybridtune.predict.kerncraft_adapter import check_compiler
    from hybridtune.predict.scaling_curves import study_json
    from hybridtune.report.scaling_text import study_lines
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
    return 0


def add_arguments(plan) -> None:
    plan.add_argument("scenario")
    plan.add_argument("--nodes-max", type=int, required=True, metavar="N")
    plan.add_argument("--efficiency", type=float, metavar="E", help="the fastest layout whose "
                      "parallel efficiency over the nodes is at least E (0 < E <= 1)")
    plan.add_argument("--platform", metavar="FILE", help="a SimGrid platform file whose links "
                      "price the exchanges (default: this machine's fitted exchanges)")
    plan.add_argument("-n", type=int, help="one size instead of the scenario's")
    plan.add_argument("--workers", type=int, help="parallel kerncraft analyses (default: cores)")
    plan.add_argument("--json", action="store_true")
    plan.add_argument("--db", metavar="FILE", help="the store (default: data/store/hybridtune.h5)")


def _option_json(option) -> dict:
    layout = option.layout
    return {"nodes": layout.nodes, "ranks": layout.ranks, "threads": layout.threads,
            "ranks_per_domain": layout.ranks_per_domain, "variant": option.variant,
            "seconds": option.seconds, "comm_s": option.comm_s, "efficiency": option.efficiency,
            "node_seconds_per_step": option.node_seconds}


def plan_json(plan) -> dict:
    """low_s and high_s are null where the text shows no interval (no measurement in the store to
    judge the computation by): a band of zero width would claim a certainty nothing backs."""
    known = plan.interval.compute_rel > 0
    return {"method": plan.method, "ivp": plan.ivp, "n": plan.n,
            "choice": {**_option_json(plan.choice),
                       "low_s": plan.interval.low if known else None,
                       "high_s": plan.interval.high if known else None},
            "options": [_option_json(o) for o in plan.options], "note": plan.note}


def _count(value: int, noun: str) -> str:
    return f"{value} {noun}{'s' * (value != 1)}"


def plan_lines(plan) -> list[str]:
    c, i = plan.choice, plan.interval
    lines = [f"{plan.method} {plan.ivp} n={plan.n}: the fastest variant of each layout; 'vs 1 "
             "node': parallel efficiency over the nodes, the best one-node time over nodes x "
             "this time",
             f"  {'nodes':>5}  {'ranks':>6}  {'threads':>7}  {'s/step':>10}  {'vs 1 node':>10}  "
             f"{'node-s/step':>11}  variant"]
    for o in plan.options:
        mark = "*" if o == c else " "
        lines.append(f"{mark} {o.layout.nodes:>5}  {o.layout.ranks:>6}  {o.layout.threads:>7}  "
                     f"{o.seconds:>10.3e}  {o.efficiency:>10.0%}  "
                     f"{o.node_seconds:>11.3e}  {o.variant}")
    band = (f"95%: {i.low:.3e} to {i.high:.3e}" if i.compute_rel > 0 else
            "no interval: the store holds no measurement to judge the computation by")
    lines.append(f"  chosen: {c.variant} on {_count(c.layout.nodes, 'node')}, "
                 f"{_count(c.layout.ranks, 'rank')} x {_count(c.layout.threads, 'thread')}: "
                 f"{c.seconds:.3e} s/step ({band}), efficiency {c.efficiency:.0%}")
    return lines


def run(args) -> int:
    from hybridtune.describe.loader import load
    from hybridtune.describe.platform import load_platform
    from hybridtune.pipeline.store_policy import open_store
    from hybridtune.pipeline.job_plan import plan_job
    from hybridtune.predict.kerncraft_adapter import check_compiler
    if args.nodes_max < 1:
        raise RequestError(f"--nodes-max {args.nodes_max}: expected a node count of at least 1")
    if args.efficiency is not None and not 0 < args.efficiency <= 1:
        raise RequestError(f"--efficiency {args.efficiency}: expected a fraction in (0, 1]")
    if args.n is not None and args.n < 1:
        raise RequestError(f"-n: expected a size >= 1, got {args.n}")
    scenario = load(args.scenario, "scenario")
    if not any(s.is_mpi for s in scenario.skeletons):
        raise RequestError(f"plan: scenario {scenario.name} ({scenario.path}) has no MPI "
                           "skeleton (A-mpi ... H-mpi), and only those run on more than one rank")
    if args.platform:                                   # refused before any write
        hosts = len(load_platform(args.platform).hosts)
        if args.nodes_max > hosts:
            raise RequestError(f"{args.platform}: --nodes-max {args.nodes_max} asks for "
                               f"{_count(args.nodes_max, 'node')}, the platform has "
                               f"{_count(hosts, 'host')} (one node per host)")
    check_sizes(scenario, args.n)
    check_compiler(scenario.machine)
    with open_store(args.db, scenario, "plan") as store:
        plans = plan_job(scenario, args.nodes_max, store, args.platform, args.n,
                         args.efficiency, args.workers)
    if args.json:
        print(json.dumps({"platform": args.platform, "machine": scenario.machine.name,
                          "efficiency": args.efficiency, "plans": [plan_json(p) for p in plans]},
                         indent=1))
    else:
        for plan in plans:
            print("\n".join(plan_lines(plan)))
        if plans:
            print(plans[0].note)
    return 0
