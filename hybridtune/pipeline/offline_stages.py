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
from hybridtune.generate.form_cache import cached_form, form_keys, keep_form
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
    cache_keys = form_keys(jobs)
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


@dataclass(frozen=True)
class OfflineRequest:
    """What the offline stages rank: the scenario's configurations (n, threads and ranks narrow
    them), how, and whether rankings may be stored.

    A dry run analyses and measures nothing and writes nothing (the store may be a reader):
    variants of loops without a stored prediction are then not ranked. communication:
    (CommunicationModels, note) to use instead of this machine's (a platform's,
    predict/platform_models.py); rankings are then kept out of the store with keep_rankings False.
    ranks_per_domain: the ranks that share one NUMA domain's cores and memory bandwidth, each
    computing on its own block. workers: the processes of the default analysis pool."""
    scenario: Scenario
    n: int | None = None
    threads: tuple | None = None
    ranks: tuple | None = None
    workers: int | None = None
    dry_run: bool = False
    communication: tuple | None = None
    keep_rankings: bool = True
    ranks_per_domain: int = 1


def predict_scenario(scenario: Scenario, n: int | None = None, threads: list[int] | None = None,
                     store=None, workers: int | None = None, on_loop=None, on_analyses=None,
                     dry_run: bool = False, executor=None,
                     ranks: list[int] | None = None, communication: tuple | None = None,
                     keep_rankings: bool = True, ranks_per_domain: int = 1) -> OfflineResult:
    """predict_offline for the request these arguments spell (see OfflineRequest)."""
    request = OfflineRequest(scenario, n, tuple(threads) if threads else threads,
                             tuple(ranks) if ranks else ranks, workers, dry_run, communication,
                             keep_rankings, ranks_per_domain)
    return predict_offline(request, store, executor, on_loop, on_analyses)


def predict_offline(request: OfflineRequest, store=None, executor=None, on_loop=None,
                    on_analyses=None) -> OfflineResult:
    """Rank the scenario's pool for every configuration; kernel analyses come from the store
    where it has them, the rest run in parallel and are stored as each finishes.

    on_analyses(count) is told how many analyses are about to run, on_loop(job, results) of each
    one done; executor (default: a process pool of request.workers) runs the analyses, for
    instance spread over the nodes of a job. In a dry run `missing` counts the analyses that would
    have run."""
    scenario = request.scenario
    versions = kerncraft_adapter.versions()
    configs = list(configurations(scenario, request.n, _listed(request.threads),
                                  _listed(request.ranks)))
    models, note = request.communication or communication_models(
        scenario, configs, store, measure=not request.dry_run)
    writer = None if request.dry_run else store
    taker = AnalysisTaker(scenario, versions,
                          _stored_rows(store, scenario.machine.sha256, scenario.model, versions),
                          writer, on_loop)
    stored = StoredRankings(writer if request.keep_rankings else None, _stored_digests(store))
    rankings, failed, loops, analyses, missing = [], {}, 0, 0, 0
    for method in scenario.methods:
        forms = kernel_forms(scenario, method, request.workers)
        jobs, form_keys = loop_jobs(forms, scenario.machine)
        loops += len(jobs)
        todo = missing_jobs(jobs, region_predictions(taker.rows))
        if request.dry_run:
            missing += len(todo)
            todo = []
        elif on_analyses:
            on_analyses(len(todo))
        analyses += run_analyses(todo, scenario.machine, scenario.model, request.workers,
                                 executor, on_job=taker)
        known = region_predictions(taker.rows)
        failed.update(_failed_loops(jobs, known))
        analysed = AnalysedMethod(scenario, method, forms, jobs, form_keys, known, models)
        for config in (c for c in configs if c.method is method):
            ranking = analysed.ranking(config, request.ranks_per_domain)
            rankings.append(Ranking(config, tuple(ranking)))
            stored.keep(scenario, config, ranking, analysed.step_bytes(config))
    return OfflineResult(tuple(rankings), loops, analyses,
                         tuple(failed.values()), note, versions, stored.new, missing,
                         _target_note(scenario, analyses))


def _listed(values: tuple | None) -> list | None:
    return list(values) if values else None


def _failed_loops(jobs: dict, known: dict) -> dict:
    """job key -> (kernel names, message) of each analysed loop with a failed prediction."""
    failed = {}
    for job in jobs.values():
        for region in job.regions:
            prediction = known.get((job.key, region.level))
            if prediction is not None and prediction.status != "ok":
                failed[job.key] = (job.names, prediction.message)
    return failed


