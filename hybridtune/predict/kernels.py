"""Kernel predictions: each kerncraft-form loop analysed once per machine, model and region.

The analyses run in parallel and are reused from stored rows.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import statistics
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from hybridtune.describe.ivp import IVP
from hybridtune.describe.library import cache_root
from hybridtune.describe.machine import Machine
from hybridtune.describe.expr import Name
from hybridtune.generate.kerncraft_form import KerncraftPart
from hybridtune.generate.size_expressions import sympy_of
from hybridtune.predict import kerncraft_adapter
from hybridtune.predict.working_set import regions


PROCESS_FAILED = "analysis process failed"     # not kerncraft's verdict: never stored, retried


@dataclass(frozen=True)
class LoopJob:
    """One distinct loop to analyse: its code, what its defines stand for, its regions of n."""
    key: str                 # hash of the code and the meaning of its defines
    part: KerncraftPart
    ivp: IVP | None = field(compare=False, repr=False)
    regions: tuple = ()
    names: tuple = ()        # the kernels (template/variant/method/ivp/part) that run it

    def samples(self) -> tuple:
        """(region, n, defines) for every sample of every region."""
        out = []
        for region in self.regions:
            for n in region.samples:
                out.append((region.level, n, self.defines_at(n)))
        return tuple(out)

    def defines_at(self, n: int) -> dict:
        env = self.ivp.environment(n) if self.ivp is not None else {"n": n}
        return {name: int(n if name == "n" else env[name[len("ivp_"):]])
                for name in self.part.defines}


@dataclass(frozen=True)
class LoopPrediction:
    """A loop's prediction in one region: cycles per cache line of work for 1..cores cores."""
    key: str
    region: str
    status: str
    message: str = ""
    cycles_per_cl: tuple = ()
    iterations_per_cl: float = 0.0
    saturation_cores: int = 0
    contributions: dict = field(default_factory=dict)
    n_samples: tuple = ()


