"""Scaling studies of a scenario: its variants predicted at 1, 2, 4, ... P ranks, strong and weak.

One thread per rank, at fixed n (strong) and at n P (weak), with this machine's communication or a
platform's.
"""

from __future__ import annotations

from dataclasses import replace

from hybridtune.describe.configuration import Configuration
from hybridtune.describe.platform import load_platform
from hybridtune.pipeline.comm_models import communication_models
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.predict.platform_models import platform_models
from hybridtune.predict.scaling_curves import rank_counts, scaling_study
from hybridtune.predict.superstep import CommunicationModels


def communication(scenario, ranks: list[int], store, platform_path: str | None = None,
                  measure: bool = True, threads: int = 1) -> tuple:
    """(CommunicationModels, note): the platform's links where a platform file is given (its
    hosts at least the largest rank count), else this machine's fits carried to p ranks. Ranks of
    up to `threads` threads meet at this machine's barrier of their threads; on a platform, ranks
    of one thread (as SMPI simulates them) meet none, and nothing is measured here."""
    first = scenario.ivps[0]
    platform = load_platform(platform_path) if platform_path is not None else None
    if platform is not None:
        platform.check_ranks(max(ranks))
    models, note = CommunicationModels(), ""
    if platform is None or threads > 1:
        configs = [Configuration(scenario.methods[0], first, first.sizes.next_valid(1), threads,
                                 1 if platform is not None else max(ranks))]
        models, note = communication_models(scenario, configs, store, measure)
    if platform is None:
        return models, note
    far, near = platform.route(), platform.route(neighbours=True)
    return (platform_models(platform, models.omp_barrier),
            f"exchanges on platform {platform.path} ({len(platform.hosts)} hosts, "
            f"{platform.topology}): {far[0] * 1e6:.2f} us and {far[1] / 1e9:.2f} GB/s between "
            f"the furthest hosts, {near[0] * 1e6:.2f} us between neighbours; "
            + ("one rank per host" if threads == 1 else "ranks of one node priced as the "
               "network's too (an upper bound)")
            + (f"; {note}" if note else ""))


def weak_size(ivp, n: int, ranks: int) -> int:
    """The IVP's valid size nearest above n P (its largest where n P is beyond its maximum)."""
    return ivp.sizes.next_valid(n * ranks)


def scaling_studies(scenario, ranks_max: int, store, platform_path: str | None = None,
                    n: int | None = None, workers: int | None = None, on_study=None) -> tuple:
    """(studies, note): one ScalingStudy per method, IVP and base size; predictions are read
    from and analyses added to the store, the rankings themselves are not kept."""
    ranks = rank_counts(ranks_max)
    models = communication(scenario, ranks, store, platform_path)
    studies = []
    for ivp in scenario.ivps:
        one = replace(scenario, ivps=(ivp,))
        sizes = [n] if n is not None else list(scenario.sizes.for_ivp(ivp))
        for size in sizes:
            strong = predict_scenario(one, size, [1], store, workers, ranks=ranks,
                                      communication=models, keep_rankings=False).rankings
            weak = {p: predict_scenario(one, weak_size(ivp, size, p), [1], store, workers,
                                        ranks=[p], communication=models,
                                        keep_rankings=False).rankings for p in ranks}
            for method in scenario.methods:
                study = scaling_study(
                    method.name, ivp.name, size,
                    {r.configuration.ranks: r.predictions for r in strong
                     if r.configuration.method is method},
                    {p: next(r.predictions for r in found if r.configuration.method is method)
                     for p, found in weak.items()})
                studies.append(study)
                if on_study:
                    on_study(study)
    return tuple(studies), models[1]
