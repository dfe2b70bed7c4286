"""Tuning strategies, spelled the same on the command line and in scenario files.

Each name's spelling is in FORMS, optionally followed by +sample:S (a share S of the measurements on
a space-filling sample).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

# each strategy's name and spelling: the one list that --help, the docs and the errors quote
# (strategies/registry keys its searches by these names; tests/commands/test_cli_docs holds the help
# and docs/cli.md to it)
FORMS = {"preselect": "preselect:P", "top_k": "top_k:K", "run_all": "run_all",
         "random": "random:K[:SEED]", "tpe": "tpe:K[:SEED]", "hybrid": "hybrid[:E]"}
SAMPLE_FORM = "+sample:S"       # after any of them
STRATEGIES = tuple(FORMS)
_GLOSSES = {"preselect": "percent", "hybrid": "E: the expected number of faster variants it "
            "stops below"}


def _spellings() -> str:
    forms = [FORMS[name] + (f" ({_GLOSSES[name]})" if name in _GLOSSES else "") for name in FORMS]
    return (f"{', '.join(forms[:-1])} or {forms[-1]}, each optionally followed by {SAMPLE_FORM} "
            "(the share S, 0 <= S < 1, of its measurements spent on a space-filling sample)")


SPELLINGS = _spellings()
# hybrid's stop: the Intel Xeon ground truth's own choice by `evaluate --constants` (the largest E
# within half a point of the ceiling there), scored on the AMD EPYC one at 20 seeds: 34.4 measured,
# 0.46 points behind the ceiling (docs/models.md#constants-out-of-sample)
HYBRID_STOP = 0.05
# the share of a default run's measurements on a space-filling sample: models trained on runs with
# this share order a left-out IVP far better and make hybrid measure far fewer variants there, for
# a few more measurements per configuration (`evaluate --sample-shares`; the comparison:
# docs/benchmarks.md#a-space-filling-share)
DEFAULT_SAMPLE = 0.25


@dataclass(frozen=True)
class Strategy:
    name: str = "preselect"
    deviation_percent: float = 5.0
    k: int = 0
    seed: int = 0
    stop: float = HYBRID_STOP       # hybrid: stop when fewer faster variants are expected
    sample: float = 0.0             # the share of measurements on a space-filling sample

    @property
    def spelling(self) -> str:
        return self._own_spelling + (f"+sample:{self.sample:g}" if self.sample else "")

    @property
    def _own_spelling(self) -> str:
        if self.name == "preselect":
            return f"preselect:{self.deviation_percent:g}"
        if self.name == "top_k":
            return f"top_k:{self.k}"
        if self.name in ("random", "tpe"):
            return f"{self.name}:{self.k}:{self.seed}"
        if self.name == "hybrid":
            return f"hybrid:{self.stop:g}"
        return self.name


def _count(text: str, what: str) -> int:
    if not text.isdigit() or int(text) < 1 or len(text) > 9:
        raise ValueError(f"{what} as a whole number >= 1 (got '{text}')")
    return int(text)


def parse_strategy(text: object) -> Strategy:
    """The strategy a spelling names; ValueError says what was expected."""
    if not isinstance(text, str):
        raise ValueError(f"a strategy {SPELLINGS}")
    own, plus, extra = text.strip().partition("+")
    strategy = _parse_own(own.strip(), text)
    if not plus:
        return strategy
    label, _, share = extra.strip().partition(":")
    try:
        value = float(share) if label == "sample" else math.nan
    except ValueError:
        value = math.nan
    if not 0 <= value < 1:
        raise ValueError(f"{SAMPLE_FORM} with S the share of measurements on a space-filling "
                         f"sample, 0 <= S < 1 (got '+{extra}')")
    return replace(strategy, sample=value)


def _parse_own(text: str, whole: str) -> Strategy:
    name, _, rest = text.partition(":")
    parts = rest.split(":") if rest else []
    if name == "run_all" and not parts:
        return Strategy("run_all")
    if name == "hybrid" and len(parts) <= 1:
        try:
            stop = float(parts[0]) if parts else HYBRID_STOP
        except ValueError:
            stop = math.nan
        if not 0 < stop <= 1000:
            raise ValueError(f"{FORMS['hybrid']} with E, the expected number of faster variants "
                             f"it stops below, a number above 0 (got '{parts[0]}')")
        return Strategy("hybrid", stop=stop)
    if name == "preselect" and len(parts) == 1:
        try:
            percent = float(parts[0])
        except ValueError:
            percent = math.nan
        if not 0 <= percent <= 1000:
            raise ValueError(f"{FORMS['preselect']} with P a percentage between 0 and 1000 (got "
                             f"'{parts[0]}')")
        return Strategy("preselect", percent)
    if name == "top_k" and len(parts) == 1:
        return Strategy("top_k", k=_count(parts[0], f"{FORMS['top_k']} with K"))
    if name in ("random", "tpe") and len(parts) in (1, 2):
        seed = int(parts[1]) if len(parts) == 2 and parts[1].isdigit() and len(parts[1]) < 10 \
            else None
        if len(parts) == 2 and seed is None:
            raise ValueError(f"{FORMS[name]} with SEED a whole number >= 0 (got '{parts[1]}')")
        return Strategy(name, k=_count(parts[0], f"{FORMS[name]} with K"), seed=seed or 0)
    raise ValueError(f"a strategy {SPELLINGS} (got '{whole}')")
