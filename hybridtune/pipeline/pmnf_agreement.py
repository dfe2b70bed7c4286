"""Our PMNF fits beside Extra-P's, and PMNF extrapolation beside the analytic step, judged by SMPI.

The data sets: synthetic curves of known leading terms, the strong-scaling curves SMPI simulated
(the points of a scaling document's platforms) and one-rank times measured over sizes.
"""

from __future__ import annotations

import numpy as np

from hybridtune.describe.configuration import Configuration
from hybridtune.generate.pool import build_pool
from hybridtune.measure.runner import MeasureOptions, measure
from hybridtune.measure.tasks import plan_tasks
from hybridtune.pipeline.smpi_agreement import median
from hybridtune.predict.extrap_adapter import fit_extrap
from hybridtune.predict.pmnf import fit_pmnf

SYNTHETIC = {"p": lambda p: 3 + 0.5 * p, "p * log2(p)": lambda p: 1 + 0.2 * p * np.log2(p),
             "log2(p)": lambda p: 2 + 0.7 * np.log2(p), "p^2": lambda p: 1 + 0.01 * p ** 2,
             "p^(1/2)": lambda p: 1 + 0.5 * p ** 0.5, "p^-1": lambda p: 0.07 + 1.9 / p}
SYNTHETIC_RANKS = (2, 4, 8, 16, 32, 64, 128, 256)
SIZES = (2000, 5000, 12000, 30000, 75000, 190000)
MINIMUM_POINTS = 5              # Extra-P's minimum for a model


def fit_agreement(points, negative: bool) -> dict:
    """Both fits of the same points [(x, [repetitions])]; ours of each point's mean, as Extra-P
    models the mean of a point's repetitions."""
    ours = fit_pmnf([(x, float(np.mean(y))) for x, y in points], negative=negative)
    theirs = fit_extrap(points, negative=negative)
    return {"ours": ours.leading, "extrap": theirs.leading,
            "same": ours.leading == theirs.leading, "ours_model": ours.text(),
            "extrap_model": theirs.text}


def synthetic_agreement(seeds: int = 10, noise: float = 0.02) -> list[dict]:
    """Each SYNTHETIC law with `noise` relative noise on 5 repetitions, `seeds` draws each."""
    rng = np.random.default_rng(1)
    ps = np.array(SYNTHETIC_RANKS)
    results = []
    for term, law in SYNTHETIC.items():
        for seed in range(seeds):
            drawn = 1 + noise * rng.standard_normal((len(ps), 5))
            points = [(int(p), list(law(p) * drawn[i])) for i, p in enumerate(ps)]
            result = fit_agreement(points, negative=term == "p^-1")
            results.append({**result, "true": term, "seed": seed,
                            "ours_right": result["ours"] == term,
                            "extrap_right": result["extrap"] == term})
    return results


def simulated_curves(platform_parts: dict) -> dict:
    """(platform name, IVP, variant) -> {ranks: point} of the ok points of scaling document
    parts, platform by platform."""
    curves: dict = {}
    for name, part in platform_parts.items():
        mine: dict = {}
        for p in part["points"]:
            if p["status"] == "ok":
                mine.setdefault((name, p["ivp"], p["variant"]), {})[p["ranks"]] = p
        curves.update(sorted(mine.items()))
    return curves


def simulated_agreement(platform_parts: dict) -> list[dict]:
    """Both fits of each simulated strong-scaling curve of at least MINIMUM_POINTS rank counts."""
    return [{"platform": name, "ivp": ivp, "variant": variant,
             **fit_agreement(sorted((r, p["simulated_s"]) for r, p in points.items()),
                             negative=True)}
            for (name, ivp, variant), points in simulated_curves(platform_parts).items()
            if len(points) >= MINIMUM_POINTS]


def extrapolations(platform_parts: dict, last: int = 64, disagree: float = 0.20) -> list[dict]:
    """Each simulated strong-scaling curve's PMNF model fitted below `last` ranks, extrapolated to
    it, beside the analytic prediction there; both judged by SMPI's step at `last`, and the pair
    named where they differ by more than `disagree`."""
    out = []
    for (name, ivp, variant), points in simulated_curves(platform_parts).items():
        below = sorted((r, p["simulated_s"]) for r, p in points.items() if r < last)
        if last not in points or len(below) < MINIMUM_POINTS:
            continue
        model = fit_pmnf(below, negative=True)
        empirical, at = float(model([last])[0]), points[last]
        out.append({"platform": name, "ivp": ivp, "variant": variant, "model": model.text(),
                    "empirical_s": empirical, "analytic_s": at["predicted_s"],
                    "simulated_s": at["simulated_s"],
                    "empirical_error": empirical / at["simulated_s"] - 1,
                    "analytic_error": at["predicted_s"] / at["simulated_s"] - 1,
                    "disagree": abs(empirical / at["predicted_s"] - 1) > disagree})
    return out


def measured_size_sets(scenario, ivp_name: str, count: int, on_variant=None) -> list:
    """One-rank times of `count` variants spread over the pool of the scenario's first method,
    at SIZES of one IVP: [(label, [(n, seconds)])] of those measured at MINIMUM_POINTS sizes."""
    method = scenario.methods[0]
    ivp = next(i for i in scenario.ivps if i.name == ivp_name)
    pool = build_pool(scenario.skeletons, scenario.template_map, method).variants
    options = MeasureOptions(budget_s=1.0)
    sets = []
    for variant in pool[::max(1, len(pool) // count)][:count]:
        points = []
        for n in SIZES:
            config = Configuration(method, ivp, ivp.sizes.next_valid(n), 1, 1)
            result = measure(plan_tasks(scenario, config, [variant], options)[0], options)
            if result.status == "ok":
                points.append((config.n, result.median_s))
        if on_variant:
            on_variant(variant.id, len(points))
        if len(points) >= MINIMUM_POINTS:
            sets.append((f"{ivp_name} {variant.id}", points))
    return sets


def _count(results: list[dict], key: str) -> int:
    return sum(r[key] for r in results)


def pmnf_agreement(platform_parts: dict, measured_sets: list) -> dict:
    """The PMNF part of the scaling benchmark: agreement with Extra-P on synthetic, simulated and
    measured data, and extrapolation against the analytic step."""
    synthetic = synthetic_agreement()
    simulated = simulated_agreement(platform_parts)
    measured = [{"set": label, **fit_agreement(points, negative=False)}
                for label, points in measured_sets]
    extrapolated = extrapolations(platform_parts)
    return {
        "synthetic": synthetic, "synthetic_ours_right": _count(synthetic, "ours_right"),
        "synthetic_extrap_right": _count(synthetic, "extrap_right"),
        "synthetic_count": len(synthetic),
        "simulated": simulated, "simulated_same": _count(simulated, "same"),
        "measured": measured, "measured_same": _count(measured, "same"),
        "same_on_simulated_and_measured": (_count(simulated + measured, "same"),
                                           len(simulated) + len(measured)),
        "extrapolated": extrapolated,
        "extrapolation_summary": {
            "sets": len(extrapolated),
            "empirical_error_median": median([abs(e["empirical_error"]) for e in extrapolated]),
            "analytic_error_median": median([abs(e["analytic_error"]) for e in extrapolated]),
            "disagree": _count(extrapolated, "disagree")}}
