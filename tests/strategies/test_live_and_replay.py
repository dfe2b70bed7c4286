"""Every strategy runs live (tune, one worker) and replayed on the store that run wrote through the same search (hybrid with the prior it started from): the same order and the same choice; a replay never reads a time the run did not measure."""

from __future__ import annotations

import json
import shutil

import numpy as np
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



NOISY = ["hybrid", "tpe:5:1", "preselect:3"]


def noise_draw(pool, spelling) -> np.ndarray:
    """A fixed noise draw per pool row (log time): the machine's spread, and the second fastest
    variant the search measures without noise timed 25% faster than the fastest, so the race
    starts from another leader whatever the pool's own timings (TPE's few first trials are its
    seeded sample and may not move)."""
    draw = np.random.default_rng(7).normal(0.0, 0.03, len(pool.frame))
    calm = replayed_under(pool, spelling, np.zeros(len(pool.frame)))
    fastest, second = sorted(calm.order, key=lambda row: pool.times[row])[:2]
    draw[second] = np.log(pool.times[fastest] / pool.times[second]) - 0.25
    return draw


def replayed_under(pool, spelling, draw):
    errors = np.zeros((len(pool.frame), 2))
    errors[:, 0] = draw
    spec = parse_strategy(spelling)
    if spec.name == "hybrid":
        return replay.hybrid_together([pool], None, spec.stop, errors=[errors])[0]
    return replay.run(pool, spec, errors)


@pytest.fixture(scope="module")
def noisy_live(live, predicted_store, tmp_path_factory):
    """Per spelling: the replay under the fixed draw on the run_all store's pool, and the record
    of a live tune on a store holding the first timings that replay asked for, each moved by the
    draw (the live run is told them from the store as it asks)."""
    with Store.open(live["run_all"][0], "r") as opened:
        runs, measured = opened.frame("runs"), opened.frame("measurements")
    rows, _ = rows_of(live["run_all"][0])
    [pool] = replay.configuration_pools(rows)
    out = {}
    for spelling in NOISY:
        draw = noise_draw(pool, spelling)
        moved = dict(zip(pool.frame["variant"], np.exp(draw)))
        again = replayed_under(pool, spelling, draw)
        asked = set(pool.frame["variant"].iloc[list(again.order)])
        # A fake, stated: a machine cannot be made to draw given noise on demand, so the draw is
        # written into stored first timings, which a resumed run takes as it would its own.
        store = tmp_path_factory.mktemp("noisy_live") / "store.h5"
        shutil.copy(predicted_store, store)
        with Store.open(store, "a") as opened:
            opened.append_many("runs", runs.to_dict("records"))
            opened.append_many("measurements", [
                {**row, **{c: row[c] * moved[row["id"]] for c in ("median_s", "ci_low_s",
                                                                 "ci_high_s")}}
                for row in measured.to_dict("records")
                if row["timing"] == "alone" and row["id"] in asked])
        done = run([str(BIN / "hybridtune"), "tune", TUNE_SCENARIO, "--db", str(store),
                    "--strategy", spelling, "--budget", "0.05", "--head", "0", "--json"])
        assert done.returncode == 0, done.stderr
        [configuration] = json.loads(done.stdout)["configurations"]
        out[spelling] = pool, draw, again, configuration
    return out


@pytest.mark.parametrize("spelling", NOISY)
def test_under_a_fixed_noise_draw_the_live_run_measures_and_races_what_the_replay_did(
        noisy_live, spelling):
    pool, draw, again, configuration = noisy_live[spelling]
    # the live search asked for nothing the replay did not (else it had measured it now)
    assert configuration["measured_now"] == 0
    assert configuration["measured"] == len(again.order)
    variants = pool.frame["variant"]
    assert sorted(variants.iloc[list(again.retimed)]) == sorted(configuration["retimed"])
    # the draw mattered: without it the same search measures or races other variants
    calm = replayed_under(pool, spelling, np.zeros_like(draw))
    assert (calm.order, calm.retimed) != (again.order, again.retimed)
