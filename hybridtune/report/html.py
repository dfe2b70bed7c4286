"""The report page as one self-contained HTML text.

The store's runs and hardware, the evaluation's tables and the figures by file name.
"""

from __future__ import annotations

import math
from html import escape

from hybridtune.strategies.transfer import LABELS, LEVEL

RUNS_SHOWN = 40
PREDICTORS = ("offline", "trivial", "linear", "gp", "gp_other_sizes")
STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1400px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.2em 0; font-size: 0.92em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; border: 1px solid #ddd; }
p.caption, p.missing { max-width: 60em; }
p.missing { color: #a33; }
"""


def _cell(value, numeric: bool = False) -> str:
    return f"<td class=\"num\">{escape(str(value))}</td>" if numeric else \
        f"<td>{escape(str(value))}</td>"


def _table(header: list, rows: list, numeric_from: int = 1) -> str:
    """An HTML table; columns from numeric_from on are right-aligned."""
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(v, i >= numeric_from) for i, v in enumerate(row))
                   + "</tr>\n" for row in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}</table>\n"


def _number(value: float, form: str) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, form)


def strategy_rows(strategies: dict) -> list:
    """The strategy table's rows, formatted as the text table of `hybridtune evaluate`."""
    rows = []
    for name, s in strategies.items():
        low, high = s["score_interval"]
        rows.append([name, f"{s['measured_mean']:.1f}", f"{s['loss_pct_max']:.1f}%",
                     f"{s['loss_pct_mean']:.2f}%", f"{100 * s['frac_loss_le_3pct']:.0f}%",
                     f"{s['overhead_pct_mean']:.1f}%", f"{round(s['gain_pct_mean'], 1) + 0.0:.1f}%",
                     f"{s['score']:.2f}", f"[{low:.2f}, {high:.2f}]"])
    return rows


def _evaluation(evaluation) -> str:
    strategies = evaluation.strategies
    configurations = next(iter(strategies.values()))["configurations"]
    noise = evaluation.noise
    parts = [f"<h2>Strategies</h2>\n<p>Replayed on {configurations} whole-pool configurations; "
             "each IVP's models were trained on the other IVPs; every timing drawn with "
             f"{escape(noise.get('source', 'no noise'))}, the mean over {noise.get('seeds', 1)} "
             "seeds. |L|: variants measured; loss: "
             "t_chosen / t_best − 1 by the stored times; overhead: "
             "(Σ t − |L| t_best) / (|L| t_best) over the variants measured; gain: time saved "
             "against measuring every variant; score: the methodology score against random "
             "search (1: the best found at once; 0: no better than random).</p>\n",
             _table(["strategy", "|L| mean", "loss max", "loss mean", "loss ≤ 3%", "overhead",
                     "gain", "score", "score 95% interval"], strategy_rows(strategies))]
    rows = []
    for ivp, a in evaluation.accuracy.items():
        rows.append([ivp, a["rows"], a["training_rows"]]
                    + [f"{_number(a[p]['median_rel_error'], '.3f')} / "
                       f"{_number(a[p]['kendall_tau'], '.2f')}" if p in a else "–"
                       for p in PREDICTORS])
    parts += ["<h2>Accuracy on the left-out IVP</h2>\n<p>Median relative error / mean Kendall "
              "tau over the IVP's configurations, of the offline prediction and of the "
              "corrections trained without the IVP; gp_other_sizes: the Gaussian process with "
              "the level of each configuration taken from the IVP's other configurations, as for "
              "a size or thread count never measured of an IVP that was.</p>\n",
              _table(["IVP", "rows", "training rows"] + list(PREDICTORS), rows)]
    shares = evaluation.first_pick
    parts.append("<h2>First pick</h2>\n<p>The first variant measured was within 5% of the best "
                 f"in {100 * shares.get('hybrid', 0):.0f}% of the configurations for hybrid, "
                 f"{100 * shares.get('offline_top1', 0):.0f}% for the offline top-1, and "
                 f"{100 * shares.get('random', 0):.0f}% for a random pick (expected).</p>\n")
    if evaluation.reliability:
        parts.append(_reliability(evaluation.reliability))
    if evaluation.transfer:
        parts.append(_transfer(evaluation))
    if evaluation.notes:
        parts.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in evaluation.notes)
                     + "</ul>\n")
    return "".join(parts)


def _reliability(table: dict) -> str:
    rows = [[f"{b['low']:.1f}–{b['high']:.1f}", f"{b['chance']:.2f}", f"{b['observed']:.2f}",
             b["decisions"]] for b in table["bins"]]
    return ("<h2>Hybrid's chances</h2>\n<p>At each stop decision, hybrid's chance of "
            f"{escape(table['event'])}, against how often it held ({table['decisions']} decisions; "
            f"Brier skill {table['brier_skill']:.3f} against a constant chance).</p>\n"
            + _table(["chance", "said", "observed", "decisions"], rows))


