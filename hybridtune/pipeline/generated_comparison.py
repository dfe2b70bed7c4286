"""The pool's best and worst variant against numba, numpy and the streaming bound, case by case.

A case is one IVP at one size and thread count: the pool (or every 8th variant of it) swept, the
best and worst of the sweep measured again, the numba and numpy steps timed beside them, and the
best variant's compulsory traffic over the triad bandwidth at its footprint (the streaming bound).
Sizes: one whose working set fits L2 and one in the memory regime of the triad curves measured in
the same run.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from hybridtune.describe.configuration import Configuration
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.measure.runner import MeasureOptions
from hybridtune.measure.step_baselines import NORMAL, ReferenceStates, numba_case, numpy_case
from hybridtune.measure.stream_curves import bandwidth_at, median_curves
from hybridtune.measure.tasks import measure_configuration, prebuild
from hybridtune.predict.kernel_traffic import step_traffic
from hybridtune.reference.numba_pirk import NumbaPIRK

IVPS = ("Wave1D", "InverterChain")
MEMORY_BOUND = {"Wave1D": True, "InverterChain": False}
THREADS = (1, 2)
FOOTPRINTS = [(64 << 10) << k for k in range(15)]          # 64 KiB .. 1 GiB
SPEEDUP_TARGET = 1.5
BOUND_TARGET = 0.70
SMALL_SWEEP = MeasureOptions(budget_s=0.3, ci_target=0.03)
LARGE_SWEEP = MeasureOptions(budget_s=0.1, ci_target=0.03, min_repetitions=3, check_steps=1,
                             warmup_steps=0)
BOUND_DEFINITION = (
    "bound_s = sum over the step's kernel calls of the bytes of each n- or s*n-sized array the "
    "call reads (x1) or writes (x2: store + write-allocate, or store + its read), divided by the "
    "triad bandwidth (same byte counting) at the variant's footprint and thread count; reported "
    "as bound_s / best_s")


@dataclass(frozen=True)
class ComparisonRequest:
    quick: bool = False             # every 8th variant of the pool
    n_small: int = 4000             # the in-L2 size
    large_factor: float = 4.0       # the large working set over the memory regime's start
    max_large_ws_bytes: int = 128 << 20
    stream_repeats: int = 5         # triad curves per thread count


@dataclass(frozen=True)
class CaseInputs:
    """What every case shares: the scenario's method and skeletons, the variants, the curves."""
    scenario: object
    method: object
    skeletons: dict
    variants: list
    curves: dict                    # threads -> MedianCurve
    references: ReferenceStates


def compare_generated(scenario, request: ComparisonRequest, l2_bytes: int | None,
                      log=lambda text: None) -> dict:
    """Every case of IVPS x {small, large} x THREADS on scenario's Radau IIA(7) pool, with the
    prebuild, the curves and the sizes they were measured with."""
    method = next(m for m in scenario.methods if m.name == "radauIIA7")
    ivps = {i.name: i for i in scenario.ivps if i.name in IVPS}
    pool = pool_for(scenario, method)
    variants = list(pool.values())[::8 if request.quick else 1]
    log(f"{len(variants)} of {len(pool)} variants, method {method.name} (s = {method.stages}, "
        f"m = {method.corrector_steps})")
    skeletons = {s.name: s for s in scenario.skeletons}
    phases, started = {}, time.monotonic()
    built = prebuild([generate_variant(v, skeletons[v.skeleton], scenario.template_map, method,
                                       ivp) for ivp in ivps.values() for v in variants])
    phases["prebuild_s"], started = time.monotonic() - started, time.monotonic()
    log(f"prebuild: {built.compiled} compiled, {built.cached} cached, {len(built.failed)} failed")
    curves = median_curves(THREADS, FOOTPRINTS, request.stream_repeats, lambda k, t, c: log(
        f"stream triad run {k + 1}/{request.stream_repeats}, {t} thread(s)"))
    phases["stream_s"] = time.monotonic() - started
    sizes = choose_sizes(method, l2_bytes, curves, request)
    log(sizes["n_small_why"])
    log(sizes["n_large_why"])
    inputs = CaseInputs(scenario, method, skeletons, variants, curves, ReferenceStates(method))
    cases, numba_compile = [], {}
    for name in IVPS:
        found, numba_compile[name] = _ivp_cases(inputs, ivps[name], sizes, log)
        cases += found
    return {"method": {"name": method.name, "stages": method.stages,
                       "corrector_steps": method.corrector_steps},
            "pool": {"size": len(pool), "measured": len(variants)},
            "options": {"small_sweep": SMALL_SWEEP.__dict__, "large_sweep": LARGE_SWEEP.__dict__,
                        "remeasure_and_numba": NORMAL.__dict__},
            "targets": {"speedup_vs_numba": SPEEDUP_TARGET, "bound_fraction": BOUND_TARGET,
                        "bound_definition": BOUND_DEFINITION},
            "sizes": sizes,
            "bandwidth": {str(t): curves[t].as_json() for t in THREADS},
            "prebuild": built.as_json(), "numba_compile_s": numba_compile, "phases": phases,
            "cases": cases, "summary": summary(cases, sizes)}


