"""`hybridtune report`: a store described as one HTML page with PNG plots, written whole or not at all."""

from __future__ import annotations

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.pipeline.report_page import write_store_report


def add_arguments(report) -> None:
    report.add_argument("--db", required=True, metavar="FILE", help="the store to describe")
    report.add_argument("-o", "--output", required=True, metavar="DIR",
                        help="folder for index.html and the plots (new, empty, or holding a "
                             "previous report, which is replaced)")
    report.add_argument("--scaling", action="append", default=[], metavar="JSON",
                        help="scaling curves to draw beside the store's measurements: the "
                             "output of `predict --scaling --json` or data/bench/scaling.json "
                             "(repeatable)")


def run(args) -> int:
    written = write_store_report(args.db, args.output, args.scaling)
    print(f"wrote {written.page} with {len(written.plots)} plot(s): "
          f"{', '.join(plot.file for plot in written.plots)}")
    for item in written.missing:
        print(f"not drawn: {item.title}: {item.reason}")
    return EXIT_OK
