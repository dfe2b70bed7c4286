"""Benchmark of building variants from one object per kernel against building each as one file.

Builds: a seeded sample of each IVP's variants (the scenario's first method), cold, built both ways
in one process one compiler at a time, the order of the two ways alternating between IVPs; the
seconds each way took. Timings: for a smaller sample per configuration (IVP, n, threads), each
variant's two libraries timed interleaved on this host (measure.runner.retime_interleaved, one
repetition of each in turn) beside a copy of the one file (the control: the noise of a ratio),
and the ratios of their medians to the one file's. Writes data/bench/kernel_objects.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from hybridtune.describe.configuration import configurations
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.generate.pool import select_variants
from hybridtune.measure.provenance import hardware_identity
from hybridtune.measure.runner import MeasureOptions, retime_interleaved, variant_library
from hybridtune.measure.tasks import plan_tasks
from hybridtune.pipeline.command_timing import append_entry, bench_entry


def one_file(generated):
    """The variant as it was built before: one file, its kernels static and inlined."""
    return replace(generated, one_file=True)


def build_seconds(tasks: list, order: tuple) -> dict:
    """Seconds to build the tasks' variants each way (cold), one compiler at a time."""
    seconds = {}
    for way in order:
        started = time.monotonic()
        for task in tasks:
            built = variant_library(task.generated if way == "kernel objects"
                                    else one_file(task.generated))
            if not built.ok:
                raise SystemExit(f"{task.generated.variant_id}: {built.message[-2000:]}")
        seconds[way] = round(time.monotonic() - started, 2)
    return seconds


def timed_pair(task, options: MeasureOptions, rounds: int) -> dict:
    """The variant's two builds timed interleaved, with a control: the one file again as a
    library of its own (a comment added), whose ratio to the first is the noise of a ratio."""
    single = replace(task, generated=one_file(task.generated))
    copy = replace(single, generated=replace(single.generated,
                                             code=single.generated.code + "/* again */\n"))
    found = retime_interleaved([task, single, copy], options, min_rounds=rounds)
    for result in found:
        if result.status != "ok":
            raise SystemExit(f"{task.generated.variant_id}: {result.status} {result.message}")
    objects, one, again = (result.median_s for result in found)
    return {"ivp": task.ivp, "n": task.n, "threads": task.threads,
            "variant": task.generated.variant_id, "objects_s": objects, "one_file_s": one,
            "again_s": again, "ratio": round(objects / one, 4),
            "control_ratio": round(again / one, 4)}


def summary(pairs: list, key: str = "ratio") -> dict:
    ratios = sorted(p[key] for p in pairs)
    quartiles = statistics.quantiles(ratios, n=4)
    return {"pairs": len(ratios), "median": round(statistics.median(ratios), 4),
            "quartiles": [round(q, 4) for q in quartiles], "min": ratios[0], "max": ratios[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", default=str(PROJECT_ROOT / "scenarios" / "default.yaml"))
    parser.add_argument("--build-sample", type=int, default=16, help="variants per IVP built")
    parser.add_argument("--time-sample", type=int, default=4,
                        help="variants per configuration timed")
    parser.add_argument("--rounds", type=int, default=40, help="interleaved rounds at least")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output",
                        default=str(PROJECT_ROOT / "data" / "bench" / "kernel_objects.json"))
    args = parser.parse_args()
    scenario = load(args.scenario, "scenario")
    method = scenario.methods[0]
    variants = select_variants(scenario, method, None)
    rng = random.Random(args.seed)
    options = MeasureOptions()
    os.environ["HYBRIDTUNE_CACHE"] = tempfile.mkdtemp(prefix="ht-kernel-objects-")
    builds, pairs, generated = [], [], {}
    for index, config in enumerate(c for c in configurations(scenario, None, None)
                                   if c.method == method):
        sample = rng.sample(variants, max(args.build_sample, args.time_sample))
        tasks = plan_tasks(scenario, config, sample, options, generated=generated)
        if not any(b["ivp"] == config.ivp.name for b in builds):
            order = ("one file", "kernel objects")[::1 if len(builds) % 2 == 0 else -1]
            builds.append({"ivp": config.ivp.name, "variants": args.build_sample,
                           **build_seconds(tasks[:args.build_sample], order)})
            print(builds[-1], flush=True)
        for task in tasks[:args.time_sample]:
            pairs.append(timed_pair(task, options, args.rounds))
            print(pairs[-1], flush=True)
    entry = {**bench_entry("Variants built from one object per kernel against one file",
                           PROJECT_ROOT, {"builds": builds, "timings": pairs}),
             "scenario": os.path.relpath(args.scenario, PROJECT_ROOT),
             "hardware": hardware_identity()["hardware"],
             "build_s": {way: round(sum(b[way] for b in builds), 2)
                         for way in ("one file", "kernel objects")},
             "timing_ratio": summary(pairs), "control_ratio": summary(pairs, "control_ratio"),
             "timing_ratio_by_size": {f"n={n}, threads={t}": {
                 key: summary([p for p in pairs if (p["n"], p["threads"]) == (n, t)], key)
                 for key in ("ratio", "control_ratio")}
                 for n, t in sorted({(p["n"], p["threads"]) for p in pairs})}}
    append_entry(Path(args.output), entry)
    print(json.dumps({k: entry[k] for k in ("build_s", "timing_ratio", "control_ratio")},
                     indent=1))


if __name__ == "__main__":
    main()
