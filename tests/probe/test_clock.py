"""The effective clock: the native multiply chain really runs, and the plausibility band around the nominal clock."""

from __future__ import annotations

import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.probe.clock import (MULTIPLY_LATENCY_CYCLES, PLAUSIBLE, ClockMeasurement,
                                    choose_clock, measure_clock)
from hybridtune.probe.host_facts import read_host_facts


@pytest.fixture(scope="module")
def measured():
    return measure_clock(samples=5, min_seconds=0.01)


def test_the_chain_measures_a_clock_near_the_nominal_one(measured):
    nominal = read_host_facts().clock_hz
    assert len(measured.samples_hz) == 5 and measured.multiplies > 0 and measured.cpu >= 0
    assert min(measured.samples_hz) <= measured.clock_hz <= max(measured.samples_hz)
    assert PLAUSIBLE[0] * nominal <= measured.clock_hz <= PLAUSIBLE[1] * nominal


def test_the_effective_clock_is_chosen_when_plausible(measured):
    choice = choose_clock(2.0e9, "the model name", measured)
    if 1.0e9 <= measured.clock_hz <= 4.0e9:
        assert choice.effective_used and choice.clock_hz == measured.clock_hz
        assert "effective" in choice.note and "nominal 2 GHz" in choice.note
    assert choice.nominal_hz == 2.0e9


@pytest.mark.parametrize("effective", [0.4e9, 4.5e9])
def test_an_implausible_measurement_keeps_the_nominal_clock(effective):
    measurement = ClockMeasurement(effective, (effective,), 0, 1000)
    choice = choose_clock(2.0e9, "the model name", measurement)
    assert choice.clock_hz == 2.0e9 and not choice.effective_used
    assert "not used" in choice.note and f"{effective / 2.0e9:.2f}x" in choice.note


def test_a_failed_measurement_keeps_the_nominal_clock_and_says_why():
    choice = choose_clock(2.0e9, "the model name", HybridtuneError("no compiler"))
    assert choice.clock_hz == 2.0e9 and choice.effective_hz is None
    assert "no compiler" in choice.note


def test_bad_requests_are_refused():
    with pytest.raises(HybridtuneError, match="samples"):
        measure_clock(samples=0)


def test_the_latency_is_stated_in_the_program():
    from hybridtune.compiler.build import native_source
    source = native_source("ht_clock_bench.c")
    assert f"#define LATENCY_CYCLES {MULTIPLY_LATENCY_CYCLES}" in source
    assert '__asm__ volatile("" : "+r"(x))' in source
