"""The offline stages in order: kernel forms, kernel predictions, variant predictions, rankings.

Each stage reuses what the store holds.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from hybridtune.describe.configuration import Configuration, configurations, runnable
from hybridtune.pipeline.comm_models import communication_models
from hybridtune.describe.scenario import Scenario
from hybridtune.generate.form_cache import cached_form, form_key, keep_form
from hybridtune.generate.kerncraft_form import kerncraft_form
from hybridtune.generate.pool import build_pool
from hybridtune.runtime import signals
from hybridtune.predict import kerncraft_adapter
from hybridtune.predict.kerncraft_adapter import worker_environment
from hybridtune.generate.kerncraft_form import ELEMENT_BYTES
from hybridtune.predict.features import ivp_characteristics, ranking_features
from hybridtune.predict.kernels import (PROCESS_FAILED, analysis_rows, loop_jobs, missing_jobs,
                                        region_predictions, run_analyses)
from hybridtune.predict.superstep import step_communication
from hybridtune.predict.variants import (buffer_rows, kernel_breakdown, predict_variant, ranked,
                                         step_counts, step_level)


@dataclass(frozen=True)
class Ranking:
    configuration: Configuration
    predictions: tuple          # VariantPrediction, ranked


@dataclass(frozen=True)
class OfflineResult:
    rankings: tuple
    loops: int                  # distinct kerncraft-form loops of the pool
    analyses: int               # kerncraft analyses this run (the others came from the store)
    failed_loops: tuple         # (kernel names, message) of loops kerncraft could not analyse
    barrier_note: str = ""
    versions: dict = field(default_factory=dict)
    new_rankings: int = 0       # rankings appended to the store (the others it held already)
    missing: int = 0            # analyses a dry run left out (their variants are not ranked)
    target_note: str = ""       # why kerncraft's builds may not be those of the machine's CPU


PARALLEL_FORMS = 16     # below this many forms a process pool costs more than it saves


def _form(job: tuple):
    return kerncraft_form(*job)


def kernel_forms(scenario: Scenario, method, workers: int | None = None) -> dict:
    """(template, kernel variant, IVP name or '') -> (form, IVP or None); a kernel that evaluates
    no IVP has one form for all IVPs. Forms come from the forms cache where it has them; the
    others are built in a process pool of `workers` (default: one per core) when there are many,
    and cached."""
    keys, jobs = [], []
    for template in scenario.templates:
        for variant in template.variants:
            for ivp in scenario.ivps if template.evaluates_rhs else scenario.ivps[:1]:
                keys.append((template.name, variant.name, ivp.name if template.evaluates_rhs else ""))
                jobs.append((template, variant.name, method, ivp))
    cache_keys = [form_key(*job) for job in jobs]
    forms = [cached_form(key) for key in cache_keys]
    todo = [i for i, form in enumerate(forms) if form is None]
    workers = workers or len(os.sched_getaffinity(0))
    if workers > 1 and len(todo) >= PARALLEL_FORMS:
        with ProcessPoolExecutor(max_workers=workers, initializer=worker_environment) as pool:
            built = list(pool.map(_form, [jobs[i] for i in todo],
                                  chunksize=max(1, len(todo) // (4 * workers))))
    else:
        built = [_form(jobs[i]) for i in todo]
    for i, form in zip(todo, built):
        forms[i] = form
        keep_form(cache_keys[i], form)
    return {key: (form, job[3] if key[2] else None) for key, job, form in zip(keys, jobs, forms)}


def _stored_rows(store, machine_sha: str, model: str, versions: dict) -> list[dict]:
    if store is None:
        return []
    frame = store.frame("kernel_predictions")
    if frame.empty:
        return []
    keep = ((frame["machine_sha256"] == machine_sha) & (frame["model"] == model)
            & (frame["kerncraft_version"] == versions["kerncraft"])
            & (frame["osaca_version"] == versions["osaca"]))
    return frame[keep].to_dict("records")


def _stored_digests(store) -> set:
    if store is None:
        return set()
    frame = store.frame("prediction_sets")
    return set() if frame.empty else set(frame["digest"])


def ranking_digest(machine_sha: str, rows: list[dict]) -> str:
    """The identity of a stored ranking: its rows (every number, in order) and the machine file."""
    text = json.dumps([machine_sha, rows], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def predict_scenario(scenario: Scenario, n: int | None = None, threads: list[int] | None = None,
                     store=None, workers: int | None = None, on_loop=None, on_analyses=None,
                     dry_run: bool = False, executor=None,
                     ranks: list[int] | None = None, communication: tuple | None = None,
                     keep_rankings: bool = True, ranks_per_domain: int = 1) -> OfflineResult:
    """Rank the scenario's pool for every configuration; kernel analyses come from the store
    where it has them, the rest run in parallel and are stored as each finishes.

    on_analyses(count) is told how many analyses are about to run, on_loop(job, results) of each
    one done. A dry run analyses and measures nothing and writes nothing (store may be a reader):
    variants of loops without a stored prediction are then not ranked, and `missing` counts the
    analyses that would have run. executor (default: a process pool of `workers`) runs the
    analyses, for instance spread over the nodes of a job. communication: (CommunicationModels,
    note) to use instead of this machine's (a platform's, predict/platform_models.py); rankings
    are then kept out of the store with keep_rankings False. ranks_per_domain: the ranks that
    share one NUMA domain's cores and memory bandwidth, each computing on its own block."""
    machine = scenario.machine
    versions = kerncraft_adapter.versions()
    configs = list(configurations(scenario, n, threads, ranks))
    models, note = communication or communication_models(scenario, configs, store,
                                                         measure=not dry_run)
    writer = None if dry_run else store
    missing = 0
    rankings, failed, loops, analyses = [], {}, 0, 0
    rows = _stored_rows(store, machine.sha256, scenario.model, versions)
    digests, new_rankings = _stored_digests(store), 0
    known = region_predictions(rows)
    for method in scenario.methods:
        forms = kernel_forms(scenario, method, workers)
        jobs, form_keys = loop_jobs(forms, machine)
        loops += len(jobs)
        todo = missing_jobs(jobs, known)
        if dry_run:
            missing += len(todo)
            todo = []
        elif on_analyses:
            on_analyses(len(todo))

        def finished(job, results):
            new = analysis_rows(job, results, machine, scenario.model, versions)
            rows.extend(new)
            if writer is not None and not any(r.message.startswith(PROCESS_FAILED)
                                              for r in results):
                template, variant, method_name, ivp_name, _ = job.names[0].split("/")
                store.append_many("kernels", [{"code_hash": job.key, "name": job.names[0],
                                               "template": template, "variant": variant,
                                               "ivp": ivp_name, "method": method_name,
                                               "code": job.part.code}])
                store.append_many("kernel_predictions", new)
            if on_loop:
                on_loop(job, results)
            signals.check()

        analyses += run_analyses(todo, machine, scenario.model, workers, executor, on_job=finished)
        known = region_predictions(rows)
        for job in jobs.values():
            for region in job.regions:
                prediction = known.get((job.key, region.level))
                if prediction is not None and prediction.status != "ok":
                    failed[job.key] = (job.names, prediction.message)
        pool = build_pool(scenario.skeletons, scenario.template_map, method)
        skeletons = {s.name: s for s in scenario.skeletons}
        counts = {s.name: step_counts(s, method) for s in scenario.skeletons}
        buffers = {s.name: buffer_rows(s, scenario.template_map, method.stages)
                   for s in scenario.skeletons}
        for config in (c for c in configs if c.method is method):
            block = math.ceil(config.n / config.ranks)     # the largest rank's components
            # the ranks of a domain compute at once: as its cores on all their blocks together
            domain_block, cores = block * ranks_per_domain, config.threads * ranks_per_domain
            steps = {name: step_level(sum(count.values()), machine, domain_block, cores)
                     for name, count in buffers.items()}
            breakdowns: dict = {}
            for level in set(steps.values()):
                for (template, variant, ivp_name), (form, ivp) in forms.items():
                    if ivp_name not in ("", config.ivp.name):
                        continue
                    form_jobs = [jobs[key] for key in form_keys[(template, variant, ivp_name)]]
                    breakdowns.setdefault(level, {})[(template, variant)] = kernel_breakdown(
                        form, form_jobs, known, machine, domain_block, cores, level)
            variants, _ = runnable(skeletons, config, list(pool.variants))
            halo = config.ivp.halo(config.n) if config.ranks > 1 else 0
            communication = {name: step_communication(skeleton, method.corrector_steps,
                                                      buffers[name], models, config.n,
                                                      config.ranks, config.threads, halo)
                             for name, skeleton in skeletons.items()}
            predictions = [predict_variant(v, counts[v.skeleton], breakdowns[steps[v.skeleton]],
                                           method.name, config.ivp.name, config.n,
                                           config.threads, communication[v.skeleton],
                                           config.ranks)
                           for v in variants]
            ranking = ranked(predictions)
            rankings.append(Ranking(config, tuple(ranking)))
            if writer is not None and keep_rankings:
                features = ranking_features(
                    ranking, method, machine,
                    {name: ELEMENT_BYTES * sum(count.values()) * block
                     for name, count in buffers.items()},
                    ivp_characteristics(config.ivp, config.n))
                stored = [_prediction_row(scenario, p, f) for p, f in zip(ranking, features)]
                digest = ranking_digest(machine.sha256, stored)
                if digest not in digests:
                    store.append_many("variant_predictions", stored)
                    store.append_many("prediction_sets", [{
                        "digest": digest, "scenario": scenario.name, "method": method.name,
                        "ivp": config.ivp.name, "n": config.n, "threads": config.threads,
                        "ranks": config.ranks, "model": scenario.model,
                        "machine_sha256": machine.sha256, "variants": len(stored)}])
                    digests.add(digest)
                    new_rankings += 1
    return OfflineResult(tuple(rankings), loops, analyses,
                         tuple(failed.values()), note, versions, new_rankings, missing,
                         _target_note(scenario, analyses))


def _target_note(scenario: Scenario, analyses: int) -> str:
    machine = scenario.machine
    if scenario.on_host or machine.compiles_for_any_host or not analyses:
        return ""
    return (f"{analyses} kerncraft analyses built {machine.path}'s loops with -march=native, for "
            f"this host's CPU, not for {machine.name}; write its target into the file's compiler "
            "flags (gcc -march=native -Q --help=target on that machine names it)")


def _prediction_row(scenario: Scenario, p, features: dict) -> dict:
    """A variant_predictions row; the breakdown keeps each kernel's calls, seconds and its loops
    with the level each reads from (the loops' numbers are in kernel_predictions)."""
    kernels = [[k["template"], k["variant"], k["calls_per_step"], k["seconds"],
                [[part["loop"], part["level"]] for part in k["parts"]]] for k in p.kernels]
    return {"scenario": scenario.name, "method": p.method, "ivp": p.ivp, "n": p.n,
            "threads": p.threads, "ranks": p.ranks, "variant": p.id,
            "predicted_s": p.predicted_s if math.isfinite(p.predicted_s) else float("nan"),
            "t_com_s": p.t_com_s, "rank": p.rank, "model": scenario.model,
            "breakdown": {"kernels": kernels, "message": p.message}, "features": features}
