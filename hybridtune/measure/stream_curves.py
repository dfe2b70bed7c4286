"""Triad bandwidth against footprint, measured several times and taken point by point at the median.

On a shared machine single runs scatter by tens of percent; the runs of each thread count are
interleaved and each footprint's bandwidth is the median over them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hybridtune.measure.microbench import StreamCurve, StreamPoint, memory_regime, stream_bandwidth


@dataclass(frozen=True)
class MedianCurve:
    """One thread count's runs, their per-point median and where the memory regime starts."""
    median: StreamCurve
    runs: tuple
    regime_start: int
    regime_start_runs: tuple

    def as_json(self) -> dict:
        return {"median_curve": curve_json(self.median),
                "runs": [curve_json(run) for run in self.runs],
                "regime_start_bytes": self.regime_start,
                "regime_start_runs_bytes": list(self.regime_start_runs)}


def median_of(runs: list[StreamCurve]) -> StreamCurve:
    """The curve whose bandwidth at each footprint is the median over runs (same footprints)."""
    first = runs[0]
    points = []
    for k, point in enumerate(first.points):
        samples = tuple(s for run in runs for s in run.points[k].samples_Bps)
        points.append(StreamPoint(point.footprint_bytes,
                                  float(np.median([run.points[k].bandwidth_Bps for run in runs])),
                                  samples, point.actual_bytes, point.sweeps))
    return StreamCurve(first.threads, first.kernel, first.formula, first.traffic,
                       first.bytes_per_element, tuple(points))


def median_curves(threads: tuple, footprints: list[int], repeats: int,
                  on_run=None) -> dict[int, MedianCurve]:
    """repeats triad runs per thread count, interleaved, and their medians; on_run(k, threads,
    curve) is told of each run."""
    runs: dict = {t: [] for t in threads}
    for k in range(repeats):
        for t in threads:
            runs[t].append(stream_bandwidth(t, footprints, kernel="triad"))
            if on_run:
                on_run(k, t, runs[t][-1])
    out = {}
    for t in threads:
        median = median_of(runs[t])
        out[t] = MedianCurve(median, tuple(runs[t]), memory_regime(median),
                             tuple(memory_regime(run) for run in runs[t]))
    return out


def bandwidth_at(curve: StreamCurve, footprint: float) -> float:
    """Bandwidth at a footprint, interpolated linearly in log(footprint) between measured points
    (held at the first and last point beyond them)."""
    points = sorted(curve.points, key=lambda p: p.footprint_bytes)
    if footprint <= points[0].footprint_bytes:
        return points[0].bandwidth_Bps
    for low, high in zip(points, points[1:]):
        if footprint <= high.footprint_bytes:
            weight = (math.log(footprint / low.footprint_bytes)
                      / math.log(high.footprint_bytes / low.footprint_bytes))
            return low.bandwidth_Bps + weight * (high.bandwidth_Bps - low.bandwidth_Bps)
    return points[-1].bandwidth_Bps


def curve_json(curve: StreamCurve) -> dict:
    return {"threads": curve.threads, "kernel": curve.kernel, "formula": curve.formula,
            "traffic": curve.traffic, "bytes_per_element": curve.bytes_per_element,
            "points": [{"footprint_bytes": p.footprint_bytes, "bandwidth_Bps": p.bandwidth_Bps}
                       for p in curve.points]}
