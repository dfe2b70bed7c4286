"""`hybridtune variants`: a scenario's variant pool listed, as text or JSON."""

from __future__ import annotations

import json

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.describe.loader import load
from hybridtune.pipeline.variant_listing import pool_rows, pool_summary


def add_arguments(variants) -> None:
    variants.add_argument("scenario")
    variants.add_argument("--json", action="store_true", help="print a JSON list")


def run(args) -> int:
    scenario = load(args.scenario, "scenario")
    rows = pool_rows(scenario)
    if args.json:
        print(json.dumps(rows, indent=1))
        return EXIT_OK
    for row in rows:
        print(f"{row['id']}  [{row['method']}, {row['barriers_per_step']} barriers/step]")
    print(pool_summary(scenario, rows))
    return EXIT_OK
