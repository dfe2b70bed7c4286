"""`hybridtune store upgrade`, `store merge` and `store import`: schema steps, merges, production runs.

Upgrade takes explicit schema steps; merge makes the stores of several jobs one; import takes a
tuned library's report lines in as measurements.
"""

from __future__ import annotations

import sys

from hybridtune.commands.exit_codes import EXIT_BAD_INPUT, EXIT_OK
from hybridtune.pipeline.production_import import REFUSALS, ImportRequest, import_production
from hybridtune.store import merge_stores, upgrade_store


def add_arguments(store) -> None:
    store_sub = store.add_subparsers(dest="store_command", required=True,
                                     parser_class=type(store))
    upgrade = store_sub.add_parser("upgrade", help="write an older store at the current schema "
                                   "version as a new file (the old one is left unchanged)")
    upgrade.add_argument("old", metavar="OLD")
    upgrade.add_argument("-o", "--output", required=True, metavar="NEW")
    merge = store_sub.add_parser("merge", help="combine stores of several jobs into a new file")
    merge.add_argument("stores", nargs="+", metavar="STORE")
    merge.add_argument("-o", "--output", required=True, metavar="MERGED")
    merge.add_argument("--passes", action="store_true",
                       help="the stores are passes of a campaign: keep each run's timing of the "
                       "same code (one first timing per pass) instead of the narrowest")
    taken = store_sub.add_parser("import", help="take the lines a tuned library appended to "
                                 "$HYBRIDTUNE_REPORT into a store as measurements (timing "
                                 "production)")
    taken.add_argument("files", nargs="+", metavar="FILE")
    taken.add_argument("--db", required=True, metavar="STORE",
                       help="the store the library was tuned from")


def run(args) -> int:
    record = {"argv": sys.argv[1:]}
    if args.store_command == "import":
        return _imported(args)
    if args.store_command == "upgrade":
        summary = upgrade_store(args.old, args.output, record)
        rows = ", ".join(f"{count} {table}" for table, count in summary.rows.items() if count)
        print(f"wrote {summary.target}: schema {summary.from_version} -> {summary.to_version} "
              f"from {summary.source} (left unchanged); {rows or 'no rows'}")
        return EXIT_OK
    summary = merge_stores(args.stores, args.output, record, passes=args.passes)
    print(f"wrote {summary.target} from {len(summary.sources)} stores "
          f"({', '.join(summary.sources)}):")
    for table, counts in summary.tables.items():
        if counts.rows_in:
            dropped = [f"{counts.duplicates} duplicates"] if counts.duplicates else []
            if counts.superseded:
                dropped.append(f"{counts.superseded} superseded by a narrower interval")
            print(f"  {table}: {counts.rows_in} rows in, {counts.rows_out} kept"
                  + (f" ({', '.join(dropped)})" if dropped else ""))
    return EXIT_OK


def _imported(args) -> int:
    """Exit 2 where a line was refused (the others are imported: a rerun adds nothing twice)."""
    summary = import_production(ImportRequest(tuple(args.files), args.db))
    print(f"{args.db}: {summary.written} production measurement(s) imported from "
          f"{summary.lines} line(s) of {len(args.files)} file(s)"
          + (f"; {summary.held} already in the store" if summary.held else ""))
    for kind, (count, example) in summary.refused.items():
        print(f"error: {count} line(s) refused, {REFUSALS[kind]}; the first: {example}",
              file=sys.stderr)
    return EXIT_BAD_INPUT if summary.refused else EXIT_OK
