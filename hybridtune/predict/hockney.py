"""Hockney's model of a point-to-point message, T(n) = alpha + beta*n, fitted to ping-pong times.

Piecewise where the data show a protocol switch (eager to rendezvous), and validated at sizes the
fit never saw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hybridtune.errors import HybridtuneError

HELD_OUT_EVERY = 3       # every third size (from the second, never the largest) is held out
MIN_SEGMENT = 3          # sizes a piece of a piecewise fit needs at least
SWITCH_GAIN = 0.5        # piecewise only where it at least halves the fit's relative error


@dataclass(frozen=True)
class Piece:
    """T(n) = alpha + beta*n for sizes from `from_bytes` on; n_half = alpha/beta, the size at which
    half the asymptotic bandwidth is reached."""
    from_bytes: int
    alpha_s: float
    beta_s_per_byte: float

    @property
    def n_half(self) -> float:
        return self.alpha_s / self.beta_s_per_byte if self.beta_s_per_byte > 0 else math.inf


@dataclass(frozen=True)
class HockneyFit:
    """One or two pieces (the second from the switch size on), the relative errors of the fit on
    its own sizes and at the held-out sizes, and what was chosen and why."""
    pieces: tuple[Piece, ...]
    fit_error: float
    held_out_error: float
    held_out_bytes: tuple[int, ...]
    note: str

    def seconds(self, size: int) -> float:
        """Predicted seconds of one message of `size` bytes."""
        if isinstance(size, bool) or not isinstance(size, (int, float)) or size < 0:
            raise HybridtuneError(f"a message size in bytes >= 0, got {size!r}")
        return _seconds(self.pieces, size)


def _seconds(pieces: tuple[Piece, ...], size: float) -> float:
    """The time of the last piece starting at or below size (the first starts at 0)."""
    piece = [p for p in pieces if size >= p.from_bytes][-1]
    return max(0.0, piece.alpha_s + piece.beta_s_per_byte * size)


def _line(sizes: np.ndarray, seconds: np.ndarray) -> tuple[float, float]:
    """alpha, beta minimising the relative squared error (each point weighted by 1/t)."""
    weights = 1.0 / seconds
    design = np.column_stack([np.ones_like(sizes), sizes]) * weights[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(design, seconds * weights, rcond=None)
    return float(alpha), float(beta)


def _relative_rms(pieces: tuple[Piece, ...], sizes, seconds) -> float:
    errors = [(_seconds(pieces, n) - t) / t for n, t in zip(sizes, seconds)]
    return math.sqrt(sum(e * e for e in errors) / len(errors))


def fit_hockney(points, known_switch: int | None = None) -> HockneyFit:
    """Fit T(n) to (bytes, median_s) points of distinct sizes: every HELD_OUT_EVERY-th size held
    out (never the largest: the fit is judged inside the sizes it spans), one line by relative
    least squares, and two where a switch between two sizes at least halves the error on the
    fitted sizes; the held-out sizes then only judge the choice. The switch lies somewhere
    between the last fitted size below it and the first above; known_switch (the size from which
    the same transport's ping-pong switched) places it where it falls in that gap, else the
    upper piece starts at its first fitted size."""
    ordered = sorted((int(n), float(t)) for n, t in points)
    if len({n for n, _ in ordered}) != len(ordered) or any(not (t > 0) for _, t in ordered):
        raise HybridtuneError(f"fit_hockney needs distinct sizes with positive times, got {ordered!r}")
    held = [i for i in range(len(ordered) - 1) if i % HELD_OUT_EVERY == 1]
    used = [i for i in range(len(ordered)) if i not in held]
    if len(used) < 2 or not held:
        raise HybridtuneError(f"fit_hockney needs at least 3 sizes (2 to fit, 1 to hold out), "
                              f"got {len(ordered)}")
    sizes = np.array([ordered[i][0] for i in used], float)
    seconds = np.array([ordered[i][1] for i in used], float)
    alpha, beta = _line(sizes, seconds)
    best = (Piece(0, alpha, beta),)
    error = fit_error = _relative_rms(best, sizes, seconds)
    note = f"one line over {len(used)} sizes"
    for split in range(MIN_SEGMENT, len(used) - MIN_SEGMENT + 1):
        lower, upper = _line(sizes[:split], seconds[:split]), _line(sizes[split:], seconds[split:])
        start = int(sizes[split])
        if known_switch is not None and sizes[split - 1] < known_switch < start:
            start = int(known_switch)
        pieces = (Piece(0, *lower), Piece(start, *upper))
        candidate = _relative_rms(pieces, sizes, seconds)
        if candidate < SWITCH_GAIN * error and candidate < fit_error:
            best, fit_error = pieces, candidate
            note = (f"two pieces, the second from {start} bytes"
                    f"{' (where the ping-pong switched)' if start != int(sizes[split]) else ''}: "
                    f"{candidate:.1%} against {error:.1%} for one line")
    held_sizes = [ordered[i][0] for i in held]
    held_error = _relative_rms(best, held_sizes, [ordered[i][1] for i in held])
    return HockneyFit(best, fit_error, held_error, tuple(held_sizes),
                      f"{note}; {len(held)} sizes held out: {held_error:.1%}")
