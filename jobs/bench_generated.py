"""Benchmark "Generated variants" item 6: the pool's best and worst variant against numba, numpy and the
streaming bound, for Wave1D (memory-bound) and InverterChain (compute-bound), 1 and 2 threads, at a size
whose working set fits in L2 and one in the memory regime measured in the same run.

Writes data/bench/generated.json and prints a markdown table. Run through jobs/bench_generated.sh.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hybridtune.describe.c_arithmetic import Evaluator                      # noqa: E402
from hybridtune.describe.expr import Index, Name, Rhs, walk             # noqa: E402
from hybridtune.describe.loader import load                             # noqa: E402
from hybridtune.describe.looplang import loops_and_directives           # noqa: E402
from hybridtune.generate.cvariant import generate_variant               # noqa: E402
from hybridtune.compiler.build import build                              # noqa: E402
from hybridtune.measure.microbench import (StreamCurve, StreamPoint, memory_regime,  # noqa: E402
                                           stream_bandwidth)
from hybridtune.measure.runner import MeasureOptions, runner_program     # noqa: E402
from hybridtune.measure.statistics import median_ci, relative_half_width  # noqa: E402
from hybridtune.describe.configuration import Configuration       # noqa: E402
from hybridtune.generate.pool import pool_for                           # noqa: E402
from hybridtune.measure.tasks import (measure_configuration, reference_after,  # noqa: E402
                                      stable_step)
from hybridtune.reference.pirk import pirk_step                         # noqa: E402
from hybridtune.reference.rhs import initial_values, right_hand_side    # noqa: E402

IVPS = ("Wave1D", "InverterChain")
MEMORY_BOUND = {"Wave1D": True, "InverterChain": False}
THREADS = (1, 2)
FOOTPRINTS = [(64 << 10) << k for k in range(15)]          # 64 KiB .. 1 GiB
SPEEDUP_TARGET = 1.5
BOUND_TARGET = 0.70
RHS_TOLERANCE = 1e-12

SMALL_SWEEP = MeasureOptions(budget_s=0.3, ci_target=0.03)
LARGE_SWEEP = MeasureOptions(budget_s=0.1, ci_target=0.03, min_repetitions=3, check_steps=1,
                             warmup_steps=0)
NORMAL = MeasureOptions()


def log(*parts) -> None:
    print(f"[{time.strftime('%H:%M:%S')}]", *parts, file=sys.stderr, flush=True)


def finite(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


# ----------------------------------------------------------------------------------- machine

def machine_facts() -> dict:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    fields = {}
    for line in out.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key.strip()] = value.strip()

    def cache_per_instance(key):
        m = re.match(r"([\d.]+)\s*([KMG])iB(?:\s*\((\d+) instances?\))?", fields.get(key, ""))
        if not m:
            return None
        size = float(m.group(1)) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]
        return int(size / int(m.group(3) or 1))

    return {
        "model": fields.get("Model name"), "vendor": fields.get("Vendor ID"),
        "cores": int(fields.get("Core(s) per socket", "0")) * int(fields.get("Socket(s)", "1")),
        "cpus": os.cpu_count(), "l1d_per_core_bytes": cache_per_instance("L1d cache"),
        "l2_per_core_bytes": cache_per_instance("L2 cache"), "l3_bytes": cache_per_instance("L3 cache"),
        "hypervisor": fields.get("Hypervisor vendor"), "hostname": platform.node(),
        "kernel": platform.release(),
        "gcc": subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
    }


def git(*args) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT).stdout.strip()


def tree_state() -> dict:
    """The commit, the uncommitted changes and a digest of the sources a measurement depends on
    (others edit the tree concurrently: a change during the run shows as start != end)."""
    import hashlib
    digest = hashlib.sha256()
    for folder in ("hybridtune", "native", "scenarios", "jobs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".c", ".h", ".yaml", ".sh"):
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return {"commit": git("rev-parse", "HEAD"),
            "uncommitted": [l for l in git("status", "--porcelain").splitlines() if l.strip()],
            "sources_sha256": digest.hexdigest()[:16]}


# ----------------------------------------------------------------------------------- bandwidth

def stream_curves(repeats: int) -> dict:
    """Triad bandwidth against footprint, `repeats` interleaved runs per thread count, and their
    per-point median (the machine is shared: single runs scatter by tens of percent)."""
    runs = {t: [] for t in THREADS}
    for r in range(repeats):
        for t in THREADS:
            runs[t].append(stream_bandwidth(t, FOOTPRINTS, kernel="triad"))
            log(f"stream triad run {r + 1}/{repeats}, {t} thread(s): regime from "
                f"{memory_regime(runs[t][-1]) >> 20} MiB")
    result = {}
    for t in THREADS:
        first = runs[t][0]
        points = []
        for k, fp in enumerate(FOOTPRINTS):
            bws = [run.points[k].bandwidth_Bps for run in runs[t]]
            samples = tuple(s for run in runs[t] for s in run.points[k].samples_Bps)
            points.append(StreamPoint(fp, float(np.median(bws)), samples, first.points[k].actual_bytes,
                                      first.points[k].sweeps))
        median_curve = StreamCurve(t, first.kernel, first.formula, first.traffic,
                                   first.bytes_per_element, tuple(points))
        result[t] = {"median": median_curve, "runs": runs[t],
                     "regime_start": memory_regime(median_curve),
                     "regime_start_runs": [memory_regime(run) for run in runs[t]]}
    return result


def bandwidth_at(curve: StreamCurve, footprint: float) -> float:
    """Bandwidth at a footprint, interpolated linearly in log(footprint) between measured points."""
    pts = sorted(curve.points, key=lambda p: p.footprint_bytes)
    if footprint <= pts[0].footprint_bytes:
        return pts[0].bandwidth_Bps
    for lo, hi in zip(pts, pts[1:]):
        if footprint <= hi.footprint_bytes:
            w = math.log(footprint / lo.footprint_bytes) / math.log(hi.footprint_bytes / lo.footprint_bytes)
            return lo.bandwidth_Bps + w * (hi.bandwidth_Bps - lo.bandwidth_Bps)
    return pts[-1].bandwidth_Bps


def curve_json(curve: StreamCurve) -> dict:
    return {"threads": curve.threads, "kernel": curve.kernel, "formula": curve.formula,
            "traffic": curve.traffic, "bytes_per_element": curve.bytes_per_element,
            "points": [{"footprint_bytes": p.footprint_bytes, "bandwidth_Bps": p.bandwidth_Bps}
                       for p in curve.points]}


# ----------------------------------------------------------------------------------- traffic

def kernel_traffic(template, kernel_variant: str, s: int, n: int) -> dict:
    """Compulsory transfers of one call: each array of size n or s*n the variant's computations read
    or write, once (read: 1, written: 2 = store + write-allocate, or store + the read it also has)."""
    variant = template.variant(kernel_variant)
    reads, writes = set(), set()
    for directive, _ in loops_and_directives(variant.program):
        if directive.name != "COMP":
            continue
        statement = template.computation(directive.args[0])
        target = statement.target
        writes.add(target.array if isinstance(target, Index) else target.id)
        if statement.op == "+=":
            reads.add(target.array if isinstance(target, Index) else target.id)
        for part in list(walk(statement.value)) + [i for idx in getattr(target, "indices", ())
                                                   for i in walk(idx)]:
            if isinstance(part, Index):
                reads.add(part.array)
            elif isinstance(part, Name):
                reads.add(part.id)
            elif isinstance(part, Rhs):
                source = template.rhs_input
                reads.add(source.array if isinstance(source, Index) else source.id)
    arrays = {}
    env = {"s": s, "n": n}
    for decl in template.datastructs:          # locals (accumulators, per-thread rows) excluded
        if decl.name not in reads | writes or not decl.dims:
            continue
        if not any(isinstance(p, Name) and p.id == "n" for d in decl.dims for p in walk(d)):
            continue                           # coefficient tables A[s][s], b[s], c[s]
        elements = int(np.prod([int(Evaluator(env)(d)) for d in decl.dims]))
        r, w = decl.name in reads, decl.name in writes
        transfers = int(r) + int(w) + int(w and not r)
        arrays[decl.name] = {"elements": elements, "read": r, "written": w, "transfers": transfers,
                             "bytes": 8 * elements * transfers}
    return {"arrays": arrays, "bytes": sum(a["bytes"] for a in arrays.values())}


def step_traffic(variant, skeleton, templates: dict, method, n: int) -> dict:
    """Sum over the step's kernel calls (counts from the skeleton for m corrector steps)."""
    s, m = method.stages, method.corrector_steps
    calls = []
    for name, choice in variant.kernels:
        count = skeleton.count(lambda d, name=name: d.name == "KERNEL" and d.args[0] == name, m, s)
        per_call = kernel_traffic(templates[name], choice, s, n)
        calls.append({"template": name, "variant": choice, "calls": count,
                      "bytes_per_call": per_call["bytes"], "arrays": per_call["arrays"]})
    return {"kernels": calls, "bytes": sum(c["calls"] * c["bytes_per_call"] for c in calls)}


