"""Tuning's outcome as text and JSON: per configuration the variant chosen from the shortlist.

The shortlist is what was measured.
"""

from __future__ import annotations

import math

from hybridtune.measure.load import BUSY_SHARE, WIDE_LIMIT, row_doubts
from hybridtune.report.failures import every_failed, group_failures
from hybridtune.report.ranking import configuration_title, unranked_why

WIDE = 0.02     # intervals at most this wide (relative) call overlapping variants equal


def where_measured(row: dict) -> str:
    """IVP, n and layout of a measurement row: 'Cusp n=300 t=2', 'Cusp n=300 p=2 t=1'."""
    layout = f"p={row['ranks']} t={row['threads']}" if row["ranks"] > 1 else f"t={row['threads']}"
    return f"{row['ivp']} n={row['n']} {layout}"


def measured_note(row: dict) -> str:
    """A measurement in a few words, for progress lines."""
    where = where_measured(row)
    if row["status"] == "ok":
        doubted = " (busy)" if any(why.startswith("busy") for why in row_doubts(row)) else \
            " (wide)" if row_doubts(row) else ""
        return f"{where}: {row['median_s']:.3e} s/step {row['id']}{doubted}"
    return f"{where}: {row['status']} {row['id']}"


def plan_line(plan, strategy: str = "") -> str:
    if strategy.startswith("hybrid"):
        return (f"  {len(plan.shortlisted)} candidates ({strategy}): {len(plan.reused)} from the "
                f"store; the rest measured in order of expected improvement until fewer than "
                f"the stop's count are expected 3% faster than the best held")
    return (f"  {plan.shortlist_words}: {len(plan.reused)} from the store, "
            f"{len(plan.tasks)} to measure")


def chosen_line(outcome, strategy: str) -> tuple[str, dict]:
    """The chosen variant (failed ones never chosen) of one configuration, as a line and a record."""
    plan = outcome.plan
    config = plan.configuration
    failed = [(p.id, outcome.rows[p.id]["status"]) for p in plan.shortlisted
              if p.id in outcome.rows and outcome.rows[p.id]["status"] != "ok"]
    measured = sum(p.id in outcome.rows for p in plan.shortlisted)
    record = {"method": config.method.name, "ivp": config.ivp.name, "n": config.n,
              "threads": config.threads, "ranks": config.ranks, "strategy": strategy,
              "pool": plan.pool,
              "shortlisted": [p.id for p in plan.shortlisted], "measured": measured,
              "measured_now": outcome.new, "failed": failed,
              "not_measured": list(outcome.not_measured), "retimed": sorted(outcome.retimed),
              "chosen": None, "ended_by": outcome.ended_by,
              "not_raced": outcome.not_raced, "unreliable": None}
    left = (f"; {len(outcome.not_measured)} not measured (time limit)"
            if outcome.not_measured else "")
    chosen = outcome.chosen()
    if chosen is None:
        return f"  no shortlisted variant measured ok ({len(failed)} failed){left}", record
    best, row = chosen
    record["chosen"] = {"id": best.id, "measured_s": row["median_s"],
                        "predicted_s": best.predicted_s, "predicted_rank": best.rank}
    notes = [f"{len(failed)} failed"] if failed else []
    if outcome.not_raced:
        notes.append(f"not raced: {outcome.not_raced}" + (
            " (the store's earlier round kept)" if outcome.retimed else ""))
    elif outcome.retimed:
        notes.append(f"raced in interleaved rounds against {len(outcome.retimed) - 1}")
    if outcome.ended_by:
        notes.append(f"stopped: {outcome.ended_by}")
    tied = outcome.tied(best.id)
    if tied:
        notes.append(f"{len(tied)} other{'s' if len(tied) > 1 else ''} within "
                     f"{100 * max(tied.values()):.1f}% not told apart from it"
                     + (": a larger --budget tells them apart"
                        if (row.get("ci_rel") or 0) > WIDE else ""))
    record["tied"] = [{"id": i, "gap": g} for i, g in tied.items()]
    hardware = row.get("hardware")
    record["chosen"]["load"] = hardware.get("load") if isinstance(hardware, dict) else None
    record["chosen"]["doubts"] = row_doubts(row)
    record["unreliable"] = unreliable(outcome, best.id)
    note = "".join(f", {n}" for n in notes)
    return (f"  chosen: {best.id}: measured {row['median_s']:.4e} s/step "
            f"{plus_minus(row.get('ci_rel'))} (predicted {best.predicted_s:.4e}, "
            f"rank {best.rank}); {measured} of {len(plan.shortlisted)} shortlisted measured, "
            f"{outcome.new} new{note}{left}{unreliable_words(record['unreliable'])}", record)


