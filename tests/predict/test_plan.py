"""A job's plan from hand-built options of known times: the layouts that fill a node's cores, parallel efficiency against the fastest one-node option, the choice (fastest, or fastest at an efficiency) and its 95% interval."""

from __future__ import annotations

import math

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.predict.plan import (Z95, Layout, PlanOption, choose, interval, layouts,
                                     with_efficiency)


def option(nodes: int, seconds: float, comm: float = 0.0, threads: int = 1,
           variant: str = "F-mpi_x", efficiency: float = 1.0) -> PlanOption:
    """A layout of one domain of 4 cores a node, split into ranks of `threads` threads."""
    per_domain = 4 // threads
    return PlanOption(Layout(nodes, nodes * per_domain, threads, per_domain), variant, seconds,
                      comm, efficiency)


# ---- layouts -------------------------------------------------------------------------------------

def test_layouts_of_a_skylake_node():
    """2 NUMA domains of 20 cores: 20 splits into ranks of 1, 2 and 4 threads (8 and 16 do not
    divide it) and one rank of all 20; nodes 1, 2, 4."""
    found = layouts(4, 2, 20)
    assert [(l.nodes, l.ranks, l.threads, l.ranks_per_domain) for l in found] == [
        (1, 40, 1, 20), (1, 20, 2, 10), (1, 10, 4, 5), (1, 2, 20, 1),
        (2, 80, 1, 20), (2, 40, 2, 10), (2, 20, 4, 5), (2, 4, 20, 1),
        (4, 160, 1, 20), (4, 80, 2, 10), (4, 40, 4, 5), (4, 8, 20, 1)]


@pytest.mark.parametrize("nodes_max, nodes", [(1, [1]), (2, [1, 2]), (5, [1, 2, 4, 5]),
                                              (6, [1, 2, 4, 6]), (8, [1, 2, 4, 8]),
                                              (12, [1, 2, 4, 8, 12])])
def test_node_counts_are_powers_of_two_and_the_largest(nodes_max, nodes):
    assert sorted({l.nodes for l in layouts(nodes_max, 1, 4)}) == nodes
    assert [l.nodes for l in layouts(nodes_max, 1, 4)] == [n for n in nodes for _ in range(3)]


@pytest.mark.parametrize("cores, threads", [(1, [1]), (2, [1, 2]), (6, [1, 2, 6]),
                                            (7, [1, 7]), (12, [1, 2, 4, 12]),
                                            (16, [1, 2, 4, 8, 16]), (20, [1, 2, 4, 20]),
                                            (24, [1, 2, 4, 8, 24]), (64, [1, 2, 4, 8, 16, 32, 64])])
