"""The tuning pipeline run in-process: its observer told each event in order, and its dry-run plan."""

from __future__ import annotations

import pytest

from tune_support import TUNE_SCENARIO
from hybridtune.describe.loader import load
from hybridtune.describe.strategy import parse_strategy
from hybridtune.measure.provenance import hardware_identity
from hybridtune.measure.runner import MeasureOptions
from hybridtune.pipeline.store_policy import open_store
from hybridtune.pipeline.tune_dry_run import dry_run_plan
from hybridtune.pipeline.tuning_observer import TuningObserver
from hybridtune.pipeline.tuning_run import TuneRequest, TuningSite, tune
from hybridtune.runtime.executors import InlineExecutor

pytestmark = pytest.mark.slow


class Recorder(TuningObserver):
    """Every event, in the order it came."""

    def __init__(self):
        self.events = []

    def phase(self, label, total):
        self.events.append(("phase", label, total))

    def analysed(self, job, results):
        self.events.append(("analysed",))

    def predicted(self, offline):
        self.events.append(("predicted", len(offline.rankings)))

    def planned(self, plan):
        self.events.append(("planned", len(plan.shortlisted)))

    def built(self, count):
        self.events.append(("built", count))

    def noted(self, text):
        self.events.append(("noted", text))

    def measured(self, plan, row):
        self.events.append(("measured", row["id"] if isinstance(row, dict) else row.id))


def request(strategy: str) -> TuneRequest:
    return TuneRequest(load(TUNE_SCENARIO, "scenario"), parse_strategy(strategy),
                       MeasureOptions(ci_target=0.05, budget_s=0.1))


def test_the_observer_is_told_each_event_in_the_order_its_class_gives(tune_store):
    recorder = Recorder()
    site = TuningSite(InlineExecutor(), 1, hardware_identity()["hardware_id"])
    with open_store(str(tune_store), request("top_k:2").scenario, "tune") as store:
        result = tune(request("top_k:2"), store, site, recorder)
    kinds = [event[0] for event in recorder.events]
    assert kinds.index("predicted") < kinds.index("planned") < kinds.index("built")
    assert ("predicted", 1) in recorder.events and ("planned", 2) in recorder.events
    assert ("phase", "builds", 2) in recorder.events
    assert sum(event[1] for event in recorder.events if event[0] == "built") == 2
    measuring = recorder.events.index(("phase", "measurements", 2))
    measured = [event[1] for event in recorder.events[measuring:] if event[0] == "measured"]
    [outcome] = result.outcomes
    assert set(measured) >= {p.id for p in outcome.plan.shortlisted}
    assert outcome.new == 2 and result.complete and "noted" not in kinds


def test_a_dry_run_plan_bounds_an_unpredicted_run_and_counts_a_predicted_one(tune_store,
                                                                             tmp_path):
    fresh = dry_run_plan(request("top_k:6+sample:0.25"), str(tmp_path / "none.h5"), 1, "host")
    assert fresh.analyses > 0 and not fresh.plans and not (tmp_path / "none.h5").exists()
    [bound] = fresh.unpredicted
    assert (bound.most, bound.pool) == (8, 32) and fresh.measurements == 8
    before = tune_store.read_bytes()
    known = dry_run_plan(request("top_k:6+sample:0.25"), str(tune_store), 2, "host")
    assert known.analyses == 0 and not known.unpredicted
    [plan] = known.plans
    assert plan.shortlist_words == "8 shortlisted (2 of them a space-filling sample)"
    assert known.measurements == len(plan.tasks) and known.nodes == 2
    assert known.total_s == known.analyses_s + known.build_s + known.measure_s
    assert tune_store.read_bytes() == before


def test_the_searches_measure_on_one_blas_thread(tune_store, monkeypatch):
    # run_searches is wrapped only to read the BLAS threads it runs under, then runs as it would
    from threadpoolctl import threadpool_info
    from hybridtune.pipeline import tuning_run
    seen = []

    def recorded(*args, **kwargs):
        seen.extend(info["num_threads"] for info in threadpool_info()
                    if info["user_api"] == "blas")
        return real(*args, **kwargs)

    real = tuning_run.run_searches
    monkeypatch.setattr(tuning_run, "run_searches", recorded)
    site = TuningSite(InlineExecutor(), 1, hardware_identity()["hardware_id"])
    with open_store(str(tune_store), request("hybrid").scenario, "tune") as store:
        result = tune(request("hybrid"), store, site)
    assert seen and set(seen) == {1}
    assert result.outcomes and all(outcome.new > 0 for outcome in result.outcomes)
