"""Writing kerncraft machine files atomically, as YAML both kerncraft and the project's reader load."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Mapping

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedOrderedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import RoundTripRepresenter

from hybridtune.describe.machine import OWN_COMPILER, REQUIRED
from hybridtune.errors import HybridtuneError


def _block_omap(mapping: Mapping) -> CommentedOrderedMap:
    omap = CommentedOrderedMap(mapping.items())
    omap.fa.set_block_style()
    return omap


class _MachineFileRepresenter(RoundTripRepresenter):
    """Writes quantities ('2.4 GHz', '32.768 kB') plain, as kerncraft's implicit unit resolver needs.

    Once kerncraft is imported its resolver claims such scalars, and a plain writer would quote them
    to keep them strings; tagging them as the resolver resolves them keeps them plain either way.
    """


_QUANTITY = re.compile(r"[0-9]+(?:\.[0-9]+)? [kMGTP]?[A-Za-z/]+")


def _represent_str(representer, data: str):
    if _QUANTITY.fullmatch(data):
        tag = representer.dumper.resolver.resolve(ScalarNode, data, (True, False))
        return representer.represent_scalar(tag, data)
    return representer.represent_str(data)


_MachineFileRepresenter.add_representer(str, _represent_str)


def write_machine_file(path: Path | str, mapping: Mapping) -> Path:
    """Write a machine mapping as kerncraft YAML, atomically (a temporary file, then os.replace)."""
    path = Path(path)
    missing = [key for key in REQUIRED if key not in mapping]
    if missing:
        raise HybridtuneError(f"machine mapping for {path} lacks {', '.join(missing)}")
    data = dict(mapping)
    for key in ("in-core model", "compiler", OWN_COMPILER):
        if isinstance(data.get(key), Mapping):
            data[key] = _block_omap(data[key])
    if isinstance(data.get("probe notes"), (list, tuple)):
        notes = CommentedSeq(data["probe notes"])
        notes.fa.set_block_style()
        data["probe notes"] = notes
    writer = YAML(typ="rt")
    writer.Representer = _MachineFileRepresenter
    writer.default_flow_style = None
    writer.width = 100
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise HybridtuneError(f"cannot write machine file {path}: {exc}") from None
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write("# kerncraft machine file written by hybridtune's machine probe\n")
            writer.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, path.stat().st_mode & 0o777 if path.exists() else 0o644)   # mkstemp: 0600
        os.replace(temp, path)
    except (OSError, YAMLError, TypeError, ValueError) as exc:
        Path(temp).unlink(missing_ok=True)
        raise HybridtuneError(f"cannot write machine file {path}: {exc}") from None
    return path
