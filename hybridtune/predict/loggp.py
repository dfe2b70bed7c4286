"""LogGP's parameters (L, o, g, G) from parametrised round trips PRTT(n, d, s).

The latency L, the overhead o, the gap g and the gap per byte G, which ping-pong alone (L + 2o and
G) cannot tell apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hybridtune.errors import HybridtuneError


@dataclass(frozen=True)
class LogGP:
    """LogGP with o taken at the smallest size; per size, o(s) and the gap g + (s-1)G measured.

    The round trips (n messages of s bytes, a delay d before each but the first, one answer):
      PRTT(1, 0, s) = 2 (L + 2o + (s-1) G)
      PRTT(n, 0, s) = PRTT(1, 0, s) + (n-1) max(o, g + (s-1) G)
      PRTT(n, d, s) = PRTT(1, 0, s) + (n-1) max(o + d, g + (s-1) G)
    so with d at least the gap, o = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n-1) - d, and the gap
    g + (s-1) G = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n-1), a line in s."""
    L_s: float
    o_s: float
    g_s: float
    G_s_per_byte: float
    sizes: tuple[int, ...]
    overhead_s: tuple[float, ...]     # o(s) at each size
    gap_s: tuple[float, ...]          # g + (s-1) G at each size
    note: str

    @property
    def hockney(self) -> tuple[float, float]:
        """The Hockney parameters LogGP implies: alpha = L + 2o - G, beta = G."""
        return self.L_s + 2 * self.o_s - self.G_s_per_byte, self.G_s_per_byte


def fit_loggp(points) -> LogGP:
    """LogGP from PRTT points (measure/comm_bench.PrttPoint) of at least two distinct sizes."""
    ordered = sorted(points, key=lambda p: p.bytes)
    if len({p.bytes for p in ordered}) != len(ordered) or len(ordered) < 2 \
            or any(p.messages < 2 or p.bytes < 1 for p in ordered):
        raise HybridtuneError("fit_loggp needs PRTT points of at least two distinct sizes >= 1 "
                              "byte, each of at least two messages")
    sizes = np.array([p.bytes for p in ordered], float)
    one = np.array([p.prtt_1.median_s for p in ordered])
    back_to_back = np.array([p.prtt_n0.median_s for p in ordered])
    delayed = np.array([p.prtt_nd.median_s for p in ordered])
    messages = np.array([p.messages for p in ordered], float)
    delays = np.array([p.delay_s for p in ordered])
    overhead = np.maximum((delayed - one) / (messages - 1) - delays, 0.0)
    gap = np.maximum((back_to_back - one) / (messages - 1), 0.0)
    G, intercept = np.polyfit(sizes - 1, gap, 1)
    G, g = max(float(G), 0.0), max(float(intercept), 0.0)
    o = float(overhead[0])
    L = max(float(one[0]) / 2 - 2 * o - (sizes[0] - 1) * G, 0.0)
    note = (f"L {L * 1e6:.2f} us, o {o * 1e6:.2f} us, g {g * 1e6:.2f} us, G {G * 1e9:.3f} ns/byte "
            f"({1e-9 / G if G > 0 else math.inf:.2f} GB/s) from {len(ordered)} sizes")
    return LogGP(L, o, g, G, tuple(int(s) for s in sizes), tuple(float(v) for v in overhead),
                 tuple(float(v) for v in gap), note)