def plus_minus(ci_rel: float | None) -> str:
    """A timing's interval as the lines print it ("+-2.1%"), or that it has none: a timing cut
    short (measure/repetitions) has too few repetitions for one."""
    if ci_rel is None or not math.isfinite(ci_rel):
        return "with no interval (too few repetitions)"
    return f"+-{100 * ci_rel:.1f}%"


def unreliable(outcome, chosen_id: str) -> dict | None:
    """The doubtful timings (measure/load: taken on a busy host, or too wide an interval) among
    those the choice was made from (the ok first timings of the shortlist and the re-timings),
    with why and the load each was taken under; None where every one is sound."""
    timed = [row for p in outcome.plan.shortlisted
             if (row := outcome.rows.get(p.id)) is not None and row.get("status") == "ok"]
    timed += [row for row in outcome.retimed.values() if row.get("status") == "ok"]
    doubtful = []
    for row in timed:
        why = row_doubts(row)
        if why:
            hardware = row.get("hardware")
            doubtful.append({"id": row.get("id"), "timing": row.get("timing"), "why": why,
                             "load": hardware.get("load") if isinstance(hardware, dict)
                             else None})
    if not doubtful:
        return None
    mine = [item for item in doubtful if item["id"] == chosen_id]
    return {"timings": len(doubtful), "of": len(timed),
            "busy": any(why.startswith("busy") for item in doubtful for why in item["why"]),
            "chosen": mine[0]["why"] if mine else [], "doubtful": doubtful}


def unreliable_words(found: dict | None) -> str:
    """The end of a chosen line whose configuration has doubtful timings: how many, and why
    (the chosen timing's reasons, else the first doubtful one's)."""
    if not found:
        return ""
    first = found["doubtful"][0]
    why = f"the chosen one: {'; '.join(found['chosen'])}" if found["chosen"] else \
        f"{first['id']}: {'; '.join(first['why'])}"
    where = "on a busy machine" if found["busy"] else "with too wide an interval"
    return (f"; UNRELIABLE: {found['timings']} of {found['of']} timings taken {where} ({why}); "
            "the choice means little")


def unreliable_summary(records: list[dict]) -> str | None:
    """The closing count of configurations whose choice rests on doubtful timings."""
    busy = sum(1 for r in records if r.get("unreliable") and r["unreliable"]["busy"])
    wide = sum(1 for r in records if r.get("unreliable") and not r["unreliable"]["busy"])
    if not busy and not wide:
        return None
    parts = ([f"{busy} of {len(records)} configurations measured on a busy machine (others "
              f"took at least {100 * BUSY_SHARE:.0f}% of the cores a timing needs)"]
             if busy else [])
    if wide:
        parts.append(f"{wide}{' more' if busy else f' of {len(records)} configurations'} "
                     f"with timings whose interval is wider than +-{100 * WIDE_LIMIT:.0f}%")
    return ("warning: " + ", ".join(parts) + ": their choices and the thread and layout notes "
            "on them are unreliable; measure them again on a quiet machine (tune --fresh)")


def load_json(records: list[dict]) -> dict:
    """The --json summary of doubtful configurations, with the limits that made them so."""
    return {"busy_share": BUSY_SHARE, "wide_limit": WIDE_LIMIT, "configurations": len(records),
            "busy": sum(1 for r in records if r.get("unreliable") and r["unreliable"]["busy"]),
            "unreliable": sum(1 for r in records if r.get("unreliable"))}


