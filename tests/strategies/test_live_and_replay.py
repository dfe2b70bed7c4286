"""Every strategy but hybrid runs live (tune, one worker) and replayed on the store that run wrote through the same search: the same order; a replay never reads a time the run did not measure."""

from __future__ import annotations

import shutil

import pytest

from hybridtune.describe.strategy import parse_strategy
from hybridtune.learn.table import joined_rows
from hybridtune.store import Store
from hybridtune.strategies import replay
from tune_support import BIN, TUNE_SCENARIO, predicted_store, run  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow
SPELLINGS = ["top_k:4", "preselect:3", "random:4:3", "tpe:5:1", "run_all"]


def rows_of(store):
    with Store.open(store, "r") as opened:
        measurements = opened.frame("measurements")
        rows = joined_rows(opened.frame("variant_predictions"), measurements)
    return rows, measurements


@pytest.fixture(scope="module")
def live(predicted_store, tmp_path_factory):    # noqa: F811
    """Per spelling, the store a live tune with that strategy wrote."""
    stores = {}
    for spelling in SPELLINGS:
        store = tmp_path_factory.mktemp("live") / "store.h5"
        shutil.copy(predicted_store, store)
        done = run([str(BIN / "hybridtune"), "tune", TUNE_SCENARIO, "--db", str(store),
                    "--strategy", spelling, "--budget", "0.05", "--head", "0"])
        assert done.returncode == 0, done.stderr
        stores[spelling] = store
    return stores


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_replay_measures_what_the_live_run_measured_in_its_order(live, spelling):
    rows, measurements = rows_of(live[spelling])
    alone = measurements[measurements["timing"] == "alone"]
    [pool] = replay.configuration_pools(rows)
    replayed = replay.run(pool, parse_strategy(spelling))
    assert [pool.frame["variant"].iloc[i] for i in replayed.order] == list(alone["id"])
    assert len(replayed.order) == {"top_k:4": 4, "random:4:3": 4, "tpe:5:1": 5, "run_all": 32}.get(
        spelling, len(replayed.order))


def test_a_replay_asking_for_what_was_never_measured_raises(live):
    rows, _ = rows_of(live["top_k:4"])
    [pool] = replay.configuration_pools(rows)
    with pytest.raises(replay.Unmeasured, match="never measured"):
        replay.run(pool, parse_strategy("top_k:5"))
    with pytest.raises(replay.Unmeasured):
        replay.run(pool, parse_strategy("random:4:4"))
