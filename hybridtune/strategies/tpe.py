"""tpe:K[:SEED], the generic black-box baseline: Optuna's TPE, K distinct variants.

TPE chooses a skeleton and each of its templates' loop orders; it needs the optional extra
hybridtune[tpe].
"""

from __future__ import annotations

import math

from hybridtune.errors import RequestError
from hybridtune.strategies.protocol import Candidates, Search

EXTRA = "pip install 'hybridtune[tpe]' (Optuna)"
ATTEMPTS_PER_MEASUREMENT = 20   # proposals of variants already measured or not in the pool


def optuna_module():
    """Optuna, or a RequestError naming the extra that installs it."""
    try:
        import optuna           # optional: the tpe extra
    except ImportError:
        raise RequestError(f"the TPE baseline needs Optuna, which is not installed: {EXTRA}") \
            from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def search_space(candidates: Candidates) -> tuple[dict, dict]:
    """Per skeleton its templates in order with their loop orders, and (skeleton, kernel variants)
    -> candidate position."""
    space: dict = {}
    index: dict = {}
    for position, (variant, kernels) in enumerate(zip(candidates.ids, candidates.kernels)):
        skeleton = variant.split("_", 1)[0]
        index[(skeleton, tuple(kernels))] = position
        templates = space.setdefault(skeleton, {})
        for kernel in kernels:
            template, _, order = kernel.rpartition("_")
            templates.setdefault(template, set()).add(order)
    return {s: [(t, sorted(o)) for t, o in templates.items()] for s, templates in space.items()}, \
        index


class TpeSearch(Search):
    """Optuna's TPE choosing a skeleton and each of its templates' loop orders, up to `budget`
    distinct variants of its own (log time minimised; variants a sample measured and told it of
    are not counted); a proposal of a variant already measured is told its time again, one
    outside the pool fails."""

    def __init__(self, candidates: Candidates, budget: int, seed: int):
        optuna = optuna_module()
        self.optuna = optuna
        self.space, self.index = search_space(candidates)
        self.skeletons = sorted(self.space)
        self.budget = budget
        self.study = optuna.create_study(sampler=optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=max(2, budget // 3)))
        self.known: dict = {}           # position -> log time, or None for a failure
        self.picked: set = set()        # its own picks: what its budget counts (not a sample's)
        self.waiting: dict = {}         # position -> the trials that wait for its result
        self.attempts = 0
        self.ended_by = "" if self.index else "no candidate"

    def _tell(self, trial, value) -> None:
        if value is None:
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
        else:
            self.study.tell(trial, value)

    def ask(self, count: int) -> list[int]:
        picks: list[int] = []
        asked = len(self.picked)
        while (len(picks) < count and asked < self.budget
               and self.attempts < ATTEMPTS_PER_MEASUREMENT * self.budget):
            self.attempts += 1
            trial = self.study.ask()
            skeleton = trial.suggest_categorical("skeleton", self.skeletons)
            kernels = tuple(f"{template}_{trial.suggest_categorical(f'{skeleton}:{template}', orders)}"
                            for template, orders in self.space[skeleton])
            position = self.index.get((skeleton, kernels))
            if position is None:
                self._tell(trial, None)
            elif position in self.known:
                self._tell(trial, self.known[position])
            elif position in self.waiting:
                self.waiting[position].append(trial)
            else:
                self.waiting[position] = [trial]
                self.picked.add(position)
                picks.append(position)
                asked += 1
        self._ended()
        return picks

    def tell(self, position: int, seconds: float | None, ci_rel: float | None = None) -> None:
        value = math.log(seconds) if seconds is not None and seconds > 0 else None
        self.known[position] = value
        for trial in self.waiting.pop(position, []):
            self._tell(trial, value)
        self._ended()

    def _ended(self) -> None:
        if self.waiting or self.ended_by:
            return
        if len(self.picked) >= self.budget:
            self.ended_by = f"{self.budget} variants measured (TPE)"
        elif self.attempts >= ATTEMPTS_PER_MEASUREMENT * self.budget:
            self.ended_by = "TPE proposed nothing new"

    def most(self) -> int:
        return self.budget
