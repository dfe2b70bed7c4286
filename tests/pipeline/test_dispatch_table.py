"""The tuned solver's predicted times come from the scenario's own machine file, the latest row of each variant."""

from __future__ import annotations

from hybridtune.pipeline.dispatch_table import predicted_times


def row(variant: str, seconds: float, machine: str | None) -> dict:
    features = {"machine_sha256": machine} if machine else {}
    return {"scenario": "s", "method": "radauIIA7", "ivp": "Cusp", "n": 600, "ranks": 1,
            "threads": 1, "variant": variant, "predicted_s": seconds, "features": features}


def test_another_machine_files_predictions_are_left_out():
    rows = [row("A", 1.0, "mine"), row("B", 2.0, "mine"), row("A", 9.0, "theirs"),
            row("B", 0.5, "theirs"), row("B", 1.5, "mine")]
    times = predicted_times(rows, "s", "radauIIA7", "Cusp", {"A": "A", "B": "B"}, "mine")
    assert times == {(600, 1, 1): {"A": 1.0, "B": 1.5}}
    # rows written before feature rows name no machine file: taken as the scenario's
    assert predicted_times([row("A", 3.0, None)], "s", "radauIIA7", "Cusp", {"A": "A"},
                           "mine") == {(600, 1, 1): {"A": 3.0}}
