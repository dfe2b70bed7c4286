"""The offline model judged: the Offsite way's cost extrapolated, and predictions against timings.

The Offsite way runs one kerncraft process per loop and n, nothing reused: timed on a sample of a
store's loops at two sizes and extrapolated to every loop x size. Accuracy: every k-th variant of
each ranking (one thread) measured as `measure` does, beside its prediction.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from scipy.stats import kendalltau

from hybridtune.describe.configuration import Configuration
from hybridtune.generate.pool import pool_for
from hybridtune.measure.runner import MeasureOptions
from hybridtune.measure.tasks import measure_configuration
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.store import Store


def _offsite_call(kerncraft: Path, machine: Path, code: Path, n: int, defines: dict) -> float:
    """Seconds of one kerncraft CLI process on one loop at one n."""
    args = [str(kerncraft), "-m", str(machine), "-p", "ECM", "-P", "LC", "-i", "OSACA",
            "--pointer-increment", "auto", str(code), "-D", "n", str(n)]
    for name, value in sorted(defines.items()):
        args += ["-D", name, str(value)]
    start = time.perf_counter()
    subprocess.run(args, capture_output=True, text=True)
    return time.perf_counter() - start


def offsite_way(db: Path, machine: Path, ivps: dict, sample: int, loops: int, points: int,
                kerncraft: Path) -> dict:
    """sample loops of the store timed at n = 6000 and 600000 the Offsite way, extrapolated to
    loops x points sizes of n (ECM gives every core count in one call)."""
    with Store.open(db, "r") as store:
        kernels = store.frame("kernels")
    picked = kernels.iloc[:: max(1, len(kernels) // sample)][:sample]
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, row in enumerate(picked.to_dict("records")):
            code = Path(tmp) / f"k{number}" / "kernel.c"
            code.parent.mkdir()
            code.write_text(row["code"])
            ivp = ivps.get(row["ivp"])
            for n in (6000, 600000):
                n = ivp.sizes.next_valid(n) if ivp is not None else n
                defines = {} if ivp is None else {name: ivp.environment(n)[name[4:]] for name
                                                  in re.findall(r"\bivp_\w+", row["code"])}
                times.append(_offsite_call(kerncraft, machine, code, n, defines))
    per_call = statistics.median(times)
    return {"sampled_calls": len(times), "median_call_s": round(per_call, 3),
            "calls_needed": loops * points, "extrapolated_s": round(per_call * loops * points, 1),
            "note": ("one kerncraft CLI process per loop and n (no region reuse, no in-process "
                     f"reuse): {loops} loops x {points} sizes of n; ECM gives every core count "
                     "in one call; sample median x calls")}


def agreement(predicted: list, measured: list) -> dict:
    """Predicted against measured seconds per step: median errors, Kendall tau and where the
    fastest measured stands in the prediction."""
    pairs = [(p, m) for p, m in zip(predicted, measured) if m is not None]
    fastest = min(pairs, key=lambda pair: pair[1])
    return {"measured_ok": len(pairs),
            "median_abs_rel_error": round(statistics.median(abs(p / m - 1) for p, m in pairs), 3),
            "median_predicted_over_measured": round(statistics.median(p / m for p, m in pairs), 3),
            "kendall_tau": round(float(kendalltau([p for p, _ in pairs],
                                                  [m for _, m in pairs]).statistic), 3),
            "rank_of_fastest_measured_in_prediction": 1 + sorted(p for p, _ in pairs).index(
                fastest[0])}


def _sampled(scenario, store, ivp, n: int, per_ivp: int, options: MeasureOptions) -> dict:
    """Every k-th variant of ivp's ranking at n measured (stored) beside its prediction."""
    result = predict_scenario(scenario, n, [1], store)
    [ranking] = [r for r in result.rankings if r.configuration.ivp is ivp]
    ok = [p for p in ranking.predictions if p.status == "ok"]
    sample = ok[::max(1, len(ok) // per_ivp)][:per_ivp]
    pool = pool_for(scenario, scenario.methods[0])
    measured = measure_configuration(
        scenario, Configuration(scenario.methods[0], ivp, n, 1), [pool[p.id] for p in sample],
        options, on_result=lambda r: store.append_many("measurements", [r.as_row()]))
    times = [m.median_s if m.status == "ok" else None for m in measured]
    return {"ivp": ivp.name, "n": n, "threads": 1, "variants": len(sample),
            **agreement([p.predicted_s for p in sample], times),
            "variants_predicted_measured_s": [[p.id, p.predicted_s, t]
                                              for p, t in zip(sample, times)]}


def accuracy(scenario, db: Path, per_ivp: int, sizes: tuple, budget: float,
             log=lambda row: None) -> dict:
    """Predictions against measurements of per_ivp variants of each IVP at each size (the next
    valid n), and the medians over them."""
    options = MeasureOptions(budget_s=budget, ci_target=0.05)
    out = []
    with Store.open(db, "a", run={"command": "bench_offline accuracy"}) as store:
        for ivp in scenario.ivps:
            for target in sizes:
                out.append(_sampled(scenario, store, ivp, ivp.sizes.next_valid(target), per_ivp,
                                    options))
                log(out[-1])
    return {"per_configuration": out,
            "median_abs_rel_error": round(statistics.median(r["median_abs_rel_error"]
                                                            for r in out), 3),
            "median_kendall_tau": round(statistics.median(r["kendall_tau"] for r in out), 3)}
