"""A scenario's variant pool listed: a row per variant with its communication per step; a summary."""

from __future__ import annotations

from hybridtune.generate.pool import build_pool
from hybridtune.predict.superstep import communication_points


def _communication_per_step(scenario, method) -> dict:
    """skeleton -> operation -> how often one step runs it."""
    per_step = {}
    for skeleton in scenario.skeletons:
        counts: dict = {}
        for (op, _), count in communication_points(skeleton, method.corrector_steps).items():
            counts[op] = counts.get(op, 0) + count
        per_step[skeleton.name] = counts
    return per_step


def pool_rows(scenario) -> list[dict]:
    """Every variant of every method's pool, with its barriers and communication per step."""
    rows = []
    for method in scenario.methods:
        pool = build_pool(scenario.skeletons, scenario.template_map, method)
        per_step = _communication_per_step(scenario, method)
        for variant in pool.variants:
            counts = per_step[variant.skeleton]
            barriers = counts.get("omp_barrier", 0) + 2 * sum(
                c for op, c in counts.items() if op.startswith("mpi_"))
            rows.append({"id": variant.id, "method": method.name, "skeleton": variant.skeleton,
                         "kernels": variant.kernel_map, "barriers_per_step": barriers,
                         "communication_per_step": counts,
                         "code_hash": variant.code_hash, "same_as": list(variant.same_as)})
    return rows


def pool_summary(scenario, rows: list[dict]) -> str:
    """One line: the pool's size, what was folded, where it comes from."""
    kernel_variants = sum(len(t.variants) for t in scenario.templates)
    folded = sum(len(r["same_as"]) for r in rows)
    methods = ", ".join(f"{m.name} (s={m.stages}, m={m.corrector_steps})" for m in scenario.methods)
    return (f"pool: {len(rows)} variants ({folded} identical folded) from "
            f"{len(scenario.skeletons)} skeletons and {len(scenario.templates)} kernel templates "
            f"({kernel_variants} kernel variants); method {methods}")
