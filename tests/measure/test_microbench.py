"""Microbenchmarks: barrier cost, stream bandwidth against footprint, the memory regime and failures."""

from __future__ import annotations

import math
import statistics

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.measure import microbench
from hybridtune.measure.microbench import (StreamCurve, StreamPoint, barrier_cost, memory_regime,
                                           stream_bandwidth)

KIB, MIB = 1 << 10, 1 << 20
IN_CACHE, IN_MEMORY = 64 * KIB, 512 * MIB


@pytest.mark.parametrize("threads", [1, 2])
def test_barrier_cost_is_positive_and_below_a_millisecond(threads):
    sample = barrier_cost(threads, reps=9)
    assert sample.threads == threads
    assert len(sample.samples_s) == 9 and sample.barriers_per_sample >= 16
    assert all(math.isfinite(s) and 0 < s < 1e-3 for s in sample.samples_s), sample
    assert 0 < sample.median_s < 1e-3, sample
    assert sample.median_s == pytest.approx(statistics.median(sample.samples_s), rel=1e-5)


@pytest.fixture(scope="module", params=[1, 2], ids=["1thread", "2threads"])
def triad_curve(request):
    return stream_bandwidth(request.param, [IN_CACHE, 4 * MIB, IN_MEMORY], "triad", samples=5)


def test_stream_curve_has_one_positive_point_per_footprint(triad_curve):
    assert triad_curve.kernel == "triad" and triad_curve.bytes_per_element == 32
    assert "write-allocate" in triad_curve.traffic
    assert [p.footprint_bytes for p in triad_curve.points] == [IN_CACHE, 4 * MIB, IN_MEMORY]
    for point in triad_curve.points:
        assert math.isfinite(point.bandwidth_Bps) and point.bandwidth_Bps > 0, point
        assert len(point.samples_Bps) == 5 and all(s > 0 for s in point.samples_Bps)
        assert min(point.samples_Bps) <= point.bandwidth_Bps <= max(point.samples_Bps)
        assert 0 < point.actual_bytes <= point.footprint_bytes and point.sweeps >= 1


def test_in_cache_bandwidth_beats_memory_bandwidth(triad_curve):
    small, _, large = triad_curve.points
    assert small.bandwidth_Bps > 1.5 * large.bandwidth_Bps, triad_curve
    assert memory_regime(triad_curve) in (4 * MIB, IN_MEMORY)


def test_read_only_sum_kernel():
    curve = stream_bandwidth(1, [IN_CACHE, 2 * MIB], "sum", samples=3)
    assert curve.kernel == "sum" and curve.bytes_per_element == 8
    assert [p.footprint_bytes for p in curve.points] == [IN_CACHE, 2 * MIB]
    assert all(p.bandwidth_Bps > 0 for p in curve.points)


def _curve(bandwidths: dict[int, float]) -> StreamCurve:
    points = tuple(StreamPoint(f, b, (b,), f, 1) for f, b in bandwidths.items())
    return StreamCurve(1, "triad", "", "", 32, points)


def test_memory_regime_starts_where_bandwidth_settles():
    curve = _curve({KIB: 100.0, 2 * KIB: 90.0, 4 * KIB: 40.0, 8 * KIB: 34.0, 16 * KIB: 31.0,
                    32 * KIB: 30.0})
    assert memory_regime(curve) == 8 * KIB          # 34 is within 15% of 30, 40 is not
    assert memory_regime(curve, tolerance=0.05) == 16 * KIB
    shuffled = _curve({32 * KIB: 30.0, KIB: 100.0, 16 * KIB: 31.0, 2 * KIB: 29.0, 4 * KIB: 60.0})
    assert memory_regime(shuffled) == 16 * KIB      # a close value below a spike does not count
    assert memory_regime(_curve({KIB: 5.0})) == KIB
    # two footprints still in cache and one in memory: the in-memory point is the reference
    short = _curve({64 * KIB: 80.0, 4 * MIB: 75.0, 512 * MIB: 31.0})
    assert memory_regime(short) == 512 * MIB
    assert memory_regime(_curve({64 * KIB: 80.0, 4 * MIB: 33.0, 512 * MIB: 31.0})) == 4 * MIB
    with pytest.raises(HybridtuneError):
        memory_regime(_curve({}))


def test_build_failure_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path))
    monkeypatch.setattr(microbench, "native_source", lambda name: "int main( {\n")
    with pytest.raises(HybridtuneError, match="building ht_barrier_bench failed.*error"):
        barrier_cost(1)
    with pytest.raises(HybridtuneError, match="building ht_stream_bench failed.*error"):
        stream_bandwidth(1, [IN_CACHE])


def test_bad_output_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path))
    fake = '#include <stdio.h>\nint main(void) { puts("{\\"threads\\": 1, \\"samples_s\\": []}"); }\n'
    monkeypatch.setattr(microbench, "native_source", lambda name: fake)
    with pytest.raises(HybridtuneError, match="samples_s"):
        barrier_cost(1)
    with pytest.raises(HybridtuneError, match="ran with 1 threads, asked for 2"):
        barrier_cost(2)


def test_bad_requests_are_errors():
    with pytest.raises(HybridtuneError, match="unknown stream kernel"):
        stream_bandwidth(1, [IN_CACHE], "scale")
    with pytest.raises(HybridtuneError, match="positive integer footprints"):
        stream_bandwidth(1, [0])
    with pytest.raises(HybridtuneError, match="threads >= 1"):
        barrier_cost(0)
