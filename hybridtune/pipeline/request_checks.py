"""The checks of a request that measure, tune and predict share; each refuses before anything runs."""

from __future__ import annotations

from hybridtune.errors import RequestError
from hybridtune.predict.step_estimate import over_budget


def check_timing(ci: float, budget_s: float) -> None:
    """--ci and --budget of the commands that measure."""
    if not 0 < ci < 1:
        raise RequestError(f"--ci {ci:g}: expected a fraction in (0, 1)")
    if not budget_s > 0:
        raise RequestError(f"--budget {budget_s:g}: expected seconds > 0")


def check_step_budget(configs: list, machine, budget_s: float) -> None:
    """Refuse sizes one step of which is estimated to outlast a variant's whole timing budget
    (predict/step_estimate: operation counts at one operation per cycle), before anything runs."""
    found = over_budget(configs, machine, budget_s)
    if found:
        listed = "; ".join(f"IVP {c.ivp.name} ({c.ivp.path}) at n = {c.n}: about {seconds:.3g} s"
                           for c, seconds in found[:5])
        raise RequestError(
            f"one step is estimated to take longer than --budget {budget_s:g} s: {listed}"
            f"{' and more' if len(found) > 5 else ''} (operation counts at one operation per "
            "cycle of the machine file's clock); give a smaller -n or a larger --budget")


def check_counts(threads, ranks) -> None:
    """--threads and --ranks: counts of at least one."""
    for flag, counts in (("--threads", threads), ("--ranks", ranks)):
        if counts and min(counts) < 1:
            raise RequestError(f"{flag}: expected counts >= 1, got {min(counts)}")


def check_selection(n: int | None, threads, ranks, head: int = 1) -> None:
    """The configurations a command selects (-n, --threads, --ranks) and how many it shows."""
    check_counts(threads, ranks)
    if n is not None and n < 1:
        raise RequestError(f"-n: expected a size >= 1, got {n}")
    if head < 0:
        raise RequestError(f"--head: expected a count >= 0, got {head}")
