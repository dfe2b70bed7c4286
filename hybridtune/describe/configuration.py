"""A configuration to tune (method, IVP, n, threads) and the configurations a scenario asks for."""

from __future__ import annotations

from dataclasses import dataclass

from hybridtune.describe.scenario import Scenario


@dataclass(frozen=True)
class Configuration:
    method: object
    ivp: object
    n: int
    threads: int


def configurations(scenario: Scenario, n: int | None, threads: list[int] | None):
    for method in scenario.methods:
        for ivp in scenario.ivps:
            sizes = [n] if n is not None else list(scenario.sizes.for_ivp(ivp))
            for size in sizes:
                ivp.check_n(size)
                for t in threads or scenario.threads:
                    yield Configuration(method, ivp, size, t)
