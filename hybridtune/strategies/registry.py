"""Each strategy's name to its search, the object that runs live and in replay.

The spelling is parsed in describe, for scenario files and the CLI alike (describe.strategy.FORMS
spells each name).
"""

from __future__ import annotations

from hybridtune.describe.strategy import STRATEGIES, Strategy
from hybridtune.strategies import preselect, random_k, run_all, top_k
from hybridtune.strategies.protocol import Candidates, Planned, Search
from hybridtune.strategies.sample import Sampled, with_sample
from hybridtune.strategies.tpe import TpeSearch

PLANNED = {
    "preselect": lambda candidates, spec: preselect.search(candidates, spec.deviation_percent),
    "top_k": lambda candidates, spec: top_k.search(candidates, spec.k),
    "random": lambda candidates, spec: random_k.search(candidates, spec.k, spec.seed),
    "run_all": lambda candidates, spec: run_all.search(candidates),
}
ADAPTIVE = {            # searches whose next pick depends on what was measured
    "tpe": lambda candidates, spec: TpeSearch(candidates, spec.k, spec.seed),
}
BELIEF = ("hybrid",)    # adaptive searches over the store's belief: the pipeline builds them
assert set(PLANNED) | set(ADAPTIVE) | set(BELIEF) == set(STRATEGIES)     # == set(FORMS)


def search_for(spec: Strategy, candidates: Candidates) -> Search:
    """The search a strategy (any but one over the store's belief) runs over these candidates."""
    return sampled({**PLANNED, **ADAPTIVE}[spec.name](candidates, spec), candidates, spec.sample)


def sampled(search: Search, candidates: Candidates, share: float) -> Search:
    """The search with `share` of its measurements on a space-filling sample: a planned one's
    sample after its list, an adaptive one's taken as it goes (strategies/sample)."""
    if not share:
        return search
    if isinstance(search, Planned):
        return Planned(with_sample(candidates, search.order, share), search.why_ended)
    return Sampled(search, candidates, share)


def shortlist(spec: Strategy, predictions) -> list:
    """The predictions a strategy may measure, in its order: a planned strategy's list, every
    ranked variant for an adaptive one (its measurements decide how many run)."""
    candidates = Candidates.from_ranking(predictions)
    by_id = {p.id: p for p in predictions}
    if spec.name in PLANNED:
        order = search_for(spec, candidates).planned()
    else:
        order = range(len(candidates))
    return [by_id[candidates.ids[i]] for i in order]


def shortlist_search(spec: Strategy, candidates: Candidates) -> Search:
    """The search that measures a shortlist (candidates: shortlist(spec, ...) in its order): a
    planned strategy's list as it stands, an adaptive strategy's search over it."""
    if spec.name in PLANNED:
        return Planned(range(len(candidates)), spec.spelling)
    return search_for(spec, candidates)
