"""A configuration to tune (method, IVP, n and layout) and the configurations a scenario asks for.

The layout is ranks x threads per rank.
"""

from __future__ import annotations

from dataclasses import dataclass

from hybridtune.describe.scenario import Scenario
from hybridtune.describe.skeleton import Skeleton
from hybridtune.errors import RequestError


@dataclass(frozen=True)
class Configuration:
    method: object
    ivp: object
    n: int
    threads: int       # per rank
    ranks: int = 1


def configurations(scenario: Scenario, n: int | None, threads: list[int] | None,
                   ranks: list[int] | None = None):
    if ranks and max(ranks) > 1 and not any(s.is_mpi for s in scenario.skeletons):
        raise RequestError(f"--ranks {max(ranks)}: scenario {scenario.name} ({scenario.path}) has "
                           "no MPI skeleton (A-mpi ... H-mpi), and only those run on more than "
                           "one rank")
    for method in scenario.methods:
        for ivp in scenario.ivps:
            sizes = [n] if n is not None else list(scenario.sizes.for_ivp(ivp))
            for size in sizes:
                ivp.check_n(size)
                yield from (Configuration(method, ivp, size, t, p)
                            for p in ranks or scenario.ranks for t in threads or scenario.threads)


def layout_problem(skeleton: Skeleton, config: Configuration, halo: int) -> str:
    """Why a variant of this skeleton does not run in this configuration's layout ('' where it
    does): an OpenMP skeleton on more than one rank, a neighbour exchange whose halo (the IVP's
    cyclic access distance at n, `halo`) is wider than the smallest rank's block."""
    if config.ranks > 1 and not skeleton.is_mpi:
        return f"skeleton {skeleton.name} runs on one rank (it has no MPI exchange)"
    if config.ranks > 1 and "mpi_neighbour_exchange" in skeleton.exchange_kinds():
        block = config.n // config.ranks
        if halo > block:
            return (f"IVP {config.ivp.name} reads {halo} components to each side at n = "
                    f"{config.n}, more than a rank's block of {block}: no neighbour exchange")
    return ""


def runnable(skeletons: dict, config: Configuration, variants: list) -> tuple[list, list[str]]:
    """The variants that run in this configuration's layout, and one note per skeleton left out.
    A neighbour exchange written by hand (not derived from an allgather) that cannot run is
    refused: it was asked for explicitly."""
    if config.ranks > config.n:
        raise RequestError(f"{config.ranks} ranks for IVP {config.ivp.name} at n = {config.n}: "
                           "more ranks than components")
    kept, notes = [], {}
    halo = config.ivp.halo(config.n) if config.ranks > 1 else 0
    for variant in variants:
        skeleton = skeletons[variant.skeleton]
        problem = layout_problem(skeleton, config, halo)
        if not problem:
            kept.append(variant)
        elif skeleton.is_mpi and not skeleton.derived and config.ranks > 1 \
                and "mpi_neighbour_exchange" in skeleton.exchange_kinds():
            raise RequestError(f"{skeleton.path}: {problem}")
        else:
            notes.setdefault(skeleton.name, problem + (" (its allgather form runs)"
                                                       if skeleton.derived else ""))
    return kept, list(notes.values())