def _transfer(evaluation) -> str:
    found = evaluation.transfer
    rows = [[label, f"{100 * found[name]['first_within_5pct']:.0f}%",
             f"{found[name]['to_within_3pct_mean']:.1f}", found[name]["configurations"]]
            for name, label in LABELS.items() if name in found]
    to_best = evaluation.hybrid_to_best
    if to_best.get("reached"):
        rows.append(["hybrid (its own order, a stop that knew the best)",
                     f"{100 * evaluation.first_pick.get('hybrid', 0):.0f}%",
                     f"{to_best['mean']:.1f}", to_best["reached"]])
    return ("<h2>What other configurations tell</h2>\n<p>Orders of a left-out IVP's variants "
            "taken from other configurations' measured times (the other IVPs' at the same thread "
            "count and nearest n; the IVP's own at its nearest other n), as a model that "
            "reproduced those times exactly would order them, beside hybrid's. The "
            f"{escape(LEVEL)} in {100 * found['level_outside_other_ivps']:.0f}% of the "
            f"{found['configurations']} configurations.</p>\n"
            + _table(["order", "first pick within 5%", "measurements to within 3% (mean)",
                      "configurations"], rows))


def _hardware(hardware: list) -> str:
    rows = []
    for item in hardware:
        caches = ", ".join(f"L{c[0]} {c[1].lower()} {c[2]}" for c in item.get("caches") or []
                           if isinstance(c, (list, tuple)) and len(c) == 3)
        rows.append([item["hardware_id"], item.get("model", ""), item.get("vendor", ""),
                     caches, item["measurements"]])
    return _table(["hardware id", "model", "vendor", "caches", "measurements"], rows,
                  numeric_from=4)


def _regimes(regimes: dict) -> str:
    name = regimes.get("machine_file") or "unnamed"
    rows = [[level, r["rows"], _number(r["median_rel_error"], ".3f"),
             _number(r["median_ratio"], ".2f")] for level, r in regimes["regimes"].items()]
    return (f"<h2>Offline model per size regime</h2>\n<p>Machine file "
            f"{escape(regimes['machine_sha256'][:12])} ({escape(name)}); the regime is the "
            "cache level one step's working set fits in.</p>\n"
            + _table(["regime", "measured variants", "median relative error",
                      "median predicted / measured"], rows))


def _production(production: list) -> str:
    rows = [[r["variant"], f"{r['method']} / {r['ivp']}", r["n"], f"{r['ranks']} x {r['threads']}",
             r["steps"], _number(r["median_s"], ".4e"), _number(r["tuned_s"], ".4e"),
             _number(r["ratio"], ".3f"), r["node"]] for r in production]
    return ("<h2>Production runs</h2>\n<p>Timed by tuned libraries during their users' runs "
            "(<code>store import</code>), beside the tuning's first timing of the same variant "
            "and configuration; training, predictions and exports take each as one more pass of "
            "its first timings.</p>\n"
            + _table(["variant", "method / IVP", "n", "ranks x threads", "steps",
                      "production s/step", "tuning s/step", "production / tuning", "node"], rows,
                     numeric_from=2))


def page(store: str, runs: list, hardware: list, counts: list, evaluation,
         evaluation_missing: str | None, plots: list, missing: list, notes: list,
         regimes: dict | None = None, production: list | None = None) -> str:
    """The page text. runs: dicts with command, host, started_at; hardware: dicts with
    hardware_id, model, vendor, caches, measurements; counts: dicts with status, timing, count;
    evaluation: an Evaluation or None with evaluation_missing saying why; plots: Plot records
    (their files beside the page); missing: Missing records; notes: sentences; regimes: the
    offline model's errors per size regime (machine_sha256, machine_file, regimes); production:
    the production measurements (report_page.production_runs)."""
    parts = ["<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
             f"<title>hybridtune report: {escape(store)}</title>\n<style>{STYLE}</style>\n",
             "</head>\n<body>\n",
             f"<h1>hybridtune report: {escape(store)}</h1>\n",
             f"<h2>Runs</h2>\n<p>{len(runs)} run(s) wrote this store.</p>\n",
             _table(["command", "host", "started at"],
                    [[r["command"], r["host"], r["started_at"]] for r in runs[:RUNS_SHOWN]],
                    numeric_from=3)]
    if len(runs) > RUNS_SHOWN:
        parts.append(f"<p>… and {len(runs) - RUNS_SHOWN} more runs.</p>\n")
    parts.append("<h2>Hardware and measurements</h2>\n")
    parts.append(_hardware(hardware) if hardware else "<p>No measurements.</p>\n")
    if counts:
        parts.append(_table(["status", "timing", "measurements"],
                            [[c["status"], c["timing"], c["count"]] for c in counts],
                            numeric_from=2))
    if notes:
        parts.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>\n")
    if production:
        parts.append(_production(production))
    if evaluation is not None:
        parts.append(_evaluation(evaluation))
    else:
        parts.append("<h2>Strategies and accuracy</h2>\n<p class=\"missing\">Not evaluated: "
                     f"{escape(evaluation_missing or 'no evaluation')}.</p>\n")
    if regimes and regimes.get("regimes"):
        parts.append(_regimes(regimes))
    for plot in plots:
        parts.append(f"<h2>{escape(plot.title)}</h2>\n"
                     f"<img src=\"{escape(plot.file)}\" alt=\"{escape(plot.title)}\">\n"
                     f"<p class=\"caption\">{escape(plot.caption)}</p>\n")
    for item in missing:
        parts.append(f"<h2>{escape(item.title)}</h2>\n<p class=\"missing\">Not drawn: "
                     f"{escape(item.reason)}.</p>\n")
    parts.append("</body>\n</html>\n")
    return "".join(parts)
