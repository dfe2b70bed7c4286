"""The scaling commands: `predict --scaling` (curves to P ranks) and `plan` (variant, ranks, threads and nodes for a job)."""

from __future__ import annotations

import json
import sys

from hybridtune.errors import RequestError


def add_predict_arguments(predict) -> None:
    predict.add_argument("--scaling", action="store_true", help="strong and weak scaling curves "
                         "of every variant at 1, 2, 4, ... --ranks-max ranks of one thread")
    predict.add_argument("--ranks-max", type=int, default=64, metavar="P",
                         help="largest rank count of --scaling (default 64)")
    predict.add_argument("--platform", metavar="FILE", help="a SimGrid platform file whose links "
                         "price the exchanges (default: this machine's fitted exchanges)")


def check_scaling_arguments(args) -> None:
    if args.ranks_max < 1:
        raise RequestError(f"--ranks-max {args.ranks_max}: expected a rank count of at least 1")
    if args.ranks or args.threads or args.corrected:
        raise RequestError("--scaling chooses the layouts itself (1, 2, 4, ... --ranks-max ranks "
                           "of one thread): drop --ranks, --threads and --corrected")


def cmd_scaling(args) -> int:
    from hybridtune.describe.loader import load
    from hybridtune.describe.platform import load_platform
    from hybridtune.face.cli_tuning import open_store
    from hybridtune.face.scaling import scaling_studies
    from hybridtune.predict.kerncraft_adapter import check_compiler
    from hybridtune.predict.scaling import study_json
    from hybridtune.report.scaling import study_lines
    check_scaling_arguments(args)
    scenario = load(args.scenario, "scenario")
    if not any(s.is_mpi for s in scenario.skeletons) and args.ranks_max > 1:
        raise RequestError(f"--scaling: scenario {scenario.name} ({scenario.path}) has no MPI "
                           "skeleton (A-mpi ... H-mpi), and only those run on more than one rank")
    if args.platform:
        load_platform(args.platform).check_ranks(args.ranks_max)      # refused before any write
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
