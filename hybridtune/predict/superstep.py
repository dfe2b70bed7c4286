"""A time step's communication in the BSP manner: each %COM point priced by its op's model.

For the layout (ranks x threads) and the bytes the point moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hybridtune.describe.looplang import loops_and_directives
from hybridtune.describe.skeleton import Skeleton
from hybridtune.generate.kerncraft_form import ELEMENT_BYTES
from hybridtune.predict.communication import BarrierFit


@dataclass(frozen=True)
class CommunicationModels:
    """The cost model of each %COM op this machine has measured: omp_barrier against the threads
    of a rank, the MPI ops (predict/collectives.ExchangeModel) against bytes and ranks. An op
    without a model costs nothing, and `missing` says so."""
    omp_barrier: BarrierFit | None = None
    exchanges: dict = field(default_factory=dict)     # op -> ExchangeModel

    def barrier_s(self, threads: int) -> float:
        return self.omp_barrier.seconds(threads) if self.omp_barrier else 0.0

    def missing(self, ops: set[str]) -> list[str]:
        have = set(self.exchanges) | ({"omp_barrier"} if self.omp_barrier else set())
        return sorted(ops - have)


def communication_points(skeleton: Skeleton, m: int) -> dict[tuple, int]:
    """(op, buffer or '') -> how often it runs per step for m corrector steps."""
    points: dict[tuple, int] = {}
    for directive, _ in loops_and_directives(skeleton.program):
        if directive.name == "COM":
            points.setdefault((directive.args[0], directive.args[1] if len(directive.args) > 1
                               else ""), 0)
    return {key: skeleton.count(lambda d, key=key: d.name == "COM" and (
        d.args[0], d.args[1] if len(d.args) > 1 else "") == key, m) for key in points}


def message_bytes(op: str, rows: int, n: int, ranks: int, halo: int) -> tuple[int, float]:
    """(calls, bytes each rank sends per call) of one exchange of a buffer of `rows` rows: an
    allgather per row of the largest block, a neighbour exchange of the halo of every row."""
    if op == "mpi_allgather":
        return rows, ELEMENT_BYTES * math.ceil(n / ranks)
    if op == "mpi_neighbour_exchange":
        return 1, ELEMENT_BYTES * rows * halo
    return 1, 0.0


@dataclass(frozen=True)
class StepCommunication:
    """One step's communication on one rank: its predicted seconds, the barriers its threads meet
    and the bytes it sends."""
    seconds: float = 0.0
    barriers: int = 0
    bytes: float = 0.0


def step_communication(skeleton: Skeleton, m: int, rows: dict, models: CommunicationModels,
                       n: int, ranks: int, threads: int, halo: int = 0) -> StepCommunication:
    """One step's communication: every omp_barrier, and every MPI op with the two barriers its
    rank's threads meet at around it (generate/cmpi.py); on one rank an MPI op sends nothing."""
    seconds, barriers, sent = 0.0, 0, 0.0
    for (op, buffer), count in communication_points(skeleton, m).items():
        if op == "omp_barrier":
            barriers += count
            seconds += count * models.barrier_s(threads)
            continue
        barriers += 2 * count
        seconds += count * 2 * models.barrier_s(threads)
        calls, size = message_bytes(op, rows.get(buffer, 1), n, ranks, halo)
        if ranks > 1:
            sent += count * calls * size
        model = models.exchanges.get(op)
        if model is not None:
            seconds += count * calls * model.seconds(size, ranks)
    return StepCommunication(seconds, barriers, sent)
