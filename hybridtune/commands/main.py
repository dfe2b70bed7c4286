"""The hybridtune command line: the only place that prints errors and chooses exit codes.

Each command lives in its own module (COMMANDS names it), which declares its options in
add_arguments(parser) and runs in run(args). Only the chosen command's module is imported, so
`hybridtune --help` and light commands start without the pipeline's heavy imports."""

from __future__ import annotations

import argparse
import importlib
import sys

from hybridtune import __version__
from hybridtune.commands.exit_codes import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK
from hybridtune.errors import HybridtuneError

# command -> (its module in hybridtune.commands, its line in --help), in --help's order
COMMANDS = {
    "check": ("check_command", "validate description files of any kind"),
    "variants": ("variants_command", "list a scenario's variant pool"),
    "solve": ("solve_command", "integrate an IVP with the reference PIRK solver"),
    "export": ("export_command", "write a variant's solver (or the tuned solver, which "
               "dispatches on ranks, n and threads) as C sources, header, Makefile"),
    "measure": ("measure_command", "generate, build, verify and time variants"),
    "predict": ("predict_command", "rank a scenario's pool by offline prediction"),
    "tune": ("tune_command", "the main job: predict, shortlist, measure the shortlist"),
    "machine": ("machine_command", "machine files: probe this host"),
    "store": ("store_command", "store files: upgrade an old schema, merge several stores"),
    "train": ("train_command", "fit the correction models on the store's measurements and "
              "store them"),
    "evaluate": ("evaluate_command", "replay the strategies on measured pools and score the "
                 "models, each IVP left out of training in turn"),
    "report": ("report_command", "write an HTML page with plots describing a store (typically a "
               "ground-truth store): strategies, model accuracy, rankings, scaling"),
    "plan": ("plan_command", "which variant, ranks, threads and nodes for a job: the fastest "
             "layout up to --nodes-max nodes (or the fastest at an efficiency)"),
    "simulate": ("simulate_command", "run the variants predicted fastest (or the named ones) on "
                 "a simulated cluster by SimGrid's SMPI, beside their predictions"),
    "method": ("method_command", "write a collocation method's description file"),
}
SCALING = "plan_command"        # predict --scaling: its options and its studies live there


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with a one-line error message and exit code 2, like every other bad input."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message} (see --help)\n")


def _module(name: str):
    # the chosen command's module only: importing every command would load the whole pipeline
    return importlib.import_module(f"hybridtune.commands.{name}")


def _declare(command: str, parser: argparse.ArgumentParser) -> None:
    _module(COMMANDS[command][0]).add_arguments(parser)
    if command == "predict":
        _module(SCALING).add_predict_arguments(parser)


def _parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line; with argv, only the command it names gets its options declared (the
    others show their --help line), without, every command does."""
    parser = _ArgumentParser(prog="hybridtune", description=(
        "Measurement-plus-model hybrid autotuner for parallel iterated Runge-Kutta solvers."))
    parser.add_argument("--version", action="version", version=f"hybridtune {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_ArgumentParser)
    chosen = None if argv is None else next((word for word in argv
                                             if not word.startswith("-")), "")
    for command, (_, help_line) in COMMANDS.items():
        command_parser = sub.add_parser(command, help=help_line)
        if chosen is None or command == chosen:
            _declare(command, command_parser)
    return parser


def _predict(args) -> int:
    """predict, or predict --scaling (the scaling studies)."""
    predict, scaling = _module("predict_command"), _module(SCALING)
    predict.check_arguments(args)
    scaling.check_predict_arguments(args)
    predict.check_dry_run(args)
    return scaling.cmd_scaling(args) if args.scaling else predict.run(args)


def _run(args) -> int:
    if args.command == "predict":
        return _predict(args)
    return _module(COMMANDS[args.command][0]).run(args)


def _report(error: Exception) -> int:
    """The one line a user sees for bad input, and its exit code; anything else is a bug."""
    if isinstance(error, HybridtuneError):
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    raise error


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["tune"]:
        return _module("tune_command").tune_main(argv, lambda words: _parser(
            words).parse_args(words), _report)
    args = _parser(argv).parse_args(argv)
    try:
        return _run(args)
    except HybridtuneError as exc:
        return _report(exc)
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("stopped by SIGINT", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
