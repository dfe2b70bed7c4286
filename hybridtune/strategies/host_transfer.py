"""Leave one host and one IVP out: a model trained on host A as hybrid's prior on host B.

A Gaussian process trained on host A's store without an IVP is hybrid's prior for that IVP on host B
(its spread inflated by what the other direction measured), against B's own model without the IVP;
the IVP and machine feature sets are judged by the same validations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hybridtune.describe.strategy import HYBRID_STOP
from hybridtune.errors import RequestError
from hybridtune.learn.encode import KEPT_SETS
from hybridtune.learn.prior import from_other_hardware
from hybridtune.learn.table import CONFIG, Rows
from hybridtune.learn.train import MIN_ROWS, fit
from hybridtune.strategies import in_parallel, metrics, replay
from hybridtune.strategies.judged_numbers import LOSS_WITHIN
from hybridtune.strategies.leave_one_out import accuracy_of, whole_pools
from hybridtune.strategies.noise import Noise, pool_draws

SPREAD_QUANTILES = (0.25, 0.75)     # the residuals' spread: their interquartile range, as a normal's


@dataclass(frozen=True)
class Host:
    """One host's ground truth: its rows and a name for reports (the CPU of its measurements)."""
    name: str
    rows: Rows


def _without(rows: Rows, ivp: str) -> Rows:
    return Rows(rows.frame[rows.frame["ivp"] != ivp], rows.feature_schema, rows.machine_sha256)


def residual_spread(fitted, test: pd.DataFrame) -> float:
    """How far a model's corrected log times miss on rows of other hardware, each configuration's
    common miss removed (hybrid learns it from the first measurement), beyond the variant error the
    model already states: sqrt(max(0, observed^2 - stated^2)), observed from the interquartile
    range."""
    variants, features = test["variant"].tolist(), test["features"].tolist()
    mean, _ = fitted.correction(variants, features)
    residual = np.log(test["median_s"].to_numpy(float)) - (
        np.log(test["predicted_s"].to_numpy(float)) + mean)
    keys = test[list(CONFIG)].astype(str).agg("|".join, axis=1).to_numpy()
    centred = residual - pd.Series(residual).groupby(keys).transform("median").to_numpy()
    low, high = np.quantile(centred, SPREAD_QUANTILES)
    observed = (high - low) / 1.349
    return float(math.sqrt(max(0.0, observed ** 2 - fitted.variant_spread ** 2)))


def _corrected(fitted, test: pd.DataFrame) -> np.ndarray:
    """The model's corrected times of the test rows."""
    mean, _ = fitted.correction(test["variant"].tolist(), test["features"].tolist())
    return test["predicted_s"].to_numpy(float) * np.exp(mean)


def _to_within(pool: replay.StoredPool, replays: list) -> list[int]:
    """Measurements each replay needed to hold a variant within LOSS_WITHIN of the best (the pool's
    size where it never did)."""
    times = pool.times
    return [metrics.measurements_to_within(times, r.order, LOSS_WITHIN) or len(times)
            for r in replays]


def _replayed(pools: list, fitted, noise: Noise | None, seeds: int, stop: float
              ) -> tuple[dict, str]:
    """hybrid on the pools (one method and IVP at a time) with this model, per noise seed: per
    pool key the measurements to within LOSS_WITHIN and the losses."""
    out: dict = {}
    for method in dict.fromkeys(p.key[0] for p in pools):
        group = [p for p in pools if p.key[0] == method]
        prior = replay.hybrid_prior(group, fitted)
        for seed in range(seeds):
            drawn = [pool_draws(noise, seed, p) for p in group]
            for pool, result in zip(group, replay.hybrid_together(group, fitted, stop,
                                                                  errors=drawn, prior=prior)):
                entry = out.setdefault(pool.key, {"to_within": [], "loss": [], "measured": []})
                entry["to_within"] += _to_within(pool, [result])
                entry["loss"].append(float(pool.times[result.chosen] / pool.times.min() - 1))
                entry["measured"].append(len(result.order))
    return out, prior[1]


def _host_fits(setting: tuple, host: Host) -> dict:
    return _fits(host, *setting)


def _one_way(setting: tuple, way: tuple) -> dict:
    ivps, seeds, stop = setting
    source, target, transferred, own, spread, noise = way
    return _direction(source, target, ivps, transferred, own, spread, noise, seeds, stop)


def _fits(host: Host, ivps: list, max_rows: int, feature_sets: tuple) -> dict:
    """Per IVP the Gaussian process trained on the host's other IVPs."""
    return {ivp: fit(_without(host.rows, ivp), "gp", max_rows, left_out=ivp,
                     feature_sets=feature_sets) for ivp in ivps}


def common_ivps(a: Host, b: Host) -> list[str]:
    ivps = sorted(set(a.rows.measured["ivp"]) & set(b.rows.measured["ivp"]))
    if not ivps:
        raise RequestError(f"{a.name} and {b.name}: no IVP measured on both hosts")
    for host in (a, b):
        if len(set(host.rows.measured["ivp"])) < 2 or len(host.rows.measured) < MIN_ROWS:
            raise RequestError(f"{host.name}: leaving an IVP out needs at least two IVPs and "
                               f"{MIN_ROWS} measured rows")
    return ivps


