"""A plan's layouts placed for SMPI: consecutive ranks fill one node after another, and a layout beyond the ranks simulated is said, not run."""

from __future__ import annotations

from types import SimpleNamespace

from hybridtune.pipeline import plan_simulation
from hybridtune.pipeline.plan_simulation import SIMULATED_RANKS_MAX, _check, placement
from hybridtune.predict.plan import Layout, PlanOption

HOSTS = tuple(f"node-{i}" for i in range(8))


def test_ranks_fill_one_node_after_another():
    assert placement(HOSTS, 2, 4) == ("node-0", "node-0", "node-1", "node-1")
    assert placement(HOSTS, 1, 3) == ("node-0",) * 3
    assert placement(HOSTS, 4, 4) == HOSTS[:4]


def test_a_layout_beyond_the_ranks_simulated_is_not_run(monkeypatch):
    def nothing_may_run(*_):
        raise AssertionError("SMPI was to be started")
    monkeypatch.setattr(plan_simulation, "simulate_point", nothing_may_run)
    ranks = 2 * SIMULATED_RANKS_MAX
    option = PlanOption(Layout(64, ranks, 1, 20), "F-mpi-nx_x", 1e-4, 1e-5)
    check = _check(SimpleNamespace(platform=SimpleNamespace(hosts=HOSTS)), "fastest", option)
    assert check.point is None and check.option is option and check.role == "fastest"
    assert check.reason == f"{ranks} ranks, beyond the {SIMULATED_RANKS_MAX} this check simulates"
