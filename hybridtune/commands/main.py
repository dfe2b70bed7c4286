"""The hybridtune command line: the only place that prints errors and chooses exit codes."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from pathlib import Path

from hybridtune import __version__
from hybridtune.commands.measure_command import cmd_measure
from hybridtune.commands.plan_command import add_plan_arguments, cmd_plan
from hybridtune.commands.plan_command import add_predict_arguments as add_scaling_arguments
from hybridtune.commands.predict_command import cmd_machine, cmd_predict
from hybridtune.errors import HybridtuneError
from hybridtune.commands.store_command import add_arguments as add_store_arguments
from hybridtune.commands.store_command import cmd_store
from hybridtune.commands.learn_command import add_arguments as add_learn_arguments
from hybridtune.commands.learn_command import cmd_evaluate, cmd_train
from hybridtune.commands.report_command import add_arguments as add_report_arguments
from hybridtune.commands.report_command import cmd_report
from hybridtune.commands.tune_command import add_arguments as add_tune_arguments
from hybridtune.commands.tune_command import tune_main

EXIT_BAD_INPUT = 2


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error message and exit code 2, like every other bad input."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="hybridtune", description=(
        "Measurement-plus-model hybrid autotuner for parallel iterated Runge-Kutta solvers."))
    parser.add_argument("--version", action="version", version=f"hybridtune {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_ArgumentParser)

    check = sub.add_parser("check", help="validate description files of any kind")
    check.add_argument("paths", nargs="+", metavar="PATH")

    variants = sub.add_parser("variants", help="list a scenario's variant pool")
    variants.add_argument("scenario")
    variants.add_argument("--json", action="store_true", help="print a JSON list")

    solve = sub.add_parser("solve", help="integrate an IVP with the reference PIRK solver")
    solve.add_argument("--method", required=True, help="method file or library name")
    solve.add_argument("--ivp", required=True, help="IVP file or library name")
    solve.add_argument("-n", type=int, required=True, help="number of components")
    solve.add_argument("--t0", type=float, default=0.0)
    solve.add_argument("--t1", type=float, required=True)
    solve.add_argument("--steps", type=int, required=True, help="fixed steps of (t1 - t0) / steps")
    solve.add_argument("--corrector-steps", type=int, help="override the method's m")
    solve.add_argument("--out", help="write the final state vector as .npy")
    solve.add_argument("--json", action="store_true")
    solve.add_argument("--variant", metavar="ID", help="integrate with this compiled variant "
                       "instead of the numpy reference")
    solve.add_argument("--threads", type=int, help="OpenMP threads for --variant")
    solve.add_argument("--scenario", help="scenario whose pool the variant is from (default: "
                       "scenarios/default.yaml)")

    export = sub.add_parser("export", help="write a variant's solver (or the tuned solver, which "
                            "dispatches on ranks, n and threads) as C sources, header, Makefile")
    export.add_argument("scenario")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--variant", metavar="ID")
    which.add_argument("--tuned", action="store_true", help="the measured best variant per "
                       "cache region of n, rank count and thread count, from --db")
    export.add_argument("--db", metavar="FILE", help="the store with the measurements (--tuned)")
    export.add_argument("--method", help="method (default: the scenario's, if it has one)")
    export.add_argument("--ivp", help="IVP (default: the scenario's, if it has one)")
    export.add_argument("-o", "--output", required=True, metavar="DIR")
    export.add_argument("--name", default="ht_solver", help="C name of the files and library")

    measure = sub.add_parser("measure", help="generate, build, verify and time variants")
    measure.add_argument("scenario")
    measure.add_argument("--variant", action="append", metavar="ID", help="variant id (repeatable; "
                         "default: the whole pool)")
    measure.add_argument("-n", type=int, help="one size instead of the scenario's")
    measure.add_argument("--threads", type=int, action="append", metavar="T",
                         help="thread count per rank (repeatable; default: the scenario's)")
    measure.add_argument("--ranks", type=int, action="append", metavar="P",
                         help="MPI rank count (repeatable; default: the scenario's; above 1 only "
                              "the MPI skeletons run)")
    measure.add_argument("--ci", type=float, default=0.02,
                         help="stop when the 95%% CI of the median is within this fraction")
    measure.add_argument("--budget", type=float, default=5.0, help="timing seconds per variant")
    measure.add_argument("--strict", action="store_true", help="refuse more threads than cores")
    measure.add_argument("--json", action="store_true")
    measure.add_argument("--db", metavar="FILE", help="store to append the measurements to "
                         "(default: data/store/hybridtune.h5)")

    predict = sub.add_parser("predict", help="rank a scenario's pool by offline prediction")
    predict.add_argument("scenario")
    _add_selection(predict)
    predict.add_argument("--head", type=int, default=10, help="ranked variants shown per "
                         "configuration (default 10)")
    predict.add_argument("--workers", type=int, help="parallel kerncraft analyses (default: cores)")
    predict.add_argument("--json", action="store_true", help="print one JSON object: each "
                         "configuration's ranking and the failed analyses (with --scaling: "
                         "the curves)")
    predict.add_argument("--corrected", action="store_true", help="order by the corrected time "
                         "of the store's trained model, with its 95%% interval (needs train)")
    predict.add_argument("--dry-run", action="store_true", help="print the kerncraft analyses "
                         "that would run and what the store's predictions already rank; "
                         "analyse and write nothing")
    add_scaling_arguments(predict)

    tune = sub.add_parser("tune", help="the main job: predict, shortlist, measure the shortlist")
    tune.add_argument("scenario", nargs="?", default=None,
                      help="scenario file (default: scenarios/default.yaml)")
    _add_selection(tune)
    tune.add_argument("--head", type=int, default=5, help="ranked variants shown per configuration")
    tune.add_argument("--ci", type=float, default=0.02,
                      help="stop timing when the 95%% CI of the median is within this fraction")
    tune.add_argument("--budget", type=float, default=1.0, help="timing seconds per variant")
    tune.add_argument("--json", action="store_true")
    add_tune_arguments(tune)

    machine = sub.add_parser("machine", help="machine files: probe this host")
    machine_sub = machine.add_subparsers(dest="machine_command", required=True, parser_class=_ArgumentParser)
    probe = machine_sub.add_parser("probe", help="write a kerncraft machine file for this host")
    probe.add_argument("-o", "--output", required=True, metavar="FILE")

    add_store_arguments(sub, _ArgumentParser)
    add_learn_arguments(sub)
    add_report_arguments(sub)
    add_plan_arguments(sub)

    method = sub.add_parser("method", help="write a collocation method's description file")
    method.add_argument("family", help="gauss, radauIA, radauIIA or lobattoIIIC")
    method.add_argument("stages", type=int)
    method.add_argument("-o", "--output", help="file to write (default: standard output)")
    method.add_argument("--name", help="method name (default: family and order)")
    return parser


def _add_selection(parser) -> None:
    parser.add_argument("-n", type=int, help="one size instead of the scenario's")
    parser.add_argument("--threads", type=int, action="append", metavar="T",
                        help="thread count per rank (repeatable; default: the scenario's)")
    parser.add_argument("--ranks", type=int, action="append", metavar="P",
                        help="MPI rank count (repeatable; default: the scenario's; above 1 only "
                             "the MPI skeletons' variants are ranked)")
    parser.add_argument("--db", metavar="FILE", help="the store (default: data/store/hybridtune.h5)")


def _write_atomically(path: str, write) -> None:
    """Write through a temporary file in the target folder, so no half-written file remains."""
    target = Path(path)
    if target.is_dir():
        raise HybridtuneError(f"{path}: expected a file path, found a directory")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise HybridtuneError(f"{path}: expected an existing folder {folder}")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)        # as an ordinary new file, not mkstemp's 0600
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _cmd_check(args) -> int:
    from hybridtune.describe.loader import detect_kind, load
    from hybridtune.describe.source import read_source
    failed = 0
    for path in args.paths:
        try:
            kind = detect_kind(read_source(path))
            record = load(path, kind)
            print(f"ok: {path} ({kind} {getattr(record, 'name', '')})".rstrip())
        except HybridtuneError as exc:
            print(f"error: {exc}", file=sys.stderr)
            failed += 1
    return EXIT_BAD_INPUT if failed else 0


def _pool_rows(scenario) -> list[dict]:
    from hybridtune.generate.pool import build_pool
    from hybridtune.predict.superstep import communication_points
    rows = []
    for method in scenario.methods:
        pool = build_pool(scenario.skeletons, scenario.template_map, method)
        per_step = {}
        for skeleton in scenario.skeletons:
            counts: dict = {}
            for (op, _), count in communication_points(skeleton, method.corrector_steps).items():
                counts[op] = counts.get(op, 0) + count
            per_step[skeleton.name] = counts
        for variant in pool.variants:
            counts = per_step[variant.skeleton]
            barriers = counts.get("omp_barrier", 0) + 2 * sum(
                c for op, c in counts.items() if op.startswith("mpi_"))
            rows.append({"id": variant.id, "method": method.name, "skeleton": variant.skeleton,
                         "kernels": variant.kernel_map, "barriers_per_step": barriers,
                         "communication_per_step": counts,
                         "code_hash": variant.code_hash, "same_as": list(variant.same_as)})
    return rows


def _load_scenario(path: str):
    from hybridtune.describe.loader import load
    return load(path, "scenario")


def _cmd_variants(args) -> int:
    scenario = _load_scenario(args.scenario)
    rows = _pool_rows(scenario)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for row in rows:
        print(f"{row['id']}  [{row['method']}, {row['barriers_per_step']} barriers/step]")
    print(_summary(scenario, rows))
    return 0


def _summary(scenario, rows: list[dict]) -> str:
    kernel_variants = sum(len(t.variants) for t in scenario.templates)
    folded = sum(len(r["same_as"]) for r in rows)
    methods = ", ".join(f"{m.name} (s={m.stages}, m={m.corrector_steps})" for m in scenario.methods)
    return (f"pool: {len(rows)} variants ({folded} identical folded) from "
            f"{len(scenario.skeletons)} skeletons and {len(scenario.templates)} kernel templates "
            f"({kernel_variants} kernel variants); method {methods}")


def _cmd_solve(args) -> int:
    import numpy as np

    from hybridtune.describe.loader import load_named
    from hybridtune.errors import RequestError
    from hybridtune.reference.pirk import solve
    method = load_named("method", args.method, Path.cwd())
    if args.corrector_steps is not None:
        if args.corrector_steps < 1:
            raise RequestError(f"--corrector-steps: expected m >= 1, got {args.corrector_steps}")
        method = method.with_corrector_steps(args.corrector_steps)
    ivp = load_named("ivp", args.ivp, Path.cwd())
    if args.variant:
        from hybridtune.solver import Solver
        scenario = _load_scenario(args.scenario) if args.scenario else None
        with Solver(args.variant, method, ivp, args.n, args.threads, scenario) as solver:
            y = solver.integrate(args.t0, args.t1, args.steps)
    else:
        if args.threads is not None or args.scenario:
            raise RequestError("--threads and --scenario go with --variant")
        y = solve(method, ivp, args.n, args.t0, args.t1, args.steps)
    with np.errstate(all="ignore"):
        norm2 = float(np.linalg.norm(y))
    if not (np.all(np.isfinite(y)) and np.isfinite(norm2)):
        raise RequestError(f"the solution is not finite at t1 = {args.t1}: the step "
                           f"{(args.t1 - args.t0) / args.steps:g} is beyond the explicit PIRK "
                           f"step's stability for {ivp.name} (stable step at n = {args.n}: "
                           f"{ivp.step_size(args.n)})")
    if args.out:
        _write_atomically(args.out, lambda handle: np.save(handle, y))
    result = {"method": method.name, "ivp": ivp.name, "n": args.n, "t": args.t1,
              "variant": args.variant or "reference",
              "steps": args.steps, "norm2": norm2,
              "max_abs": float(np.max(np.abs(y)))}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{ivp.name} with {method.name} (m = {method.corrector_steps}), n = {args.n}: "
              f"t = {args.t1:g} after {args.steps} steps, |y|_2 = {result['norm2']:.12g}, "
              f"max |y_j| = {result['max_abs']:.12g}")
    return 0


def _cmd_export(args) -> int:
    from hybridtune.describe.loader import load_named
    from hybridtune.errors import RequestError
    from hybridtune.pipeline.variant_export import check_export_name, export_files
    from hybridtune.solver import generated_for
    if args.tuned and not args.db:
        raise RequestError("--tuned: expected --db FILE, the store with the measurements")
    if args.db and not args.tuned:
        raise RequestError("--db goes with --tuned (a single --variant needs no store)")
    scenario = _load_scenario(args.scenario)

    def pick(kind, ref, items):
        if ref:
            return load_named(kind, ref, Path(scenario.path).parent)
        if len(items) != 1:
            raise RequestError(f"--{kind}: the scenario has {len(items)} {kind}s "
                               f"({', '.join(i.name for i in items)}); name one")
        return items[0]

    method = pick("method", args.method, scenario.methods)
    ivp = pick("ivp", args.ivp, scenario.ivps)
    check_export_name(args.name)
    if args.tuned:
        from hybridtune.pipeline.tuned_export import table_lines, tuned_export
        files, table = tuned_export(scenario, method, ivp, args.db, args.name)
    else:
        files = export_files(generated_for(args.variant, method, ivp, scenario), args.name)
    folder = Path(args.output)
    if folder.exists() and not folder.is_dir():
        raise RequestError(f"-o {folder}: expected a folder, found a file")
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in files.items():
        _write_atomically(str(folder / file_name), lambda handle, t=text: handle.write(t.encode()))
    mpi = args.tuned and table.mpi
    print(f"wrote {', '.join(files)} to {folder} ("
          f"{'tuned' if args.tuned else 'variant ' + args.variant}, {method.name}, {ivp.name}); "
          f"build with make -C {folder}"
          + (" (by mpicc: its rules for more than one rank run MPI variants)" if mpi else ""))
    if args.tuned:
        print("\n".join(table_lines(table)))
    return 0


def _cmd_method(args) -> int:
    from hybridtune.describe.collocation import FAMILIES, method_yaml
    if args.family not in FAMILIES:
        raise HybridtuneError(f"method family '{args.family}': expected one of "
                              f"{', '.join(FAMILIES)}")
    order = FAMILIES[args.family][0](args.stages)
    text = method_yaml(args.name or f"{args.family}{order}", args.family, args.stages)
    if args.output:
        _write_atomically(args.output, lambda handle: handle.write(text.encode()))
    else:
        sys.stdout.write(text)
    return 0


COMMANDS = {"check": _cmd_check, "variants": _cmd_variants, "solve": _cmd_solve,
            "measure": cmd_measure, "export": _cmd_export,
            "predict": cmd_predict, "machine": cmd_machine, "store": cmd_store,
            "train": cmd_train, "evaluate": cmd_evaluate,
            "method": _cmd_method, "report": cmd_report, "plan": cmd_plan}


def _report(error: Exception) -> int:
    """The one line a user sees for bad input, and its exit code; anything else is a bug."""
    if isinstance(error, HybridtuneError):
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    raise error


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["tune"]:
        return tune_main(argv, _parser().parse_args, _report)
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except HybridtuneError as exc:
        return _report(exc)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("stopped by SIGINT", file=sys.stderr)
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main())
