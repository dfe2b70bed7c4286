"""A plan's choice and its fastest layout run by SMPI on the platform that priced them.

Each layout's ranks are placed on its nodes, ranks/nodes to a host; its variant's kernels run as
their predicted seconds (those of the layout's threads and ranks a domain), so what SMPI adds is
the exchanges between the ranks on the platform's links (and within a host, its loopback).
"""

from __future__ import annotations

from dataclasses import dataclass

from hybridtune.describe.platform import load_platform
from hybridtune.generate.pool import pool_for
from hybridtune.pipeline.simulated_scaling import SimulatedCluster, SimulatedPoint, simulate_point

# Larger layouts are left out: one process runs every rank, and SMPI's start grows about as the
# square of the ranks (docs/models.md, the plan)
SIMULATED_RANKS_MAX = 1024


@dataclass(frozen=True)
class PlanCheck:
    """One of a plan's layouts (role "choice" or "fastest") and SMPI's step, or why none."""
    role: str
    option: object                  # PlanOption
    point: SimulatedPoint | None = None
    reason: str = ""


def placement(hosts: tuple, nodes: int, ranks: int) -> tuple:
    """The host of each rank: consecutive ranks fill one node after another."""
    per_node = -(-ranks // nodes)
    return tuple(hosts[rank // per_node] for rank in range(ranks))


def _check(cluster: SimulatedCluster, role: str, option) -> PlanCheck:
    layout = option.layout
    if layout.ranks > SIMULATED_RANKS_MAX:
        return PlanCheck(role, option, reason=f"{layout.ranks} ranks, beyond the "
                         f"{SIMULATED_RANKS_MAX} this check simulates")
    hosts = placement(cluster.platform.hosts, layout.nodes, layout.ranks)
    return PlanCheck(role, option, simulate_point(cluster, option.configuration,
                                                  option.prediction, hosts))


def check_plan(scenario, plan, platform_path: str, steps: int = 10,
               timeout_s: float = 600.0) -> tuple:
    """PlanCheck of the plan's choice and, where another layout, of its fastest."""
    method = next(m for m in scenario.methods if m.name == plan.method)
    cluster = SimulatedCluster(scenario, load_platform(platform_path), steps, timeout_s,
                               {method.name: pool_for(scenario, method)})
    chosen = _check(cluster, "choice", plan.choice)
    if plan.fastest is None or plan.fastest == plan.choice:
        return (chosen,)
    return chosen, _check(cluster, "fastest", plan.fastest)
