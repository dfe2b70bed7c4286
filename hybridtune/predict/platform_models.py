"""The MPI exchanges' costs on a cluster described by a SimGrid platform file.

Hockney lines from the stated latencies and bandwidths of its routes, never from our own fits.
"""

from __future__ import annotations

from hybridtune.describe.platform import Platform
from hybridtune.predict.collectives import ExchangeModel
from hybridtune.predict.hockney import HockneyFit, Piece
from hybridtune.predict.superstep import CommunicationModels


def route_fit(latency_s: float, bandwidth: float, what: str) -> HockneyFit:
    """T(m) = latency + m / bandwidth: one message along one route."""
    return HockneyFit((Piece(0, latency_s, 1.0 / bandwidth),), 0.0, 0.0, (),
                      f"{what}: {latency_s * 1e6:.2f} us + m / {bandwidth / 1e9:.2f} GB/s "
                      "(the platform's stated links)")


def platform_models(platform: Platform, omp_barrier=None) -> CommunicationModels:
    """Each MPI op's model on the platform, one rank per host: an allgather's steps along the
    route of their partners (within a leaf switch, or the longest), a barrier's rounds along the
    longest, a neighbour exchange along a neighbour's route while all ranks share a leaf
    switch (else the longest: some pair of neighbours does not), its two halos sharing the
    host's link. omp_barrier: the threads' barrier inside a rank,
    which a platform file does not describe (None: free)."""
    far, near = platform.route(), platform.route(neighbours=True)
    provenance = {"platform": platform.path, "hosts": len(platform.hosts)}
    far_fit = route_fit(*far, f"{platform.name}, furthest hosts")
    exchanges = {
        "mpi_allgather": ExchangeModel("mpi_allgather", far_fit, 2, provenance,
                                       route_fit(*near, f"{platform.name}, one leaf switch"),
                                       platform.leaf_hosts()),
        "mpi_barrier": ExchangeModel("mpi_barrier", HockneyFit(
            (Piece(0, far[0], 0.0),), 0.0, 0.0, (), f"{platform.name}: one latency a round"),
            2, provenance),
        # both halos leave a host through its one link: 2 m bytes on it, whatever p
        "mpi_neighbour_exchange": ExchangeModel(
            "mpi_neighbour_exchange", route_fit(far[0], far[1] / 2, f"{platform.name}, both "
                                                "neighbours through one link, furthest"), 2,
            provenance, route_fit(near[0], near[1] / 2, f"{platform.name}, both neighbours "
                                  "through one link, under one leaf switch"),
            platform.leaf_hosts())}
    return CommunicationModels(omp_barrier, exchanges)
