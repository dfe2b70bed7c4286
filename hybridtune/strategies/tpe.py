"""The generic black-box baseline: Optuna's TPE choosing a skeleton and each of its templates' loop orders, replayed on a measured pool at a given budget (the optional extra hybridtune[tpe])."""

from __future__ import annotations

import math

from hybridtune.errors import RequestError
from hybridtune.learn.encode import kernel_variants
from hybridtune.strategies.replay import Pool, Replay

EXTRA = "pip install 'hybridtune[tpe]' (Optuna)"
ATTEMPTS_PER_MEASUREMENT = 20   # proposals of variants already measured or not in the pool


def optuna_module():
    """Optuna, or a RequestError naming the extra that installs it."""
    try:
        import optuna
    except ImportError:
        raise RequestError(f"the TPE baseline needs Optuna, which is not installed: {EXTRA}") \
            from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def search_space(pool: Pool) -> tuple[dict, dict]:
    """Per skeleton its templates in order with their loop orders, and (skeleton, kernel variants)
    -> row position in the pool."""
    space: dict = {}
    index: dict = {}
    for position, (variant, features) in enumerate(zip(pool.frame["variant"],
                                                       pool.frame["features"])):
        skeleton = variant.split("_", 1)[0]
        kernels = tuple(kernel_variants(variant, features))
        index[(skeleton, kernels)] = position
        templates = space.setdefault(skeleton, {})
        for kernel in kernels:
            template, _, order = kernel.rpartition("_")
            templates.setdefault(template, set()).add(order)
    return {s: [(t, sorted(o)) for t, o in templates.items()] for s, templates in space.items()}, \
        index


def tpe(pool: Pool, budget: int, seed: int) -> Replay:
    """Up to budget distinct variants in the order TPE proposes them (log time minimised)."""
    optuna = optuna_module()
    space, index = search_space(pool)
    skeletons = sorted(space)
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(2, budget // 3))
    study = optuna.create_study(sampler=sampler)
    times = pool.times
    order: list[int] = []
    attempts = 0
    while len(order) < budget and attempts < ATTEMPTS_PER_MEASUREMENT * budget:
        attempts += 1
        trial = study.ask()
        skeleton = trial.suggest_categorical("skeleton", skeletons)
        kernels = tuple(f"{template}_{trial.suggest_categorical(f'{skeleton}:{template}', orders)}"
                        for template, orders in space[skeleton])
        position = index.get((skeleton, kernels))
        if position is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            continue
        if position not in order:
            order.append(position)
        study.tell(trial, math.log(times[position]))
    return Replay(tuple(order), min(order, key=lambda i: times[i]))
