import math

import pandas as pd
import pytest

from hybridtune.learn import timing
from hybridtune.learn.table import best_measurements

KEY = ["method", "ivp", "n", "threads", "variant"]


def _row(row_id, variant, seconds, timing_mode="alone", run="r1", version=1, code=None, n=600):
    return {"row_id": row_id, "id": variant, "method": "m", "ivp": "i", "n": n, "threads": 1,
            "status": "ok", "median_s": seconds, "ci_low_s": seconds * 0.99,
            "ci_high_s": seconds * 1.01, "ci_rel": 0.01, "timing": timing_mode, "run_id": run,
            "generator_version": version, "code_sha256": code or variant,
            "compiler_flags": "-O3", "hardware_id": "h", "build_id": "b", "hardware": "x"}


def test_passes_of_the_same_code_are_combined_by_their_geometric_mean():
    frame = pd.DataFrame([_row(0, "a", 1.0, run="p1"), _row(1, "a", 4.0, run="p2", version=2),
                          _row(2, "b", 1.0, run="p1", code="old-b"),
                          _row(3, "b", 3.0, run="p2", version=2)])
    best = best_measurements(frame).set_index("variant")
    assert best.loc["a", "median_s"] == pytest.approx(2.0) and best.loc["a", "passes"] == 2
    assert best.loc["a", "ci_low_s"] == pytest.approx(0.99)
    assert best.loc["a", "ci_rel"] == pytest.approx((4.04 - 0.99) / 4.0)
    assert best.loc["a", "row_id"] == 1
    # b's first pass timed other code than the newest generator's: only the newest counts
    assert best.loc["b", "median_s"] == 3.0 and best.loc["b", "passes"] == 1
    assert math.isnan(best.loc["a", "retimed_s"])


def test_a_pass_that_widened_its_own_interval_counts_less():
    # the ground truth's InverterChain at n = 209715 in small: one pass timed 1.9x slow with a 31%
    # interval (the machine disturbed), the other with 1%
    quiet, disturbed = _row(0, "a", 1.0, run="p1"), _row(1, "a", 1.9, run="p2")
    disturbed.update(ci_rel=0.31, ci_low_s=1.9 * 0.69, ci_high_s=1.9 * 1.31)
    best = best_measurements(pd.DataFrame([quiet, disturbed])).set_index("variant")
    weights = [1 / (timing.TIMING_SPREAD ** 2 + (ci / timing.Z95) ** 2) for ci in (0.01, 0.31)]
    expected = math.exp(weights[1] * math.log(1.9) / sum(weights))
    assert best.loc["a", "median_s"] == pytest.approx(expected)
    assert 1.0 < expected < 1.05 and best.loc["a", "passes"] == 2
    assert "_weight" not in best


def test_only_the_latest_re_timing_round_of_a_configuration_is_kept_apart():
    frame = pd.DataFrame([_row(0, "a", 1.0), _row(1, "b", 1.05), _row(2, "c", 1.5),
                          _row(3, "a", 1.2, "interleaved", run="r1"),
                          _row(4, "b", 1.1, "interleaved", run="r1"),
                          _row(5, "a", 1.3, "interleaved", run="r2"),
                          _row(6, "c", 1.4, "interleaved", run="r2"),
                          _row(7, "a", 9.9, "interleaved", run="r0", n=6000),
                          _row(8, "a", 9.0, n=6000)])
    best = best_measurements(frame).set_index(["n", "variant"])
    # first timings stay first timings; the latest round (r2) at n = 600 re-timed a and c
    assert best.loc[(600, "a"), "median_s"] == 1.0 and best.loc[(600, "a"), "retimed_s"] == 1.3
    assert math.isnan(best.loc[(600, "b"), "retimed_s"])
    assert best.loc[(600, "c"), "retimed_s"] == 1.4
    assert best.loc[(6000, "a"), "retimed_s"] == 9.9


def test_contenders_are_within_the_noise_of_the_best_or_overlap_it():
    first = {"a": (1.0, 0.99, 1.01), "b": (1.09, 1.08, 1.10), "c": (1.2, 1.0, 1.4),
             "d": (1.3, 1.29, 1.31), "e": (1.0, math.nan, math.nan)}
    assert timing.contenders(first) == ["a", "e", "b", "c"]
    assert timing.contenders({"a": (1.0, 0.9, 1.1)}) == []
    many = {str(i): (1.0 + i / 1000, None, None) for i in range(20)}
    assert len(timing.contenders(many)) == timing.RETIME_MAX


def test_a_lone_fast_first_timing_is_raced_against_the_next_fastest():
    # 20% ahead of everyone: no other is close, and it is raced all the same
    lone = {"a": (0.8, 0.79, 0.81), "b": (1.0, 0.99, 1.01), "c": (1.02, 1.0, 1.04),
            "d": (1.3, 1.29, 1.31)}
    assert timing.contenders(lone) == ["a", "b", "c"][:timing.RACE_MIN] == ["a", "b"]
    assert timing.contenders({"a": (1.0, None, None), "b": (2.0, None, None)}) == ["a", "b"]


def test_a_choice_rests_on_the_re_timing_round_only_where_it_holds_the_fastest_first_timing():
    first = {"a": 1.0, "b": 1.05, "c": 1.5}
    assert timing.choose(first, {}) == "a"
    assert timing.choose(first, {"a": 1.2, "b": 1.1}) == "b"
    # the round alone decides: a's lucky first timing 1.0 gets no say against b's 1.16
    assert timing.compared(first, {"a": 1.2, "b": 1.16}) == {"a": 1.2, "b": 1.16}
    assert timing.choose(first, {"a": 1.2, "b": 1.16}) == "b"
    # a round older than a faster first timing (d measured after it) does not decide
    assert timing.choose({**first, "d": 0.5}, {"a": 1.2, "b": 1.1}) == "d"
    assert timing.compared({**first, "d": 0.5}, {"a": 1.2}) == {**first, "d": 0.5}
    assert timing.choose({}, {}) is None

