"""Scaling studies from predictions of known times: rank counts, speedups, scaled speedups, efficiency, where communication overtakes computation, the best variant at each rank count, variants left out, Amdahl's and Gustafson's fractions and the JSON of a study."""

from __future__ import annotations

import json
import math

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.predict.scaling_curves import (ScalingPoint, rank_counts, scaling_study, study_json,
                                        variant_json)
from scaling_support import STRONG, WEAK, prediction, tables

N = 1000                # as the shared curves' N_HAND
RANKS = (1, 2, 4, 8)


@pytest.fixture
def study():
    return scaling_study("radauIIA7", "Lorenz96", N, tables(STRONG), tables(WEAK))


@pytest.mark.parametrize("ranks_max, counts", [
    (1, [1]), (2, [1, 2]), (3, [1, 2, 3]), (4, [1, 2, 4]), (6, [1, 2, 4, 6]), (8, [1, 2, 4, 8]),
    (64, [1, 2, 4, 8, 16, 32, 64]), (100, [1, 2, 4, 8, 16, 32, 64, 100]),
    (255, [1, 2, 4, 8, 16, 32, 64, 128, 255]), (256, [1, 2, 4, 8, 16, 32, 64, 128, 256])])
def test_rank_counts_double_and_end_at_the_maximum(ranks_max, counts):
    assert rank_counts(ranks_max) == counts


@pytest.mark.parametrize("ranks_max", [0, -1, -64])
def test_rank_counts_below_one_are_refused(ranks_max):
    with pytest.raises(HybridtuneError, match=f"--ranks-max {ranks_max}: expected a rank count "
                                              "of at least 1"):
        rank_counts(ranks_max)


def test_a_point_splits_its_step_into_computation_and_communication():
    point = ScalingPoint(4, N, 2.6, 0.6)
    assert point.compute_s == pytest.approx(2.0)


def test_the_studys_variants_and_points(study):
    assert (study.method, study.ivp, study.n, study.ranks) == ("radauIIA7", "Lorenz96", N, RANKS)
    assert [v.variant for v in study.variants] == ["A-mpi_x", "F-mpi-nx_y"]
    a, f = study.variants
    assert (a.skeleton, f.skeleton) == ("A-mpi", "F-mpi-nx")
    assert [p.ranks for p in a.strong] == [p.ranks for p in a.weak] == list(RANKS)
    assert [p.n for p in a.strong] == [N] * 4 and [p.n for p in a.weak] == [N, 2 * N, 4 * N, 8 * N]
    assert [(p.seconds, p.comm_s) for p in a.strong] == [(8.0, 0.0), (4.5, 0.5), (2.6, 0.6),
                                                         (2.0, 1.1)]


def test_speedups_scaled_speedups_and_efficiency(study):
    a, f = study.variants
    assert f.speedups() == [(1, 1.0), (2, 2.0), (4, 4.0), (8, 8.0)]
    assert a.speedups() == [(1, 1.0), (2, pytest.approx(8 / 4.5)), (4, pytest.approx(8 / 2.6)),
                            (8, 4.0)]
    assert f.scaled_speedups() == [(1, 1.0), (2, 2.0), (4, 4.0), (8, 8.0)]
    assert a.scaled_speedups() == [(1, 1.0), (2, pytest.approx(16 / 8.5)),
                                   (4, pytest.approx(32 / 9)), (8, pytest.approx(64 / 9.5))]
    record = variant_json(a)
    assert [p["efficiency"] for p in record["strong"]] == pytest.approx(
        [1.0, 8 / 4.5 / 2, 8 / 2.6 / 4, 0.5])
    assert [p["efficiency"] for p in record["weak"]] == pytest.approx(
        [1.0, 8 / 8.5, 8 / 9, 8 / 9.5])


def test_the_crossover_is_the_first_rank_count_whose_communication_exceeds_its_computation(study):
    a, f = study.variants
    assert a.crossover() == 8                   # 1.1 s of 2.0 (at 4 ranks 0.6 s of 2.6)
    assert f.crossover() is None                # never
    equal = {"v": {1: (2.0, 0.0, N), 2: (1.0, 0.5, N), 4: (1.0, 0.6, N)}}
    even, = scaling_study("m", "i", N, tables(equal), tables(equal)).variants
    assert even.crossover() == 4                # equal halves at 2 ranks do not count


