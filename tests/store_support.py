"""The store tests' shared pieces: a measurement row with every column."""

from __future__ import annotations


def measurement(row_id: str, **changes) -> dict:
    row = dict(row_id=row_id, id="A_x", method="radauIIA7", ivp="Cusp", n=300, threads=2,
               ranks=1, nodes=1, status="ok", median_s=1.5e-4, ci_low_s=1.4e-4, ci_high_s=1.6e-4, ci_rel=0.05,
               ci_target=0.02, budget_s=5.0, timing="alone", repetitions=12, steps_per_repetition=40,
               check_error=3e-13, message="", code_sha256="c" * 64, generator_version="0.4.0",
               source="v.c", build_id="b" * 16, compiler="gcc 13.2.0",
               compiler_flags="-O3 -march=native", hardware_id="h" * 16,
               hardware={"model": "AMD EPYC 7763"}, node="n1")
    return {**row, **changes}
