"""The communication-cost fit: seconds per OpenMP barrier against threads, a + b*p or a + b*log(p)."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field

import numpy as np

from hybridtune.errors import HybridtuneError

BARRIER_KIND = "omp_barrier"
FORMS = {"linear": lambda p: p, "log": math.log}      # t(p) = a + b * FORMS[form](p)
MIN_COUNTS_FOR_CV = 4


@dataclass(frozen=True)
class BarrierFit:
    """t_barrier(p) = a + b * f(p), f the form's transform, with how well the form was validated.

    cv_error: the root-mean-square relative error of leave-one-thread-count-out predictions against
    the held-out counts' medians (NaN when not validated). data holds the fitted points, every
    form's cross-validation error and the note, as plain JSON-able values.
    """
    kind: str
    form: str
    a: float
    b: float
    cv_error: float
    validated: bool
    note: str
    data: dict = field(default_factory=dict, hash=False)

    def seconds(self, threads: int) -> float:
        """Predicted seconds per barrier for a team of `threads` (never negative)."""
        if isinstance(threads, bool) or not isinstance(threads, (int, float)) or threads < 1:
            raise HybridtuneError(f"barrier cost needs a thread count >= 1, got {threads!r}")
        return max(0.0, self.a + self.b * FORMS[self.form](threads))

    def as_record(self) -> dict:
        """A row of the store table comm_fits (the note travels inside data)."""
        return {"kind": self.kind, "form": self.form, "a": float(self.a), "b": float(self.b),
                "cv_error": float(self.cv_error), "validated": bool(self.validated),
                "data": json.dumps({**self.data, "note": self.note}, sort_keys=True), "ranks": 1,
                "provenance": json.dumps({"ranks_per_node": 1})}

    @classmethod
    def from_record(cls, record: dict) -> "BarrierFit":
        """Rebuild a fit from a comm_fits row (data as JSON text or already decoded)."""
        try:
            data = record["data"]
            data = json.loads(data) if isinstance(data, (str, bytes)) else dict(data)
            form = str(record["form"])
            if form not in FORMS:
                raise ValueError(f"form {form!r} is not one of {', '.join(FORMS)}")
            note = str(data.pop("note", ""))
            return cls(str(record["kind"]), form, float(record["a"]), float(record["b"]),
                       float(record["cv_error"]), bool(record["validated"]), note, data)
        except (KeyError, TypeError, ValueError) as exc:
            raise HybridtuneError(f"comm_fits record {record!r} is not a barrier fit: {exc}") from None


def _least_squares(threads: np.ndarray, seconds: np.ndarray, form: str) -> tuple[float, float]:
    x = np.array([FORMS[form](p) for p in threads])
    design = np.column_stack([np.ones_like(x), x])
    (a, b), *_ = np.linalg.lstsq(design, seconds, rcond=None)
    return float(a), float(b)


def _held_out_error(threads: np.ndarray, seconds: np.ndarray, counts: list, medians: dict,
                    form: str) -> float:
    """RMS relative error predicting each thread count's median from a fit to all other counts."""
    errors = []
    for held in counts:
        keep = threads != held
        a, b = _least_squares(threads[keep], seconds[keep], form)
        errors.append((a + b * FORMS[form](held) - medians[held]) / medians[held])
    return math.sqrt(sum(e * e for e in errors) / len(errors))


def fit_barrier(samples: list) -> BarrierFit:
    """Fit t_barrier(p) by least squares over every repetition of every sample.

    With at least four distinct thread counts, leave-one-out cross-validation over thread counts
    picks the form; with fewer, the linear form is taken and the fit is marked not validated.
    """
    if not samples:
        raise HybridtuneError("fit_barrier needs at least one barrier sample")
    threads, seconds = [], []
    for sample in samples:
        if not hasattr(sample, "samples_s") or sample.threads < 1 or not sample.samples_s:
            raise HybridtuneError(f"fit_barrier got {sample!r}, expected BarrierSample records with "
                                  "threads >= 1 and repetitions")
        for value in sample.samples_s:
            if not (math.isfinite(value) and value > 0):
                raise HybridtuneError(f"fit_barrier: a sample of {sample.threads} threads holds "
                                      f"{value!r}, expected positive seconds")
            threads.append(sample.threads)
            seconds.append(value)
    threads_arr, seconds_arr = np.array(threads), np.array(seconds, dtype=float)
    counts = sorted(set(threads))
    medians = {p: statistics.median(s for t, s in zip(threads, seconds) if t == p) for p in counts}
    data = {"threads": counts, "median_s": [medians[p] for p in counts],
            "repetitions": len(seconds)}
    if len(counts) == 1:
        only = counts[0]
        note = (f"one thread count ({only}): a constant {medians[only]:.3e} s, not validated "
                f"(leave-one-out needs {MIN_COUNTS_FOR_CV} distinct thread counts)")
        return BarrierFit(BARRIER_KIND, "linear", float(np.mean(seconds_arr)), 0.0, math.nan,
                          False, note, data)
    if len(counts) < MIN_COUNTS_FOR_CV:
        a, b = _least_squares(threads_arr, seconds_arr, "linear")
        note = (f"{len(counts)} distinct thread counts: the linear form a + b*p taken unvalidated "
                f"(leave-one-out cross-validation needs {MIN_COUNTS_FOR_CV})")
        return BarrierFit(BARRIER_KIND, "linear", a, b, math.nan, False, note, data)
    errors = {form: _held_out_error(threads_arr, seconds_arr, counts, medians, form)
              for form in FORMS}
    best = min(FORMS, key=lambda form: (errors[form], form != "linear"))
    a, b = _least_squares(threads_arr, seconds_arr, best)
    data["cv_errors"] = errors
    note = (f"{best} form chosen by leave-one-thread-count-out cross-validation over "
            f"{len(counts)} thread counts (" + ", ".join(f"{f}: {e:.1%}" for f, e in errors.items())
            + ")")
    return BarrierFit(BARRIER_KIND, best, a, b, errors[best], True, note, data)


def benchmark_records(samples: list, kind: str = BARRIER_KIND) -> list[dict]:
    """Rows of the store table comm_benchmarks: kind, threads, median_s, samples (JSON), on one
    rank, no message."""
    return [{"kind": kind, "threads": int(s.threads), "ranks": 1, "bytes": 0,
             "median_s": float(s.median_s),
             "samples": json.dumps({"samples_s": list(s.samples_s),
                                    "barriers_per_sample": int(s.barriers_per_sample)}),
             "provenance": json.dumps({"ranks_per_node": 1})}
            for s in samples]
