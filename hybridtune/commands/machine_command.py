"""`hybridtune machine probe`: a kerncraft machine file for this host."""

from __future__ import annotations

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.pipeline.probed_machine_file import write_probed_machine
from hybridtune.probe.machine_probe import probe_summary


def add_arguments(machine) -> None:
    machine_sub = machine.add_subparsers(dest="machine_command", required=True,
                                         parser_class=type(machine))
    probe = machine_sub.add_parser("probe", help="write a kerncraft machine file for this host")
    probe.add_argument("-o", "--output", required=True, metavar="FILE")


def run(args) -> int:
    target, mapping = write_probed_machine(args.output)
    print(f"wrote {target}: {mapping.get('model name')}, {mapping.get('clock')}, "
          f"in-core model {dict(mapping.get('in-core model', {}))}")
    for line in probe_summary(mapping)[1:]:
        print(line)
    return EXIT_OK