def _ivp_cases(inputs: CaseInputs, ivp, sizes: dict, log) -> tuple[list, float]:
    """One IVP's cases, small and large, each thread count; and the numba step's compile time."""
    started = time.monotonic()
    numba_step = NumbaPIRK(inputs.method, ivp.name)
    numba_step.compile()
    compiled = time.monotonic() - started
    log(f"numba step for {ivp.name} compiled in {compiled:.1f} s")
    cases = []
    for n, options, large in ((sizes["n_small"], SMALL_SWEEP, False),
                              (sizes["n_large"], LARGE_SWEEP, True)):
        log(f"{ivp.name} n={n}: numpy reference step")
        numpy_result = numpy_case(inputs.method, ivp, n, large)
        for threads in THREADS:
            log(f"{ivp.name} n={n} threads={threads}: sweep of {len(inputs.variants)} variants")
            case = run_case(inputs, ivp, n, threads, options, numba_step, numpy_result, log)
            cases.append({**case, "size": "large" if large else "small",
                          "targets": case_targets(case, large)})
        inputs.references.cache.clear()
    return cases, compiled


def case_targets(case: dict, large: bool) -> dict:
    """numba at least SPEEDUP_TARGET x the best; at the large size the best within BOUND_TARGET
    of its streaming bound."""
    ratios = case.get("ratios", {})
    speedup, bound = ratios.get("numba_over_best"), ratios.get("bound_over_best")
    return {"speedup_vs_numba": bool(speedup is not None and speedup >= SPEEDUP_TARGET),
            "bound": (bool(bound is not None and bound >= BOUND_TARGET) if large else None)}


