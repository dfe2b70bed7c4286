"""Validation of the scaling predictions beyond this machine: SMPI, two real ranks, Extra-P, 256 ranks.

Part 1 (platforms): scenarios/mpi.yaml's variants (the 3 predicted fastest at each rank count and the
fastest of each skeleton form) on 1, 2, 4, ... 64 simulated ranks of each platform file, analytic
against SMPI (pipeline/smpi_agreement.py). Part 2 (two_ranks): 2 simulated ranks against 2 real
ones (pipeline/two_rank_check.py). Part 3 (pmnf): PMNF leading terms, ours and Extra-P's, and PMNF
extrapolation against the analytic step (pipeline/pmnf_agreement.py). Part 4 (big): one IVP on 256
simulated ranks of the fat tree at n = 16,777,216. Writes data/bench/scaling.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform as host_platform
import sys
import time

from hybridtune.describe.library import PROJECT_ROOT as ROOT
from hybridtune.describe.loader import load
from hybridtune.measure.provenance import hardware_identity
from hybridtune.pipeline.pmnf_agreement import measured_size_sets, pmnf_agreement
from hybridtune.pipeline.simulated_scaling import SimulationRequest
from hybridtune.pipeline.smpi_agreement import largest_simulation, simulated_platforms
from hybridtune.pipeline.two_rank_check import two_rank_check
from hybridtune.report.simulation_text import agreement_lines, point_line
from hybridtune.store import Store

OUT = ROOT / "data" / "bench" / "scaling.json"
STORE = ROOT / "data" / "bench" / "scaling.h5"
HOST_PLATFORM = "data/bench/host-platform.xml"
PLATFORMS = ["data/platforms/fat-tree-100g.xml", "data/platforms/ethernet-10g.xml"]
PARTS = ("platforms", "two_ranks", "pmnf", "big")


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks-max", type=int, default=64)
    parser.add_argument("--shortlist", type=int, default=3)
    parser.add_argument("--variants-2", type=int, default=3, help="variants per IVP, 2-rank check")
    parser.add_argument("--sizes", type=int, default=4, help="variants measured over 6 sizes")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"parts to run (default all: "
                        f"{','.join(PARTS)}); the others are kept from {OUT.relative_to(ROOT)}")
    args = parser.parse_args()
    unknown = sorted(set(args.parts.split(",")) - set(PARTS))
    if unknown:
        parser.error(f"--parts {args.parts}: unknown {', '.join(unknown)}; expected some of "
                     f"{', '.join(PARTS)}")
    return args


def platforms(scenario, store, args) -> dict:
    request = SimulationRequest("", args.ranks_max, shortlist=args.shortlist, per_skeleton=True)
    parts = simulated_platforms(scenario, store, PLATFORMS, request,
                                lambda p: print(point_line(p), flush=True))
    for name, part in parts.items():
        print(f"{name}: " + "; ".join(agreement_lines(part)), flush=True)
    return parts


def main() -> int:
    args = options()
    parts = args.parts.split(",")
    scenario = load(ROOT / "scenarios" / "mpi.yaml", "scenario")
    result = json.loads(OUT.read_text()) if OUT.exists() and set(parts) != set(PARTS) else {}
    result["host"] = {"cpu": host_platform.processor() or host_platform.machine(),
                      "hardware_id": hardware_identity(), "cpus": len(os.sched_getaffinity(0))}
    runs = {
        "platforms": lambda store: platforms(scenario, store, args),
        "two_ranks": lambda store: two_rank_check(
            scenario, args.variants_2, ROOT / HOST_PLATFORM,
            lambda r: print(f"  2 ranks {r['ivp']} {r['variant']}: real {r['real_s']} "
                            f"simulated {r['simulated_s']}", flush=True)),
        "pmnf": lambda store: pmnf_agreement(result.get("platforms", {}), measured_size_sets(
            scenario, "Lorenz96", args.sizes,
            lambda v, k: print(f"  sizes {v}: {k} of 6 measured", flush=True))),
        "big": lambda store: largest_simulation(scenario, store, PLATFORMS[0], "Lorenz96",
                                                16_777_216, 256)}
    with Store.open(STORE, "a", run={"command": "bench_scaling"}) as store:
        for part in (p for p in PARTS if p in parts):
            print(f"part {PARTS.index(part) + 1}: {part}", flush=True)
            started = time.time()
            result[part] = runs[part](store)         # each part written as it ends
            result.setdefault("commands", {})[part] = "jobs/bench_scaling.sh " + " ".join(
                sys.argv[1:])
            result.setdefault("wall_s", {})[part] = time.time() - started
            OUT.write_text(json.dumps(result, indent=1, default=str))
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
