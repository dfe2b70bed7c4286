"""A store's first timings: each variant's first ok timing alone, re-timings and failures left out."""

from hybridtune.pipeline.first_timings import first_timings
from hybridtune.store import Store
from learn_support import FIXTURE


def test_first_timings_take_each_variants_first_ok_timing_alone():
    with Store.open(FIXTURE, "r") as store:
        frame = store.frame("measurements")
    found = first_timings(FIXTURE)
    ok = frame[(frame["status"] == "ok") & (frame["timing"] == "alone")]
    assert set(found) == set(ok["ivp"])
    for ivp, times in found.items():
        mine = ok[ok["ivp"] == ivp]
        assert set(times) == set(mine["id"])
        first = mine.drop_duplicates("id")
        assert times == dict(zip(first["id"], first["median_s"].astype(float)))