# ----------------------------------------------------------------------------------- timing

def time_protocol(run_steps, options: MeasureOptions, min_repetitions=None, max_repetitions=None,
                  warmup_steps=None) -> dict:
    """The runner's protocol in-process: warm-up, one step to size a repetition, then repetitions of
    `steps` steps (each from the initial state, reset outside the timed region) until the 95% CI of
    the median is within ci_target or budget_s is spent; run_steps(k, warm) returns seconds/step."""
    run_steps(options.warmup_steps if warmup_steps is None else warmup_steps, True)
    one = max(run_steps(1, False), 1e-9)
    steps = max(1, int(math.ceil(options.repetition_s / one)))
    low_reps = options.min_repetitions if min_repetitions is None else min_repetitions
    high_reps = options.max_repetitions if max_repetitions is None else max_repetitions
    samples = []
    started = time.monotonic()
    while len(samples) < high_reps:
        samples.append(run_steps(steps, False))
        if len(samples) >= low_reps:
            median, low, high = median_ci(samples)
            if relative_half_width(median, low, high) <= options.ci_target:
                break
            if time.monotonic() - started > options.budget_s:
                break
    median, low, high = median_ci(samples)
    return {"median_s": median, "ci_low_s": finite(low), "ci_high_s": finite(high),
            "ci_rel": finite(relative_half_width(median, low, high)), "repetitions": len(samples),
            "steps_per_repetition": steps}