def loop_key(part: KerncraftPart, ivp: IVP | None) -> str:
    meaning = {name: str(sympy_of(Name(name[len("ivp_"):]), ivp)) if name != "n" and ivp else name
               for name in part.defines}
    text = part.code + json.dumps(meaning, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def loop_jobs(forms: dict, machine: Machine) -> tuple[dict, dict]:
    """The distinct loops of the kernel forms (key -> (form, IVP or None)), each with its regions on
    this machine, and for each form the loop keys of its parts in order."""
    jobs: dict[str, LoopJob] = {}
    part_keys: dict = {}
    for form_key, (form, ivp) in forms.items():
        part_keys[form_key] = []
        for number, part in enumerate(form.parts):
            key = loop_key(part, ivp)
            part_keys[form_key].append(key)
            name = "/".join((form.template, form.variant, form.method, form.ivp, f"part{number}"))
            if key in jobs:
                job = jobs[key]
                jobs[key] = LoopJob(key, job.part, job.ivp, job.regions, job.names + (name,))
                continue
            valid = ivp.sizes.next_valid if ivp is not None else (lambda n: max(1, int(n)))
            n_min = ivp.sizes.next_valid(1) if ivp is not None else 1
            jobs[key] = LoopJob(key, part, ivp, regions(part.working_set_bytes, machine, valid, n_min),
                                (name,))
    return jobs, part_keys


def prediction_key(loop: str, machine_sha: str, region: str, threads: int, model: str,
                   versions: dict) -> str:
    text = "|".join((loop, machine_sha, region, str(threads), model, versions.get("kerncraft", ""),
                     versions.get("osaca", "")))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _analyse_job(code: str, folder: str, machine_path: str, samples: tuple, model: str) -> list:
    """One loop's analyses. kerncraft writes its intermediates beside the kernel file, so
    concurrent jobs sharing the cache (the shards of an array job) take turns per loop."""
    Path(folder).parent.mkdir(parents=True, exist_ok=True)
    with open(folder + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return kerncraft_adapter.analyse(code, folder, machine_path, samples, model)


def analysis_rows(job: LoopJob, analyses: list, machine: Machine, model: str,
                  versions: dict) -> list[dict]:
    """Store rows (table kernel_predictions) for one job's analyses: one per sample and core count
    (one thread per core: stored as threads)."""
    rows = []
    for (region, n, _), analysis in zip(job.samples(), analyses):
        counts = analysis.cycles_per_cl or (None,) * machine.cores_per_numa_domain
        for threads, cycles in enumerate(counts, start=1):
            rows.append({
                "key": prediction_key(job.key, machine.sha256, region, threads, model, versions),
                "code_hash": job.key, "machine_sha256": machine.sha256, "region": region,
                "threads": threads, "model": model, "kerncraft_version": versions["kerncraft"],
                "osaca_version": versions["osaca"], "n_sample": int(n), "status": analysis.status,
                "message": analysis.message,
                "cycles_per_cl": float("nan") if cycles is None else float(cycles),
                "iterations_per_cl": float(analysis.iterations_per_cl),
                "contributions": analysis.contributions,
                "saturation_cores": int(analysis.saturation_cores)})
    return rows


def run_analyses(jobs: list[LoopJob], machine: Machine, model: str, workers: int | None = None,
                 executor: Executor | None = None, on_job=None) -> int:
    """Analyse the jobs in parallel (largest first); on_job(job, analyses) for each as it ends.

    Returns the number of kerncraft analyses (one per job: its samples share the in-core part).
    """
    if not jobs:
        return 0
    ordered = sorted(jobs, key=lambda j: -len(j.part.code))
    folder = cache_root() / "kerncraft"
    own = executor is None
    if own:
        executor = ProcessPoolExecutor(max_workers=workers or len(os.sched_getaffinity(0)),
                                       initializer=kerncraft_adapter.worker_environment)
    try:
        futures = [(job, executor.submit(_analyse_job, job.part.code, str(folder / job.key),
                                         machine.path, tuple((n, d) for _, n, d in job.samples()),
                                         model)) for job in ordered]
        for job, future in futures:
            try:
                analyses = future.result()
            except Exception as exc:   # a worker that died: the job failed, the others go on
                analyses = [kerncraft_adapter.KernelAnalysis(
                    "failed", model, n, f"{PROCESS_FAILED}: {type(exc).__name__}: {exc}")
                    for _, n, _ in job.samples()]
            if on_job:
                on_job(job, analyses)
    finally:
        if own:
            executor.shutdown(cancel_futures=True)
    return len(ordered)


def region_predictions(rows: list[dict]) -> dict:
    """(loop key, region) -> LoopPrediction: per thread count the median over the region's samples."""
    grouped: dict = {}
    for row in rows:
        grouped.setdefault((row["code_hash"], row["region"]), []).append(row)
    out = {}
    for (key, region), group in grouped.items():
        failed = [r for r in group if r["status"] != "ok"]
        samples = tuple(sorted({int(r["n_sample"]) for r in group}))
        if failed:
            out[(key, region)] = LoopPrediction(key, region, "failed", failed[0]["message"],
                                                n_samples=samples)
            continue
        by_threads: dict[int, list] = {}
        for r in group:
            by_threads.setdefault(int(r["threads"]), []).append(float(r["cycles_per_cl"]))
        cycles = tuple(statistics.median(by_threads[t]) for t in sorted(by_threads))
        middle = sorted((r for r in group if int(r["threads"]) == 1), key=lambda r: r["n_sample"])
        typical = middle[len(middle) // 2]
        contributions = typical["contributions"]
        if isinstance(contributions, str):
            contributions = json.loads(contributions)
        out[(key, region)] = LoopPrediction(key, region, "ok", typical["message"], cycles,
                                            float(typical["iterations_per_cl"]),
                                            int(typical["saturation_cores"]), contributions,
                                            samples)
    return out


def missing_jobs(jobs: dict, known: dict) -> list[LoopJob]:
    """The jobs with a region that has no stored prediction."""
    return [job for job in jobs.values()
            if any((job.key, region.level) not in known for region in job.regions)]

