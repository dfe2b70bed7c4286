"""Kerncraft forms kept on disk between runs.

Keyed by the descriptions they come from and by the code that builds them.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

import sympy

from hybridtune.describe.library import cache_root
from hybridtune.generate.kerncraft_form import KerncraftForm, KerncraftPart
from hybridtune.generate.size_expressions import N

# the packages whose code decides a form: a change to any of their files is a new key
_BUILDERS = ("describe", "generate")


def cache_dir() -> Path:
    return cache_root() / "forms"


@lru_cache(maxsize=1)
def code_identity() -> str:
    """sha256 of the source of the packages that build forms."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]
    for name in _BUILDERS:
        for path in sorted((package / name).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def form_key(template, variant: str, method, ivp) -> str:
    """The cache key of one form job (see form_keys)."""
    return form_keys([(template, variant, method, ivp)])[0]


def form_keys(jobs: list) -> list[str]:
    """The cache key of each form job (template, variant, method, IVP): the descriptions' full
    values (frozen dataclasses, so their repr is their content) and the builders' code. A
    description shared by many jobs is written out once."""
    texts: dict = {}     # id -> repr, of descriptions the jobs hold alive meanwhile

    def text(description) -> str:
        if id(description) not in texts:
            texts[id(description)] = repr(description)
        return texts[id(description)]

    return [hashlib.sha256("\0".join((code_identity(), text(template), variant, text(method),
                                      text(ivp))).encode()).hexdigest()[:32]
            for template, variant, method, ivp in jobs]


@lru_cache(maxsize=None)
def _expression(text: str):
    return sympy.sympify(text, locals={"n": N})


def _as_record(form: KerncraftForm) -> dict | None:
    """A form as plain data; None where an expression would not read back as itself (then
    the form is not cached)."""
    parts = []
    for part in form.parts:
        expressions = [sympy.sympify(e) for e in (part.iterations,) + part.extents]
        if any(e.free_symbols - {N} or _expression(str(e)) != e for e in expressions):
            return None
        record = dict(part.__dict__)
        record["iterations"] = str(part.iterations)
        record["extents"] = [str(e) for e in part.extents]
        record["defines"] = list(part.defines)
        parts.append(record)
    return {"template": form.template, "variant": form.variant, "method": form.method,
            "ivp": form.ivp, "parts": parts, "omitted": list(form.omitted)}


def _from_record(record: dict) -> KerncraftForm:
    parts = tuple(KerncraftPart(**{**part, "iterations": _expression(part["iterations"]),
                                   "extents": tuple(_expression(e) for e in part["extents"]),
                                   "defines": tuple(part["defines"])})
                  for part in record["parts"])
    return KerncraftForm(record["template"], record["variant"], record["method"], record["ivp"],
                         parts, tuple(record["omitted"]))


def cached_form(key: str) -> KerncraftForm | None:
    """The form stored under key, or None (absent or unreadable: it is built again)."""
    path = cache_dir() / f"{key}.json"
    try:
        return _from_record(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError, sympy.SympifyError):
        return None


def keep_form(key: str, form: KerncraftForm) -> None:
    """Store a form under key, atomically (a killed run leaves no half-written file)."""
    record = _as_record(form)
    if record is None:
        return
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".form.", suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        json.dump(record, handle)
    os.replace(tmp, folder / f"{key}.json")