def relative_error(x, ref) -> float:
    scale = float(np.max(np.abs(ref)))
    err = float(np.max(np.abs(np.asarray(x) - ref)))
    return err / scale if scale > 0 else err


class References:
    """The numpy state after check_steps steps per (ivp, n), computed once."""

    def __init__(self, method):
        self.method = method
        self.cache = {}

    def get(self, ivp, n: int, steps: int) -> np.ndarray:
        key = (ivp.name, n, steps)
        if key not in self.cache:
            self.cache[key] = reference_after(self.method, ivp, n, stable_step(ivp, n), steps)
        return self.cache[key]


def numba_case(numba_step, ivp, n: int, threads: int, refs: References) -> dict:
    """Check the numba step (RHS to 1e-12, state after check_steps to the variants' tolerance) and
    time it; a disagreeing result gets no time."""
    import numba
    from numba_pirk import threading_layer
    numba.set_num_threads(threads)
    out = {"threads": threads, "numba_version": numba.__version__}
    # the right-hand side alone, on a state that exercises every branch, at a small n and at n
    for check_n in sorted({min(1000, n), n}):
        rng = np.random.default_rng(check_n)
        x = rng.uniform(0.0, 5.0, check_n)
        got = np.empty(check_n)
        numba_step.rhs(1.7, x, got)
        err = relative_error(got, right_hand_side(ivp, check_n)(1.7, x))
        out[f"rhs_error_n{check_n}"] = err
        if not (math.isfinite(err) and err <= RHS_TOLERANCE):
            out.update(status="wrong_result", message=f"numba RHS differs from the numpy reference by "
                       f"{err:.3g} at n = {check_n} (tolerance {RHS_TOLERANCE:g})")
            return out
    h = stable_step(ivp, n)
    y0 = initial_values(ivp, n)
    numba_step.allocate(n)
    state = numba_step.run(y0, 0.0, h, NORMAL.check_steps)
    err = relative_error(state, refs.get(ivp, n, NORMAL.check_steps))
    out["check_error"] = err
    if not (math.isfinite(err) and err <= NORMAL.tolerance):
        out.update(status="wrong_result", message=f"numba state after {NORMAL.check_steps} steps "
                   f"differs from the reference by {err:.3g} (tolerance {NORMAL.tolerance:g})")
        return out
    y, F, Y, dy = numba_step.arrays
    step = numba_step.step

    def run_steps(k, warm):
        if not warm:
            y[:] = y0
        start = time.perf_counter()
        for i in range(k):
            step(y, F, Y, dy, i * h, h)
        elapsed = time.perf_counter() - start
        return elapsed / k if k else 0.0

    out.update(time_protocol(run_steps, NORMAL))
    if not np.all(np.isfinite(y)):
        out.update(status="wrong_result", message="numba state not finite after timing")
        return out
    out["status"] = "ok"
    out["threading_layer"] = threading_layer()
    numba_step.arrays = None
    return out


