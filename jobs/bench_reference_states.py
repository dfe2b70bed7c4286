"""Benchmark of the reference states a tuning run's plan computes, as before and as now.

Every configuration's variants are checked against the reference solver's state after a few steps
(measure/tasks), one state per method, IVP and n. Before, the plan computed them one after another,
each call of the right-hand side evaluating its whole code; now what does not depend on t or y is
evaluated once per state (reference/rhs.right_hand_side) and the distinct states are computed side
by side, one thread per usable core (measure/tasks.reference_states). Three ways in interleaved
rounds on the scenario's sizes: the seconds and whether the states agree bit for bit. Writes
data/bench/reference_states.json.
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

from hybridtune.describe.configuration import configurations
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.measure.provenance import hardware_identity
from hybridtune.measure.runner import MeasureOptions
from hybridtune.measure.tasks import (MeasureTask, reference_after, reference_key,
                                      reference_states, stable_step, usable_cores)
from hybridtune.reference.pirk import integrate
from hybridtune.reference.rhs import initial_values, right_hand_side

BEFORE, REMEMBERED, NOW = "whole code each call, one after another", \
    "fixed parts remembered, one after another", "fixed parts remembered, side by side"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/default.yaml")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", default="data/bench/reference_states.json")
    args = parser.parse_args()
    scenario = load(PROJECT_ROOT / args.scenario)
    options = MeasureOptions()
    layouts = configurations(scenario, None, [1])
    # reference_states reads only a wanted task's step size
    wanted = [(c, [MeasureTask(None, c.method.name, c.ivp.name, c.n, 1,
                               stable_step(c.ivp, c.n), None)]) for c in layouts]
    keys = [reference_key(c, todo[0].h, options) for c, todo in wanted]
    rounds = {BEFORE: [], REMEMBERED: [], NOW: []}
    agree = True
    for _ in range(args.rounds):
        started = time.perf_counter()
        before = [integrate(c.method, right_hand_side(c.ivp, c.n, remember=False),
                            initial_values(c.ivp, c.n), 0.0, options.check_steps * todo[0].h,
                            options.check_steps) for c, todo in wanted]
        rounds[BEFORE].append(time.perf_counter() - started)
        started = time.perf_counter()
        alone = [reference_after(c.method, c.ivp, c.n, todo[0].h, options.check_steps)
                 for c, todo in wanted]
        rounds[REMEMBERED].append(time.perf_counter() - started)
        started = time.perf_counter()
        kept = reference_states(wanted, options)
        rounds[NOW].append(time.perf_counter() - started)
        agree &= len(kept) == len(alone) and all(
            np.array_equal(first, state) and np.array_equal(state, kept[key])
            for first, state, key in zip(before, alone, keys))
    medians = {name: statistics.median(found) for name, found in rounds.items()}
    ratio = medians[NOW] / medians[BEFORE]
    out = {"scenario": args.scenario, "host": hardware_identity()["hardware"],
           "usable_cores": usable_cores(), "states": len(wanted),
           "sizes": sorted({c.n for c in layouts}), "rounds_s": rounds, "median_s": medians,
           "ratio_now_to_before": ratio, "identical_states": agree,
           "command": "jobs/bench_reference_states.sh"}
    (PROJECT_ROOT / args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(wanted)} reference states, median of {args.rounds} interleaved rounds: "
          + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in medians.items())
          + f" (now {ratio:.2f}x before, {usable_cores()} cores); identical: {agree}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
