"""Variants run by SMPI on a simulated cluster beside their predictions.

Each is predicted with the platform's exchanges, generated, built by smpicc with its kernels' ECM
seconds injected, and run by SMPI.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hybridtune.describe.platform import load_platform
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.scaling_studies import communication
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.measure.tasks import stable_step
from hybridtune.predict.scaling_curves import rank_counts
from hybridtune.simulate.smpi import build_simulated
from hybridtune.simulate.smpi_run import simulate

SHORTLIST = 3        # the variants predicted fastest at each rank count that are simulated


@dataclass(frozen=True)
class SimulatedPoint:
    """One variant at one rank count: predicted (compute injected + analytic communication)
    beside SMPI's simulated step."""
    method: str
    ivp: str
    n: int
    ranks: int
    variant: str
    predicted_s: float
    predicted_comm_s: float
    injected_s: float               # the kernels' ECM seconds a step, what SMPI is given
    simulated_s: float
    wall_s: float
    max_rss_bytes: int
    status: str
    message: str = ""

    @property
    def simulated_comm_s(self) -> float:
        return self.simulated_s - self.injected_s

    def as_json(self) -> dict:
        data = dict(self.__dict__)
        data["simulated_comm_s"] = self.simulated_comm_s
        return data


def injected_seconds(prediction, generated) -> tuple:
    """The predicted seconds of one call of each call site of the generated step."""
    per_call = {k["template"]: k["seconds"] / k["calls_per_step"] for k in prediction.kernels}
    return tuple(per_call[template] for template in generated.call_templates)


def _point(scenario, config, prediction, variant, skeleton, platform, steps: int,
           timeout_s: float):
    halo = config.ivp.halo(config.n) if "mpi_neighbour_exchange" in skeleton.exchange_kinds() \
        else None
    generated = generate_variant(variant, skeleton, scenario.template_map, config.method,
                                 config.ivp, None, halo)
    compute = injected_seconds(prediction, generated)
    library = build_simulated(generated, compute)
    run = simulate(library, config.n, config.ranks, platform, steps,
                   stable_step(config.ivp, config.n), timeout_s=timeout_s)
    injected = prediction.predicted_s - prediction.t_com_s
    return SimulatedPoint(config.method.name, config.ivp.name, config.n, config.ranks,
                          prediction.id, prediction.predicted_s, prediction.t_com_s, injected,
                          run.seconds_per_step, run.wall_s, run.max_rss_bytes, run.status,
                          run.message)


def _fastest_per_skeleton(predictions) -> list:
    """The fastest successful prediction of each skeleton form, in ranked order."""
    seen: dict = {}
    for p in predictions:
        if p.status == "ok":
            seen.setdefault(p.skeleton, p)
    return list(seen.values())


def simulate_scaling(scenario, platform_path: str, ranks_max: int, store, n: int | None = None,
                     variants: list[str] | None = None, shortlist: int = SHORTLIST,
                     steps: int = 10, timeout_s: float = 600.0, on_point=None,
                     only: list[int] | None = None, per_skeleton: bool = False) -> tuple:
    """(points, note): the named variants (default: the `shortlist` predicted fastest at each
    rank count, and with per_skeleton the fastest of each skeleton form too, each then simulated
    at every rank count where it runs) on 1, 2, 4, ... ranks_max simulated ranks of one thread
    (only: these rank counts), strong scaling at the scenario's sizes."""
    platform = load_platform(platform_path)
    ranks = only or rank_counts(ranks_max)
    models = communication(scenario, ranks, store, platform_path)
    points, pools = [], {}
    skeletons = {s.name: s for s in scenario.skeletons}
    for ivp in scenario.ivps:
        one = replace(scenario, ivps=(ivp,))
        for size in [n] if n is not None else list(scenario.sizes.for_ivp(ivp)):
            rankings = predict_scenario(one, size, [1], store, ranks=ranks,
                                        communication=models, keep_rankings=False).rankings
            for method in scenario.methods:
                pool = pools.setdefault(method.name, pool_for(scenario, method))
                mine = [r for r in rankings if r.configuration.method is method]
                chosen = list(variants or dict.fromkeys(
                    p.id for r in mine for p in r.predictions[:shortlist] if p.status == "ok"))
                if per_skeleton and not variants:
                    chosen = list(dict.fromkeys(chosen + [
                        p.id for r in mine for p in _fastest_per_skeleton(r.predictions)]))
                for ranking in mine:
                    by_id = {p.id: p for p in ranking.predictions if p.status == "ok"}
                    for variant in chosen:
                        if variant in by_id:
                            point = _point(scenario, ranking.configuration, by_id[variant],
                                           pool[variant], skeletons[pool[variant].skeleton],
                                           platform, steps, timeout_s)
                            points.append(point)
                            if on_point:
                                on_point(point)
    return tuple(points), models[1]
