"""The options that select configurations (-n, --threads, --ranks) and the store: predict's, tune's."""

from __future__ import annotations


def add_selection(parser, above_one: str = "the MPI skeletons' variants are ranked",
                  store: str = "the store") -> None:
    """-n, --threads, --ranks (above one rank: above_one) and --db (store: what it is for)."""
    parser.add_argument("-n", type=int, help="one size instead of the scenario's")
    parser.add_argument("--threads", type=int, action="append", metavar="T",
                        help="thread count per rank (repeatable; default: the scenario's)")
    parser.add_argument("--ranks", type=int, action="append", metavar="P",
                        help="MPI rank count (repeatable; default: the scenario's; above 1 only "
                             f"{above_one})")
    parser.add_argument("--db", metavar="FILE", help=f"{store} (default: data/store/hybridtune.h5)")
