"""Strong and weak scaling curves of each variant from its predictions at 1, 2, 4, ... P ranks.

Speedup, efficiency, the best variant at each P, where communication overtakes computation, and
Amdahl's and Gustafson's fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hybridtune.errors import HybridtuneError
from hybridtune.predict.scaling_laws import SerialFraction, amdahl, gustafson


def rank_counts(ranks_max: int) -> list[int]:
    """1, 2, 4, ... up to ranks_max, and ranks_max itself where it is no power of two."""
    if ranks_max < 1:
        raise HybridtuneError(f"--ranks-max {ranks_max}: expected a rank count of at least 1")
    counts = [2 ** k for k in range(int(math.log2(ranks_max)) + 1)]
    return counts + ([ranks_max] if counts[-1] != ranks_max else [])


@dataclass(frozen=True)
class ScalingPoint:
    """One variant's predicted step at one rank count."""
    ranks: int
    n: int
    seconds: float
    comm_s: float

    @property
    def compute_s(self) -> float:
        return self.seconds - self.comm_s


@dataclass(frozen=True)
class VariantScaling:
    """A variant's strong (fixed n) and weak (fixed n / P) curves, points in rank order."""
    variant: str
    skeleton: str
    strong: tuple
    weak: tuple

    def speedups(self) -> list[tuple[int, float]]:
        """(P, T(1) / T(P)) at fixed n."""
        one = self.strong[0].seconds
        return [(p.ranks, one / p.seconds) for p in self.strong]

    def scaled_speedups(self) -> list[tuple[int, float]]:
        """(P, (n_P / n) T(1, n) / T(P, n_P)): Gustafson's scaled speedup, the work counted as it
        grew (n_P is P n rounded to a valid size, or the IVP's largest where P n is beyond it)."""
        first = self.weak[0]
        return [(p.ranks, (p.n / first.n) * first.seconds / p.seconds) for p in self.weak]

    def crossover(self) -> int | None:
        """The first rank count of strong scaling whose communication exceeds its computation."""
        return next((p.ranks for p in self.strong if p.comm_s > p.compute_s), None)

    def amdahl(self) -> SerialFraction | None:
        return _law(amdahl, self.speedups())

    def gustafson(self) -> SerialFraction | None:
        return _law(gustafson, self.scaled_speedups())


def _law(fit, points) -> SerialFraction | None:
    """The law's fit, or None where the curve has too few rank counts above one."""
    if len({p for p, _ in points if p > 1}) < 2:
        return None
    return fit(points)


@dataclass(frozen=True)
class ScalingStudy:
    """Every variant's curves for one method and IVP at base size n."""
    method: str
    ivp: str
    n: int
    ranks: tuple
    variants: tuple                 # VariantScaling, each with a point at every rank count

    def best(self, weak: bool = False) -> list[tuple[int, VariantScaling]]:
        """(P, the variant fastest at P)."""
        index = {p: i for i, p in enumerate(self.ranks)}
        return [(p, min(self.variants, key=lambda v: ((v.weak if weak else v.strong)[index[p]]
                                                      .seconds, v.variant)))
                for p in self.ranks]


def scaling_study(method: str, ivp: str, n: int, strong: dict, weak: dict) -> ScalingStudy:
    """strong and weak: rank count -> that configuration's predictions (VariantPrediction);
    a variant enters with a successful prediction at every rank count of both curves."""
    ranks = tuple(sorted(strong))
    if sorted(weak) != list(ranks):
        raise HybridtuneError(f"strong ({list(ranks)}) and weak ({sorted(weak)}) scaling need "
                              "the same rank counts")

    def points(table: dict) -> dict:
        found: dict = {}
        for p in ranks:
            for prediction in table[p]:
                if prediction.status == "ok":
                    found.setdefault(prediction.id, {})[p] = (
                        prediction.skeleton, ScalingPoint(p, prediction.n, prediction.predicted_s,
                                                          prediction.t_com_s))
        return found

    strong_points, weak_points = points(strong), points(weak)
    variants = []
    for variant in sorted(strong_points):
        s, w = strong_points[variant], weak_points.get(variant, {})
        if len(s) == len(ranks) and len(w) == len(ranks):
            variants.append(VariantScaling(variant, s[ranks[0]][0],
                                           tuple(s[p][1] for p in ranks),
                                           tuple(w[p][1] for p in ranks)))
    if not variants:
        raise HybridtuneError(f"{method} {ivp} n = {n}: no variant has a prediction at every "
                              f"rank count of {list(ranks)}")
    return ScalingStudy(method, ivp, n, ranks, tuple(variants))


def _law_json(law: SerialFraction | None) -> dict | None:
    if law is None:
        return None
    return {"serial_fraction": law.fraction, "limit": None if math.isinf(law.limit) else law.limit,
            "rms_rel_error": law.rms_rel_error, "points": law.points}


def variant_json(v: VariantScaling) -> dict:
    return {"variant": v.variant, "skeleton": v.skeleton,
            "strong": [{"ranks": p.ranks, "n": p.n, "seconds": p.seconds, "comm_s": p.comm_s,
                        "speedup": s, "efficiency": s / p.ranks}
                       for p, (_, s) in zip(v.strong, v.speedups())],
            "weak": [{"ranks": p.ranks, "n": p.n, "seconds": p.seconds, "comm_s": p.comm_s,
                      "scaled_speedup": s, "efficiency": s / p.ranks}
                     for p, (_, s) in zip(v.weak, v.scaled_speedups())],
            "comm_overtakes_at": v.crossover(), "amdahl": _law_json(v.amdahl()),
            "gustafson": _law_json(v.gustafson())}


def study_json(study: ScalingStudy) -> dict:
    return {"method": study.method, "ivp": study.ivp, "n": study.n, "ranks": list(study.ranks),
            "best_strong": [{"ranks": p, "variant": v.variant} for p, v in study.best()],
            "best_weak": [{"ranks": p, "variant": v.variant} for p, v in study.best(weak=True)],
            "variants": [variant_json(v) for v in study.variants]}
