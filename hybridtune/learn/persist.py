"""A fitted model as a store row of plain numbers and row ids, and back; nothing is unpickled.

Loading sets the parameters and, for a Gaussian process, conditions on the recorded rows again.
"""

from __future__ import annotations

import math
import uuid

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from hybridtune.errors import RequestError
from hybridtune.learn.encode import Encoding
from hybridtune.learn.level import Levels
from hybridtune.learn.models import GPCorrection, LinearCorrection
from hybridtune.learn.table import Rows
from hybridtune.learn.train import Fitted, centred, configuration_keys, pool_targets


def _scaler_params(scaler: StandardScaler) -> dict:
    return {"mean": scaler.mean_.tolist(), "scale": scaler.scale_.tolist()}


def model_record(fitted: Fitted) -> dict:
    """The models-table row (without run_id)."""
    estimator = fitted.estimator
    params = {"features": list(fitted.encoding.names), "hyper": estimator.get_params(),
              "offset_spread": fitted.offset_spread, "variant_spread": fitted.variant_spread,
              "error_covariance": list(fitted.error_covariance),
              "levels": fitted.levels.as_list(),
              # as correlations per unit of log n and log threads: 0 for independent
              "across": [math.exp(-rate) for rate in fitted.across]}
    if fitted.kind == "linear":
        params.update(scaler=_scaler_params(estimator.scaler_),
                      coef=estimator.ridge_.coef_.tolist(),
                      intercept=float(estimator.ridge_.intercept_),
                      residual_std=estimator.residual_std_)
    else:
        params.update(constant=estimator.constant_, length_scale=estimator.length_scale_,
                      noise_level=estimator.noise_level_)
    training = {"row_ids": list(fitted.row_ids),
                "provenance": [list(p) for p in fitted.provenance],
                "available_rows": fitted.available_rows}
    return {"model_id": uuid.uuid4().hex, "kind": fitted.kind,
            "feature_schema": fitted.feature_schema, "machine_sha256": fitted.machine_sha256,
            "hardware_id": fitted.hardware_id, "params": params, "training": training,
            "training_rows": len(fitted.row_ids),
            "score": {**fitted.score, "fit_seconds": fitted.seconds}}


def _number_list(params: dict, key: str, length: int, model_id: str) -> np.ndarray:
    values = params.get(key)
    if not isinstance(values, list) or len(values) != length \
            or not all(isinstance(v, (int, float)) for v in values):
        raise RequestError(f"model {model_id}: params.{key}: expected {length} numbers")
    return np.asarray(values, dtype=float)


def _linear(params: dict, width: int, model_id: str) -> LinearCorrection:
    model = LinearCorrection(alpha=float(params["hyper"]["alpha"]))
    scaler = StandardScaler()
    scaler.mean_ = _number_list(params["scaler"], "mean", width, model_id)
    scaler.scale_ = _number_list(params["scaler"], "scale", width, model_id)
    scaler.var_ = scaler.scale_ ** 2
    scaler.n_features_in_ = width
    ridge = Ridge(alpha=model.alpha)
    ridge.coef_ = _number_list(params, "coef", width, model_id)
    ridge.intercept_ = float(params["intercept"])
    ridge.n_features_in_ = width
    model.scaler_, model.ridge_ = scaler, ridge
    model.residual_std_ = float(params["residual_std"])
    model.n_features_in_ = width
    return model


def load_model(record: dict, rows: Rows) -> Fitted:
    """The model a models row describes (see _load); a row missing a parameter is refused."""
    try:
        return _load(record, rows)
    except (KeyError, TypeError, ValueError) as error:
        raise RequestError(f"model {record.get('model_id')}: its parameters are not those this "
                           f"version stores ({type(error).__name__}: {error}): run `hybridtune "
                           "train` again") from None


def _load(record: dict, rows: Rows) -> Fitted:
    """The model a models row describes, checked against the rows it is to be used with (same
    feature schema and machine file); a Gaussian process finds its training rows among them."""
    model_id, params = record["model_id"], record["params"]
    if record["feature_schema"] != rows.feature_schema:
        raise RequestError(f"model {model_id} was fitted on feature schema "
                           f"{record['feature_schema']!r}; the store's predictions have "
                           f"{rows.feature_schema!r}: run `hybridtune train` again")
    if record["machine_sha256"] != rows.machine_sha256:
        raise RequestError(f"model {model_id} was fitted on predictions of machine file "
                           f"{record['machine_sha256'][:12]}, these are of "
                           f"{rows.machine_sha256[:12]}: run `hybridtune train` again")
    encoding = Encoding(tuple(params["features"]))
    training = record["training"]
    row_ids = tuple(training["row_ids"])
    if record["kind"] == "linear":
        estimator = _linear(params, len(encoding.names), model_id)
    elif record["kind"] == "gp":
        measured = (rows.every if rows.every is not None else rows.measured).set_index("row_id")
        missing = [r for r in row_ids if r not in measured.index]
        if missing:
            raise RequestError(f"model {model_id}: {len(missing)} of its {len(row_ids)} training "
                               f"measurements are not in the store (first: {missing[0]}): run "
                               "`hybridtune train` again")
        used = measured.loc[list(row_ids)]
        X = encoding.matrix(used["variant"].tolist(), used["features"].tolist())
        target = centred(pool_targets(used), configuration_keys(used))
        hyper = params["hyper"]
        estimator = GPCorrection(nu=float(hyper["nu"]), length_scale=float(params["length_scale"]),
                                 constant=float(params["constant"]),
                                 noise_level=float(params["noise_level"]), optimize=False,
                                 random_state=int(hyper["random_state"])).fit(X, target)
    else:
        raise RequestError(f"model {model_id}: kind {record['kind']!r}: expected linear or gp")
    return Fitted(record["kind"], estimator, encoding, record["feature_schema"],
                  record["machine_sha256"], record["hardware_id"], row_ids,
                  tuple(tuple(p) for p in training["provenance"]),
                  int(training["available_rows"]), 0.0, dict(record["score"]),
                  float(params["offset_spread"]), float(params["variant_spread"]),
                  tuple(float(v) for v in params["error_covariance"]),
                  Levels.from_list(params["levels"]),
                  tuple(-math.log(value) if value > 0 else math.inf
                        for value in map(float, params.get("across", []))))


def latest_models(models, machine_sha256: str) -> dict:
    """kind -> the last stored models row for this machine file (models: the table's frame)."""
    if models.empty:
        return {}
    mine = models[models["machine_sha256"] == machine_sha256]
    return {row["kind"]: row for row in mine.to_dict("records")}
