"""Stored models: a fitted model as a models row of plain numbers and training row ids, read back through a real store to the same corrections, refused where it does not fit the store."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from hybridtune.errors import RequestError
from hybridtune.learn.persist import latest_models, load_model, model_record
from hybridtune.learn.table import Rows
from hybridtune.learn.train import fit
from hybridtune.store import Store


@pytest.fixture(scope="module")
def fitted(fixture_rows):
    return {kind: fit(fixture_rows, kind) for kind in ("linear", "gp")}


@pytest.fixture(scope="module")
def stored(fitted, fixture_store, tmp_path_factory):
    """The records as written and as read back from a copy of the fixture store."""
    path = tmp_path_factory.mktemp("persist") / "store.h5"
    shutil.copy(fixture_store, path)
    records = [model_record(fitted[kind]) for kind in ("linear", "gp")]
    with Store.open(path, "a", run={"command": "test"}) as store:
        store.append_many("models", records)
    with Store.open(path, "r") as store:
        models = store.frame("models")
    return records, models


def _leaves(value):
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str)
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def test_record_is_plain_numbers_strings_and_training_row_ids(fitted, fixture_rows, stored):
    records, _ = stored
    measured = fixture_rows.measured.set_index("row_id")
    for record, kind in zip(records, ("linear", "gp")):
        assert json.loads(json.dumps(record)) == record
        kinds = {type(leaf) for leaf in _leaves(record)}
        assert kinds <= {str, int, float, bool}, kinds
        training = record["training"]
        assert training["row_ids"] == list(fitted[kind].row_ids)
        assert len(training["row_ids"]) == record["training_rows"] == 256
        assert training["provenance"] == measured.loc[training["row_ids"], [
            "code_sha256", "build_id", "hardware_id"]].values.tolist()
        assert record["feature_schema"] == fixture_rows.feature_schema
        assert record["machine_sha256"] == fixture_rows.machine_sha256
        assert len(record["params"]["features"]) == len(fitted[kind].encoding.names)


@pytest.mark.parametrize("kind", ["linear", "gp"])
def test_a_model_read_back_from_the_store_gives_the_same_corrections(fitted, fixture_rows, stored,
                                                                     kind):
    records, models = stored
    assert list(models["kind"]) == ["linear", "gp"]
    record = latest_models(models, fixture_rows.machine_sha256)[kind]
    assert record["model_id"] == records[("linear", "gp").index(kind)]["model_id"]
    loaded = load_model(record, fixture_rows)
    assert loaded.kind == kind and loaded.row_ids == fitted[kind].row_ids
    frame = fixture_rows.frame
    variants, features = frame["variant"].tolist(), frame["features"].tolist()
    mean, std = loaded.correction(variants, features)
    expected_mean, expected_std = fitted[kind].correction(variants, features)
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(std, expected_std, rtol=1e-8, atol=1e-12)
    assert np.all(std > 0)
    np.testing.assert_allclose(loaded.across, fitted[kind].across, rtol=1e-12)


def _rows_of(fixture_rows, **changes) -> Rows:
    return Rows(fixture_rows.frame, changes.get("feature_schema", fixture_rows.feature_schema),
                changes.get("machine_sha256", fixture_rows.machine_sha256))


@pytest.mark.parametrize("kind", ["linear", "gp"])
def test_loading_refuses_another_feature_schema_or_machine_file(fixture_rows, stored, kind):
    record = latest_models(stored[1], fixture_rows.machine_sha256)[kind]
    with pytest.raises(RequestError, match="feature schema 'variant-features-1'.*'variant-features-9'"
                                           ".*run `hybridtune train`"):
        load_model(record, _rows_of(fixture_rows, feature_schema="variant-features-9"))
    with pytest.raises(RequestError, match="machine file abe65fbbe563, these are of 0123456789ab"
                                           ".*run `hybridtune train`"):
        load_model(record, _rows_of(fixture_rows, machine_sha256="0123456789ab" * 5))
    assert latest_models(stored[1], "0123456789ab" * 5) == {}


def test_loading_a_gp_refuses_when_its_training_rows_are_missing(fixture_rows, stored):
    record = latest_models(stored[1], fixture_rows.machine_sha256)["gp"]
    frame = fixture_rows.frame.copy()
    gone = frame["row_id"].isin(record["training"]["row_ids"][:3])
    frame.loc[gone, ["median_s", "row_id"]] = np.nan
    rows = Rows(frame, fixture_rows.feature_schema, fixture_rows.machine_sha256)
    first = record["training"]["row_ids"][0]
    with pytest.raises(RequestError, match=f"3 of its 256 training measurements are not in the "
                                           f"store \\(first: {first}\\).*`hybridtune train`"):
        load_model(record, rows)
    # a linear model keeps its coefficients and needs no rows
    linear = latest_models(stored[1], fixture_rows.machine_sha256)["linear"]
    assert load_model(linear, rows).kind == "linear"


def test_loading_refuses_a_record_of_an_unknown_kind_or_damaged_numbers(fixture_rows, stored):
    record = dict(latest_models(stored[1], fixture_rows.machine_sha256)["linear"])
    with pytest.raises(RequestError, match="kind 'forest': expected linear or gp"):
        load_model({**record, "kind": "forest"}, fixture_rows)
    damaged = {**record, "params": {**record["params"], "coef": record["params"]["coef"][:-1]}}
    width = len(record["params"]["features"])
    with pytest.raises(RequestError, match=f"params.coef: expected {width} numbers"):
        load_model(damaged, fixture_rows)
