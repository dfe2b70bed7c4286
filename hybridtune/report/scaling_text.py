"""Scaling studies as text: the best variant at each rank count with its speedup and efficiency.

Also where communication overtakes computation, and the serial fractions of Amdahl and Gustafson.
"""

from __future__ import annotations

import math

from hybridtune.predict.scaling_curves import ScalingStudy, VariantScaling


SUPER_LINEAR = 1.05      # an efficiency above this: a serial fraction means nothing


def _law_text(law, name: str, speedups=()) -> str:
    if law is None:
        return f"{name}: needs 2 rank counts above 1"
    most = max((s / p for p, s in speedups), default=0.0)
    if most > SUPER_LINEAR:
        return (f"{name}: does not apply, the speedup is super-linear (efficiency up to "
                f"{most:.0%}: a rank's block sits in a faster cache level than the whole "
                "vector)")
    limit = "" if math.isinf(law.limit) else f", speedup at most {law.limit:.0f}x"
    return (f"{name}: serial fraction {law.fraction:.4f}{limit} (curve fitted within "
            f"{law.rms_rel_error:.1%} rms)")


def _curve_lines(study: ScalingStudy, weak: bool) -> list[str]:
    index = {p: i for i, p in enumerate(study.ranks)}
    base = min(study.variants, key=lambda v: ((v.weak if weak else v.strong)[0].seconds, v.variant))
    one = (base.weak if weak else base.strong)[0].seconds
    head, gain = ("efficiency", "speedup") if not weak else ("weak eff.", "scaled")
    lines = [f"  {'ranks':>5}  {'n':>10}  {'s/step':>10}  {gain:>8}  {head:>10}  "
             f"{'comm':>5}  best variant"]
    for p, best in study.best(weak):
        point = (best.weak if weak else best.strong)[index[p]]
        speedup = (p * one if weak else one) / point.seconds
        lines.append(f"  {p:>5}  {point.n:>10}  {point.seconds:>10.3e}  {speedup:>7.2f}x  "
                     f"{speedup / p:>10.1%}  {point.comm_s / point.seconds:>5.0%}  {best.variant}")
    return lines


def crossover_text(variant: VariantScaling, ranks: tuple) -> str:
    at = variant.crossover()
    if at is None:
        return (f"  communication stays below computation up to {ranks[-1]} ranks for "
                f"{variant.variant}")
    return f"  communication overtakes computation at {at} ranks for {variant.variant}"


def study_lines(study: ScalingStudy) -> list[str]:
    """A study's strong and weak tables, crossover and fitted laws of the variant fastest on
    one rank and of the one fastest at the most ranks."""
    title = f"{study.method} {study.ivp} n={study.n}, one thread per rank"
    count = len(study.variants)
    lines = [f"{title}: strong scaling (fixed n), {count} variant{'s' * (count != 1)}; speedup "
             "over the fastest variant on one rank",
             *_curve_lines(study, weak=False)]
    first, last = study.best()[0][1], study.best()[-1][1]
    for variant in dict.fromkeys([first, last]):
        lines += [crossover_text(variant, study.ranks),
                  f"    {_law_text(variant.amdahl(), 'Amdahl', variant.speedups())}"]
    lines += [f"{title}: weak scaling (n/P = {study.n}); scaled speedup P T(1, n) / T(P, P n) "
              "of the fastest variant on one rank", *_curve_lines(study, weak=True)]
    weak_first, weak_last = study.best(weak=True)[0][1], study.best(weak=True)[-1][1]
    for variant in dict.fromkeys([weak_first, weak_last]):
        lines.append(f"    {_law_text(variant.gustafson(), 'Gustafson', variant.scaled_speedups())}"
                     f" for {variant.variant}")
    return lines
