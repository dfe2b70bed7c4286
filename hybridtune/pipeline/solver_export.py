"""`export`: a variant's solver or the tuned solver written as C sources, header and Makefile."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hybridtune.describe.loader import load, load_named
from hybridtune.errors import RequestError
from hybridtune.pipeline.atomic_files import write_text_atomically
from hybridtune.pipeline.tuned_export import tuned_export
from hybridtune.pipeline.variant_export import check_export_name, export_files
from hybridtune.solver import generated_for


MAX_CANDIDATES = 8      # candidates an adaptive library times at most per rule


@dataclass(frozen=True)
class ExportRequest:
    """A scenario's variant (variant) or its tuned solver (db, the store with the measurements)."""
    scenario: str
    output: str
    name: str | None = None         # default: ht_ and the IVP's name in lower case
    variant: str | None = None
    db: str | None = None
    method: str | None = None       # default: the scenario's, where it has one
    ivp: str | None = None
    candidates: int = 1             # --tuned: variants kept per measured range (adaptive library)


@dataclass(frozen=True)
class Exported:
    """What was written where, for which method and IVP; the dispatch table of a tuned solver."""
    files: tuple
    folder: Path
    method: object
    ivp: object
    name: str
    table: object = None


def _pick(scenario, kind: str, ref: str | None, items):
    if ref:
        return load_named(kind, ref, Path(scenario.path).parent)
    if len(items) != 1:
        raise RequestError(f"--{kind}: the scenario has {len(items)} {kind}s "
                           f"({', '.join(i.name for i in items)}); name one")
    return items[0]


def _check(request: ExportRequest, tuned: bool) -> None:
    if isinstance(request.candidates, bool) or not isinstance(request.candidates, int) \
            or not 1 <= request.candidates <= MAX_CANDIDATES:
        raise RequestError(f"--candidates: expected a count from 1 to {MAX_CANDIDATES}, got "
                           f"{request.candidates}")
    if request.candidates > 1 and not tuned:
        raise RequestError("--candidates goes with --tuned (a single --variant has no others)")
    if tuned and not request.db:
        raise RequestError("--tuned: expected --db FILE, the store with the measurements")
    if request.db and not tuned:
        raise RequestError("--db goes with --tuned (a single --variant needs no store)")


def export_solver(request: ExportRequest) -> Exported:
    """Generate the files (refused before anything is written) and write each atomically."""
    tuned = request.variant is None
    _check(request, tuned)
    scenario = load(request.scenario, "scenario")
    method = _pick(scenario, "method", request.method, scenario.methods)
    ivp = _pick(scenario, "ivp", request.ivp, scenario.ivps)
    name = request.name or f"ht_{ivp.name.lower()}"
    check_export_name(name)
    table = None
    if tuned:
        files, table = tuned_export(scenario, method, ivp, request.db, name, request.candidates)
    else:
        files = export_files(generated_for(request.variant, method, ivp, scenario), name, method,
                             ivp)
    folder = Path(request.output)
    if folder.exists() and not folder.is_dir():
        raise RequestError(f"-o {folder}: expected a folder, found a file")
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in files.items():
        write_text_atomically(str(folder / file_name), text)
    return Exported(tuple(files), folder, method, ivp, name, table)
