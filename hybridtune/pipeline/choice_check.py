"""Each choice of a tuning run against a fresh interleaved re-timing of it with the run's fastest."""

from __future__ import annotations

import random

from hybridtune.pipeline.variant_measuring import MeasureRequest, timed_rounds
from hybridtune.strategies.strong_variants import tie_or_within


def fresh_order(ids: list[str], round_number: int) -> list[str]:
    """A round's order: the ids shuffled, a different order each round (seeded by its number)."""
    return random.Random(round_number).sample(ids, len(ids))


def checked_choice(record: dict, first: dict, request: MeasureRequest, top: int, rounds: int,
                   target: float) -> dict:
    """A tune run's record of one configuration (first: id -> its first timing there) judged by
    the choice and the top fastest first timings measured in `rounds` rounds (tie_or_within)."""
    chosen = record["chosen"]["id"]
    ids = list(dict.fromkeys([chosen] + sorted(first, key=first.get)[:top]))
    timed = timed_rounds(request, ids, rounds, fresh_order, record["ivp"])
    return {"ivp": record["ivp"], "n": record["n"], "chosen": chosen,
            "retimed": record["retimed"], "rounds": timed,
            **tie_or_within(timed, chosen, [t["id"] for t in record.get("tied", [])], target)}
