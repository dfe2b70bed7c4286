"""The generated-variants comparison as a markdown table and a line on its targets."""

from __future__ import annotations


def _g(x) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _row(c: dict) -> str:
    sweep = f"{c['sweep']['ok']}/{c['sweep']['failed']}"
    if "best" not in c:
        return f"| {c['ivp']} | {c['n']} | {c['threads']} | {sweep} | {c.get('error')} |" + " |" * 11
    numba, ratios, targets = c["numba"], c["ratios"], c["targets"]
    numba_s = numba.get("median_s") if numba.get("status") == "ok" else None
    marks = [f"numba>=1.5x: {'yes' if targets['speedup_vs_numba'] else 'NO'}"]
    if targets["bound"] is not None:
        marks.append(f"bound>=70%: {'yes' if targets['bound'] else 'NO'}")
    return (f"| {c['ivp']} | {c['n']} | {c['threads']} | {sweep} | {c['best']['id']} | "
            f"{_g(c['best']['median_s'])} | {c['worst']['id']} | {_g(c['worst']['median_s'])} | "
            f"{_g(ratios['worst_over_best'])} | {_g(numba_s) if numba_s else numba.get('status')} | "
            f"{_g(ratios['numba_over_best'])} | {_g(c['numpy'].get('median_s'))} | "
            f"{_g(ratios['numpy_over_best'])} | {_g(c['bound']['bound_s'])} | "
            f"{_g(ratios['bound_over_best'])} | {'; '.join(marks)} |")


def comparison_table(cases: list) -> str:
    """One row per case: best and worst variant, numba, numpy, the bound and the targets met."""
    head = ("| IVP | n | thr | ok/failed | best variant | best s/step | worst variant | "
            "worst s/step | worst/best | numba s/step | numba/best | numpy s/step | numpy/best | "
            "bound s | bound/best | targets |")
    return "\n".join([head, "|" + "---|" * 16] + [_row(c) for c in cases])


def targets_line(summary: dict, targets: dict) -> str:
    return (f"numba >= {targets['speedup_vs_numba']}x slower than best in every case: "
            f"{summary['speedup_vs_numba_every_case']} ({summary['speedup_vs_numba_cases_met']}/"
            f"{summary['cases']}); >= {targets['bound_fraction']:.0%} of the streaming bound at "
            f"n_large: all {summary['bound_70pct_all_large_cases']}, memory-bound IVP "
            f"{summary['bound_70pct_memory_bound_ivp_large_cases']}; failed variant measurements: "
            f"{summary['variants_failed']}")
