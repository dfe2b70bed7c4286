"""`hybridtune method`: a collocation method's description file, written or printed."""

from __future__ import annotations

import sys

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.pipeline.method_file import method_text, write_method


def add_arguments(method) -> None:
    method.add_argument("family", help="gauss, radauIA, radauIIA or lobattoIIIC")
    method.add_argument("stages", type=int)
    method.add_argument("-o", "--output", help="file to write (default: standard output)")
    method.add_argument("--name", help="method name (default: family and order)")


def run(args) -> int:
    text = method_text(args.family, args.stages, args.name)
    if args.output:
        write_method(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK
