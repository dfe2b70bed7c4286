"""Every strategy runs live (tune, one worker) and replayed on the store that run wrote through the same search (hybrid with the prior it started from): the same order and the same choice; a replay never reads a time the run did not measure."""

from __future__ import annotations

import json
import shutil

import pytest

from hybridtune.describe.strategy import parse_strategy
from hybridtune.learn.table import joined_rows
from hybridtune.store import Store
from hybridtune.strategies import replay
from tune_support import BIN, TUNE_SCENARIO, run

pytestmark = pytest.mark.slow
SPELLINGS = ["top_k:4", "preselect:3", "random:4:3", "tpe:5:1", "run_all", "hybrid",
             "top_k:3+sample:0.5", "hybrid+sample:0.3"]


def rows_of(store):
    with Store.open(store, "r") as opened:
        measurements = opened.frame("measurements")
        rows = joined_rows(opened.frame("variant_predictions"), measurements)
    return rows, measurements


@pytest.fixture(scope="module")
def live(predicted_store, tmp_path_factory):
    """Per spelling, the store a live tune with that strategy wrote and the variant it chose."""
    stores = {}
    for spelling in SPELLINGS:
        store = tmp_path_factory.mktemp("live") / "store.h5"
        shutil.copy(predicted_store, store)
        done = run([str(BIN / "hybridtune"), "tune", TUNE_SCENARIO, "--db", str(store),
                    "--strategy", spelling, "--budget", "0.05", "--head", "0", "--json"])
        assert done.returncode == 0, done.stderr
        [configuration] = json.loads(done.stdout)["configurations"]
        stores[spelling] = store, configuration["chosen"]["id"]
    return stores


def replayed(pool, spelling):
    spec = parse_strategy(spelling)
    if spec.name == "hybrid":       # the store holds no model: the prior is the offline model's
        return replay.hybrid(pool, None, spec.stop, sample=spec.sample)
    return replay.run(pool, spec)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_replay_measures_and_chooses_what_the_live_run_did(live, spelling):
    store, chosen = live[spelling]
    rows, measurements = rows_of(store)
    alone = measurements[measurements["timing"] == "alone"]
    [pool] = replay.configuration_pools(rows)
    again = replayed(pool, spelling)
    assert [pool.frame["variant"].iloc[i] for i in again.order] == list(alone["id"])
    assert len(again.order) == {"top_k:4": 4, "random:4:3": 4, "tpe:5:1": 5, "run_all": 32,
                                "top_k:3+sample:0.5": 6}.get(spelling, len(again.order))
    assert pool.frame["variant"].iloc[again.chosen] == chosen
    # the contenders the replay re-times are the ones the live run re-timed
    retimed = measurements[measurements["timing"] == "interleaved"]["id"]
    assert sorted(pool.frame["variant"].iloc[list(again.retimed)]) == sorted(retimed)


def test_a_replay_asking_for_what_was_never_measured_raises(live):
    rows, _ = rows_of(live["top_k:4"][0])
    [pool] = replay.configuration_pools(rows)
    with pytest.raises(replay.Unmeasured, match="never measured"):
        replay.run(pool, parse_strategy("top_k:5"))
    with pytest.raises(replay.Unmeasured):
        replay.run(pool, parse_strategy("random:4:4"))
