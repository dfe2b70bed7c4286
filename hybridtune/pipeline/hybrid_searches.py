"""The hybrid strategy's searches built from the store: one belief per IVP.

A belief from the trained model (or the offline model alone) over the variants of each IVP's
configurations, shared by that IVP's searches and conditioned on what the store already holds.
"""

from __future__ import annotations

from hybridtune.pipeline.measurement_rows import MeasuredRow
from hybridtune.learn.prior import (HARDWARE_SPREAD, SHIPPED_EFFECTS, from_other_hardware,
                                    prior_belief)
from hybridtune.learn.persist import latest_models, load_model
from hybridtune.learn.table import (KEY, PREDICTION_COLUMNS, hardware_name, joined_rows,
                                     latest_predictions)
from hybridtune.pipeline.prior_stores import stores_kernel_effects
from hybridtune.store import Store
from hybridtune.strategies.hybrid import HybridSearch, first_cover, teaching_picks
from hybridtune.strategies.registry import sampled


MAX_TOGETHER = 4000      # candidates one belief holds at most (its covariance is their square)


def prior_model(store, predictions, machine_sha256: str, hardware_id: str,
                other_hardware: bool = False):
    """The stored Gaussian process for this machine file and hardware, with the store's rows
    (predictions: the store's variant_predictions frame), or None and why not. With
    other_hardware (a --prior store), a model of other hardware and its own machine file serves
    where there is none of this one, its variant error widened by HARDWARE_SPREAD."""
    models = store.frame("models")
    record = latest_models(models, machine_sha256).get("gp") if not models.empty else None
    if record is not None and record["hardware_id"] == hardware_id:
        rows = joined_rows(predictions, store.frame("measurements"), machine_sha256, hardware_id)
        return load_model(record, rows), ""
    if other_hardware and not models.empty:
        others = models[(models["kind"] == "gp") & (models["hardware_id"] != hardware_id)]
        if not others.empty:
            other = others.to_dict("records")[-1]
            measurements = store.frame("measurements")
            rows = joined_rows(predictions, measurements, other["machine_sha256"],
                               other["hardware_id"])
            cpu = hardware_name(measurements, other["hardware_id"]) or other["hardware_id"][:12]
            return from_other_hardware(load_model(other, rows), cpu, HARDWARE_SPREAD), ""
    if record is None:
        return None, (f"the store has no Gaussian process for machine file {machine_sha256[:12]}: "
                      "`hybridtune train --db FILE` fits one on its measurements")
    return None, (f"the store's Gaussian process for this machine file was trained on "
                  f"measurements of hardware {record['hardware_id'][:12]}, this host is "
                  f"{hardware_id[:12]}: measure here (tune), then `hybridtune train`")


def prior_of_stores(paths: tuple, machine_sha256: str, hardware_id: str) -> tuple:
    """(model, kernel effects, why) from --prior stores: a model of this hardware and machine file
    in one of them; else the kernel effects of their whole pools together (they carried between
    the shipped ground truths' hosts at 1.05x and 1.00x the measurements of the host's own,
    docs/models.md); else the first one's model of other hardware, widened by HARDWARE_SPREAD;
    else the shipped kernel effects."""
    named = ", ".join(paths)
    for path in paths:
        fitted, _ = _stored_model(path, machine_sha256, hardware_id, other_hardware=False)
        if fitted is not None:
            return fitted, SHIPPED_EFFECTS, f"from --prior {path}"
    effects = stores_kernel_effects(list(paths))
    if effects is not None:
        return None, effects, f"from --prior {named}"
    why = ""
    for path in paths:
        fitted, why = _stored_model(path, machine_sha256, hardware_id, other_hardware=True)
        if fitted is not None:
            return fitted, SHIPPED_EFFECTS, f"from --prior {path}"
    return None, SHIPPED_EFFECTS, f"--prior {named}: {why}"


def _stored_model(path: str, machine_sha256: str, hardware_id: str, other_hardware: bool):
    """prior_model of the store at path, opened read-only."""
    with Store.open(path, "r") as source:
        return prior_model(source, source.frame("variant_predictions", PREDICTION_COLUMNS),
                           machine_sha256, hardware_id, other_hardware)


def together(plans: list) -> list[list[int]]:
    """The plans' indices grouped by method and IVP, in order, a group holding at most
    MAX_TOGETHER candidates: the configurations one belief covers."""
    groups: list[list[int]] = []
    sizes: list[int] = []
    last: dict = {}
    for index, plan in enumerate(plans):
        c = plan.configuration
        key = (c.method.name, c.ivp.name)
        size = len(plan.shortlisted)
        group = last.get(key)
        if group is None or sizes[group] + size > MAX_TOGETHER:
            last[key] = group = len(groups)
            groups.append([])
            sizes.append(0)
        groups[group].append(index)
        sizes[group] += size
    return groups


def searches(plans: list, store, machine_sha256: str, hardware_id: str, stop: float,
             max_measurements: int | None, prior: tuple | None = None, sample: float = 0.0
             ) -> tuple[list, str]:
    """A search per plan, the plans of one IVP sharing a belief (see together), conditioned on
    the rows the store already answers; the belief is the trained model of this hardware of the
    run's store, or with prior stores (opened read-only) see prior_of_stores; without a model the
    kernel effects."""
    predictions = store.frame("variant_predictions", PREDICTION_COLUMNS)
    effects = SHIPPED_EFFECTS
    if not prior:
        fitted, why_not = prior_model(store, predictions, machine_sha256, hardware_id)
    else:
        fitted, effects, why_not = prior_of_stores(prior, machine_sha256, hardware_id)
    latest, _, _ = latest_predictions(predictions, machine_sha256)
    features = {tuple(key): f for key, f in zip(
        latest[list(KEY)].itertuples(index=False),
        latest["features"])}
    found, note = {}, ""
    groups = together(plans)
    for group in groups:
        ids, rows, predicted, configurations = [], [], [], []
        for index in group:
            c = plans[index].configuration
            for p in plans[index].shortlisted:
                ids.append(p.id)
                rows.append(features.get((c.method.name, c.ivp.name, c.n, c.ranks, c.threads,
                                          p.id), {}))
                predicted.append(p.predicted_s)
                configurations.append((c.n, c.threads, c.ranks))
        belief, note = prior_belief(fitted, ids, rows, predicted, configurations,
                                    effects=effects)
        start = 0
        for index in group:
            plan = plans[index]
            mine = [p.id for p in plan.shortlisted]
            covered = first_cover(mine, belief, start)
            search = sampled(HybridSearch(belief, len(mine), stop, max_measurements or len(mine),
                                          start, covered, teaching_picks(fitted), scored=False),
                             plan.candidates, sample)
            for position, vid in enumerate(mine):
                if vid in plan.reused:
                    search.tell(position, *MeasuredRow.of(plan.reused[vid]).told)
            found[index] = search
            start += len(mine)
    return [found[index] for index in range(len(plans))], \
        note + (f" ({why_not})" if why_not else "")
