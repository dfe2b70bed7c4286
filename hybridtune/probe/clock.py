"""The effective core clock: a dependent integer-multiply chain timed natively, against nominal."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hybridtune.compiler.build import native_source
from hybridtune.compiler.programs import build_program, run_json
from hybridtune.errors import HybridtuneError

CLOCK_PROGRAM = "ht_clock_bench"
MULTIPLY_LATENCY_CYCLES = 3     # 64-bit imul on every current x86 core; the program assumes the same
PLAUSIBLE = (0.5, 2.0)          # effective / nominal outside this band: the measurement is not trusted


@dataclass(frozen=True)
class ClockMeasurement:
    """The clock a pinned core ran a dependent multiply chain at: the median and every sample."""
    clock_hz: float
    samples_hz: tuple
    cpu: int
    multiplies: int


@dataclass(frozen=True)
class ClockChoice:
    """The clock a machine file gets, the nominal one beside it, and why."""
    clock_hz: float
    nominal_hz: float
    effective_hz: float | None
    note: str

    @property
    def effective_used(self) -> bool:
        return self.effective_hz is not None and self.clock_hz == self.effective_hz


def measure_clock(samples: int = 7, min_seconds: float = 0.02) -> ClockMeasurement:
    """Run native/ht_clock_bench (pinned to the first CPU this process may use) and read its clock."""
    if samples < 1 or not (0 < min_seconds <= 10):
        raise HybridtuneError(f"measure_clock needs samples >= 1 and 0 < min_seconds <= 10, got "
                              f"{samples}, {min_seconds}")
    program = build_program(CLOCK_PROGRAM, native_source(CLOCK_PROGRAM + ".c"))
    data = run_json(program, ["-n", str(samples), "-m", f"{min_seconds:g}"], 1,
                    30.0 + 3 * (samples + 2) * min_seconds)
    values = data.get("samples_Hz")
    if data.get("latency_cycles") != MULTIPLY_LATENCY_CYCLES or not isinstance(values, list) \
            or len(values) != samples or not all(
                isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values):
        raise HybridtuneError(f"{CLOCK_PROGRAM} output does not match the request ({samples} samples, "
                              f"latency {MULTIPLY_LATENCY_CYCLES} cycles): {str(data)[:300]}")
    return ClockMeasurement(float(data["clock_Hz"]), tuple(float(v) for v in values),
                            int(data.get("cpu", -1)), int(data.get("multiplies", 0)))


def choose_clock(nominal_hz: float, nominal_source: str,
                 measured: ClockMeasurement | HybridtuneError) -> ClockChoice:
    """The effective clock where it is plausible against the nominal one, else the nominal with why."""
    nominal = f"nominal {nominal_hz / 1e9:.4g} GHz from {nominal_source}"
    if isinstance(measured, HybridtuneError):
        return ClockChoice(nominal_hz, nominal_hz, None,
                           f"clock: the {nominal} (the effective clock could not be measured: "
                           f"{measured})")
    ratio = measured.clock_hz / nominal_hz
    effective = (f"effective {measured.clock_hz / 1e9:.4g} GHz from a dependent 64-bit multiply "
                 f"chain ({MULTIPLY_LATENCY_CYCLES} cycles each, median of "
                 f"{len(measured.samples_hz)} on CPU {measured.cpu})")
    if not PLAUSIBLE[0] <= ratio <= PLAUSIBLE[1]:
        return ClockChoice(nominal_hz, nominal_hz, measured.clock_hz,
                           f"clock: the {nominal}; the {effective} is {ratio:.2f}x the nominal, "
                           f"outside {PLAUSIBLE[0]:g}-{PLAUSIBLE[1]:g}x, so it is not used")
    return ClockChoice(measured.clock_hz, nominal_hz, measured.clock_hz,
                       f"clock: the {effective}, {ratio:.2f}x the {nominal}")
