"""A step's time estimated from operation counts alone, before anything is built.

Every right-hand-side evaluation of one PIRK step at one floating-point operation per cycle, each
math call at its own cost.
"""

from __future__ import annotations

from hybridtune.describe.costs import weighted_operations

OPERATIONS_PER_CYCLE = 1.0    # scalar and without FMA: what a loop gcc cannot vectorise achieves


def rhs_operations(ivp, n: int) -> float:
    """Floating-point operations of one evaluation of the whole right-hand side at size n (from
    the blocks' operation counts, not their reads: cheap at any n)."""
    return float(sum(fact["components"] * weighted_operations(fact["operations"])
                     for fact in ivp.block_operations(n)))


def evaluations_per_step(method) -> int:
    """Right-hand-side evaluations of one PIRK step: s stages in each of m corrector steps and in
    the predictor."""
    return method.stages * (method.corrector_steps + 1)


def step_seconds(ivp, method, n: int, machine) -> float:
    return rhs_operations(ivp, n) * evaluations_per_step(method) \
        / (OPERATIONS_PER_CYCLE * machine.clock_hz)


def over_budget(configurations, machine, budget_s: float) -> list[tuple]:
    """(configuration, estimated seconds) of each configuration one step of which is estimated to
    take longer than the whole measurement budget of a variant."""
    found = []
    for c in configurations:
        seconds = step_seconds(c.ivp, c.method, c.n, machine)
        if seconds > budget_s:
            found.append((c, seconds))
    return found
