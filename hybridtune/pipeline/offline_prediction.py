"""`predict`: a scenario's pool ranked by the offline model, corrected by the trained model if asked.

Also the dry run: the analyses that would run and what the store's predictions already rank."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from hybridtune.describe.configuration import configurations
from hybridtune.describe.loader import load
from hybridtune.pipeline.correction_worker import CorrectionWorker
from hybridtune.pipeline.corrections import require_model
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.store_policy import open_store, read_only_store, store_path
from hybridtune.predict.kerncraft_adapter import check_compiler


@dataclass(frozen=True)
class PredictRequest:
    """Which configurations of which scenario, the store, the analyses' workers, corrected or not."""
    scenario: str
    n: int | None = None
    threads: list | None = None
    ranks: list | None = None
    db: str | None = None
    workers: int | None = None
    corrected: bool = False


@dataclass(frozen=True)
class Prediction:
    """The offline result; with corrected: the model's note and per configuration key (method,
    IVP, n, ranks, threads) variant -> Corrected."""
    scenario: object
    result: object
    note: str = ""
    corrected: dict = None


def configuration_key(config) -> tuple:
    """(method, IVP, n, ranks, threads): how corrections name a configuration."""
    return (config.method.name, config.ivp.name, config.n, config.ranks, config.threads)


def load_checked(request: PredictRequest):
    """The scenario, its compiler and its configurations checked before anything is written."""
    scenario = load(request.scenario, "scenario")
    check_compiler(scenario.machine)
    list(configurations(scenario, request.n, request.threads, request.ranks))
    return scenario


def predict(request: PredictRequest, scenario) -> Prediction:
    """Rank every configuration (analyses stored as they finish); with corrected, a second
    process prepares the model meanwhile."""
    worker = contextlib.nullcontext()
    if request.corrected:
        worker = CorrectionWorker(require_model(request.db, scenario.machine.sha256),
                                  scenario.machine.sha256)
    with worker:
        with open_store(request.db, scenario, "predict") as store:
            result = predict_scenario(scenario, request.n, request.threads, store,
                                      request.workers, ranks=request.ranks)
        if not request.corrected:
            return Prediction(scenario, result)
        note, corrected = worker.corrections(
            [configuration_key(r.configuration) for r in result.rankings],
            result.new_rankings > 0)
    return Prediction(scenario, result, note, corrected)


@dataclass(frozen=True)
class DryPrediction:
    """What a dry run found: the store it read, the workers analyses would get, the result."""
    store: str
    workers: int
    result: object


def predict_dry_run(request: PredictRequest, scenario) -> DryPrediction:
    """The analyses predict would run, and the rankings the store's kernel predictions already
    give; nothing is analysed or written (the store, when it exists, is only read)."""
    path = store_path(request.db)
    workers = request.workers or len(os.sched_getaffinity(0))
    with read_only_store(path) as store:
        result = predict_scenario(scenario, request.n, request.threads, store, workers,
                                  dry_run=True, ranks=request.ranks)
    return DryPrediction(path, workers, result)
