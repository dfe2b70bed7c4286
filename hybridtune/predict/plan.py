"""A job's plan: every layout that fills the nodes' cores, its fastest variant, and the choice.

A layout is a number of nodes, ranks and threads; the choice is the fastest, or the fastest at a
parallel efficiency, with an interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from hybridtune.errors import HybridtuneError
from hybridtune.predict.scaling_curves import rank_counts

Z95 = 1.96
COVERAGE = 0.95         # the interval's coverage
DEFAULT_EFFICIENCY = 0.5    # the parallel efficiency a plan's choice reaches unless told otherwise


def relative_sigma(ratios) -> float:
    """The relative spread of measured / predicted ratios that interval() scales by Z95: the
    COVERAGE quantile of |ratio - 1| over Z95, so the interval holds that share of the errors
    whatever their distribution (a median error times Z95 held about 81% of normal ones)."""
    errors = sorted(abs(float(r) - 1) for r in ratios)
    if not errors:
        return 0.0
    position = COVERAGE * (len(errors) - 1)
    low = math.floor(position)
    high = min(low + 1, len(errors) - 1)
    return (errors[low] + (errors[high] - errors[low]) * (position - low)) / Z95


@dataclass(frozen=True)
class Layout:
    """nodes x domains a node x ranks a domain, each rank with `threads` threads."""
    nodes: int
    ranks: int
    threads: int
    ranks_per_domain: int


def layouts(nodes_max: int, domains: int, cores_per_domain: int) -> list[Layout]:
    """Node counts 1, 2, 4, ... nodes_max; in each, every split of a NUMA domain's cores into
    ranks of a power-of-two thread count (and one rank of all its cores)."""
    if nodes_max < 1:
        raise HybridtuneError(f"--nodes-max {nodes_max}: expected a node count of at least 1")
    threads = sorted({2 ** k for k in range(int(math.log2(cores_per_domain)) + 1)
                      if cores_per_domain % 2 ** k == 0} | {cores_per_domain})
    return [Layout(nodes, nodes * domains * (cores_per_domain // t), t, cores_per_domain // t)
            for nodes in rank_counts(nodes_max) for t in threads]


@dataclass(frozen=True)
class PlanOption:
    """The fastest variant of one layout."""
    layout: Layout
    variant: str
    seconds: float
    comm_s: float
    efficiency: float = 1.0       # the best one-node time over nodes x this time
    configuration: object = field(default=None, compare=False, repr=False)
    prediction: object = field(default=None, compare=False, repr=False)   # VariantPrediction

    @property
    def node_seconds(self) -> float:
        return self.layout.nodes * self.seconds


def with_efficiency(options: list[PlanOption]) -> list[PlanOption]:
    """Each option's parallel efficiency over the nodes against the fastest one-node option."""
    ones = [o.seconds for o in options if o.layout.nodes == 1]
    if not ones:
        raise HybridtuneError("a plan needs a one-node layout to measure efficiency against")
    one = min(ones)
    return [replace(o, efficiency=one / (o.layout.nodes * o.seconds)) for o in options]


def choose(options: list[PlanOption], efficiency: float | None = None) -> PlanOption:
    """The fastest option; with an efficiency, the fastest whose efficiency reaches it (the
    fewest node-hours among equally fast ones)."""
    if efficiency is not None and not 0 < efficiency <= 1:
        raise HybridtuneError(f"--efficiency {efficiency}: expected a fraction in (0, 1]")
    kept = [o for o in options if efficiency is None or o.efficiency >= efficiency]
    if not kept:
        best = max(options, key=lambda o: o.efficiency)
        raise HybridtuneError(f"no layout reaches a parallel efficiency of {efficiency:.0%}; the "
                              f"highest is {best.efficiency:.0%} on {best.layout.nodes} nodes")
    return min(kept, key=lambda o: (o.seconds, o.node_seconds, o.layout.nodes))


@dataclass(frozen=True)
class Interval:
    """seconds within [low, high] at 95%: the computation's relative spread (the offline model
    against this store's measurements) and the communication's (its fits' held-out errors),
    independent."""
    seconds: float
    low: float
    high: float
    compute_rel: float
    comm_rel: float


def interval(option: PlanOption, compute_rel: float, comm_rel: float) -> Interval:
    compute = option.seconds - option.comm_s
    sigma = math.hypot(compute_rel * compute, comm_rel * option.comm_s)
    return Interval(option.seconds, max(option.seconds - Z95 * sigma, 0.0),
                    option.seconds + Z95 * sigma, compute_rel, comm_rel)
