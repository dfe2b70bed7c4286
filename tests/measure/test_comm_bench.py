"""Communication benchmarks between two real MPI ranks on this node (an MPI job of its own, built with the mpich wheel's mpicc): one point per size, positive times, the library named, fits judged at sizes they never saw, LogGP's round trips; bad requests and output refused."""

from __future__ import annotations

import statistics

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.measure.comm_bench import comm_run, library_version, parsed_run, pingpong
from hybridtune.predict.collectives import fit_exchange
from hybridtune.predict.hockney import fit_hockney

pytestmark = pytest.mark.mpi
SIZES = [0, 64, 1024, 16384, 262144, 1048576]


def test_two_ranks_time_every_size_and_a_fit_is_judged_at_held_out_sizes():
    run = pingpong(SIZES, reps=5, target_s=0.002)
    assert run.ranks == 2 and "MPICH" in run.library
    assert run.provenance["library"].startswith("MPICH ") and run.provenance["ranks_per_node"] == 2
    assert [p.bytes for p in run.points] == SIZES
    for point in run.points:
        assert len(point.samples_s) == 5 and point.calls >= 1
        assert 0 < point.median_s < 0.1, point
        assert point.median_s == pytest.approx(statistics.median(point.samples_s), rel=1e-6)
    fit = fit_hockney([(p.bytes, p.median_s) for p in run.points])
    assert fit.held_out_bytes == (64, 262144)
    assert fit.pieces[0].alpha_s + fit.pieces[0].beta_s_per_byte > 0


@pytest.mark.parametrize("kind, op", [("allgather", "mpi_allgather"),
                                      ("neighbour", "mpi_neighbour_exchange")])
def test_the_exchanges_of_the_variants_are_timed_and_fitted(kind, op):
    sizes = [8, 256, 4096, 65536, 1048576]
    run = comm_run(kind, sizes, reps=3, target_s=0.002)
    assert run.kind == kind and [p.bytes for p in run.points] == sizes
    assert all(0 < p.median_s < 0.1 for p in run.points)
    model = fit_exchange(op, run)
    assert model.ranks == 2 and model.fit.held_out_bytes == (256,)      # never the largest
    assert model.seconds(4096, 1) == 0.0 and model.seconds(4096, 2) > 0


def test_a_barrier_and_logp_round_trips_are_timed():
    barrier = comm_run("barrier", [0], reps=3, target_s=0.002)
    assert 0 < barrier.points[0].median_s < 1e-3
    prtt = comm_run("prtt", [1, 65536], reps=3, target_s=0.002, messages=8)
    for point in prtt.points:
        assert point.messages == 8 and point.delay_s == point.prtt_1.median_s
        # with a busy delay before seven of eight messages they take at least those delays. Not
        # compared: eight back to back against one (one round trip and seven gaps, the gaps within
        # the noise at 1 byte), nor with against without the delay (where the gap exceeds overhead
        # and delay the delay is hidden, as LogP has it: seen at 64 KiB on two cores)
        assert 0 < point.prtt_1.median_s and 0 < point.prtt_n0.median_s
        assert point.prtt_nd.median_s > (point.messages - 1) * point.delay_s


def test_bad_requests_and_output_are_refused_with_what_was_expected():
    with pytest.raises(HybridtuneError, match="sizes in bytes >= 0"):
        pingpong([-1])
    with pytest.raises(HybridtuneError, match="ranks >= 2"):
        pingpong([8], ranks=1)
    with pytest.raises(HybridtuneError, match="barrier moves no message"):
        comm_run("barrier", [8])
    with pytest.raises(HybridtuneError, match="expected one of pingpong, allgather"):
        comm_run("broadcast", [8])
    output = {"kind": "pingpong", "ranks": 2, "library": "x",
              "points": [{"bytes": 8, "calls": 1, "samples_s": [0.0], "median_s": 0.0}]}
    with pytest.raises(HybridtuneError, match="is not 1 positive times"):
        parsed_run(output, "pingpong", [8], 1, 2)
    with pytest.raises(HybridtuneError, match="expected an object of pingpong on 2 ranks"):
        parsed_run({**output, "ranks": 3}, "pingpong", [8], 1, 2)


def test_the_library_version_is_read_from_mpis_own_words():
    assert library_version("MPICH Version:      5.0.2 MPICH Release date: Fri") == "MPICH 5.0.2"
    assert library_version("Open MPI v4.1.5, package: Debian") == "Open MPI 4.1.5"
