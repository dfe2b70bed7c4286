"""A collocation method's description file: its YAML text, written to a file or returned."""

from __future__ import annotations

from hybridtune.describe.collocation import FAMILIES, method_yaml
from hybridtune.errors import HybridtuneError
from hybridtune.pipeline.atomic_files import write_text_atomically


def method_text(family: str, stages: int, name: str | None = None) -> str:
    """The description of the family's method of `stages` stages (name default: family and
    order)."""
    if family not in FAMILIES:
        raise HybridtuneError(f"method family '{family}': expected one of {', '.join(FAMILIES)}")
    order = FAMILIES[family][0](stages)
    return method_yaml(name or f"{family}{order}", family, stages)


def write_method(path: str, text: str) -> None:
    """The description written atomically."""
    write_text_atomically(path, text)
