"""A scenario's parts (method, IVP, kernel, skeleton, machine) loaded from a path or a library name."""

from __future__ import annotations

import difflib
from collections import OrderedDict
from pathlib import Path

from hybridtune.describe import library
from hybridtune.describe.ivp import parse_ivp
from hybridtune.describe.kernel import parse_kernel
from hybridtune.describe.machine import parse_machine
from hybridtune.describe.method import parse_method
from hybridtune.describe.skeleton import parse_skeleton
from hybridtune.describe.source import Node, Source, kept, read_source
from hybridtune.errors import DescriptionError

KINDS = ("method", "ivp", "kernel", "skeleton", "machine", "scenario")


PART_PARSERS = {"method": parse_method, "ivp": parse_ivp, "kernel": parse_kernel,
                "skeleton": parse_skeleton, "machine": parse_machine}
_PARTS: OrderedDict = OrderedDict()    # parsed parts by file and content: each is frozen


def detect_kind(source: Source) -> str:
    name = Path(source.path).name
    for kind in ("method", "ivp", "kernel", "skeleton", "scenario"):
        if any(name.endswith(s) for s in library.SUFFIXES[kind]):
            return kind
    root = source.root
    if isinstance(root, dict):
        if root.get("kind") in KINDS:
            return str(root["kind"])
        keys = set(k for k in root if isinstance(k, str))
        for kind, marker in (("machine", "memory hierarchy"), ("method", "stages"),
                             ("ivp", "components"), ("kernel", "datastructs"),
                             ("scenario", "skeletons"), ("skeleton", "code")):
            if marker in keys:
                return kind
    raise Node.root(source).error(
        "a description file: a name ending in .method.yaml, .ode, .ivp.yaml, .kernel.yaml, "
        ".skeleton.yaml or .scenario.yaml, a kerncraft machine file, or a 'kind' key",
        value=None)


def checked_source(path: str | Path, kind: str | None) -> tuple[Source, str]:
    """A description file read, with its kind (detected when not given, else checked)."""
    source = read_source(path)
    found = detect_kind(source) if kind is None else kind
    if kind is not None and isinstance(source.root, dict) and source.root.get("kind") not in (
            None, kind):
        raise Node.root(source).child("kind").error(f"kind '{kind}' here")
    return source, found


def load_part(path: str | Path, kind: str):
    """Load and validate one description file of a scenario's part."""
    source, found = checked_source(path, kind)
    # an IVP's checks evaluate its right-hand side: loading a scenario parsed its parts again
    return kept(_PARTS, (source.path, source.sha256, found), lambda: PART_PARSERS[found](source))


def load_named(kind: str, ref: str, base: Path, where: Node | None = None):
    """A description named in another file: a path (relative to base) or a library name."""
    if ref == library.HOST and kind == "machine":
        return load_part(library.host_machine_file()[0], kind)
    if library.looks_like_path(ref):
        path = Path(ref) if Path(ref).is_absolute() else base / ref
        shipped = library.folder(kind) / ref
        if not path.is_file() and "/" not in ref and shipped.is_file():
            path = shipped
        if not path.is_file():
            raise (where.error(f"an existing {kind} file (looked for {path})") if where
                   else DescriptionError(str(path), None, None, f"an existing {kind} file"))
        return load_part(path, kind)
    files = library.library_files(kind)
    for name, path in files.items():
        if name.lower() == ref.lower():
            return load_part(path, kind)
    if kind == "ivp":
        for path in files.values():
            ivp = load_part(path, kind)
            if ref.lower() in (a.lower() for a in ivp.aliases) or ref.lower() == ivp.name.lower():
                return ivp
    known = ", ".join(files) or "none"
    article = "an" if kind[0] in "aeiou" else "a"
    close = difflib.get_close_matches(ref, list(files), n=1)
    expected = (f"{article} {kind.upper() if kind == 'ivp' else kind} file path or a library name "
                f"({known})" + (f"; did you mean {close[0]!r}?" if close else ""))
    if where is not None:
        raise where.error(expected, value=ref)
    raise DescriptionError(None, kind, ref, expected)
