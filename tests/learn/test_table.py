"""Learning rows: the latest prediction per variant of one machine file, one with the barrier cost before one without, the pool's median prediction beside each."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from hybridtune.learn.table import POOL_MEDIAN, latest_predictions


def _row(variant: str, predicted_s: float, barriers: int, t_com_s: float) -> dict:
    return {"method": "radauIIA7", "ivp": "Cusp", "n": 600, "threads": 1, "variant": variant,
            "predicted_s": predicted_s,
            "features": {"feature_schema": "variant-features-1", "machine_sha256": "m" * 64,
                         "predicted_s": predicted_s, "barriers": barriers, "t_com_s": t_com_s}}


def test_a_prediction_without_the_barrier_cost_does_not_displace_one_with_it():
    frame = pd.DataFrame([
        _row("A_x", 2.0, 3, 1e-6),     # predicted on the host
        _row("B_y", 4.0, 0, 0.0),      # no barriers: nothing is missing
        _row("C_z", 5.0, 2, 0.0),      # only ever predicted elsewhere
        _row("A_x", 1.0, 3, 0.0),      # later, with another host's machine file: t_com unknown
        _row("B_y", 3.0, 0, 0.0),
    ])
    latest, schema, machine = latest_predictions(frame)
    chosen = dict(zip(latest["variant"], latest["predicted_s"]))
    assert chosen == {"A_x": 2.0, "B_y": 3.0, "C_z": 5.0}
    assert schema == "variant-features-1" and machine == "m" * 64
    assert {f[POOL_MEDIAN] for f in latest["features"]} == {3.0}


def test_layouts_are_configurations_of_their_own_and_their_features_say_ranks_and_bytes():
    from hybridtune.learn.encode import base_features
    one = {**_row("F-mpi_x", 2.0, 4, 1e-6), "ranks": 1}
    two = {**_row("F-mpi_x", 1.5, 8, 3e-6), "ranks": 2}
    two["features"] = {**two["features"], "ranks": 2, "comm_bytes": 62400.0}
    older = _row("F_y", 3.0, 4, 1e-6)          # a row stored before ranks: of one rank
    latest, _, _ = latest_predictions(pd.DataFrame([one, two, older]))
    assert sorted(zip(latest["variant"], latest["ranks"], latest["predicted_s"])) == [
        ("F-mpi_x", 1, 2.0), ("F-mpi_x", 2, 1.5), ("F_y", 1, 3.0)]
    encoded = {(v, r): base_features({**f, "n": 600}) for v, r, f in zip(latest["variant"], latest["ranks"],
                                                             latest["features"])}
    assert encoded["F-mpi_x", 2]["ranks"] == 2.0
    assert encoded["F-mpi_x", 2]["log1p_comm_bytes"] == pytest.approx(math.log1p(62400.0))
    assert encoded["F_y", 1]["ranks"] == 1.0 and encoded["F_y", 1]["log1p_comm_bytes"] == 0.0


def test_two_methods_of_one_ivp_are_two_level_groups():
    import numpy as np

    from hybridtune.learn.level import IVP_NAME, levels_of
    from hybridtune.learn.table import with_derived
    frame = pd.DataFrame({"method": ["radauIIA7", "radauIIA7", "gauss4", "gauss4"],
                          "ivp": ["Cusp"] * 4, "n": [6000] * 4, "ranks": [1] * 4,
                          "threads": [1] * 4, "variant": ["a", "b", "a", "b"],
                          "predicted_s": [1.0, 2.0, 1.0, 2.0], "features": [{"n": 6000}] * 4})
    rows = list(with_derived(frame)["features"])
    assert rows[0][IVP_NAME] != rows[2][IVP_NAME]
    levels = levels_of(np.log([1.0, 1.0, 2.0, 2.0]), np.array(["r", "r", "g", "g"]), rows)
    np.testing.assert_allclose(levels.of(rows), np.log([1.0, 1.0, 2.0, 2.0]))


def test_a_merged_store_of_two_hosts_pairs_each_machine_file_with_its_own_hosts_times():
    """Host B's rows are host A's with another machine file and hardware (one host here: two
    cannot be measured), fewer of them; the machine file given decides whose times are joined."""
    from learn_support import FIXTURE
    from hybridtune.learn.table import joined_rows, paired_hardware
    from hybridtune.store import Store
    with Store.open(FIXTURE, "r") as store:
        predictions, measurements, runs = (store.frame(t) for t in
                                           ("variant_predictions", "measurements", "runs"))
    machine_a = runs["machine_sha256"].iloc[0]
    hardware_a = measurements["hardware_id"].iloc[0]
    machine_b, hardware_b = "b" * 64, "h" * 16
    run_b = runs.iloc[:1].assign(run_id="run-b", machine_sha256=machine_b)
    measured_b = measurements.iloc[: len(measurements) // 3].assign(
        hardware_id=hardware_b, run_id="run-b", median_s=lambda f: f["median_s"] * 2)
    predicted_b = predictions.assign(features=[{**f, "machine_sha256": machine_b}
                                               for f in predictions["features"]])
    both = (pd.concat([predictions, predicted_b]), pd.concat([measurements, measured_b]),
            pd.concat([runs, run_b]))
    assert paired_hardware(both[1], both[2], machine_b) == hardware_b
    assert paired_hardware(both[1], both[2], machine_a) == hardware_a
    rows_b = joined_rows(*both[:2], machine_b, runs=both[2])
    assert set(rows_b.measured["hardware_id"]) == {hardware_b}
    assert rows_b.machine_sha256 == machine_b
    rows_a = joined_rows(*both[:2], machine_a, runs=both[2])
    assert set(rows_a.measured["hardware_id"]) == {hardware_a}
