"""Ping-pong between two real MPI ranks on this node (an MPI job of its own, built with the mpich wheel's mpicc): one point per size, positive times, the library named, and a Hockney fit judged at sizes it never saw; bad requests refused."""

from __future__ import annotations

import statistics

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.measure.comm_bench import _parsed, pingpong
from hybridtune.predict.hockney import fit_hockney

pytestmark = pytest.mark.mpi
SIZES = [0, 64, 1024, 16384, 262144, 1048576]


def test_two_ranks_time_every_size_and_a_fit_is_judged_at_held_out_sizes():
    run = pingpong(SIZES, reps=5, target_s=0.002)
    assert run.ranks == 2 and "MPICH" in run.library
    assert [p.bytes for p in run.points] == SIZES
    for point in run.points:
        assert len(point.samples_s) == 5 and point.round_trips >= 1
        assert 0 < point.median_s < 0.1, point
        assert point.median_s == pytest.approx(statistics.median(point.samples_s), rel=1e-6)
    fit = fit_hockney([(p.bytes, p.median_s) for p in run.points])
    assert fit.held_out_bytes == (64, 262144)
    assert fit.pieces[0].alpha_s + fit.pieces[0].beta_s_per_byte > 0


def test_bad_requests_and_output_are_refused_with_what_was_expected():
    with pytest.raises(HybridtuneError, match="sizes in bytes >= 0"):
        pingpong([-1])
    with pytest.raises(HybridtuneError, match="ranks >= 2"):
        pingpong([8], ranks=1)
    output = {"ranks": 2, "library": "x", "points": [{"bytes": 8, "round_trips": 1,
                                                      "samples_s": [0.0], "median_s": 0.0}]}
    with pytest.raises(HybridtuneError, match="is not 1 positive times of 8 bytes"):
        _parsed(output, [8], 1, 2)
    with pytest.raises(HybridtuneError, match="expected an object of 2 ranks"):
        _parsed({**output, "ranks": 3}, [8], 1, 2)