def numpy_case(method, ivp, n: int, large: bool) -> dict:
    """hybridtune.reference.pirk.pirk_step with right_hand_side: the plain numpy step (one thread)."""
    f = right_hand_side(ivp, n)
    h = stable_step(ivp, n)
    y0 = initial_values(ivp, n)
    state = {"y": y0.copy()}

    def run_steps(k, warm):
        y = state["y"] if warm else y0.copy()
        start = time.perf_counter()
        for i in range(k):
            y = pirk_step(f, i * h, y, h, method)
        elapsed = time.perf_counter() - start
        state["y"] = y
        return elapsed / k if k else 0.0

    if large:   # about 1-3 s a step: one warm-up step, 3 single-step repetitions (no finite CI)
        options = MeasureOptions(budget_s=0.0, min_repetitions=3, warmup_steps=1)
        result = time_protocol(run_steps, options)
    else:
        result = time_protocol(run_steps, MeasureOptions(budget_s=3.0, warmup_steps=1))
    result.update(status="ok", threads=1, note="numpy evaluates element-wise on one thread; the same "
                  "value is reported for 1 and 2 threads")
    return result


# ----------------------------------------------------------------------------------- variants

def prebuild(scenario, method, variants, ivps: dict) -> dict:
    """Compile every variant for every IVP before timing (cached by source; two at a time here,
    so compiling never overlaps a measurement)."""
    skeletons = {s.name: s for s in scenario.skeletons}
    started = time.monotonic()
    runner = runner_program()
    jobs = []
    for ivp in ivps.values():
        for v in variants:
            jobs.append((ivp.name, v.id, generate_variant(v, skeletons[v.skeleton],
                                                          scenario.template_map, method, ivp).code))

    def one(job):
        ivp_name, vid, code = job
        return ivp_name, vid, build("variant", {"variant.c": code}, shared=True)

    results = []
    with ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0))) as pool:
        for k, item in enumerate(pool.map(one, jobs), 1):
            results.append(item)
            if k % 100 == 0:
                log(f"prebuild {k}/{len(jobs)}")
    failed = [{"ivp": i, "id": v, "message": r.message[-500:]} for i, v, r in results if not r.ok]
    return {"variants": len(jobs), "cached": sum(1 for _, _, r in results if r.cached),
            "compiled": sum(1 for _, _, r in results if r.ok and not r.cached),
            "failed": failed, "runner_ok": runner.ok, "seconds": time.monotonic() - started}


def status_counts(results) -> dict:
    counts = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return counts


def measurement_json(r) -> dict:
    keep = ("id", "status", "median_s", "ci_low_s", "ci_high_s", "ci_rel", "repetitions",
            "steps_per_repetition", "check_error", "message")
    data = r.as_json()
    return {k: data[k] for k in keep}


