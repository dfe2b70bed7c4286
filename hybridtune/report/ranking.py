"""Rankings as text lines and JSON objects: the head of each configuration's ranking and its shortlist."""

from __future__ import annotations

from hybridtune.predict.variants import VariantPrediction, as_json
from hybridtune.report.failures import every_failed, group_failures


def configuration_title(config) -> str:
    ranks = f" ranks={config.ranks}" if config.ranks > 1 else ""
    return f"{config.method.name} {config.ivp.name} n={config.n}{ranks} threads={config.threads}"


def ranking_lines(config, ranking: list[VariantPrediction], shortlisted: list, head: int) -> list[str]:
    ok = [p for p in ranking if p.status == "ok"]
    failed = [p for p in ranking if p.status != "ok"]
    lines = [f"{configuration_title(config)}: {len(ok)} ranked, {len(failed)} failed, "
             f"{len(shortlisted)} shortlisted"]
    if ok:
        best = ok[0].predicted_s
        if head > 0:
            lines.append(f"  {'rank':>4}  {'predicted s/step':>16}  {'t_com':>9}  {'vs best':>7}  "
                         "variant")
        for p in ok[:head]:
            lines.append(f"  {p.rank:>4}  {p.predicted_s:>16.4e}  {p.t_com_s:>9.2e}  "
                         f"{100 * (p.predicted_s / best - 1):>6.1f}%  {p.id}")
        if len(ok) > head:
            lines.append(f"  ... {len(ok) - head} {'more' if head else 'predicted'}; best "
                         f"{best:.4e} s, worst {ok[-1].predicted_s:.4e} s "
                         f"({ok[-1].predicted_s / best:.2f}x the best)")
    lines += [f"  not ranked: {group.count}: {group.cause} (first: {group.names[0]})"
              for group in group_failures((p.id, p.message) for p in failed)]
    return lines


def ranking_json(ranking: list[VariantPrediction], shortlisted: list) -> list[dict]:
    chosen = {p.id for p in shortlisted}
    out = []
    for p in ranking:
        data = as_json(p)
        data["shortlisted"] = p.id in chosen
        out.append(data)
    return out


def unranked_why(predictions) -> str | None:
    """Why a configuration has no ranked variant (its variants' most frequent failure), or None
    where one is ranked."""
    if any(p.status == "ok" for p in predictions):
        return None
    return every_failed(((p.id, p.message) for p in predictions), "variant")
