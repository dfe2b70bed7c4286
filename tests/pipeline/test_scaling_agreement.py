"""The scaling benchmark's analysis in the package: simulated curves of a scaling document, PMNF extrapolation against the analytic step, both fits of one data set beside each other, and this machine written as a two-host platform."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hybridtune.describe.platform import load_platform
from hybridtune.pipeline.pmnf_agreement import (extrapolations, fit_agreement,
                                                simulated_agreement, simulated_curves,
                                                synthetic_agreement)
from hybridtune.pipeline.smpi_agreement import median
from hybridtune.pipeline.two_rank_check import _platform_text

RANKS = (1, 2, 4, 8, 16, 32, 64)


def curve_points(variant: str, law, predicted_at_64: float, status: str = "ok") -> list:
    return [{"ivp": "Wave1D", "n": 20000, "ranks": p, "variant": variant, "status": status,
             "simulated_s": law(p), "predicted_s": predicted_at_64 if p == 64 else law(p)}
            for p in RANKS]


def law(p):
    return 0.01 + 1.0 / p


PARTS = {"fat-tree-100g": {"points": curve_points("B", law, law(64))
                           + curve_points("A", law, 2 * law(64))
                           + curve_points("C", law, 1.0, status="failed")},
         "ethernet-10g": {"points": curve_points("A", law, law(64))[:4]}}


def test_the_simulated_curves_by_platform_ivp_and_variant():
    curves = simulated_curves(PARTS)
    assert list(curves) == [("fat-tree-100g", "Wave1D", "A"), ("fat-tree-100g", "Wave1D", "B"),
                            ("ethernet-10g", "Wave1D", "A")]       # failed points left out
    assert sorted(curves[("fat-tree-100g", "Wave1D", "B")]) == list(RANKS)


def test_pmnf_extrapolates_an_exact_law_to_the_last_rank_count():
    """Fitted on 1 ... 32 ranks, the model of 0.01 + 1/p gives SMPI's step at 64; the analytic
    step of A is twice it, so A's pair disagrees and B's does not. The ethernet curve has too few
    points."""
    found = extrapolations(PARTS)
    assert [(e["platform"], e["variant"]) for e in found] == [("fat-tree-100g", "A"),
                                                              ("fat-tree-100g", "B")]
    for e in found:
        assert e["empirical_s"] == pytest.approx(law(64), rel=1e-6)
        assert e["empirical_error"] == pytest.approx(0.0, abs=1e-6)
    assert [e["analytic_error"] for e in found] == pytest.approx([1.0, 0.0])
    assert [e["disagree"] for e in found] == [True, False]


def test_the_median_leaves_out_what_is_not_finite():
    assert median([3.0, None, float("nan"), 1.0, 2.0]) == 2.0
    assert median([None]) is None


def test_this_machine_as_a_two_host_platform(tmp_path):
    path = tmp_path / "host.xml"
    path.write_text(_platform_text(SimpleNamespace(alpha_s=2e-6, beta_s_per_byte=1e-10)))
    platform = load_platform(path)
    assert platform.hosts == ("rank-0", "rank-1")
    assert platform.latency_s == pytest.approx(1e-6)
    assert platform.bandwidth_bytes_per_s == pytest.approx(1e10)


@pytest.mark.slow
def test_ours_and_extrap_name_the_same_term(monkeypatch):
    """One draw of each synthetic law, and the simulated curves of the document, by both fits."""
    found = synthetic_agreement(seeds=1)
    assert [r["true"] for r in found] == ["p", "p * log2(p)", "log2(p)", "p^2", "p^(1/2)",
                                          "p^-1"]
    assert sum(r["same"] for r in found) >= 5
    simulated = simulated_agreement(PARTS)
    assert [(r["platform"], r["variant"]) for r in simulated] == [("fat-tree-100g", "A"),
                                                                  ("fat-tree-100g", "B")]
    assert all(r["same"] and r["ours"] == "p^-1" for r in simulated)
    exact = fit_agreement([(p, [law(p)] * 3) for p in RANKS[1:]], negative=True)
    assert exact["ours"] == exact["extrap"] == "p^-1"