def thread_notes(records: list[dict]) -> list[str]:
    """Configurations where fewer threads (on as many ranks) measured faster than more."""
    by_case: dict = {}
    for record in records:
        if record["chosen"] is not None:
            key = (record["method"], record["ivp"], record["n"], record["ranks"])
            by_case.setdefault(key, []).append(
                (record["threads"], {**record["chosen"], "unreliable": record.get("unreliable")}))
    notes = []
    for (method, ivp, n, _), chosen in sorted(by_case.items()):
        chosen.sort(key=lambda pair: pair[0])
        for (few, a), (many, b) in zip(chosen, chosen[1:]):
            if a["measured_s"] < b["measured_s"]:
                predicted = a["predicted_s"] / b["predicted_s"]
                doubted = [t for t, record in ((few, a), (many, b)) if record.get("unreliable")]
                notes.append(f"note: {method} {ivp} n={n}: the best {few}-thread variant measured "
                             f"{b['measured_s'] / a['measured_s']:.2f}x faster than the best "
                             f"{many}-thread one, which was predicted {predicted:.2f}x faster: "
                             + (f"UNRELIABLE, the {' and '.join(f'{t}-thread' for t in doubted)} "
                                "timings were taken on a busy machine or are too wide; measure "
                                "again before using fewer threads" if doubted else
                                f"use {few} thread(s) here"))
    return notes


def layout_lines(records: list[dict]) -> list[str]:
    """Per method, IVP and n measured in more than one layout (ranks x threads), the fastest
    layout's choice and how much longer the others' take."""
    by_case: dict = {}
    for record in records:
        if record["chosen"] is not None:
            by_case.setdefault((record["method"], record["ivp"], record["n"]), []).append(record)
    lines = []
    for (method, ivp, n), mine in sorted(by_case.items()):
        if len(mine) < 2:
            continue
        mine.sort(key=lambda r: r["chosen"]["measured_s"])
        best = mine[0]
        fastest = best["chosen"]["measured_s"]
        others = ", ".join(f"{r['ranks']}x{r['threads']} {r['chosen']['measured_s'] / fastest:.2f}x"
                           for r in mine[1:])
        doubted = [f"{r['ranks']}x{r['threads']}" for r in mine if r.get("unreliable")]
        lines.append(f"{method} {ivp} n={n}: fastest layout {best['ranks']} rank(s) x "
                     f"{best['threads']} thread(s): {best['chosen']['id']} "
                     f"({best['chosen']['measured_s']:.4e} s/step); the others take: {others}"
                     + (f"; UNRELIABLE: the timings of {', '.join(doubted)} were taken on a busy "
                        "machine or are too wide" if doubted else ""))
    return lines


def _failures(outcome) -> list[tuple[str, str]]:
    """(id, 'status: message') of each shortlisted variant whose measurement failed."""
    return [(p.id, f"{row['status']}: {row.get('message') or ''}")
            for p in outcome.plan.shortlisted
            if (row := outcome.rows.get(p.id)) is not None and row["status"] != "ok"]


def measurement_failures(outcomes) -> tuple[list, int]:
    """The failed measurements of the shortlists, grouped by cause, and how many were measured."""
    measured = sum(p.id in outcome.rows for outcome in outcomes for p in outcome.plan.shortlisted)
    return group_failures(f for outcome in outcomes for f in _failures(outcome)), measured


def without_choice(outcomes) -> list[tuple[str, str]]:
    """(configuration, why) of each configuration that ended without a measured choice; one that
    the time limit left unfinished has not ended (rerun to continue)."""
    ended = []
    for outcome in outcomes:
        if outcome.chosen() is not None or outcome.not_measured:
            continue
        plan, failed = outcome.plan, _failures(outcome)
        if not plan.shortlisted:
            why = unranked_why(plan.ranking) or "an empty shortlist"
        else:
            why = every_failed(failed, "shortlisted variant")
        ended.append((configuration_title(plan.configuration), why))
    return ended
