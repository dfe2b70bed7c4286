"""Benchmark of the HDF5 store: bulk appends of predictions and reading every table back.

Each repetition appends `rows` kernel and `rows` variant predictions in one writer session, then as
many again in a second one, and times opening and reading all tables into DataFrames; the store read
back is checked row for row against what was written. Medians over the repetitions, with each sample.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hybridtune.store import TABLES, Store  # noqa: E402


def kernel_prediction(i: int) -> dict:
    return dict(key=f"{i:016x}", code_hash=f"{i % 300:064x}", machine_sha256="ab" * 32,
                region="L2", threads=1 + i % 20, model="ECM", kerncraft_version="0.8.18",
                osaca_version="0.7.1", n_sample=1000 + i, status="ok", message="",
                cycles_per_cl=12.5 + i, iterations_per_cl=8.0,
                contributions={"T_OL": 4.0, "T_nOL": 2.0, "L1L2": 3.0, "L2L3": 4.0, "L3MEM": 8.0},
                saturation_cores=4)


def variant_prediction(i: int) -> dict:
    return dict(scenario="default", method="radauIIA7", ivp="Cusp", n=10**6, threads=1 + i % 20,
                ranks=1, variant=f"F_RHS_LC_jli_{i}", predicted_s=1e-3 * i, t_com_s=1e-5, rank=i,
                model="ECM", breakdown={"LC": 1.0, "RHS": 2.0, "Update": 0.5},
                features={"predicted_s": 1e-3, "ecm_T_comp_s": 5e-4})


def one_round(path: Path, rows: int) -> dict:
    """Time one append-append-read round on a new store at `path`; fails if a row reads back wrong."""
    kernels = [kernel_prediction(i) for i in range(2 * rows)]
    variants = [variant_prediction(i) for i in range(2 * rows)]
    started = time.perf_counter()
    with Store.open(path, run={"command": "bench_store first"}) as store:
        store.append_many("kernel_predictions", kernels[:rows])
        store.append_many("variant_predictions", variants[:rows])
    appending = time.perf_counter() - started
    with Store.open(path, run={"command": "bench_store second"}) as store:
        store.append_many("kernel_predictions", kernels[rows:])
        store.append_many("variant_predictions", variants[rows:])
    started = time.perf_counter()
    with Store.open(path, "r") as reader:
        frames = {table: reader.frame(table) for table in TABLES}
    reading = time.perf_counter() - started
    kernel_frame, variant_frame = frames["kernel_predictions"], frames["variant_predictions"]
    last = 2 * rows - 1
    if not (len(kernel_frame) == len(variant_frame) == 2 * rows
            and kernel_frame.cycles_per_cl[last] == kernels[last]["cycles_per_cl"]
            and kernel_frame.contributions[last] == kernels[last]["contributions"]
            and variant_frame.variant[last] == variants[last]["variant"]
            and len(frames["runs"]) == 2):
        raise SystemExit(f"bench_store: {path} did not read back the {2 * rows} rows it was given")
    return {"append_s": appending, "read_s": reading,
            "rows_read": sum(len(frame) for frame in frames.values())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10000,
                        help="rows per table and writer session (default 10000: 40,000 rows read)")
    parser.add_argument("--repeats", type=int, default=7, help="rounds, each on a new store (default 7)")
    parser.add_argument("--output", type=Path, default=ROOT / "data" / "bench" / "store.json")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.repeats < 1:
        parser.error("--rows and --repeats must be at least 1")
    rounds = []
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory() as folder:
            rounds.append(one_round(Path(folder) / "bench.h5", args.rows))
        print(f"round {r + 1}/{args.repeats}: append {rounds[-1]['append_s']:.3f} s, "
              f"read {rounds[-1]['read_s']:.3f} s", file=sys.stderr)
    result = {
        "what": f"{args.rows} kernel + {args.rows} variant predictions appended in one writer session "
                f"(append_s); {2 * args.rows} + {2 * args.rows} rows and two run records opened and "
                "read into DataFrames (read_s)",
        "command": " ".join(["jobs/bench_store.sh", *(argv if argv is not None else sys.argv[1:])]),
        "rows": args.rows, "repeats": args.repeats, "rows_read": rounds[0]["rows_read"],
        "append_s_median": statistics.median(r["append_s"] for r in rounds),
        "read_s_median": statistics.median(r["read_s"] for r in rounds),
        "append_s": [r["append_s"] for r in rounds], "read_s": [r["read_s"] for r in rounds],
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    scratch = args.output.with_suffix(".tmp")
    scratch.write_text(json.dumps(result, indent=1) + "\n")
    scratch.replace(args.output)
    print(f"append {result['append_s_median']:.3f} s, read {result['read_s_median']:.3f} s "
          f"(medians of {args.repeats}) -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
