"""The barrier cost fit: form recovery, cross-validation, records and one real measurement."""

from __future__ import annotations

import json
import math
import random
import statistics

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.measure.microbench import BarrierSample, barrier_samples
from hybridtune.predict.communication import BarrierFit, benchmark_records, fit_barrier


def synthetic(law, threads, reps=9, noise=0.02, seed=7) -> list[BarrierSample]:
    """Samples of law(p) with multiplicative noise, as the barrier benchmark would report them."""
    rng = random.Random(seed)
    out = []
    for p in threads:
        values = tuple(law(p) * (1 + rng.uniform(-noise, noise)) for _ in range(reps))
        out.append(BarrierSample(p, statistics.median(values), values, 1000))
    return out


def test_linear_law_is_recovered_and_chosen():
    samples = synthetic(lambda p: 2e-7 + 1.5e-7 * p, [1, 2, 4, 6, 8, 12, 16])
    fit = fit_barrier(samples)
    assert fit.validated and fit.form == "linear" and fit.kind == "omp_barrier"
    assert fit.a == pytest.approx(2e-7, rel=0.1) and fit.b == pytest.approx(1.5e-7, rel=0.03)
    assert fit.seconds(10) == pytest.approx(2e-7 + 1.5e-6, rel=0.03)
    assert fit.cv_error < 0.05
    assert fit.data["cv_errors"]["linear"] < fit.data["cv_errors"]["log"]


def test_logarithmic_law_is_recovered_and_chosen():
    samples = synthetic(lambda p: 1e-7 + 4e-7 * math.log(p), [1, 2, 4, 8, 16, 32, 64])
    fit = fit_barrier(samples)
    assert fit.validated and fit.form == "log"
    assert fit.a == pytest.approx(1e-7, rel=0.15) and fit.b == pytest.approx(4e-7, rel=0.03)
    assert fit.seconds(128) == pytest.approx(1e-7 + 4e-7 * math.log(128), rel=0.03)
    assert fit.data["cv_errors"]["log"] < fit.data["cv_errors"]["linear"]
    assert "cross-validation" in fit.note


def test_four_counts_are_enough_to_validate():
    fit = fit_barrier(synthetic(lambda p: 1e-7 + 4e-7 * math.log(p), [1, 4, 16, 64]))
    assert fit.validated and fit.form == "log" and fit.data["threads"] == [1, 4, 16, 64]


def test_two_counts_give_an_unvalidated_linear_fit_over_all_repetitions():
    samples = synthetic(lambda p: 3e-7 + 2e-7 * p, [1, 2], reps=15)
    fit = fit_barrier(samples)
    assert fit.form == "linear" and not fit.validated and math.isnan(fit.cv_error)
    assert "2 distinct thread counts" in fit.note and "unvalidated" in fit.note
    means = [statistics.fmean(s.samples_s) for s in samples]   # least squares meets the means
    assert fit.seconds(1) == pytest.approx(means[0], rel=1e-9)
    assert fit.seconds(2) == pytest.approx(means[1], rel=1e-9)
    assert fit.data["repetitions"] == 30


def test_one_count_gives_a_constant():
    fit = fit_barrier(synthetic(lambda p: 5e-7, [2]))
    assert fit.b == 0.0 and not fit.validated and fit.seconds(64) == pytest.approx(5e-7, rel=0.03)


def test_predictions_never_go_negative():
    samples = [BarrierSample(1, 1e-6, (1e-6,), 10), BarrierSample(2, 5e-7, (5e-7,), 10)]
    fit = fit_barrier(samples)
    assert fit.b < 0 and fit.seconds(2) == pytest.approx(5e-7) and fit.seconds(10) == 0.0


@pytest.mark.parametrize("samples", [[], [BarrierSample(0, 1e-7, (1e-7,), 1)],
                                     [BarrierSample(2, 1e-7, (float("nan"),), 1)],
                                     [BarrierSample(2, 1e-7, (), 1)]])
def test_bad_samples_are_refused(samples):
    with pytest.raises(HybridtuneError):
        fit_barrier(samples)


def test_thread_counts_below_one_are_refused():
    fit = fit_barrier(synthetic(lambda p: 1e-7 * p, [1, 2]))
    for bad in (0, -3, True):
        with pytest.raises(HybridtuneError, match="thread count"):
            fit.seconds(bad)


@pytest.mark.parametrize("threads", [[1, 2], [1, 2, 4, 8, 16]])
def test_records_round_trip(threads):
    fit = fit_barrier(synthetic(lambda p: 1e-7 + 2e-7 * p, threads))
    record = fit.as_record()
    assert set(record) == {"kind", "form", "a", "b", "cv_error", "validated", "data", "ranks",
                           "provenance"}
    assert isinstance(record["validated"], bool) and isinstance(record["a"], float)
    assert json.loads(record["data"])["note"] == fit.note
    for row in (record, dict(record, data=json.loads(record["data"]))):
        back = BarrierFit.from_record(row)
        assert (back.kind, back.form, back.a, back.b, back.validated, back.note, back.data) == (
            fit.kind, fit.form, fit.a, fit.b, fit.validated, fit.note, fit.data)
        assert back.cv_error == fit.cv_error or math.isnan(back.cv_error) and math.isnan(fit.cv_error)
        assert back.seconds(3) == fit.seconds(3)


@pytest.mark.parametrize("broken", [{"kind": "omp_barrier"},
                                    {"kind": "x", "form": "cubic", "a": 0, "b": 0, "cv_error": 0,
                                     "validated": True, "data": "{}"},
                                    {"kind": "x", "form": "log", "a": 0, "b": 0, "cv_error": 0,
                                     "validated": True, "data": "not json"}])
def test_malformed_records_are_refused(broken):
    with pytest.raises(HybridtuneError, match="comm_fits record"):
        BarrierFit.from_record(broken)


def test_benchmark_records():
    samples = synthetic(lambda p: 1e-7 * p, [1, 2], reps=3)
    rows = benchmark_records(samples)
    assert [(r["kind"], r["threads"]) for r in rows] == [("omp_barrier", 1), ("omp_barrier", 2)]
    for row, sample in zip(rows, samples):
        assert row["median_s"] == sample.median_s
        stored = json.loads(row["samples"])
        assert stored["samples_s"] == list(sample.samples_s)
        assert stored["barriers_per_sample"] == sample.barriers_per_sample


def test_real_barrier_measurement_on_this_machine():
    samples = barrier_samples(2, reps=5)
    fit = fit_barrier(samples)
    assert [s.threads for s in samples] == [1, 2]
    assert all(len(s.samples_s) == 5 for s in samples)
    assert fit.seconds(1) > 0 and fit.seconds(2) > 0
    assert fit.seconds(2) < 1e-3
    assert not fit.validated and fit.form == "linear"
    with pytest.raises(HybridtuneError):
        barrier_samples(0)