def test_the_best_variant_at_each_rank_count_strong_and_weak_differ(study):
    assert [(p, v.variant) for p, v in study.best()] == [
        (1, "A-mpi_x"), (2, "A-mpi_x"), (4, "F-mpi-nx_y"), (8, "F-mpi-nx_y")]
    assert [(p, v.variant) for p, v in study.best(weak=True)] == [
        (1, "A-mpi_x"), (2, "A-mpi_x"), (4, "A-mpi_x"), (8, "A-mpi_x")]


def test_a_tie_goes_to_the_first_variant_by_name():
    tie = {"b": {1: (1.0, 0.0, N), 2: (0.5, 0.0, N)}, "a": {1: (1.0, 0.0, N), 2: (0.5, 0.0, N)}}
    study = scaling_study("m", "i", N, tables(tie), tables(tie))
    assert [v.variant for _, v in study.best()] == ["a", "a"]


def test_a_variant_missing_or_failed_at_one_rank_count_is_left_out():
    strong, weak = tables(STRONG), tables(WEAK)
    for p in RANKS:                              # G: no strong prediction at 4 ranks
        if p != 4:
            strong[p].append(prediction("G-mpi_g", p, 1.0))
        weak[p].append(prediction("G-mpi_g", p, 1.0))
    for p in RANKS:                              # H: failed on 2 ranks of the weak curve
        strong[p].append(prediction("H-mpi_h", p, 1.0))
        weak[p].append(prediction("H-mpi_h", p, 1.0, status="failed" if p == 2 else "ok"))
    for p in RANKS:                              # E: no weak curve at all
        strong[p].append(prediction("E-mpi_e", p, 1.0))
    study = scaling_study("radauIIA7", "Lorenz96", N, strong, weak)
    assert [v.variant for v in study.variants] == ["A-mpi_x", "F-mpi-nx_y"]


def test_no_variant_at_every_rank_count_is_refused():
    failed = {p: [prediction("A-mpi_x", p, math.nan, status="failed")] for p in RANKS}
    with pytest.raises(HybridtuneError, match=r"radauIIA7 Lorenz96 n = 1000: no variant has a "
                                              r"prediction at every rank count of \[1, 2, 4, 8\]"):
        scaling_study("radauIIA7", "Lorenz96", N, failed, failed)
    empty = {p: [] for p in RANKS}
    with pytest.raises(HybridtuneError, match="no variant has a prediction"):
        scaling_study("radauIIA7", "Lorenz96", N, empty, empty)


def test_strong_and_weak_need_the_same_rank_counts():
    weak = tables(WEAK)
    del weak[8]
    with pytest.raises(HybridtuneError, match=r"strong \(\[1, 2, 4, 8\]\) and weak \(\[1, 2, 4\]\) "
                                              "scaling need the same rank counts"):
        scaling_study("radauIIA7", "Lorenz96", N, tables(STRONG), weak)


@pytest.mark.parametrize("f", [0.0, 0.02, 0.1, 0.25])
def test_amdahls_and_gustafsons_fractions_of_curves_built_by_their_laws(f):
    ranks = [1, 2, 4, 8, 16, 32]
    one = 3.0
    # Amdahl: T(P) = T(1) (f + (1 - f) / P); Gustafson: P n on P ranks, T(P) = T(1) P / S(P)
    # with the scaled speedup S(P) = P - f (P - 1)
    strong = {"v": {p: (one * (f + (1 - f) / p), 0.0, N) for p in ranks}}
    weak = {"v": {p: (one * p / (p - f * (p - 1)), 0.0, p * N) for p in ranks}}
    variant, = scaling_study("m", "i", N, tables(strong), tables(weak)).variants
    amdahl, gustafson = variant.amdahl(), variant.gustafson()
    assert amdahl.law == "amdahl" and gustafson.law == "gustafson"
    assert amdahl.fraction == pytest.approx(f, abs=1e-12)
    assert gustafson.fraction == pytest.approx(f, abs=1e-12)
    assert amdahl.rms_rel_error < 1e-9 and gustafson.rms_rel_error < 1e-9
    assert amdahl.points == gustafson.points == len(ranks)
    assert amdahl.limit == (math.inf if f == 0 else pytest.approx(1 / f))
    assert gustafson.limit == math.inf


