"""The MPI exchanges priced on a platform file's links: an allgather as mpich's steps, each along its partners' route (within a leaf switch or the furthest), a neighbour exchange along the neighbours' route with both halos on the host's one link whatever the rank count, a barrier ceil(log2 P) latencies; the barrier of a rank's threads passed through."""

from __future__ import annotations

import math

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.platform import load_platform
from hybridtune.predict.collectives import (ALLGATHER_LONG, ALLGATHER_SHORT, BENCHMARKS,
                                            ExchangeModel, allgather_distances, allgather_steps)
from hybridtune.predict.communication import BarrierFit
from hybridtune.predict.platform_models import platform_models, route_fit

PLATFORMS = PROJECT_ROOT / "tests" / "data" / "platforms"
# from the files, by hand: the fat tree's furthest hosts are four 0.3 us links apart, neighbours
# two, each link 100 Gb/s; the flat cluster's hosts 5 us + 1 us (backbone) + 5 us apart, 10 Gb/s
FAT_FAR, FAT_NEAR, FAT_BW = 1.2e-6, 0.6e-6, 12.5e9
FLAT_LATENCY, FLAT_BW = 11e-6, 1.25e9
LEAF = 16           # hosts under one leaf switch of the fat tree ("2;16,16;...")


def fat_step(step: float, distance: int) -> float:
    """One allgather step on the fat tree: partners under one leaf switch are neighbours."""
    return (FAT_NEAR if distance < LEAF else FAT_FAR) + step / FAT_BW


@pytest.fixture(scope="module")
def fat_tree():
    return platform_models(load_platform(PLATFORMS / "fat-tree-100g.xml"))


@pytest.fixture(scope="module")
def ethernet():
    return platform_models(load_platform(PLATFORMS / "ethernet-10g.xml"))


def test_every_mpi_op_is_priced_and_none_is_missing(fat_tree):
    assert set(fat_tree.exchanges) == set(BENCHMARKS)
    assert fat_tree.missing(set(BENCHMARKS)) == []
    for op, model in fat_tree.exchanges.items():
        assert isinstance(model, ExchangeModel) and model.op == op and model.ranks == 2
        assert model.provenance == {"platform": str(PLATFORMS / "fat-tree-100g.xml"),
                                    "hosts": 256}


def test_a_route_is_latency_plus_bytes_over_bandwidth():
    fit = route_fit(2e-6, 1e9, "somewhere")
    assert fit.seconds(0) == pytest.approx(2e-6)
    assert fit.seconds(1000) == pytest.approx(2e-6 + 1e-6)
    assert fit.note.startswith("somewhere: 2.00 us + m / 1.00 GB/s")


@pytest.mark.parametrize("bytes_per_rank, ranks, expected", [
    # recursive doubling (a power of two, below the long size): blocks of 1, 2, 4 ranks, the
    # partners 1, 2, 4 ranks apart: under one leaf switch
    (1000, 8, 3 * FAT_NEAR + 7000 / FAT_BW),
    (1000, 2, FAT_NEAR + 1000 / FAT_BW),
    # on 32 ranks the last step's partners are 16 apart: across the spine
    (100, 32, 4 * FAT_NEAR + FAT_FAR + 31 * 100 / FAT_BW),
    # Bruck (no power of two, below the short size): 3 ranks, two steps of one block
    (100, 3, 2 * (FAT_NEAR + 100 / FAT_BW)),
    # Bruck on 6 ranks: steps of min(1, 5), min(2, 4), min(4, 2) blocks
    (100, 6, 3 * FAT_NEAR + (1 + 2 + 2) * 100 / FAT_BW),
    # the ring (at the long size and above): P - 1 steps of one block between neighbours
    (1_000_000, 4, 3 * (FAT_NEAR + 1e6 / FAT_BW)),
    (1, 1, 0.0)])
def test_the_allgather_is_mpichs_steps_along_their_partners_routes(fat_tree, bytes_per_rank,
                                                                   ranks, expected):
    model = fat_tree.exchanges["mpi_allgather"]
    assert model.seconds(bytes_per_rank, ranks) == pytest.approx(expected, rel=1e-12)
    steps = allgather_steps(bytes_per_rank, ranks)
    distances = allgather_distances(bytes_per_rank, ranks)
    assert model.seconds(bytes_per_rank, ranks) == pytest.approx(
        sum(fat_step(step, d) for step, d in zip(steps, distances)), rel=1e-12)


