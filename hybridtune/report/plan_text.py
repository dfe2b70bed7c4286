"""A job's plan as text and JSON: its layouts, the choice at an efficiency, the fastest, SMPI's checks."""

from __future__ import annotations


def _option_json(option) -> dict:
    layout = option.layout
    return {"nodes": layout.nodes, "ranks": layout.ranks, "threads": layout.threads,
            "ranks_per_domain": layout.ranks_per_domain, "variant": option.variant,
            "seconds": option.seconds, "comm_s": option.comm_s, "efficiency": option.efficiency,
            "node_seconds_per_step": option.node_seconds}


def _banded(option, band) -> dict:
    """low_s and high_s are null where the text shows no interval (no measurement in the store to
    judge the computation by): a band of zero width would claim a certainty nothing backs."""
    known = band.compute_rel > 0
    return {**_option_json(option), "low_s": band.low if known else None,
            "high_s": band.high if known else None}


def check_json(check) -> dict:
    point = check.point
    return {"role": check.role, "nodes": check.option.layout.nodes,
            "ranks": check.option.layout.ranks, "variant": check.option.variant,
            "predicted_s": check.option.seconds,
            "simulated_s": point.simulated_s if point else None,
            "error": point.error if point else None,
            "status": point.status if point else "not simulated",
            "message": point.message if point else check.reason,
            "wall_s": point.wall_s if point else 0.0}


def plan_json(plan, checks: tuple = ()) -> dict:
    data = {"method": plan.method, "ivp": plan.ivp, "n": plan.n,
            "choice": _banded(plan.choice, plan.interval),
            "fastest": _banded(plan.fastest, plan.fastest_interval),
            "options": [_option_json(o) for o in plan.options], "note": plan.note}
    if checks:
        data["simulated"] = [check_json(c) for c in checks]
    return data


def _count(value: int, noun: str) -> str:
    return f"{value} {noun}{'s' * (value != 1)}"


def _summary(option, band) -> str:
    interval = (f"95%: {band.low:.3e} to {band.high:.3e}" if band.compute_rel > 0 else
                "no interval: the store holds no measurement to judge the computation by")
    return (f"{option.variant} on {_count(option.layout.nodes, 'node')}, "
            f"{_count(option.layout.ranks, 'rank')} x {_count(option.layout.threads, 'thread')}: "
            f"{option.seconds:.3e} s/step ({interval}), efficiency {option.efficiency:.0%}")


def _fastest_line(plan, efficiency: float | None) -> str:
    c, f = plan.choice, plan.fastest
    if f == c:
        return "  fastest: the chosen layout"
    return (f"  fastest: {_summary(f, plan.fastest_interval)}; {c.seconds / f.seconds:.2f}x "
            f"faster than the choice for {f.node_seconds / c.node_seconds:.2f}x its node-hours"
            + (f", below the {efficiency:.0%} asked" if efficiency is not None else ""))


def plan_lines(plan, efficiency: float | None = None) -> list[str]:
    """The layouts ('*' the choice, '+' the fastest where another), the choice and the fastest."""
    c = plan.choice
    lines = [f"{plan.method} {plan.ivp} n={plan.n}: the fastest variant of each layout; 'vs 1 "
             "node': parallel efficiency over the nodes, the best one-node time over nodes x "
             "this time",
             f"  {'nodes':>5}  {'ranks':>6}  {'threads':>7}  {'s/step':>10}  {'vs 1 node':>10}  "
             f"{'node-s/step':>11}  variant"]
    for o in plan.options:
        mark = "*" if o == c else "+" if o == plan.fastest else " "
        lines.append(f"{mark} {o.layout.nodes:>5}  {o.layout.ranks:>6}  {o.layout.threads:>7}  "
                     f"{o.seconds:>10.3e}  {o.efficiency:>10.0%}  "
                     f"{o.node_seconds:>11.3e}  {o.variant}")
    target = ("the fastest layout" if efficiency is None else
              f"the fastest layout at {efficiency:.0%} parallel efficiency or more")
    lines.append(f"  chosen: {_summary(c, plan.interval)}; {target}")
    lines.append(_fastest_line(plan, efficiency))
    return lines


def check_lines(checks: tuple) -> list[str]:
    """SMPI's step of each checked layout beside its prediction."""
    lines = []
    for check in checks:
        o, point = check.option, check.point
        head = (f"  SMPI, {check.role}: {o.variant} on {_count(o.layout.nodes, 'node')}, "
                f"{_count(o.layout.ranks, 'rank')}: predicted {o.seconds:.3e}")
        if point is None:
            lines.append(f"{head}, not simulated ({check.reason})")
        elif point.status != "ok":
            lines.append(f"{head}, the simulation failed: {point.message.splitlines()[0][:200]}"
                         if point.message else f"{head}, the simulation failed")
        else:
            lines.append(f"{head}, simulated {point.simulated_s:.3e} s/step ({point.error:+.1%}), "
                         f"{point.wall_s:.1f} s")
    return lines
