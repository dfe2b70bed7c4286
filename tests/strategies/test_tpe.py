"""The TPE strategy: its search space is the pool's skeletons and loop orders, it measures distinct variants up to its budget, and a missing Optuna is refused with the extra named."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.strategies.leave_one_out import whole_pools
from hybridtune.learn.table import joined_rows
from hybridtune.describe.strategy import Strategy
from hybridtune.strategies import replay
from hybridtune.strategies.tpe import search_space
from hybridtune.store import Store

FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"


@pytest.fixture(scope="module")
def pool():
    with Store.open(FIXTURE, "r") as store:
        rows = joined_rows(store.frame("variant_predictions"), store.frame("measurements"))
    return whole_pools(rows)[0]


def test_the_search_space_covers_every_variant_of_the_pool(pool):
    space, index = search_space(replay.candidates(pool)[0])
    assert set(space) == {"F"} and len(index) == len(pool.frame) == 32
    combinations = 1
    for _, orders in space["F"]:
        combinations *= len(orders)
    assert combinations == 32          # skeleton F's pool is the full product of its loop orders


def test_tpe_measures_distinct_variants_up_to_its_budget_and_chooses_the_best_of_them(pool):
    def tpe(seed):      # the stored times as first timings and as re-timings
        return replay.run(pool, Strategy("tpe", k=8, seed=seed), np.zeros((len(pool.frame), 2)))

    for seed in range(3):
        result = tpe(seed)
        assert len(result.order) == len(set(result.order)) == 8
        times = pool.times
        assert times[result.chosen] == min(times[i] for i in result.order)
    assert tpe(1).order == tpe(1).order          # seeded


def test_evaluate_with_tpe_refuses_a_missing_optuna_naming_the_extra(tmp_path):
    # Optuna is installed for the tests: its absence is made by blocking the import in the child
    # (the one fault here that cannot be produced otherwise)
    store = tmp_path / "store.h5"
    shutil.copy(FIXTURE, store)
    before = store.read_bytes()
    code = ("import sys; sys.modules['optuna'] = None; from hybridtune.commands.main import main; "
            f"sys.exit(main(['evaluate', '--db', {str(store)!r}, '--tpe']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "hybridtune[tpe]" in done.stderr and done.stderr.count("error:") == 1
    assert store.read_bytes() == before