@dataclass(frozen=True)
class AnalysisTaker:
    """Takes each finished kerncraft analysis: its rows join `rows`, and the store (None: a dry
    run) gets the loop and its rows unless its process failed; on_loop(job, results) is told."""
    scenario: Scenario
    versions: dict
    rows: list                  # kernel_predictions rows: the store's, then this run's
    store: object = None
    on_loop: object = None

    def __call__(self, job, results) -> None:
        new = analysis_rows(job, results, self.scenario.machine, self.scenario.model,
                            self.versions)
        self.rows.extend(new)
        if self.store is not None and not any(r.message.startswith(PROCESS_FAILED)
                                              for r in results):
            template, variant, method_name, ivp_name, _ = job.names[0].split("/")
            self.store.append_many("kernels", [{"code_hash": job.key, "name": job.names[0],
                                                "template": template, "variant": variant,
                                                "ivp": ivp_name, "method": method_name,
                                                "code": job.part.code}])
            self.store.append_many("kernel_predictions", new)
        if self.on_loop:
            self.on_loop(job, results)
        signals.check()


class AnalysedMethod:
    """One method's pool with its loops analysed: ranks the variants of a configuration."""

    def __init__(self, scenario: Scenario, method, forms: dict, jobs: dict, form_keys: dict,
                 known: dict, models):
        self.scenario, self.method, self.machine = scenario, method, scenario.machine
        self.forms, self.jobs, self.form_keys, self.known, self.models = \
            forms, jobs, form_keys, known, models
        self.pool = build_pool(scenario.skeletons, scenario.template_map, method)
        self.skeletons = {s.name: s for s in scenario.skeletons}
        self.counts = {s.name: step_counts(s, method) for s in scenario.skeletons}
        self.buffers = {s.name: buffer_rows(s, scenario.template_map, method.stages)
                        for s in scenario.skeletons}

    def step_bytes(self, config: Configuration) -> dict:
        """Per skeleton, the bytes of a step's buffers on the largest rank's block."""
        block = math.ceil(config.n / config.ranks)
        return {name: ELEMENT_BYTES * sum(count.values()) * block
                for name, count in self.buffers.items()}

    def ranking(self, config: Configuration, ranks_per_domain: int) -> list:
        """The configuration's runnable variants predicted and ranked."""
        block = math.ceil(config.n / config.ranks)     # the largest rank's components
        # the ranks of a domain compute at once: as its cores on all their blocks together
        domain_block, cores = block * ranks_per_domain, config.threads * ranks_per_domain
        steps = {name: step_level(sum(count.values()), self.machine, domain_block, cores)
                 for name, count in self.buffers.items()}
        breakdowns = {level: self._breakdowns(config, domain_block, cores, level)
                      for level in set(steps.values())}
        variants, _ = runnable(self.skeletons, config, list(self.pool.variants))
        halo = config.ivp.halo(config.n) if config.ranks > 1 else 0
        communication = {name: step_communication(skeleton, self.method.corrector_steps,
                                                  self.buffers[name], self.models, config.n,
                                                  config.ranks, config.threads, halo)
                         for name, skeleton in self.skeletons.items()}
        return ranked([predict_variant(v, self.counts[v.skeleton], breakdowns[steps[v.skeleton]],
                                       self.method.name, config.ivp.name, config.n,
                                       config.threads, communication[v.skeleton], config.ranks)
                       for v in variants])

    def _breakdowns(self, config: Configuration, domain_block: int, cores: int, level) -> dict:
        """(template, kernel variant) -> its breakdown for the configuration's IVP, the step's
        working set at `level`."""
        out = {}
        for (template, variant, ivp_name), (form, _) in self.forms.items():
            if ivp_name not in ("", config.ivp.name):
                continue
            form_jobs = [self.jobs[key] for key in self.form_keys[(template, variant, ivp_name)]]
            out[(template, variant)] = kernel_breakdown(form, form_jobs, self.known, self.machine,
                                                        domain_block, cores, level)
        return out


class StoredRankings:
    """Appends each ranking the store (None: none kept) does not hold yet, with its features and
    its prediction set; counts those it appended."""

    def __init__(self, store, digests: set):
        self.store, self.digests, self.new = store, digests, 0

    def keep(self, scenario: Scenario, config: Configuration, ranking: list,
             step_bytes: dict) -> None:
        if self.store is None:
            return
        machine = scenario.machine
        features = ranking_features(ranking, config.method, machine, step_bytes,
                                    ivp_characteristics(config.ivp, config.n))
        stored = [_prediction_row(scenario, p, f) for p, f in zip(ranking, features)]
        digest = ranking_digest(machine.sha256, stored)
        if digest in self.digests:
            return
        self.store.append_many("variant_predictions", stored)
        self.store.append_many("prediction_sets", [{
            "digest": digest, "scenario": scenario.name, "method": config.method.name,
            "ivp": config.ivp.name, "n": config.n, "threads": config.threads,
            "ranks": config.ranks, "model": scenario.model,
            "machine_sha256": machine.sha256, "variants": len(stored)}])
        self.digests.add(digest)
        self.new += 1


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
