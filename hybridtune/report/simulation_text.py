"""Simulated scaling as text: a progress line per SMPI run and a table of predicted against simulated."""

from __future__ import annotations


def _error(point) -> str:
    return "-" if point.error is None else f"{point.error:+.1%}"


def point_line(point) -> str:
    """One simulated point as it ends."""
    simulated = (f"simulated {point.simulated_s:.3e} s/step ({_error(point)})"
                 if point.status == "ok" else f"failed: {point.message.splitlines()[0][:120]}"
                 if point.message else "failed")
    return (f"  {point.ivp} n={point.n} P={point.ranks} {point.variant}: predicted "
            f"{point.predicted_s:.3e}, {simulated}, {point.wall_s:.1f} s")


def _row(point, width: int) -> str:
    simulated = f"{point.simulated_s:>10.3e}" if point.status == "ok" else f"{'failed':>10}"
    return (f"  {point.variant:<{width}}  {point.ranks:>5}  {point.predicted_s:>10.3e}  "
            f"{simulated}  {_error(point):>7}")


def simulation_table(points, platform: str) -> list[str]:
    """One block per (method, IVP, n): each variant's points by rank count; error is predicted /
    simulated - 1."""
    lines = []
    for key in dict.fromkeys((p.method, p.ivp, p.n) for p in points):
        mine = sorted((p for p in points if (p.method, p.ivp, p.n) == key),
                      key=lambda p: (p.variant, p.ranks))
        width = max(len("variant"), *(len(p.variant) for p in mine))
        lines += [f"{key[0]} {key[1]} n={key[2]} on {platform}: predicted (ECM compute and the "
                  "platform's exchanges) against SMPI's simulated step, s/step",
                  f"  {'variant':<{width}}  {'ranks':>5}  {'predicted':>10}  {'simulated':>10}  "
                  f"{'error':>7}"]
        lines += [_row(p, width) for p in mine]
    return lines


def agreement_lines(part: dict) -> list[str]:
    """The summary of one platform's part (smpi_agreement.agreement)."""
    def share(count: int, total: int) -> str:
        return f"{count} of {total}"

    lines = [f"step within 20% in {share(part['step_within_20'], part['step_compared'])} points"
             + (f" (median error {part['step_error_median']:.1%}, largest "
                f"{part['step_error_max']:.1%})" if part["step_compared"] else ""),
             f"communication within 20% in {share(part['comm_within_20'], part['comm_compared'])}"
             " points above one rank; the variant predicted fastest is SMPI's fastest at "
             f"{share(part['same_best'], part['best_compared'])} rank counts"]
    if part["failed"]:
        lines.append(f"{part['failed']} simulation(s) failed (see the table)")
    return lines
