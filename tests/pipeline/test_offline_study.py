"""The offline model's study: predictions against timings, and the Offsite way's cost extrapolated."""

import pytest

from hybridtune.pipeline.offline_study import agreement, offsite_way
from hybridtune.store import Store
from learn_support import FIXTURE


def test_agreement_of_predictions_with_the_measured_ok_ones():
    found = agreement([1.0, 2.0, 3.0, 4.0], [2.0, 2.0, None, 8.0])
    assert found["measured_ok"] == 3
    assert found["median_abs_rel_error"] == 0.5
    assert found["median_predicted_over_measured"] == 0.5
    assert found["kendall_tau"] == pytest.approx(0.816, abs=1e-3)
    assert found["rank_of_fastest_measured_in_prediction"] == 1


def test_the_offsite_way_times_one_process_per_loop_and_size(tmp_path):
    with Store.open(FIXTURE, "r") as store:
        loops = len(store.frame("kernels"))
    found = offsite_way(FIXTURE, tmp_path / "machine.yml", {}, 2, loops, 9, "/bin/true")
    assert found["sampled_calls"] == 2 * min(2, loops)
    assert found["calls_needed"] == 9 * loops
    assert found["extrapolated_s"] == pytest.approx(found["median_call_s"] * 9 * loops, abs=0.5)
