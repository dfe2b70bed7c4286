"""`store import`: a tuned library's production report lines taken into the store as measurements.

A line is refused when it is malformed, when its code is not code the store measured, or when the
host it reports is not the hardware it claims; a line already in the store adds nothing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from hybridtune.errors import RequestError
from hybridtune.learn.timing import PRODUCTION
from hybridtune.measure.provenance import digest, identity_of
from hybridtune.store import Store

FORMAT = "hybridtune-production-1"
TEXTS = ("library", "variant", "method", "ivp", "hardware_id", "tuned_hardware_id", "code_sha256")
COUNTS = ("n", "ranks", "threads", "steps", "sampled", "candidates")
SECONDS = ("median_s", "ci_low_s", "ci_high_s", "p10_s", "p90_s")
REFUSALS = {"malformed": "malformed", "foreign": "of code the store never measured",
            "host": "run on other hardware than they claim"}


@dataclass(frozen=True)
class ImportRequest:
    files: tuple
    db: str


@dataclass
class ImportSummary:
    """Lines read, rows written, lines already held, and per refusal its count and first example."""
    lines: int = 0
    written: int = 0
    held: int = 0
    refused: dict = field(default_factory=dict)     # kind -> [count, "FILE:LINE: why"]

    def refuse(self, kind: str, where: str, why: str) -> None:
        entry = self.refused.setdefault(kind, [0, f"{where}: {why}"])
        entry[0] += 1


def import_production(request: ImportRequest) -> ImportSummary:
    """Every file's lines checked against the store, the good ones appended as one batch (all or
    none) under one run, each with a row id made from its content, so that importing a file again
    adds nothing."""
    texts = []
    for path in request.files:
        try:
            texts.append((path, Path(path).read_text().splitlines()))
        except (OSError, UnicodeDecodeError) as error:
            raise RequestError(f"{path}: cannot read the report ({error})") from None
    if not Path(request.db).exists():
        raise RequestError(f"--db {request.db}: no such store (import into the store the library "
                           "was tuned from)")
    summary = ImportSummary()
    with Store.open(request.db, "r") as store:
        measured = store.frame("measurements", ["row_id", "id", "method", "ivp", "code_sha256",
                                                "generator_version"])
    known = {(r.code_sha256, r.id, r.method, r.ivp): r.generator_version
             for r in measured.itertuples() if r.code_sha256}
    held = set(measured["row_id"])
    rows = []
    for path, lines in texts:
        for number, text in enumerate(lines, 1):
            if not text.strip():
                continue
            summary.lines += 1
            row = _row(text, f"{path}:{number}", known, summary)
            if row is None:
                continue
            if row["row_id"] in held:
                summary.held += 1
                continue
            held.add(row["row_id"])
            rows.append({**row, "source": str(path)})
    if rows:        # nothing new: not even a run is recorded
        with Store.open(request.db, "a", {"command": "store import", "extra": {
                "files": [str(p) for p in request.files]}}) as store:
            store.append_many("measurements", rows)
    summary.written = len(rows)
    return summary


def _row(text: str, where: str, known: dict, summary: ImportSummary) -> dict | None:
    """The measurements row of one line, or None (the refusal noted in summary)."""
    try:
        line = json.loads(text)
        problem = _malformed(line)
    except json.JSONDecodeError as error:
        problem = f"not JSON ({error.msg} at column {error.colno})"
    if problem:
        summary.refuse("malformed", where, problem)
        return None
    key = (line["code_sha256"], line["variant"], line["method"], line["ivp"])
    if key not in known:
        summary.refuse("foreign", where, f"variant {line['variant']} ({line['method']}, "
                       f"{line['ivp']}) with code {line['code_sha256'][:12]}: no measurement of "
                       "that code in the store")
        return None
    host = line["host"]
    caches = [cache[1:] for cache in sorted(host["caches"], key=lambda cache: cache[0])]
    identity = identity_of(host["model"] or "unknown", host["vendor"], host["flags"], caches)
    if identity["hardware_id"] != line["hardware_id"]:
        summary.refuse("host", where, f"claims hardware {line['hardware_id']}, its host's facts "
                       f"are hardware {identity['hardware_id']} ({host['model']})")
        return None
    elsewhere = "" if line["hardware_id"] == line["tuned_hardware_id"] else \
        f"; ran on other hardware than the library was tuned on ({line['tuned_hardware_id']})"
    median, low, high = line["median_s"], line["ci_low_s"], line["ci_high_s"]
    return {"row_id": "production-" + digest(json.dumps(line, sort_keys=True)),
            "id": line["variant"], "method": line["method"], "ivp": line["ivp"],
            "n": line["n"], "threads": line["threads"], "ranks": line["ranks"], "nodes": 1,
            "status": "ok", "median_s": median, "ci_low_s": low, "ci_high_s": high,
            "ci_rel": (high - low) / (2 * median), "timing": PRODUCTION,
            "repetitions": line["sampled"], "steps_per_repetition": 1,
            "message": f"production run of {line['library']}: {line['steps']} steps timed, "
                       f"p10 {line['p10_s']:.4e} s, p90 {line['p90_s']:.4e} s"
                       + (f", kept of {line['candidates']} candidates" if line["kept"] else
                          f", one of {line['candidates']} candidates" if line["candidates"] > 1
                          else "") + elsewhere,
            "code_sha256": line["code_sha256"], "generator_version": known[key],
            "compiler": line["compiler"], "compiler_flags": line["compiler_flags"],
            "hardware_id": identity["hardware_id"], "hardware": identity["hardware"],
            "node": line["node"], "ci_target": math.nan, "budget_s": math.nan,
            "check_error": math.nan, "build_id": ""}


def _malformed(line) -> str:
    """What is wrong with a parsed line, or '' where nothing is."""
    if not isinstance(line, dict):
        return "expected a JSON object"
    if line.get("format") != FORMAT:
        return f"format: expected {FORMAT!r}, got {line.get('format')!r}"
    for key in (*TEXTS, "compiler", "compiler_flags", "node"):
        if not isinstance(line.get(key), str) or (key in TEXTS and not line[key]):
            return f"{key}: expected a text, got {line.get(key)!r}"
    for key in COUNTS:
        value = line.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return f"{key}: expected a whole number >= 1, got {value!r}"
    for key in SECONDS:
        value = line.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value <= 0:
            return f"{key}: expected seconds > 0, got {value!r}"
    if not line["ci_low_s"] <= line["median_s"] <= line["ci_high_s"]:
        return (f"median_s: expected within [ci_low_s, ci_high_s], got {line['median_s']} outside "
                f"[{line['ci_low_s']}, {line['ci_high_s']}]")
    if not isinstance(line.get("kept"), bool):
        return f"kept: expected true or false, got {line.get('kept')!r}"
    host = line.get("host")
    if not isinstance(host, dict) or not all(isinstance(host.get(k), str)
                                             for k in ("model", "vendor", "flags")):
        return "host: expected model, vendor and flags as texts"
    caches = host.get("caches")
    if not isinstance(caches, list) or not all(
            isinstance(c, list) and len(c) == 4 and all(isinstance(x, str) for x in c)
            for c in caches):
        return "host.caches: expected [index, level, type, size] texts per cache"
    return ""