def test_thread_counts_are_the_powers_of_two_dividing_the_domain_and_the_domain(cores, threads):
    found = layouts(1, 1, cores)
    assert [l.threads for l in found] == threads          # each once, ascending
    assert [l.ranks_per_domain for l in found] == [cores // t for t in threads]


@pytest.mark.parametrize("nodes_max, domains, cores", [(4, 2, 20), (3, 4, 6), (1, 1, 7),
                                                       (16, 8, 16)])
def test_every_layout_fills_every_core_of_its_nodes(nodes_max, domains, cores):
    for layout in layouts(nodes_max, domains, cores):
        assert layout.ranks == layout.nodes * domains * layout.ranks_per_domain
        assert layout.ranks * layout.threads == layout.nodes * domains * cores
        assert layout.ranks_per_domain * layout.threads == cores


@pytest.mark.parametrize("nodes_max", [0, -1, -64])
def test_fewer_than_one_node_is_refused(nodes_max):
    with pytest.raises(HybridtuneError, match=rf"^--nodes-max {nodes_max}: expected a node count "
                                              "of at least 1$"):
        layouts(nodes_max, 2, 20)


# ---- efficiency ----------------------------------------------------------------------------------

# one node: 10 s with 1 thread a rank, 8 s with 2; two nodes 5 s; four nodes 4 s (1.5 s of it
# communication). Against the fastest one-node option (8 s): 0.8, 1.0, 8 / (2 x 5) = 0.8,
# 8 / (4 x 4) = 0.5
OPTIONS = [option(1, 10.0, threads=1, variant="A"), option(1, 8.0, threads=2, variant="B"),
           option(2, 5.0, 0.5, variant="C"), option(4, 4.0, 1.5, variant="D")]


def test_efficiency_against_the_fastest_one_node_option():
    found = with_efficiency(OPTIONS)
    assert [o.efficiency for o in found] == pytest.approx([0.8, 1.0, 0.8, 0.5], rel=1e-15)
    for before, after in zip(OPTIONS, found):               # all else kept, in order
        assert (after.layout, after.variant, after.seconds, after.comm_s) == (
            before.layout, before.variant, before.seconds, before.comm_s)
    assert [o.node_seconds for o in found] == [10.0, 8.0, 10.0, 16.0]


def test_efficiency_may_exceed_one_where_more_nodes_are_super_linear():
    found = with_efficiency([option(1, 8.0), option(2, 2.0)])   # a block now fits a cache
    assert [o.efficiency for o in found] == [1.0, 2.0]


def test_efficiency_replaces_what_an_option_carried():
    found, = with_efficiency([option(1, 3.0, efficiency=0.25)])
    assert found.efficiency == 1.0


@pytest.mark.parametrize("options", [[], [option(2, 5.0), option(4, 4.0)]])
def test_efficiency_without_a_one_node_option_is_refused(options):
    with pytest.raises(HybridtuneError, match="a plan needs a one-node layout to measure "
                                              "efficiency against"):
        with_efficiency(options)


# ---- choice --------------------------------------------------------------------------------------

def test_the_choice_is_the_fastest_option():
    assert choose(with_efficiency(OPTIONS)).variant == "D"
    assert choose(with_efficiency(OPTIONS), None).variant == "D"


@pytest.mark.parametrize("efficiency, chosen", [(0.5, "D"), (0.51, "C"), (0.8, "C"), (0.81, "B"),
                                                (1.0, "B"), (1e-9, "D")])
def test_with_an_efficiency_the_fastest_option_reaching_it(efficiency, chosen):
    """Reaching includes equality: C's 0.8 meets 0.8."""
    found = choose(with_efficiency(OPTIONS), efficiency)
    assert found.variant == chosen and found.efficiency >= efficiency


def test_equally_fast_options_go_to_the_fewest_node_seconds_then_nodes():
    same = [option(1, 4.0, variant="one", efficiency=0.2), option(4, 4.0, variant="four"),
            option(2, 4.0, variant="two")]
    assert choose(same).variant == "one"
    assert choose(same, 0.5).variant == "two"
    # equal node-seconds as well (what with_efficiency cannot give, but a caller might): fewer nodes
    tied = [PlanOption(Layout(2, 2, 1, 1), "two", 4.0, 0.0),
            PlanOption(Layout(1, 1, 1, 1), "one", 4.0, 0.0)]
    assert tied[0].node_seconds != tied[1].node_seconds            # 8 against 4
    assert choose(tied).variant == "one"


def test_no_option_reaching_the_efficiency_is_refused_naming_the_best():
    options = [option(1, 9.0, efficiency=0.4), option(2, 6.0, efficiency=0.7),
               option(4, 5.0, efficiency=0.45)]
    with pytest.raises(HybridtuneError) as info:
        choose(options, 0.9)
    assert str(info.value) == ("no layout reaches a parallel efficiency of 90%; the highest is "
                               "70% on 2 nodes")


@pytest.mark.parametrize("efficiency", [0.0, -0.5, 1.5, 1.0000001, math.nan, math.inf])
def test_an_efficiency_outside_zero_to_one_is_refused(efficiency):
    with pytest.raises(HybridtuneError, match=r"^--efficiency .*: expected a fraction in "
                                              r"\(0, 1\]$") as info:
        choose(with_efficiency(OPTIONS), efficiency)
    assert str(info.value).startswith(f"--efficiency {efficiency}: ")


# ---- interval ------------------------------------------------------------------------------------

def test_the_interval_adds_independent_errors_in_quadrature():
    """10 s of which 4 s communication: 6 s x 10% and 4 s x 20% give sigma hypot(0.6, 0.8) = 1."""
    found = interval(option(2, 10.0, 4.0), 0.1, 0.2)
    assert (found.seconds, found.compute_rel, found.comm_rel) == (10.0, 0.1, 0.2)
    assert found.low == pytest.approx(10.0 - Z95) and found.high == pytest.approx(10.0 + Z95)
    assert Z95 == 1.96


@pytest.mark.parametrize("compute_rel, comm_rel, sigma", [
    (0.1, 0.0, 0.6), (0.0, 0.2, 0.8), (0.0, 0.0, 0.0), (0.3, 0.4, math.hypot(1.8, 1.6))])
def test_each_error_scales_its_own_part(compute_rel, comm_rel, sigma):
    found = interval(option(2, 10.0, 4.0), compute_rel, comm_rel)
    assert found.low == pytest.approx(10.0 - Z95 * sigma, abs=1e-12)
    assert found.high == pytest.approx(10.0 + Z95 * sigma, abs=1e-12)
    assert found.low <= found.seconds <= found.high


def test_the_interval_never_goes_below_zero():
    found = interval(option(1, 1.0, 0.2), 1.0, 1.0)          # sigma hypot(0.8, 0.2) = 0.82
    assert found.low == 0.0
    assert found.high == pytest.approx(1.0 + Z95 * math.hypot(0.8, 0.2))


def test_one_node_without_communication_has_only_the_computations_spread():
    found = interval(option(1, 2.0), 0.25, 0.5)
    assert (found.low, found.high) == pytest.approx((2.0 - Z95 * 0.5, 2.0 + Z95 * 0.5))


@pytest.mark.parametrize("draw", ["normal", "heavy"])
def test_the_interval_holds_95_percent_of_drawn_errors(draw):
    import numpy as np
    from hybridtune.predict.plan import relative_sigma
    generator = np.random.default_rng(5)

    def errors(size):
        if draw == "normal":
            return generator.normal(0, 0.2, size)
        return 0.1 * generator.standard_t(3, size)

    sigma = relative_sigma(1 + errors(2000))
    found = interval(option(1, 10.0, 0.0), sigma, 0.0)
    truth = 10.0 * (1 + errors(20000))      # the time a prediction of 10 s stood for
    covered = np.mean((truth >= found.low) & (truth <= found.high))
    assert 0.94 <= covered <= 0.96
    # a median error scaled by 1.96 holds far less where errors are normal
    if draw == "normal":
        half = 1.96 * np.median(np.abs(errors(20000)))
        assert np.mean(np.abs(errors(20000)) <= half) < 0.85
