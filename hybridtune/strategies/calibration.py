"""Whether hybrid's chances mean what they say: a reliability table and Brier skill over a replay.

At each stop decision of a replay, its chance that some unmeasured variant is 3% faster than every
measured one is set against whether one was (by the stored times); a reliability table by decile
and the Brier skill against a constant chance.
"""

from __future__ import annotations

import numpy as np

from hybridtune.learn.belief import BETTER_BY

LEAST = 30          # decisions a bin of the reliability table holds at least (else merged)
BINS = 10


def outcomes(times: np.ndarray, order: tuple, decisions) -> list[tuple[float, bool]]:
    """(chance, happened) of each decision of a hybrid replay that measured `order` (pool rows,
    which are its search's positions) with these stored times: whether an unmeasured variant
    then was BETTER_BY faster than every measured one (failed ones, NaN, count as neither)."""
    out = []
    finite = np.isfinite(times)
    for decision in decisions:
        measured = np.zeros(len(times), bool)
        measured[list(order[:decision.measured])] = True
        left, held = times[~measured & finite], times[measured & finite]
        if len(left) and len(held):
            out.append((decision.chance, bool(left.min() < held.min() * (1 - BETTER_BY))))
    return out


def reliability(pairs: list[tuple[float, bool]]) -> dict:
    """The reliability table (bins of the chance by decile, merged with the next until each holds
    LEAST decisions) and the Brier score against the constant chance of the observed frequency."""
    if not pairs:
        return {}
    chance = np.array([p for p, _ in pairs], float)
    happened = np.array([h for _, h in pairs], float)
    edges = list(np.linspace(0, 1, BINS + 1))
    index = np.minimum((chance * BINS).astype(int), BINS - 1)
    groups: list[list[int]] = []
    for b in range(BINS):
        members = list(np.flatnonzero(index == b))
        if groups and len(groups[-1][1]) < LEAST:
            groups[-1][1].extend(members)
            groups[-1][0][1] = b + 1
        else:
            groups.append([[b, b + 1], members])
    if len(groups) > 1 and len(groups[-1][1]) < LEAST:
        (low, high), members = groups.pop()
        groups[-1][1].extend(members)
        groups[-1][0][1] = high
    table = [{"low": edges[low], "high": edges[high], "decisions": len(members),
              "chance": float(chance[members].mean()) if members else float("nan"),
              "observed": float(happened[members].mean()) if members else float("nan")}
             for (low, high), members in groups if members]
    brier = float(np.mean((chance - happened) ** 2))
    base = float(happened.mean())
    constant = float(np.mean((base - happened) ** 2))
    return {"event": f"an unmeasured variant more than {100 * BETTER_BY:g}% faster than every "
                     "measured one, at each stop decision",
            "decisions": len(pairs), "observed_frequency": base, "bins": table,
            "brier": brier, "brier_constant": constant,
            "brier_skill": 1 - brier / constant if constant > 0 else float("nan")}
