"""`hybridtune store upgrade` and `store merge`: a store's schema steps and merges.

Upgrade takes explicit schema steps; merge makes the stores of several jobs one.
"""

from __future__ import annotations

import sys

from hybridtune.commands.exit_codes import EXIT_OK
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


def run(args) -> int:
    record = {"argv": sys.argv[1:]}
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
