"""Variants run on a simulated cluster beside their predictions at 1, 2, 4, ... P ranks.

Each variant is predicted with the platform's exchanges, generated, built by smpicc with its
kernels' ECM seconds injected, and run by SMPI on the platform's hosts, one rank of one thread each.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hybridtune.describe.platform import Platform, load_platform
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.measure.tasks import stable_step
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.scaling_studies import communication
from hybridtune.predict.scaling_curves import rank_counts
from hybridtune.simulate.smpi import build_simulated
from hybridtune.simulate.smpi_run import simulate

SHORTLIST = 3        # the variants predicted fastest at each rank count that are simulated


@dataclass(frozen=True)
class SimulationRequest:
    """What to simulate: the named variants (default: the `shortlist` predicted fastest at each
    rank count, and with per_skeleton the fastest of each skeleton form too, each then simulated
    at every rank count where it runs) on 1, 2, 4, ... ranks_max ranks of the platform (only:
    these rank counts instead), strong scaling at n (default: the scenario's sizes)."""
    platform_path: str
    ranks_max: int
    n: int | None = None
    variants: tuple = ()
    shortlist: int = SHORTLIST
    per_skeleton: bool = False
    steps: int = 10
    timeout_s: float = 600.0
    only: tuple = ()

    @property
    def ranks(self) -> list[int]:
        return list(self.only) or rank_counts(self.ranks_max)


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

    @property
    def error(self) -> float | None:
        """predicted / simulated - 1 (None where the simulation failed)."""
        if self.status != "ok" or not self.simulated_s:
            return None
        return self.predicted_s / self.simulated_s - 1

    def as_json(self) -> dict:
        data = dict(self.__dict__)
        data["simulated_comm_s"] = self.simulated_comm_s
        return data


@dataclass(frozen=True)
class SimulatedCluster:
    """What every simulated point of one call shares: the scenario, its platform and pools."""
    scenario: object
    platform: Platform
    steps: int
    timeout_s: float
    pools: dict = field(default_factory=dict)       # method name -> {id: Variant}

    def skeleton(self, name: str):
        return next(s for s in self.scenario.skeletons if s.name == name)


def injected_seconds(prediction, generated) -> tuple:
    """The predicted seconds of one call of each call site of the generated step."""
    per_call = {k["template"]: k["seconds"] / k["calls_per_step"] for k in prediction.kernels}
    return tuple(per_call[template] for template in generated.call_templates)


def simulate_point(cluster: SimulatedCluster, config, prediction,
                   placement: tuple = ()) -> SimulatedPoint:
    """One predicted variant (prediction.id in the pool of config's method) run by SMPI, one rank
    a host (placement: the host of each rank instead)."""
    variant = cluster.pools[config.method.name][prediction.id]
    skeleton = cluster.skeleton(variant.skeleton)
    halo = config.ivp.halo(config.n) if "mpi_neighbour_exchange" in skeleton.exchange_kinds() \
        else None
    generated = generate_variant(variant, skeleton, cluster.scenario.template_map, config.method,
                                 config.ivp, None, halo)
    library = build_simulated(generated, injected_seconds(prediction, generated))
    run = simulate(library, config.n, config.ranks, cluster.platform, cluster.steps,
                   stable_step(config.ivp, config.n), timeout_s=cluster.timeout_s,
                   placement=placement)
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


def chosen_variants(rankings, request: SimulationRequest) -> list[str]:
    """The ids to simulate among one method's rankings (one a rank count), in ranked order."""
    if request.variants:
        return list(request.variants)
    chosen = [p.id for r in rankings for p in r.predictions[:request.shortlist]
              if p.status == "ok"]
    if request.per_skeleton:
        chosen += [p.id for r in rankings for p in _fastest_per_skeleton(r.predictions)]
    return list(dict.fromkeys(chosen))


def ranked_pairs(rankings, chosen: list[str]):
    """(configuration, ok prediction) of each chosen variant, ranking by ranking (a variant
    that does not run at a rank count is left out there)."""
    for ranking in rankings:
        by_id = {p.id: p for p in ranking.predictions if p.status == "ok"}
        for variant in chosen:
            if variant in by_id:
                yield ranking.configuration, by_id[variant]


def _simulate_rankings(cluster: SimulatedCluster, rankings, request: SimulationRequest,
                       on_point) -> list:
    points = []
    for method in cluster.scenario.methods:
        mine = [r for r in rankings if r.configuration.method is method]
        for config, prediction in ranked_pairs(mine, chosen_variants(mine, request)):
            point = simulate_point(cluster, config, prediction)
            points.append(point)
            if on_point:
                on_point(point)
    return points


def simulate_scaling(scenario, request: SimulationRequest, store, on_point=None) -> tuple:
    """(points, note): the request's variants predicted with the platform's exchanges and run by
    SMPI at each rank count; on_point(point) as each ends. Kernel analyses are read from and
    added to the store; the rankings themselves are not kept."""
    ranks = request.ranks
    models = communication(scenario, ranks, store, request.platform_path)
    cluster = SimulatedCluster(scenario, load_platform(request.platform_path), request.steps,
                               request.timeout_s,
                               {m.name: pool_for(scenario, m) for m in scenario.methods})
    points = []
    for ivp in scenario.ivps:
        one = replace(scenario, ivps=(ivp,))
        for size in [request.n] if request.n is not None else list(scenario.sizes.for_ivp(ivp)):
            rankings = predict_scenario(one, size, [1], store, ranks=ranks,
                                        communication=models, keep_rankings=False).rankings
            points += _simulate_rankings(cluster, rankings, request, on_point)
    return tuple(points), models[1]
