"""The offline stage as text for predict and tune: summary, failures, corrected rankings, progress."""

from __future__ import annotations

from hybridtune.report.failures import failure_lines, group_failures
from hybridtune.report.ranking import configuration_title, unranked_why


def offline_failures(result) -> list:
    """The kerncraft analyses that failed, grouped by cause."""
    return group_failures(("/".join(part for part in names[0].split("/") if part), message)
                          for names, message in result.failed_loops)


def unranked_causes(rankings) -> list[tuple[str, str]]:
    """(configuration, why) of each ranking with no variant ranked."""
    whys = [(configuration_title(r.configuration), unranked_why(r.predictions)) for r in rankings]
    return [(title, why) for title, why in whys if why is not None]


def offline_summary(scenario, result) -> str:
    """The machine, the model, the analyses run and what failed."""
    lines = [f"machine {scenario.machine.name} ({scenario.machine_note}); model {scenario.model}; "
             f"{result.loops} distinct loops, {result.analyses} kerncraft analyses this run "
             f"(kerncraft {result.versions.get('kerncraft')}, OSACA {result.versions.get('osaca')}); "
             f"{result.new_rankings} of {len(result.rankings)} rankings new to the store",
             result.barrier_note]
    if result.target_note:
        lines.append(f"warning: {result.target_note}")
    failed = failure_lines(offline_failures(result), result.loops, "kerncraft analyses")
    if failed:
        lines += failed + ["the variants built from these loops are not ranked; the store and "
                           "--json hold every message"]
    return "\n".join(lines)


def corrected_lines(configuration, predictions, corrected: dict, head: int) -> list[str]:
    """A configuration's variants ordered by corrected time, with the offline prediction and the
    95% interval."""
    c = configuration
    items = sorted(corrected.values(), key=lambda item: item.corrected_s)
    layout = f"threads={c.threads}" + (f" ranks={c.ranks}" if c.ranks > 1 else "")
    lines = [f"{c.method.name} {c.ivp.name} n={c.n} {layout}: {len(items)} variants "
             f"by corrected time (95% interval; offline prediction; the time measured here, "
             f"where there is one, which the corrected time holds)"]
    for rank, item in enumerate(items[:head], start=1):
        measured = "" if item.measured_s is None else f"; measured {item.measured_s:.4e} s"
        lines.append(f"  {rank:3d}. {item.variant}  {item.corrected_s:.4e} s "
                     f"[{item.low_s:.3e}, {item.high_s:.3e}]  (offline {item.predicted_s:.4e} s"
                     f"{measured})")
    if len(items) > head:
        lines.append(f"  ... {len(items) - head} more")
    return lines


def analysis_note(job) -> str:
    """template/variant[/IVP]/part of a kerncraft analysis, for progress lines."""
    return "/".join(part for part in job.names[0].split("/") if part)