def run_case(scenario, method, ivp, n, threads, variants, sweep_options, numba_step, numpy_result,
             curves, refs, skeletons) -> dict:
    started = time.monotonic()
    config = Configuration(method, ivp, n, threads)
    progress = {"k": 0}

    def on_result(r):
        progress["k"] += 1
        if progress["k"] % 64 == 0:
            log(f"  {ivp.name} n={n} t={threads}: {progress['k']}/{len(variants)} measured")

    sweep = measure_configuration(scenario, config, variants, sweep_options, on_result)
    sweep_s = time.monotonic() - started
    ok = [r for r in sweep if r.status == "ok"]
    counts = status_counts(sweep)
    failures = [measurement_json(r) for r in sweep if r.status != "ok"]
    case = {"ivp": ivp.name, "n": n, "threads": threads, "memory_bound_ivp": MEMORY_BOUND[ivp.name],
            "sweep": {"options": sweep_options.__dict__, "variants": len(sweep), "ok": len(ok),
                      "failed": len(sweep) - len(ok), "statuses": counts, "failures": failures,
                      "seconds": sweep_s,
                      "all": [{"id": r.id, "status": r.status, "median_s": r.median_s,
                               "ci_rel": finite(r.ci_rel)} for r in sweep]}}
    if not ok:
        case["error"] = "no variant measured ok"
        return case
    best_sweep = min(ok, key=lambda r: r.median_s)
    worst_sweep = max(ok, key=lambda r: r.median_s)
    by_id = {v.id: v for v in variants}
    chosen = [by_id[best_sweep.id]] + ([by_id[worst_sweep.id]] if worst_sweep.id != best_sweep.id else [])
    again = measure_configuration(scenario, config, chosen, NORMAL)
    best_m = again[0]
    worst_m = again[-1]
    best_s = best_m.median_s if best_m.status == "ok" else None
    worst_s = worst_m.median_s if worst_m.status == "ok" else None
    case["remeasure_options"] = NORMAL.__dict__
    case["best"] = {"id": best_sweep.id, "sweep_median_s": best_sweep.median_s,
                    "sweep_ci_rel": finite(best_sweep.ci_rel), **{"remeasured": measurement_json(best_m)},
                    "median_s": best_s}
    case["worst"] = {"id": worst_sweep.id, "sweep_median_s": worst_sweep.median_s,
                     "sweep_ci_rel": finite(worst_sweep.ci_rel), "remeasured": measurement_json(worst_m),
                     "median_s": worst_s}
    case["worst_over_best"] = worst_s / best_s if best_s and worst_s else None
    case["worst_over_best_sweep"] = worst_sweep.median_s / best_sweep.median_s

    log(f"  {ivp.name} n={n} t={threads}: numba")
    case["numba"] = numba_case(numba_step, ivp, n, threads, refs)
    case["numpy"] = numpy_result

    # streaming bound of the best variant
    variant = by_id[best_sweep.id]
    skeleton = skeletons[variant.skeleton]
    traffic = step_traffic(variant, skeleton, scenario.template_map, method, n)
    generated = generate_variant(variant, skeleton, scenario.template_map, method, ivp)
    footprint = sum(rows for _, rows in generated.buffers) * n * 8
    bandwidth = bandwidth_at(curves[threads]["median"], footprint)
    bound_s = traffic["bytes"] / bandwidth
    case["bound"] = {"variant": variant.id, "bytes_per_step": traffic["bytes"],
                     "kernels": traffic["kernels"], "variant_footprint_bytes": footprint,
                     "buffers": dict(generated.buffers), "bandwidth_Bps": bandwidth,
                     "bandwidth_source": f"median triad curve, {threads} thread(s), interpolated in "
                                         f"log(footprint) at the variant's footprint",
                     "bound_s": bound_s}
    numba_s = case["numba"].get("median_s") if case["numba"].get("status") == "ok" else None
    numpy_s = numpy_result.get("median_s")
    case["ratios"] = {
        "numba_over_best": numba_s / best_s if numba_s and best_s else None,
        "numpy_over_best": numpy_s / best_s if numpy_s and best_s else None,
        "bound_over_best": bound_s / best_s if best_s else None,
        "worst_over_best": case["worst_over_best"],
    }
    case["seconds"] = time.monotonic() - started
    return case


