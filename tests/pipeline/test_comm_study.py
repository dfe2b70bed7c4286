"""The communication study's judgement of MPI variants across layouts, on rows made here."""

import pytest

from hybridtune.pipeline.comm_study import judge
from hybridtune.predict.variants import VariantPrediction


def row(vid, m11, m21, m12, p11, p21, p12):
    return {"ivp": "Wave1D", "n": 1000, "id": vid, "skeleton": vid[0],
            "measured_1x1": m11, "measured_2x1": m21, "measured_1x2": m12,
            "predicted_1x1": p11, "predicted_2x1": p21, "predicted_1x2": p12}


def predictions(rows, key, ranks):
    return {r["id"]: VariantPrediction(r["id"], r["skeleton"], "radauIIA7", "Wave1D", 1000, 1,
                                       "ok", r[f"predicted_{key}"], ranks=ranks) for r in rows}


def test_ratios_preselect_and_layout_picks_are_judged_against_the_targets():
    rows = [row(f"{s}{k}", 1.0 + k, 0.6 + k, 0.5 + k, 1.0 + k, 0.5 + k, 0.6 + k)
            for s in "AB" for k in range(3)]
    rows.append(row("C0", 1.0, 0.5, None, 1.0, 0.5, 0.5))       # not measured in 1x2
    predicted = {("Wave1D", 1000, 1, 1): predictions(rows, "1x1", 1),
                 ("Wave1D", 1000, 2, 1): predictions(rows, "2x1", 2)}
    judged = judge(rows, predicted)
    assert judged["ratio"]["variants"] == 7
    errors = [(0.5 + k) / (1.0 + k) / ((0.6 + k) / (1.0 + k)) - 1 for k in range(3)]
    assert judged["ratio"]["within_25%"] == 2 * sum(abs(e) <= 0.25 for e in errors) + 1
    preselect = judged["preselect5"]["configurations"]
    assert [p["layout"] for p in preselect] == ["1x1", "2x1"]
    assert all(p["loss"] == pytest.approx(0.0) for p in preselect)
    # measured 1x2 faster everywhere, predicted 2x1 faster: every differing pick is wrong; at
    # k = 2 the layouts differ by 4%, within the 5% that counts as alike
    assert judged["layouts"]["differing"] == 4 and judged["layouts"]["picked_faster"] == 0
