"""`hybridtune export`: a variant's solver, or the tuned solver, as C sources, header and Makefile."""

from __future__ import annotations

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.pipeline.solver_export import ExportRequest, export_solver
from hybridtune.pipeline.tuned_export import table_lines


def add_arguments(export) -> None:
    export.add_argument("scenario")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--variant", metavar="ID")
    which.add_argument("--tuned", action="store_true", help="the measured best variant per "
                       "cache region of n, rank count and thread count, from --db")
    export.add_argument("--db", metavar="FILE", help="the store with the measurements (--tuned)")
    export.add_argument("--method", help="method (default: the scenario's, if it has one)")
    export.add_argument("--ivp", help="IVP (default: the scenario's, if it has one)")
    export.add_argument("--candidates", type=int, default=1, metavar="K",
                        help="--tuned: keep each measured range's K best variants, which the "
                        "library times during a run's first steps when asked (default 1: none)")
    export.add_argument("-o", "--output", required=True, metavar="DIR")
    export.add_argument("--name", help="C name of the files, the library and its functions "
                        "(NAME_create, ...; default ht_ and the IVP's name in lower case)")


def run(args) -> int:
    exported = export_solver(ExportRequest(args.scenario, args.output, args.name,
                                           None if args.tuned else args.variant, args.db,
                                           args.method, args.ivp, args.candidates))
    folder = exported.folder
    mpi = args.tuned and exported.table.mpi
    print(f"wrote {', '.join(exported.files)} to {folder} ("
          f"{'tuned' if args.tuned else 'variant ' + args.variant}, {exported.method.name}, "
          f"{exported.ivp.name}, API {exported.name}_*); build with make -C {folder}"
          + (" (by mpicc: its rules for more than one rank run MPI variants)" if mpi else ""))
    if args.tuned:
        print("\n".join(table_lines(exported.table)))
    return EXIT_OK
