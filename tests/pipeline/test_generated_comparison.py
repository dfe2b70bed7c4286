"""The generated-variants comparison: a case measured for real (numba stubbed), sizes and targets."""

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.generate.pool import pool_for
from hybridtune.measure.microbench import StreamCurve, StreamPoint
from hybridtune.measure.runner import MeasureOptions
from hybridtune.measure.step_baselines import ReferenceStates
from hybridtune.measure.stream_curves import MedianCurve
from hybridtune.pipeline import generated_comparison as comparison
from hybridtune.pipeline.generated_comparison import (CaseInputs, ComparisonRequest, case_targets,
                                                      choose_sizes, run_case, summary)
from hybridtune.report.generated_table import comparison_table, targets_line

QUICK = MeasureOptions(budget_s=0.05, min_repetitions=3, max_repetitions=6)


def flat_curve(threads: int, regime: int = 8 << 20) -> MedianCurve:
    points = tuple(StreamPoint(1 << k, 1e10, (1e10,), 1 << k, 1) for k in range(16, 30))
    median = StreamCurve(threads, "triad", "a = b + s c", "3 arrays", 24, points)
    return MedianCurve(median, (median,), regime, (regime,))


@pytest.fixture(scope="module")
def inputs():
    scenario = load(PROJECT_ROOT / "scenarios" / "default.yaml", "scenario")
    method = next(m for m in scenario.methods if m.name == "radauIIA7")
    variants = list(pool_for(scenario, method).values())[::192]
    return CaseInputs(scenario, method, {s.name: s for s in scenario.skeletons}, variants,
                      {1: flat_curve(1), 2: flat_curve(2)}, ReferenceStates(method))


def test_a_case_sweeps_remeasures_and_bounds_the_best(inputs, monkeypatch):
    monkeypatch.setattr(comparison, "NORMAL", QUICK)
    monkeypatch.setattr(comparison, "numba_case", lambda *a: {"status": "ok", "median_s": 1.0})
    ivp = next(i for i in inputs.scenario.ivps if i.name == "Wave1D")
    case = run_case(inputs, ivp, 400, 1, QUICK, None, {"median_s": 2.0}, lambda text: None)
    assert case["sweep"]["variants"] == 2 and case["sweep"]["ok"] == 2
    best = case["best"]["median_s"]
    assert case["best"]["sweep_median_s"] <= case["worst"]["sweep_median_s"]
    assert case["worst_over_best_sweep"] >= 1 and case["worst_over_best"] > 0
    assert case["ratios"]["numba_over_best"] == pytest.approx(1.0 / best)
    assert case["ratios"]["numpy_over_best"] == pytest.approx(2.0 / best)
    bound = case["bound"]
    assert bound["variant"] == case["best"]["id"] and bound["bandwidth_Bps"] == 1e10
    assert bound["bound_s"] == pytest.approx(bound["bytes_per_step"] / 1e10)
    full = {**case, "size": "small", "targets": case_targets(case, False)}
    assert full["targets"] == {"speedup_vs_numba": 1.0 / best >= 1.5, "bound": None}
    table = comparison_table([full])
    assert table.count("\n") == 2 and case["best"]["id"] in table
    totals = summary([full], {"in_memory_regime": True})
    assert totals["cases"] == 1 and totals["variants_failed"] == 0
    assert "failed variant measurements: 0" in targets_line(
        totals, {"speedup_vs_numba": 1.5, "bound_fraction": 0.7})


def test_the_large_size_is_a_multiple_of_the_memory_regime_capped(inputs):
    curves = {1: flat_curve(1, 8 << 20), 2: flat_curve(2, 16 << 20)}
    sizes = choose_sizes(inputs.method, 1 << 20, curves, ComparisonRequest(n_small=4000))
    per_n = (3 * inputs.method.stages + 3) * 8
    assert sizes["n_large"] == (64 << 20) // per_n // 1000 * 1000
    assert sizes["in_memory_regime"] and "fits" in sizes["n_small_why"]
    capped = choose_sizes(inputs.method, None, curves,
                          ComparisonRequest(max_large_ws_bytes=32 << 20))
    assert capped["n_large"] == (32 << 20) // per_n // 1000 * 1000
    assert "does NOT fit" in capped["n_small_why"]
