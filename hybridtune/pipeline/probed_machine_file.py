"""This host probed and written as a kerncraft machine file."""

from __future__ import annotations

from pathlib import Path

from hybridtune.errors import HybridtuneError
from hybridtune.probe.machine_file import write_machine_file
from hybridtune.probe.machine_probe import probe_machine


def write_probed_machine(output: str) -> tuple[Path, dict]:
    """Probe the host and write its machine file at output (a file path in an existing folder,
    refused before probing): (the file, the probed mapping)."""
    target = Path(output)
    if target.is_dir() or not (target.parent if str(target.parent) else Path(".")).is_dir():
        raise HybridtuneError(f"-o {output}: expected a file path in an existing folder")
    mapping = probe_machine()
    write_machine_file(target, mapping)
    return target, mapping
