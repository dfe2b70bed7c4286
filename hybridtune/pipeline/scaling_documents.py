"""The scaling JSON documents that `report --scaling` draws: written here, checked when read.

Two kinds: the studies of `predict --scaling --json` ({"studies": [...]}), and simulated points by
platform, as `simulate --json` and jobs/bench_scaling.py write them ({"platforms": {name: {"platform":
FILE, "note": ..., "points": [...], and the agreement of smpi_agreement.agreement}}}).
"""

from __future__ import annotations

import json
from pathlib import Path

from hybridtune.errors import RequestError

STUDY_KEYS = ("ivp", "n", "best_strong", "variants")
POINT_KEYS = ("ivp", "n", "ranks", "variant", "status", "simulated_s")


def simulation_document(parts: dict, **facts) -> dict:
    """A document of simulated points: {platform name: part} (smpi_agreement.platform_part) and
    the facts beside them (scenario, machine, ...)."""
    document = {**facts, "platforms": parts}
    problem = document_problem(document)
    if problem:
        raise ValueError(f"a simulated scaling document of the wrong shape: {problem}")
    return document


def _has(item, keys: tuple) -> bool:
    return isinstance(item, dict) and all(key in item for key in keys)


def _points_problem(platforms) -> str:
    parts = list(platforms.values()) if isinstance(platforms, dict) else [None]
    if all(isinstance(part, dict) and isinstance(part.get("points", []), list)
           and all(_has(p, POINT_KEYS) for p in part.get("points", [])) for part in parts):
        return ""
    return ("expected 'platforms' to map each platform to an object whose 'points' each "
            f"have {', '.join(POINT_KEYS)}")


def document_problem(document: dict) -> str:
    """What keeps a scaling document from being drawn ('' where nothing does), so that a
    malformed one is refused before the store is read rather than failing halfway."""
    studies = document.get("studies", [])
    if not isinstance(studies, list) or not all(_has(s, STUDY_KEYS) for s in studies):
        return f"expected 'studies' to be a list of studies, each with {', '.join(STUDY_KEYS)}"
    return _points_problem(document.get("platforms", {}))


def read_scaling(paths: list[str]) -> list[dict]:
    """The --scaling JSON documents, each refused with its file named where it does not read."""
    documents = []
    for path in paths:
        try:
            document = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise RequestError(f"--scaling {path}: expected the JSON of `predict --scaling "
                               f"--json` or of jobs/bench_scaling.py ({exc})") from None
        if not isinstance(document, dict) or not ("studies" in document
                                                   or "platforms" in document):
            raise RequestError(f"--scaling {path}: expected a JSON object with 'studies' "
                               "(predict --scaling --json) or 'platforms' (bench_scaling)")
        problem = document_problem(document)
        if problem:
            raise RequestError(f"--scaling {path}: {problem}")
        documents.append(document)
    return documents
