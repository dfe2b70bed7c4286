"""`hybridtune check`: description files of any kind validated, one line each."""

from __future__ import annotations

import sys

from hybridtune.commands.exit_codes import EXIT_BAD_INPUT, EXIT_OK
from hybridtune.pipeline.description_check import check_file


def add_arguments(check) -> None:
    check.add_argument("paths", nargs="+", metavar="PATH")


def run(args) -> int:
    failed = 0
    for path in args.paths:
        checked = check_file(path)
        if checked.error:
            print(f"error: {checked.error}", file=sys.stderr)
            failed += 1
        else:
            print(f"ok: {path} ({checked.kind} {checked.name})".rstrip())
    return EXIT_BAD_INPUT if failed else EXIT_OK
