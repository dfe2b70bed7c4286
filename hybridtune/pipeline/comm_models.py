"""The communication models a prediction uses: this host's, from the store or measured.

Models missing from the store are measured on first use and stored with their benchmarks and
provenance.
"""

from __future__ import annotations

import json

from hybridtune.measure.comm_bench import comm_run, pingpong
from hybridtune.measure.microbench import barrier_samples
from hybridtune.measure.provenance import node_name
from hybridtune.measure.tasks import usable_cores
from hybridtune.predict.collectives import (BENCHMARKS, ExchangeModel, fit_exchange,
                                            protocol_switch)
from hybridtune.predict.hockney import fit_hockney
from hybridtune.predict.communication import (BARRIER_KIND, BarrierFit, benchmark_records,
                                              fit_barrier)
from hybridtune.predict.superstep import CommunicationModels

# message sizes of the on-demand exchange benchmarks, 8 B to 2 MiB (an allgather of 0 bytes returns at
# once), every third held out of the fit
EXCHANGE_SIZES = [8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288, 2097152]
EXCHANGE_RANKS = 2
# the ping-pong that locates the transport's protocol switch for the exchange fits, 8 B to 2 MiB
SWITCH_SIZES = [2 ** k for k in range(3, 22)]


def _stored(store, kinds) -> list[dict]:
    if store is None:
        return []
    fits = store.frame("comm_fits")
    return [] if fits.empty else [r for r in reversed(fits.to_dict("records"))
                                  if r["kind"] in kinds]


def barrier_fit(scenario, max_threads: int, store, measure: bool = True
                ) -> tuple[BarrierFit | None, str]:
    """The barrier cost of this machine (stored, else measured and stored); none for other
    machines, and none where it would have to be measured but measure is False."""
    if not scenario.on_host:
        return None, ("no barrier cost: the scenario's machine is a machine file, not `host` "
                      "(this machine, probed), so no barrier is measured; t_com counted as 0")
    host = node_name()
    for record in _stored(store, {BARRIER_KIND}):
        fit = BarrierFit.from_record(record)
        if fit.data.get("host") == host and max(fit.data.get("threads", [0])) >= max_threads:
            return fit, f"barrier cost from the store ({fit.note})"
    if not measure:
        return None, f"the barrier benchmark would run for 1..{max_threads} threads (about " \
                     f"{max_threads * 0.5:.0f} s)"
    samples = barrier_samples(max_threads)
    fit = fit_barrier(samples)
    fit = BarrierFit(fit.kind, fit.form, fit.a, fit.b, fit.cv_error, fit.validated, fit.note,
                     {**fit.data, "host": host})
    if store is not None:
        store.append_many("comm_benchmarks", benchmark_records(samples))
        store.append_many("comm_fits", [fit.as_record()])
    return fit, f"barrier cost measured ({fit.note})"


def _benchmark_rows(run, op: str) -> list[dict]:
    return [{"kind": op, "threads": 1, "ranks": run.ranks, "bytes": p.bytes,
             "median_s": p.median_s, "samples": list(p.samples_s),
             "provenance": json.dumps(run.provenance, sort_keys=True)} for p in run.points]


def exchange_models(scenario, store, measure: bool = True) -> tuple[dict, str]:
    """op -> ExchangeModel of this node's MPI ops at two ranks (stored, else measured and
    stored); none for machine files, where measuring would be needed and measure is False, or on
    fewer than two cores."""
    if not scenario.on_host:
        return {}, ("no exchange costs: the scenario's machine is a machine file, not `host`; "
                    "MPI exchanges counted as 0")
    host = node_name()
    models = {}
    for record in _stored(store, set(BENCHMARKS)):
        model = ExchangeModel.from_record(record)
        if model.provenance.get("nodes") == [host] and model.ranks >= EXCHANGE_RANKS:
            models.setdefault(model.op, model)
    todo = [op for op in BENCHMARKS if op not in models]
    if not todo:
        return models, "exchange costs from the store"
    if not measure or usable_cores() < EXCHANGE_RANKS:
        why = "a dry run measures nothing" if not measure else \
            f"this process may use {usable_cores()} core(s), the benchmarks need {EXCHANGE_RANKS}"
        return models, f"no cost for {', '.join(todo)} ({why}); counted as 0"
    switch = None
    if any(op != "mpi_barrier" for op in todo):
        probe = pingpong(SWITCH_SIZES, reps=9, target_s=0.005, ranks=EXCHANGE_RANKS)
        switch = protocol_switch(fit_hockney([(p.bytes, p.median_s) for p in probe.points]))
        if store is not None:
            store.append_many("comm_benchmarks", _benchmark_rows(probe, "pingpong"))
    for op in todo:
        sizes = [0] if op == "mpi_barrier" else EXCHANGE_SIZES
        run = comm_run(BENCHMARKS[op], sizes, reps=9, target_s=0.005, ranks=EXCHANGE_RANKS)
        models[op] = fit_exchange(op, run, switch)
        if store is not None:
            store.append_many("comm_benchmarks", _benchmark_rows(run, op))
            store.append_many("comm_fits", [models[op].as_record()])
    return models, f"exchange costs measured on {EXCHANGE_RANKS} ranks ({', '.join(todo)})"


def communication_models(scenario, configs: list, store, measure: bool = True
                         ) -> tuple[CommunicationModels, str]:
    """The models the configurations need: the barrier always, the MPI ops where a layout has
    more than one rank; and a note of where they came from."""
    fit, note = barrier_fit(scenario, max(c.threads for c in configs), store, measure)
    exchanges = {}
    if any(c.ranks > 1 for c in configs):
        exchanges, more = exchange_models(scenario, store, measure)
        note = f"{note}; {more}"
    return CommunicationModels(fit, exchanges), note
