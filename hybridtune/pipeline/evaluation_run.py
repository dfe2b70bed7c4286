"""`evaluate` assembled: strategies replayed on a ground-truth store, models scored, hosts compared."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from threadpoolctl import threadpool_limits

from hybridtune.errors import RequestError
from hybridtune.learn.table import hardware_name, joined_rows, machine_files
from hybridtune.pipeline.store_frames import machine_file_names, read_frames
from hybridtune.strategies import constants_check
from hybridtune.strategies import host_transfer as hosts
from hybridtune.strategies.effects_transfer import effects_transfer
from hybridtune.strategies.host_transfer import Host
from hybridtune.strategies.leave_one_out import evaluate, regime_errors
from hybridtune.strategies.noise import TooFewPairs, measured, pass_agreement
from hybridtune.strategies.teaching import share_value

SHARE_SEEDS = 3         # noise draws of the sample-share replays (each share trains its own models)


@dataclass(frozen=True)
class EvaluationRequest:
    """The ground-truth store, hybrid's stop, the replays asked for and under how much noise."""
    db: str
    stop: float
    with_tpe: bool = False
    noise_seeds: int = 20
    sample_shares: tuple = ()
    other_host: str | None = None
    feature_sets: bool = False
    strategies: bool = True
    constants: bool = False


@dataclass(frozen=True)
class EvaluationDocument:
    """The JSON document; the replay's result, the offline errors by regime, the shares' value."""
    document: dict
    result: object = None
    regimes: dict = None
    valued: list = None


def check_evaluation(request: EvaluationRequest) -> None:
    """Refuse what would evaluate nothing or mean nothing, before the store is read."""
    if not 0 < request.stop <= 1000:
        raise RequestError(f"--stop {request.stop:g}: expected the number of faster variants "
                           "hybrid stops below, above 0")
    if request.noise_seeds < 0:
        raise RequestError(f"--noise-seeds {request.noise_seeds}: expected 0 (no noise) or more")
    if not request.strategies and not (request.other_host or request.feature_sets):
        raise RequestError("--no-strategies: expected --other-host or --feature-sets beside it "
                           "(else there is nothing to evaluate)")
    if request.constants and not request.other_host:
        raise RequestError("--constants: expected --other-host STORE beside it (constants are "
                           "chosen on one ground truth and scored on the other)")


def read_host(path: str, noise_seeds: int) -> dict:
    """A ground-truth store read for evaluate: its frames, rows named by their hardware, noise."""
    frames = read_frames(path, ("variant_predictions", "measurements", "runs"))
    rows = joined_rows(frames["variant_predictions"], frames["measurements"], runs=frames["runs"])
    try:
        noise = measured(frames["measurements"]) if noise_seeds else None
    except TooFewPairs as error:
        raise TooFewPairs(f"{path}: {error}") from None
    return {"frames": frames, "host": Host(hardware_name(frames["measurements"]) or path, rows),
            "noise": noise}


def offline_by_machine(frames: dict) -> dict:
    """Per machine file the store predicted with (named by its runs): the offline model's error
    per size regime; before and after a change to the machine file, for instance."""
    predictions, measurements = frames["variant_predictions"], frames["measurements"]
    names = machine_file_names(frames["runs"])
    return {sha: {"machine_file": names.get(sha, ""),
                  "regimes": regime_errors(joined_rows(predictions, measurements, sha,
                                                       runs=frames["runs"]))}
            for sha in machine_files(predictions)}


def _strategies(request: EvaluationRequest, host: dict) -> EvaluationDocument:
    rows, noise = host["host"].rows, host["noise"]
    result = evaluate(rows, request.stop, with_tpe=request.with_tpe, noise=noise,
                      seeds=request.noise_seeds)
    regimes = offline_by_machine(host["frames"])
    valued = share_value(rows, list(request.sample_shares), noise,
                         min(request.noise_seeds, SHARE_SEEDS), request.stop) \
        if request.sample_shares else []
    document = {"strategies": result.strategies, "accuracy": result.accuracy,
                "noise": result.noise, "first_pick_within_5pct": result.first_pick,
                "hybrid_measured_to_within_3pct": result.hybrid_to_best,
                "reliability": result.reliability, "offline_errors": result.offline_errors,
                "transfer": result.transfer, "configurations": result.configurations,
                "curves": result.curves, "offline_by_regime": regimes,
                "sample_shares": valued, "notes": result.notes}
    return EvaluationDocument(document, result, regimes, valued)


def _hosts(request: EvaluationRequest, host: dict, other: dict | None) -> dict:
    """The feature sets, constants and host transfers asked for, on one BLAS thread per process
    as the leave-one-IVP-out replay (their matrices are a pool's)."""
    with threadpool_limits(1, user_api="blas"):
        return _host_parts(request, host, other)


def _host_parts(request: EvaluationRequest, host: dict, other: dict | None) -> dict:
    out = {}
    if request.feature_sets:
        out["feature_sets"] = {"leave_one_ivp_out": hosts.feature_set_comparison(
            host["host"].rows, ((), ("ivp",)))}
        if other is not None:
            out["feature_sets"]["leave_one_host_out"] = hosts.host_feature_comparison(
                host["host"], other["host"], ((), ("machine",), ("ivp",), ("ivp", "machine")))
    if other is not None and request.constants:
        same = host["host"].name == other["host"].name      # then named by their paths
        grids = {(path if same else entry["host"].name): constants_check.store_grid(
                     entry["host"].rows, entry["noise"], max(1, request.noise_seeds))
                 for entry, path in ((host, request.db), (other, request.other_host))}
        out["constants"] = {"grids": {name: {**grid, "grid": [asdict(s) for s in grid["grid"]]}
                                      for name, grid in grids.items()},
                            "directions": constants_check.out_of_sample(grids)}
    if other is not None:
        out["hosts"] = hosts.host_transfer(host["host"], other["host"], host["noise"],
                                           other["noise"], max(1, request.noise_seeds),
                                           request.stop)
        out["hosts"]["kernel_effects"] = effects_transfer(
            host["host"], other["host"], host["noise"], other["noise"],
            max(1, request.noise_seeds), request.stop)
    return out


def run_evaluation(request: EvaluationRequest) -> EvaluationDocument:
    """Everything evaluate reports, as one JSON document and the parts its text shows."""
    check_evaluation(request)
    host = read_host(request.db, request.noise_seeds)
    other = read_host(request.other_host, request.noise_seeds) if request.other_host else None
    evaluation = _strategies(request, host) if request.strategies else \
        EvaluationDocument({}, None, {}, [])
    document = evaluation.document
    document["pass_agreement"] = pass_agreement(host["frames"]["measurements"])
    document.update(_hosts(request, host, other))
    return evaluation