def test_too_few_rank_counts_leave_the_laws_out():
    two = {"v": {1: (2.0, 0.0, N), 2: (1.2, 0.2, N)}}
    variant, = scaling_study("m", "i", N, tables(two), tables(two)).variants
    assert variant.amdahl() is None and variant.gustafson() is None
    record = variant_json(variant)
    assert record["amdahl"] is None and record["gustafson"] is None


def test_study_json_of_round_numbers(study):
    record = study_json(study)
    assert json.loads(json.dumps(record, allow_nan=False)) == record    # plain JSON, no inf or NaN
    assert {k: record[k] for k in ("method", "ivp", "n", "ranks")} == {
        "method": "radauIIA7", "ivp": "Lorenz96", "n": N, "ranks": [1, 2, 4, 8]}
    assert record["best_strong"] == [{"ranks": 1, "variant": "A-mpi_x"},
                                     {"ranks": 2, "variant": "A-mpi_x"},
                                     {"ranks": 4, "variant": "F-mpi-nx_y"},
                                     {"ranks": 8, "variant": "F-mpi-nx_y"}]
    assert record["best_weak"] == [{"ranks": p, "variant": "A-mpi_x"} for p in RANKS]
    a, f = record["variants"]
    assert (f["variant"], f["skeleton"]) == ("F-mpi-nx_y", "F-mpi-nx")
    assert f["strong"] == [
        {"ranks": 1, "n": N, "seconds": 10.0, "comm_s": 0.0, "speedup": 1.0, "efficiency": 1.0},
        {"ranks": 2, "n": N, "seconds": 5.0, "comm_s": 0.0, "speedup": 2.0, "efficiency": 1.0},
        {"ranks": 4, "n": N, "seconds": 2.5, "comm_s": 0.0, "speedup": 4.0, "efficiency": 1.0},
        {"ranks": 8, "n": N, "seconds": 1.25, "comm_s": 0.0, "speedup": 8.0, "efficiency": 1.0}]
    assert f["weak"] == [
        {"ranks": p, "n": p * N, "seconds": 10.0, "comm_s": 0.0, "scaled_speedup": float(p),
         "efficiency": 1.0} for p in RANKS]
    assert f["comm_overtakes_at"] is None and a["comm_overtakes_at"] == 8
    # perfect scaling: no serial part, no limit (null in JSON, not Infinity)
    assert f["amdahl"] == {"serial_fraction": 0.0, "limit": None, "rms_rel_error": 0.0,
                           "points": 4}
    assert f["gustafson"] == {"serial_fraction": 0.0, "limit": None, "rms_rel_error": 0.0,
                              "points": 4}
    assert a["strong"][3] == {"ranks": 8, "n": N, "seconds": 2.0, "comm_s": 1.1, "speedup": 4.0,
                              "efficiency": 0.5}
    assert 0 < a["amdahl"]["serial_fraction"] < 1
    assert a["amdahl"]["limit"] == pytest.approx(1 / a["amdahl"]["serial_fraction"])


def test_weak_scaling_at_a_capped_size_counts_the_work_as_it_grew():
    """The IVP's largest size is 3 N: from 4 ranks on the work stays 3-fold, and the same
    step time is a scaled speedup of 3, not of P."""
    weak = {"F-mpi_f": {1: (1.0, 0.0, N), 2: (1.0, 0.0, 2 * N), 4: (0.75, 0.0, 3 * N),
                        8: (0.375, 0.0, 3 * N)}}
    strong = {"F-mpi_f": {p: (1.0 / p, 0.0, N) for p in RANKS}}
    [f] = scaling_study("radauIIA7", "Lorenz96", N, tables(strong), tables(weak)).variants
    assert f.scaled_speedups() == [(1, 1.0), (2, 2.0), (4, 4.0), (8, 8.0)]
    capped = {"F-mpi_f": {1: (1.0, 0.0, N), 2: (1.0, 0.0, 2 * N), 4: (1.0, 0.0, 3 * N),
                          8: (1.0, 0.0, 3 * N)}}
    [f] = scaling_study("radauIIA7", "Lorenz96", N, tables(strong), tables(capped)).variants
    assert f.scaled_speedups() == [(1, 1.0), (2, 2.0), (4, 3.0), (8, 3.0)]