def _direction(source: Host, target: Host, ivps: list, transferred: dict, own: dict,
               spread: float, noise: Noise | None, seeds: int, stop: float) -> dict:
    """Hybrid on the target's whole pools of each IVP: with the source's model (inflated by
    spread) and with the target's own leave-one-IVP-out model."""
    pools = whole_pools(target.rows)
    per_ivp, counts, own_counts, note = {}, [], [], ""
    for ivp in ivps:
        mine = sorted((p for p in pools if p.key[1] == ivp), key=lambda p: p.key)
        if not mine:
            continue
        model = from_other_hardware(transferred[ivp], source.name, spread)
        moved, note = _replayed(mine, model, noise, seeds, stop)
        home, _ = _replayed(mine, own[ivp], noise, seeds, stop)
        test = target.rows.measured[target.rows.measured["ivp"] == ivp].reset_index(drop=True)
        accuracy = accuracy_of(test, {"transferred": _corrected(transferred[ivp], test),
                                      "own": _corrected(own[ivp], test)})
        mean = lambda found, key: float(np.mean([v for e in found.values() for v in e[key]]))  # noqa: E731
        per_ivp[ivp] = {"pools": len(mine), "accuracy": accuracy,
                        "to_within": {"transferred": mean(moved, "to_within"),
                                      "own": mean(home, "to_within")},
                        "loss": {"transferred": mean(moved, "loss"), "own": mean(home, "loss")},
                        "measured": {"transferred": mean(moved, "measured"),
                                     "own": mean(home, "measured")}}
        counts += [v for e in moved.values() for v in e["to_within"]]
        own_counts += [v for e in home.values() for v in e["to_within"]]
    transferred_mean = float(np.mean(counts)) if counts else math.nan
    own_mean = float(np.mean(own_counts)) if own_counts else math.nan
    return {"from": source.name, "to": target.name, "spread_used": spread, "ivps": per_ivp,
            "to_within": {"transferred": transferred_mean, "own": own_mean,
                          "ratio": transferred_mean / own_mean if own_mean else math.nan},
            "prior_note": note}


def host_transfer(a: Host, b: Host, noise_a: Noise | None, noise_b: Noise | None, seeds: int = 1,
                  stop: float = HYBRID_STOP, max_rows: int = 2000,
                  feature_sets: tuple = KEPT_SETS) -> dict:
    """Both directions of leave-one-host-and-IVP-out. Each direction's inflation of the transferred
    model's spread is calibrated on the other direction (residual_spread of B's model on A's rows
    is used for A's model on B), so neither is judged on what it was calibrated on."""
    ivps = common_ivps(a, b)
    fits_a, fits_b = in_parallel.mapped(_host_fits, (ivps, max_rows, feature_sets), [a, b])
    spread = {}
    for source, target, fits in ((a, b, fits_a), (b, a, fits_b)):
        measured = target.rows.measured
        spread[source.name] = float(np.median([
            residual_spread(fits[ivp], measured[measured["ivp"] == ivp].reset_index(drop=True))
            for ivp in ivps]))
    directions = in_parallel.mapped(_one_way, (ivps, seeds, stop), [
        (a, b, fits_a, fits_b, spread[b.name], noise_b),
        (b, a, fits_b, fits_a, spread[a.name], noise_a)])
    return {"ivps": ivps, "seeds": seeds, "feature_sets": list(feature_sets),
            "measured_spread": spread, "directions": directions}


def feature_set_comparison(rows: Rows, candidates: tuple, max_rows: int = 2000) -> dict:
    """Leave one IVP out with each candidate tuple of feature sets: the corrected model's Kendall
    tau and median relative error per left-out IVP."""
    ivps = sorted(set(rows.measured["ivp"]))
    out = {}
    for sets in candidates:
        per_ivp = {}
        for ivp in ivps:
            train = _without(rows, ivp)
            if len(train.measured) < MIN_ROWS:
                continue
            gp = fit(train, "gp", max_rows, left_out=ivp, feature_sets=sets)
            test = rows.measured[rows.measured["ivp"] == ivp].reset_index(drop=True)
            per_ivp[ivp] = accuracy_of(test, {"gp": _corrected(gp, test)})["gp"]
        out["+".join(sets) or "none"] = _accuracy_summary(per_ivp)
    return out


def host_feature_comparison(a: Host, b: Host, candidates: tuple, max_rows: int = 2000) -> dict:
    """Leave one host out with each candidate tuple of feature sets: trained on all of one host's
    rows, the corrected model's accuracy on the other host's rows of each IVP, both directions."""
    out = {}
    for sets in candidates:
        per = {}
        for source, target in ((a, b), (b, a)):
            gp = fit(source.rows, "gp", max_rows, feature_sets=sets)
            measured = target.rows.measured
            for ivp in sorted(set(measured["ivp"])):
                test = measured[measured["ivp"] == ivp].reset_index(drop=True)
                per[f"{source.name} -> {target.name}: {ivp}"] = accuracy_of(
                    test, {"gp": _corrected(gp, test)})["gp"]
        out["+".join(sets) or "none"] = _accuracy_summary(per)
    return out


def _accuracy_summary(per: dict) -> dict:
    taus = [v["kendall_tau"] for v in per.values() if not math.isnan(v["kendall_tau"])]
    errors = [v["median_rel_error"] for v in per.values()]
    return {"per": per, "kendall_tau_min": float(min(taus)) if taus else math.nan,
            "kendall_tau_mean": float(np.mean(taus)) if taus else math.nan,
            "median_rel_error_median": float(np.median(errors)) if errors else math.nan}