def choose_sizes(method, machine, curves, n_small, factor, max_ws_bytes) -> dict:
    s = method.stages
    per_n = (3 * s + 3) * 8
    l2 = machine["l2_per_core_bytes"]
    ws_small = per_n * n_small
    regime = max(curves[t]["regime_start"] for t in THREADS)
    target = factor * regime
    ws_large = min(target, max_ws_bytes)
    n_large = max(n_small + 1, int(ws_large // per_n) // 1000 * 1000)
    ws_large = per_n * n_large
    return {
        "working_set_formula": f"(3*s + 3) * n * 8 bytes = {per_n} * n bytes for s = {s} "
                               "(y, dy, F, Y and their neighbours, as the issue counts it)",
        "n_small": n_small, "working_set_small_bytes": ws_small, "l2_per_core_bytes": l2,
        "n_small_why": f"working set {ws_small / 1024:.0f} KiB {'fits' if l2 and ws_small <= l2 else 'does NOT fit'} "
                       f"in the {l2 / 1024 if l2 else float('nan'):.0f} KiB L2 of one core",
        "regime_start_bytes": {t: curves[t]["regime_start"] for t in THREADS},
        "regime_start_used_bytes": regime,
        "n_large": n_large, "working_set_large_bytes": ws_large,
        "working_set_over_regime_start": ws_large / regime,
        "in_memory_regime": ws_large >= regime,
        "per_threads": {t: {"regime_start_bytes": curves[t]["regime_start"],
                            "working_set_over_regime_start": ws_large / curves[t]["regime_start"],
                            "bandwidth_at_working_set_over_largest": bandwidth_at(
                                curves[t]["median"], ws_large) / max(
                                curves[t]["median"].points, key=lambda p: p.footprint_bytes).bandwidth_Bps,
                            "regime_start_single_runs_bytes": curves[t]["regime_start_runs"]}
                        for t in THREADS},
        "n_large_why": f"memory regime from {regime >> 20} MiB (memory_regime of the per-point median "
                       f"triad curve, larger of 1 and 2 threads); target working set {factor:g} x that = "
                       f"{int(target) >> 20} MiB, capped at {max_ws_bytes >> 20} MiB so that the four full "
                       f"sweeps at n_large stay within minutes on 2 cores -> n = {n_large} "
                       f"({ws_large / 2**20:.0f} MiB, {ws_large / regime:.2f} x the regime start)",
    }


def markdown(cases) -> str:
    head = ("| IVP | n | thr | ok/failed | best variant | best s/step | worst variant | worst s/step | "
            "worst/best | numba s/step | numba/best | numpy s/step | numpy/best | bound s | bound/best | "
            "targets |")
    rows = [head, "|" + "---|" * 16]
    fmt = lambda x: "n/a" if x is None else f"{x:.3g}"
    for c in cases:
        if "best" not in c:
            rows.append(f"| {c['ivp']} | {c['n']} | {c['threads']} | {c['sweep']['ok']}/{c['sweep']['failed']} "
                        f"| {c.get('error')} |" + " |" * 11)
            continue
        nb = c["numba"]
        numba_s = nb.get("median_s") if nb.get("status") == "ok" else None
        t = c["targets"]
        marks = [f"numba>=1.5x: {'yes' if t['speedup_vs_numba'] else 'NO'}"]
        if t["bound"] is not None:
            marks.append(f"bound>=70%: {'yes' if t['bound'] else 'NO'}")
        rows.append(
            f"| {c['ivp']} | {c['n']} | {c['threads']} | {c['sweep']['ok']}/{c['sweep']['failed']} | "
            f"{c['best']['id']} | {fmt(c['best']['median_s'])} | {c['worst']['id']} | "
            f"{fmt(c['worst']['median_s'])} | {fmt(c['ratios']['worst_over_best'])} | "
            f"{fmt(numba_s) if numba_s else nb.get('status')} | {fmt(c['ratios']['numba_over_best'])} | "
            f"{fmt(c['numpy'].get('median_s'))} | {fmt(c['ratios']['numpy_over_best'])} | "
            f"{fmt(c['bound']['bound_s'])} | {fmt(c['ratios']['bound_over_best'])} | {'; '.join(marks)} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="every 8th variant of the pool (checks the script)")
    parser.add_argument("--n-small", type=int, default=4000, help="the in-L2 size (default 4000)")
    parser.add_argument("--large-factor", type=float, default=4.0,
                        help="n_large working set as a multiple of the memory regime's start (default 4)")
    parser.add_argument("--max-large-ws-mib", type=int, default=128,
                        help="cap on the n_large working set in MiB (default 128; at most ~2 GB)")
    parser.add_argument("--stream-repeats", type=int, default=5, help="triad curves per thread count")
    parser.add_argument("--output", default=str(ROOT / "data" / "bench" / "generated.json"))
    args = parser.parse_args(argv)
    if args.max_large_ws_mib > 2048:
        parser.error("--max-large-ws-mib: at most 2048")
    t_start = time.monotonic()
    started_at = datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(timespec="seconds")
    load_before = os.getloadavg()
    tree_start = tree_state()

    scenario = load(ROOT / "scenarios" / "default.yaml", "scenario")
    method = next(m for m in scenario.methods if m.name == "radauIIA7")
    ivps = {i.name: i for i in scenario.ivps if i.name in IVPS}
    skeletons = {s.name: s for s in scenario.skeletons}
    pool = pool_for(scenario, method)
    variants = list(pool.values())
    if args.quick:
        variants = variants[::8]
    log(f"{len(variants)} of {len(pool)} variants, method {method.name} (s = {method.stages}, "
        f"m = {method.corrector_steps})")

    machine = machine_facts()
    phases = {}
    t0 = time.monotonic()
    built = prebuild(scenario, method, variants, ivps)
    phases["prebuild_s"] = time.monotonic() - t0
    log(f"prebuild: {built['compiled']} compiled, {built['cached']} cached, {len(built['failed'])} failed, "
        f"{built['seconds']:.0f} s")

    t0 = time.monotonic()
    curves = stream_curves(args.stream_repeats)
    phases["stream_s"] = time.monotonic() - t0
    sizes = choose_sizes(method, machine, curves, args.n_small, args.large_factor,
                         args.max_large_ws_mib << 20)
    log(sizes["n_small_why"])
    log(sizes["n_large_why"])

    from numba_pirk import NumbaPIRK
    refs = References(method)
    cases = []
    numba_compile = {}
    for name in IVPS:
        ivp = ivps[name]
        t0 = time.monotonic()
        numba_step = NumbaPIRK(method, name)
        numba_step.compile()
        numba_compile[name] = time.monotonic() - t0
        log(f"numba step for {name} compiled in {numba_compile[name]:.1f} s")
        for n, options, large in ((sizes["n_small"], SMALL_SWEEP, False),
                                  (sizes["n_large"], LARGE_SWEEP, True)):
            log(f"{name} n={n}: numpy reference step")
            numpy_result = numpy_case(method, ivp, n, large)
            for threads in THREADS:
                log(f"{name} n={n} threads={threads}: sweep of {len(variants)} variants")
                case = run_case(scenario, method, ivp, n, threads, variants, options, numba_step,
                                numpy_result, curves, refs, skeletons)
                case["size"] = "large" if large else "small"
                ratios = case.get("ratios", {})
                sp = ratios.get("numba_over_best")
                bo = ratios.get("bound_over_best")
                case["targets"] = {
                    "speedup_vs_numba": bool(sp is not None and sp >= SPEEDUP_TARGET),
                    "bound": (bool(bo is not None and bo >= BOUND_TARGET) if large else None),
                }
                cases.append(case)
                if "best" in case:
                    log(f"  best {case['best']['id']} {case['best']['median_s']}, numba/best {sp}, "
                        f"bound/best {bo}, worst/best {ratios.get('worst_over_best')}")
            refs.cache.clear()

    large_cases = [c for c in cases if c["size"] == "large" and "best" in c]
    summary = {
        "speedup_vs_numba_every_case": all(c["targets"]["speedup_vs_numba"] for c in cases),
        "speedup_vs_numba_cases_met": sum(c["targets"]["speedup_vs_numba"] for c in cases),
        "cases": len(cases),
        "bound_70pct_all_large_cases": all(c["targets"]["bound"] for c in large_cases),
        "bound_70pct_memory_bound_ivp_large_cases": all(
            c["targets"]["bound"] for c in large_cases if c["memory_bound_ivp"]),
        "per_case": {f"{c['ivp']} n={c['n']} t={c['threads']}": {
            "numba_over_best": c.get("ratios", {}).get("numba_over_best"),
            "speedup_vs_numba_met": c["targets"]["speedup_vs_numba"],
            "bound_over_best": c.get("ratios", {}).get("bound_over_best"),
            "bound_met": c["targets"]["bound"]} for c in cases},
        "n_large_in_memory_regime": sizes["in_memory_regime"],
        "worst_over_best": {f"{c['ivp']} n={c['n']} t={c['threads']}": c["ratios"]["worst_over_best"]
                            for c in cases if "ratios" in c},
        "variants_failed": sum(c["sweep"]["failed"] for c in cases),
    }
    total_s = time.monotonic() - t_start
    tree_end = tree_state()
    command = "jobs/bench_generated.sh" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    import numba
    record = {
        "benchmark": "generated variants (issue 'Generated variants', item 6)",
        "quick": args.quick, "command": command, "date": started_at,
        "git_commit": tree_start["commit"],
        "tree_at_start": tree_start, "tree_at_end": tree_end,
        "tree_changed_during_run": tree_start != tree_end,
        "machine": {**machine, "loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        "versions": {"python": platform.python_version(), "numpy": np.__version__,
                     "numba": numba.__version__},
        "method": {"name": method.name, "stages": method.stages, "corrector_steps": method.corrector_steps},
        "pool": {"size": len(pool), "measured": len(variants)},
        "options": {"small_sweep": SMALL_SWEEP.__dict__, "large_sweep": LARGE_SWEEP.__dict__,
                    "remeasure_and_numba": NORMAL.__dict__},
        "targets": {"speedup_vs_numba": SPEEDUP_TARGET, "bound_fraction": BOUND_TARGET,
                    "bound_definition": "bound_s = sum over the step's kernel calls of the bytes of each "
                    "n- or s*n-sized array the call reads (x1) or writes (x2: store + write-allocate, or "
                    "store + its read), divided by the triad bandwidth (same byte counting) at the "
                    "variant's footprint and thread count; reported as bound_s / best_s"},
        "sizes": sizes,
        "bandwidth": {str(t): {"median_curve": curve_json(curves[t]["median"]),
                               "runs": [curve_json(c) for c in curves[t]["runs"]],
                               "regime_start_bytes": curves[t]["regime_start"],
                               "regime_start_runs_bytes": curves[t]["regime_start_runs"]}
                      for t in THREADS},
        "prebuild": built, "numba_compile_s": numba_compile, "phases": phases,
        "cases": cases, "summary": summary, "total_seconds": total_s,
    }
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(markdown(cases))
    print()
    print(f"numba >= {SPEEDUP_TARGET}x slower than best in every case: "
          f"{summary['speedup_vs_numba_every_case']} ({summary['speedup_vs_numba_cases_met']}/{len(cases)}); "
          f">= {BOUND_TARGET:.0%} of the streaming bound at n_large: all {summary['bound_70pct_all_large_cases']}, "
          f"memory-bound IVP {summary['bound_70pct_memory_bound_ivp_large_cases']}; "
          f"failed variant measurements: {summary['variants_failed']}")
    if record["tree_changed_during_run"]:
        print("WARNING: the source tree changed during the run (see tree_at_start / tree_at_end)")
    print(f"total {total_s / 60:.1f} min; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
