"""`hybridtune solve`: an IVP integrated by the reference PIRK solver or a compiled variant."""

from __future__ import annotations

import json

import numpy as np

from hybridtune.commands.exit_codes import EXIT_OK
from hybridtune.pipeline.atomic_files import write_atomically
from hybridtune.pipeline.reference_solve import SolveRequest, solve_ivp


def add_arguments(solve) -> None:
    solve.add_argument("--method", required=True, help="method file or library name")
    solve.add_argument("--ivp", required=True, help="IVP file or library name")
    solve.add_argument("-n", type=int, required=True, help="number of components")
    solve.add_argument("--t0", type=float, default=0.0)
    solve.add_argument("--t1", type=float, required=True)
    solve.add_argument("--steps", type=int, required=True, help="fixed steps of (t1 - t0) / steps")
    solve.add_argument("--corrector-steps", type=int, help="override the method's m")
    solve.add_argument("--out", help="write the final state vector as .npy")
    solve.add_argument("--json", action="store_true")
    solve.add_argument("--variant", metavar="ID", help="integrate with this compiled variant "
                       "instead of the numpy reference")
    solve.add_argument("--threads", type=int, help="OpenMP threads for --variant")
    solve.add_argument("--scenario", help="scenario whose pool the variant is from (default: "
                       "scenarios/default.yaml)")


def run(args) -> int:
    request = SolveRequest(args.method, args.ivp, args.n, args.t1, args.steps, args.t0,
                           args.corrector_steps, args.variant, args.threads, args.scenario)
    solution = solve_ivp(request)
    if args.out:
        write_atomically(args.out, lambda handle: np.save(handle, solution.state))
    result = solution.summary(request)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{solution.ivp.name} with {solution.method.name} (m = "
              f"{solution.method.corrector_steps}), n = {args.n}: t = {args.t1:g} after "
              f"{args.steps} steps, |y|_2 = {result['norm2']:.12g}, "
              f"max |y_j| = {result['max_abs']:.12g}")
    return EXIT_OK
