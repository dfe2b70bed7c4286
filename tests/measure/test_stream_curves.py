"""Bandwidth curves: the per-point median of runs and the bandwidth between measured footprints."""

import pytest

from hybridtune.measure import stream_curves
from hybridtune.measure.microbench import StreamCurve, StreamPoint
from hybridtune.measure.stream_curves import bandwidth_at, curve_json, median_curves, median_of


def curve(bandwidths, threads=1):
    points = tuple(StreamPoint(1024 << k, b, (b,), 1024 << k, 1) for k, b in enumerate(bandwidths))
    return StreamCurve(threads, "triad", "a = b + s c", "3 arrays", 24, points)


def test_the_median_is_taken_point_by_point_with_every_sample_kept():
    runs = [curve([10.0, 5.0]), curve([30.0, 1.0]), curve([20.0, 3.0])]
    median = median_of(runs)
    assert [p.bandwidth_Bps for p in median.points] == [20.0, 3.0]
    assert median.points[0].samples_Bps == (10.0, 30.0, 20.0)


def test_bandwidth_is_interpolated_in_log_footprint_and_held_beyond_the_ends():
    c = curve([100.0, 50.0, 10.0])
    assert bandwidth_at(c, 10) == 100.0 and bandwidth_at(c, 1 << 30) == 10.0
    assert bandwidth_at(c, 2048) == 50.0
    assert bandwidth_at(c, 2048 * 2 ** 0.5) == pytest.approx(30.0)
    assert curve_json(c)["points"][1] == {"footprint_bytes": 2048, "bandwidth_Bps": 50.0}


def test_median_curves_interleave_the_runs_of_each_thread_count(monkeypatch):
    order = []

    def fake(threads, footprints, kernel):
        order.append(threads)
        return curve([40.0 + len(order), 1.0, 1.0], threads)

    monkeypatch.setattr(stream_curves, "stream_bandwidth", fake)
    curves = median_curves((1, 2), [1024, 2048, 4096], 3)
    assert order == [1, 2, 1, 2, 1, 2]
    assert curves[1].median.points[0].bandwidth_Bps == 43.0
    assert len(curves[2].runs) == 3 and len(curves[2].regime_start_runs) == 3
    assert curves[2].as_json()["regime_start_bytes"] == curves[2].regime_start
