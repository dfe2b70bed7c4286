"""Costs of the MPI exchanges: fitted at two ranks, carried to p ranks by mpich's algorithms.

Fitted to microbenchmarks at two ranks; mpich's algorithms are recursive doubling, Bruck, ring and
dissemination.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from hybridtune.errors import HybridtuneError
from hybridtune.predict.hockney import HockneyFit, Piece, fit_hockney

# %COM op -> the benchmark kind that measures it (native/ht_comm_bench.c)
BENCHMARKS = {"mpi_allgather": "allgather", "mpi_neighbour_exchange": "neighbour",
              "mpi_barrier": "barrier"}
# mpich's MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE and _LONG_MSG_SIZE defaults (bytes gathered in all)
ALLGATHER_SHORT = 81920
ALLGATHER_LONG = 524288


def allgather_algorithm(bytes_per_rank: float, ranks: int) -> str:
    """The algorithm mpich's MPI_Allgather takes for this total: recursive doubling for a power
    of two below the long size, Bruck below the short size, else the ring."""
    total = bytes_per_rank * ranks
    if ranks & (ranks - 1) == 0 and total < ALLGATHER_LONG:
        return "recursive doubling"
    return "bruck" if total < ALLGATHER_SHORT else "ring"


def allgather_schedule(bytes_per_rank: float, ranks: int) -> list[tuple[float, int]]:
    """(bytes each rank sends, how many ranks apart its partners are) of each step of
    allgather_algorithm: log2 p steps of 2^k blocks, 2^k apart (recursive doubling); ceil(log2 p)
    steps of min(2^k, p - 2^k) blocks, 2^k apart (Bruck); p - 1 steps of one block between
    neighbours (ring)."""
    if ranks <= 1:
        return []
    algorithm = allgather_algorithm(bytes_per_rank, ranks)
    if algorithm == "recursive doubling":
        return [(bytes_per_rank * 2 ** k, 2 ** k) for k in range(int(math.log2(ranks)))]
    if algorithm == "bruck":
        return [(bytes_per_rank * min(2 ** k, ranks - 2 ** k), 2 ** k)
                for k in range(math.ceil(math.log2(ranks)))]
    return [(bytes_per_rank, 1)] * (ranks - 1)


def allgather_steps(bytes_per_rank: float, ranks: int) -> list[float]:
    """The bytes each rank sends in each step of allgather_schedule."""
    return [size for size, _ in allgather_schedule(bytes_per_rank, ranks)]


def allgather_distances(bytes_per_rank: float, ranks: int) -> list[int]:
    """How many ranks apart the partners of each step of allgather_schedule are."""
    return [distance for _, distance in allgather_schedule(bytes_per_rank, ranks)]


@dataclass(frozen=True)
class ExchangeModel:
    """One %COM op's cost against the bytes each rank sends and the rank count.

    fit: Hockney's T(m) fitted to the op measured at `ranks` ranks on one node (an allgather of m
    bytes per rank, a neighbour exchange of m bytes each way, a barrier: m = 0). At two ranks each
    of these is one pairwise exchange step, so p ranks cost the steps of mpich's algorithm, each
    priced by the fit at its size: an allgather as allgather_steps, a barrier ceil(log2 p) rounds
    (dissemination), a neighbour exchange one step whatever p (each rank meets two neighbours)."""
    op: str
    fit: HockneyFit
    ranks: int
    provenance: dict = field(default_factory=dict, hash=False)
    # a route between ranks fewer than near_span apart (under one leaf switch): an allgather
    # step's partners, a neighbour exchange's ranks when there are at most near_span
    near: HockneyFit | None = None
    near_span: int = 0

    def seconds(self, bytes_per_rank: float, ranks: int) -> float:
        if ranks < 1 or bytes_per_rank < 0:
            raise HybridtuneError(f"{self.op}: a cost needs ranks >= 1 and bytes >= 0, got "
                                  f"{ranks}, {bytes_per_rank}")
        if ranks == 1:
            return 0.0                      # the variant's exchange returns at once
        if self.op == "mpi_allgather":
            return sum((self.near if self.near is not None and distance < self.near_span
                        else self.fit).seconds(step)
                       for step, distance in allgather_schedule(bytes_per_rank, ranks))
        if self.op == "mpi_barrier":
            return math.ceil(math.log2(ranks)) * self.fit.seconds(0)
        # a neighbour exchange waits for the furthest pair of neighbours: within one leaf
        # switch while the ranks fit under it, else across it (and around the ring's end)
        near = self.near is not None and ranks <= self.near_span
        return (self.near if near else self.fit).seconds(bytes_per_rank)

    def as_record(self) -> dict:
        """A row of the store table comm_fits: the first piece as a and b, the fit in data."""
        first = self.fit.pieces[0]
        data = {"pieces": [[p.from_bytes, p.alpha_s, p.beta_s_per_byte] for p in self.fit.pieces],
                "fit_error": self.fit.fit_error, "held_out_bytes": list(self.fit.held_out_bytes),
                "note": self.fit.note}
        if self.near is not None:
            data["near"] = {"pieces": [[p.from_bytes, p.alpha_s, p.beta_s_per_byte]
                                       for p in self.near.pieces], "note": self.near.note,
                            "span": self.near_span}
        return {"kind": self.op, "form": "hockney" if len(self.fit.pieces) == 1 else
                "hockney piecewise", "a": first.alpha_s, "b": first.beta_s_per_byte,
                "cv_error": self.fit.held_out_error, "validated": True,
                "data": json.dumps(data, sort_keys=True), "ranks": self.ranks,
                "provenance": json.dumps(self.provenance, sort_keys=True)}

    @classmethod
    def from_record(cls, record: dict) -> "ExchangeModel":
        try:
            data, provenance = (value if isinstance(value, (dict, list)) else json.loads(value)
                                for value in (record["data"], record["provenance"]))
            pieces = tuple(Piece(int(a), float(b), float(c)) for a, b, c in data["pieces"])
            fit = HockneyFit(pieces, float(data["fit_error"]), float(record["cv_error"]),
                             tuple(int(v) for v in data["held_out_bytes"]), str(data["note"]))
            near, span = None, 0
            if "near" in data:
                near = HockneyFit(tuple(Piece(int(a), float(b), float(c))
                                        for a, b, c in data["near"]["pieces"]), 0.0, 0.0, (),
                                  str(data["near"]["note"]))
                span = int(data["near"]["span"])
            return cls(str(record["kind"]), fit, int(record["ranks"]), dict(provenance), near,
                       span)
        except (KeyError, TypeError, ValueError) as exc:
            raise HybridtuneError(f"comm_fits record {str(record)[:300]!r} is not an exchange "
                                  f"fit: {exc}") from None


def protocol_switch(fit: HockneyFit) -> int | None:
    """The size from which a piecewise fit's second piece starts (None for one line)."""
    return fit.pieces[1].from_bytes if len(fit.pieces) > 1 else None


def fit_exchange(op: str, run, known_switch: int | None = None) -> ExchangeModel:
    """The model of %COM op from a benchmark run of its kind (measure/comm_bench.CommRun);
    known_switch: the size from which a ping-pong on the same transport switched protocol."""
    if BENCHMARKS.get(op) != run.kind:
        raise HybridtuneError(f"{op} is fitted to a {BENCHMARKS.get(op)} run, got {run.kind}")
    points = [(p.bytes, p.median_s) for p in run.points]
    if op == "mpi_barrier":         # no message: a constant, every repetition of the one point
        median = points[0][1]
        spread = [abs(t - median) / median for p in run.points for t in p.samples_s]
        error = math.sqrt(sum(e * e for e in spread) / len(spread))
        fit = HockneyFit((Piece(0, median, 0.0),), error, error, (),
                         f"a constant {median:.3e} s per round (no message size to fit); "
                         f"its repetitions spread {error:.1%}")
    else:
        fit = fit_hockney(points, known_switch)
    return ExchangeModel(op, fit, run.ranks, run.provenance)
