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
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT as ROOT
from hybridtune.store.bulk_rounds import one_round


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