def _finite(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def _measurement_json(r) -> dict:
    data = r.as_json()
    return {k: data[k] for k in ("id", "status", "median_s", "ci_low_s", "ci_high_s", "ci_rel",
                                 "repetitions", "steps_per_repetition", "check_error", "message")}


def _sweep(inputs: CaseInputs, ivp, n: int, threads: int, options: MeasureOptions, log) -> tuple:
    """The variants measured with the sweep's options: the results and their record."""
    started, done = time.monotonic(), []

    def on_result(result):
        done.append(result.status)
        if len(done) % 64 == 0:
            log(f"  {ivp.name} n={n} t={threads}: {len(done)}/{len(inputs.variants)} measured")

    sweep = measure_configuration(inputs.scenario, Configuration(inputs.method, ivp, n, threads),
                                  inputs.variants, options, on_result)
    ok = [r for r in sweep if r.status == "ok"]
    statuses: dict = {}
    for r in sweep:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    return ok, {"options": options.__dict__, "variants": len(sweep), "ok": len(ok),
                "failed": len(sweep) - len(ok), "statuses": statuses,
                "failures": [_measurement_json(r) for r in sweep if r.status != "ok"],
                "seconds": time.monotonic() - started,
                "all": [{"id": r.id, "status": r.status, "median_s": r.median_s,
                         "ci_rel": _finite(r.ci_rel)} for r in sweep]}


def _remeasured(inputs: CaseInputs, ivp, n: int, threads: int, ok: list) -> dict:
    """The sweep's best and worst measured again with the normal options."""
    best, worst = min(ok, key=lambda r: r.median_s), max(ok, key=lambda r: r.median_s)
    by_id = {v.id: v for v in inputs.variants}
    chosen = [by_id[best.id]] + ([by_id[worst.id]] if worst.id != best.id else [])
    again = measure_configuration(inputs.scenario, Configuration(inputs.method, ivp, n, threads),
                                  chosen, NORMAL)
    out = {"remeasure_options": NORMAL.__dict__}
    for name, sweep, result in (("best", best, again[0]), ("worst", worst, again[-1])):
        out[name] = {"id": sweep.id, "sweep_median_s": sweep.median_s,
                     "sweep_ci_rel": _finite(sweep.ci_rel), "remeasured": _measurement_json(result),
                     "median_s": result.median_s if result.status == "ok" else None}
    best_s, worst_s = out["best"]["median_s"], out["worst"]["median_s"]
    out["worst_over_best"] = worst_s / best_s if best_s and worst_s else None
    out["worst_over_best_sweep"] = worst.median_s / best.median_s
    return out


def streaming_bound(inputs: CaseInputs, variant_id: str, ivp, n: int, threads: int) -> dict:
    """The variant's compulsory traffic per step over the median triad bandwidth at its footprint."""
    variant = next(v for v in inputs.variants if v.id == variant_id)
    skeleton = inputs.skeletons[variant.skeleton]
    traffic = step_traffic(variant, skeleton, inputs.scenario.template_map, inputs.method, n)
    generated = generate_variant(variant, skeleton, inputs.scenario.template_map, inputs.method,
                                 ivp)
    footprint = sum(rows for _, rows in generated.buffers) * n * 8
    bandwidth = bandwidth_at(inputs.curves[threads].median, footprint)
    return {"variant": variant.id, "bytes_per_step": traffic["bytes"],
            "kernels": traffic["kernels"], "variant_footprint_bytes": footprint,
            "buffers": dict(generated.buffers), "bandwidth_Bps": bandwidth,
            "bandwidth_source": f"median triad curve, {threads} thread(s), interpolated in "
                                "log(footprint) at the variant's footprint",
            "bound_s": traffic["bytes"] / bandwidth}


def run_case(inputs: CaseInputs, ivp, n: int, threads: int, options: MeasureOptions, numba_step,
             numpy_result: dict, log) -> dict:
    """One case: the sweep, its best and worst again, numba, numpy and the streaming bound."""
    started = time.monotonic()
    ok, sweep = _sweep(inputs, ivp, n, threads, options, log)
    case = {"ivp": ivp.name, "n": n, "threads": threads, "memory_bound_ivp": MEMORY_BOUND[ivp.name],
            "sweep": sweep}
    if not ok:
        return {**case, "error": "no variant measured ok"}
    case.update(_remeasured(inputs, ivp, n, threads, ok))
    log(f"  {ivp.name} n={n} t={threads}: numba")
    case["numba"] = numba_case(numba_step, ivp, n, threads, inputs.references)
    case["numpy"] = numpy_result
    case["bound"] = streaming_bound(inputs, case["best"]["id"], ivp, n, threads)
    best_s = case["best"]["median_s"]
    numba_s = case["numba"].get("median_s") if case["numba"].get("status") == "ok" else None
    numpy_s = numpy_result.get("median_s")
    case["ratios"] = {"numba_over_best": numba_s / best_s if numba_s and best_s else None,
                      "numpy_over_best": numpy_s / best_s if numpy_s and best_s else None,
                      "bound_over_best": case["bound"]["bound_s"] / best_s if best_s else None,
                      "worst_over_best": case["worst_over_best"]}
    log(f"  best {case['best']['id']} {best_s}, ratios {case['ratios']}")
    return {**case, "seconds": time.monotonic() - started}


def choose_sizes(method, l2_bytes: int | None, curves: dict, request: ComparisonRequest) -> dict:
    """n_small as asked (its working set against L2) and n_large: large_factor x the memory
    regime's start (the larger of the thread counts'), capped, rounded down to a thousand."""
    s, n_small = method.stages, request.n_small
    per_n = (3 * s + 3) * 8
    regime = max(curves[t].regime_start for t in THREADS)
    target = request.large_factor * regime
    n_large = max(n_small + 1, int(min(target, request.max_large_ws_bytes) // per_n) // 1000 * 1000)
    ws_small, ws_large = per_n * n_small, per_n * n_large
    fits = "fits" if l2_bytes and ws_small <= l2_bytes else "does NOT fit"
    return {
        "working_set_formula": f"(3*s + 3) * n * 8 bytes = {per_n} * n bytes for s = {s} "
                               "(y, dy, F, Y and their neighbours, as the issue counts it)",
        "n_small": n_small, "working_set_small_bytes": ws_small, "l2_bytes": l2_bytes,
        "n_small_why": f"working set {ws_small / 1024:.0f} KiB {fits} in the "
                       f"{l2_bytes / 1024 if l2_bytes else float('nan'):.0f} KiB L2 of one core",
        "regime_start_bytes": {t: curves[t].regime_start for t in THREADS},
        "regime_start_used_bytes": regime, "n_large": n_large, "working_set_large_bytes": ws_large,
        "working_set_over_regime_start": ws_large / regime, "in_memory_regime": ws_large >= regime,
        "per_threads": {t: {"regime_start_bytes": curves[t].regime_start,
                            "working_set_over_regime_start": ws_large / curves[t].regime_start,
                            "bandwidth_at_working_set_over_largest": bandwidth_at(
                                curves[t].median, ws_large) / max(
                                curves[t].median.points,
                                key=lambda p: p.footprint_bytes).bandwidth_Bps,
                            "regime_start_single_runs_bytes": list(curves[t].regime_start_runs)}
                        for t in THREADS},
        "n_large_why": f"memory regime from {regime >> 20} MiB (per-point median triad curve, "
                       f"larger of 1 and 2 threads); target working set {request.large_factor:g} x "
                       f"that = {int(target) >> 20} MiB, capped at "
                       f"{request.max_large_ws_bytes >> 20} MiB -> n = {n_large} "
                       f"({ws_large / 2**20:.0f} MiB, {ws_large / regime:.2f} x the regime start)"}


def _case_name(case: dict) -> str:
    return f"{case['ivp']} n={case['n']} t={case['threads']}"


def summary(cases: list, sizes: dict) -> dict:
    """The targets over the cases, case by case and in all."""
    large = [c for c in cases if c["size"] == "large" and "best" in c]
    return {
        "speedup_vs_numba_every_case": all(c["targets"]["speedup_vs_numba"] for c in cases),
        "speedup_vs_numba_cases_met": sum(c["targets"]["speedup_vs_numba"] for c in cases),
        "cases": len(cases),
        "bound_70pct_all_large_cases": all(c["targets"]["bound"] for c in large),
        "bound_70pct_memory_bound_ivp_large_cases": all(
            c["targets"]["bound"] for c in large if c["memory_bound_ivp"]),
        "per_case": {_case_name(c): {"numba_over_best": c.get("ratios", {}).get("numba_over_best"),
                               "speedup_vs_numba_met": c["targets"]["speedup_vs_numba"],
                               "bound_over_best": c.get("ratios", {}).get("bound_over_best"),
                               "bound_met": c["targets"]["bound"]} for c in cases},
        "n_large_in_memory_regime": sizes["in_memory_regime"],
        "worst_over_best": {_case_name(c): c["ratios"]["worst_over_best"] for c in cases
                            if "ratios" in c},
        "variants_failed": sum(c["sweep"]["failed"] for c in cases)}