@pytest.mark.parametrize("ranks", [2, 3, 5, 8, 12, 64, 100, 256])
@pytest.mark.parametrize("bytes_per_rank", [8, 800, ALLGATHER_SHORT // 16, ALLGATHER_LONG // 2])
def test_the_allgather_at_any_size_and_rank_count_sums_the_steps(fat_tree, ethernet, ranks,
                                                                 bytes_per_rank):
    steps = allgather_steps(bytes_per_rank, ranks)
    distances = allgather_distances(bytes_per_rank, ranks)
    assert steps and all(step > 0 for step in steps) and len(distances) == len(steps)
    assert fat_tree.exchanges["mpi_allgather"].seconds(bytes_per_rank, ranks) == pytest.approx(
        sum(fat_step(step, d) for step, d in zip(steps, distances)), rel=1e-12)
    # a flat cluster has one route
    expected = len(steps) * FLAT_LATENCY + sum(steps) / FLAT_BW
    assert ethernet.exchanges["mpi_allgather"].seconds(bytes_per_rank, ranks) == \
        pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("bytes_per_rank", [0, 8, 16_000, 4_000_000])
def test_the_neighbour_exchange_is_the_neighbours_route_while_the_ranks_share_a_leaf_switch(
        fat_tree, ethernet, bytes_per_rank):
    for models, latency, bandwidth in ((fat_tree, FAT_NEAR, FAT_BW),
                                       (ethernet, FLAT_LATENCY, FLAT_BW)):
        model = models.exchanges["mpi_neighbour_exchange"]
        for ranks in (2, 3, 8, 16, 17, 64, 256):
            # past one leaf switch some pair of neighbours (and the ring's ends) crosses the spine
            crossing = FAT_FAR if models is fat_tree and ranks > LEAF else latency
            expected = crossing + 2 * bytes_per_rank / bandwidth   # both halos on the host's link
            assert model.seconds(bytes_per_rank, ranks) == pytest.approx(expected, rel=1e-12)
        assert model.seconds(bytes_per_rank, 1) == 0.0


def test_neighbours_are_nearer_than_the_furthest_hosts_on_the_fat_tree_only(fat_tree, ethernet):
    def latency(models, op):
        return models.exchanges[op].seconds(0, 2)
    # a barrier round crosses the furthest route; two neighbours share a leaf switch
    assert latency(fat_tree, "mpi_neighbour_exchange") < latency(fat_tree, "mpi_barrier")
    assert latency(ethernet, "mpi_neighbour_exchange") == latency(ethernet, "mpi_barrier")


@pytest.mark.parametrize("ranks, rounds", [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (8, 3),
                                           (9, 4), (64, 6), (100, 7), (256, 8)])
def test_the_barrier_is_ceil_log2_p_latencies_of_the_furthest_route(fat_tree, ethernet, ranks,
                                                                    rounds):
    assert rounds == (math.ceil(math.log2(ranks)) if ranks > 1 else 0)
    for models, latency in ((fat_tree, FAT_FAR), (ethernet, FLAT_LATENCY)):
        barrier = models.exchanges["mpi_barrier"]
        assert barrier.seconds(0, ranks) == pytest.approx(rounds * latency, rel=1e-12)
        assert barrier.seconds(1_000_000, ranks) == barrier.seconds(0, ranks)   # no payload


def test_the_threads_barrier_is_passed_through():
    platform = load_platform(PLATFORMS / "fat-tree-100g.xml")
    assert platform_models(platform).omp_barrier is None
    assert platform_models(platform).barrier_s(8) == 0.0
    barrier = BarrierFit("omp_barrier", "linear", 1e-7, 2e-8, 0.01, True, "a test's barrier")
    models = platform_models(platform, barrier)
    assert models.omp_barrier is barrier
    assert models.barrier_s(4) == pytest.approx(barrier.seconds(4))
    assert models.missing({"omp_barrier", *BENCHMARKS}) == []


def test_a_platform_model_survives_the_store_record(fat_tree):
    for op, model in fat_tree.exchanges.items():
        again = ExchangeModel.from_record(model.as_record())
        assert again.op == op and again.provenance == model.provenance
        for ranks in (2, 5, 64):
            assert again.seconds(4096, ranks) == pytest.approx(model.seconds(4096, ranks))
