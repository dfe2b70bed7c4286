"""`measure`: chosen variants generated, built, verified and timed per configuration, each stored."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hybridtune.describe.configuration import configurations, runnable
from hybridtune.describe.loader import load
from hybridtune.errors import RequestError
from hybridtune.generate.pool import select_variants
from hybridtune.measure.runner import MeasureOptions
from hybridtune.measure.tasks import layout_cores_problem, measure_configuration, thread_problems
from hybridtune.pipeline.request_checks import check_counts, check_step_budget, check_timing
from hybridtune.pipeline.store_policy import open_store
from hybridtune.report.failures import every_failed
from hybridtune.report.ranking import configuration_title


@dataclass(frozen=True)
class MeasureRequest:
    """The scenario, its variants (None: the whole pool), the configurations and the timing."""
    scenario: str
    variants: list | None = None
    n: int | None = None
    threads: list | None = None
    ranks: list | None = None
    ci: float = 0.02
    budget_s: float = 5.0
    strict: bool = False
    db: str | None = None


@dataclass(frozen=True)
class MeasurePlan:
    """Per configuration the variants that run there; warnings to print before anything runs."""
    scenario: object
    configurations: tuple
    runs: tuple                     # (configuration, variants, notes)
    warnings: tuple
    options: MeasureOptions


def plan_measurements(request: MeasureRequest) -> MeasurePlan:
    """Everything checked and chosen before anything is built or written."""
    check_timing(request.ci, request.budget_s)
    check_counts(request.threads, request.ranks)
    scenario = load(request.scenario, "scenario")
    configs = tuple(configurations(scenario, request.n, request.threads, request.ranks))
    check_step_budget(list(configs), scenario.machine, request.budget_s)
    skeletons = {s.name: s for s in scenario.skeletons}
    chosen = {m.name: select_variants(scenario, m, request.variants) for m in scenario.methods}
    runs = tuple((config, *runnable(skeletons, config, chosen[config.method.name]))
                 for config in configs)
    if layout_cores_problem(list(configs)):
        raise RequestError(layout_cores_problem(list(configs)))
    problems = thread_problems(sorted({c.threads for c in configs}))
    if problems and request.strict:
        raise RequestError("; ".join(problems) + " (--strict)")
    warnings = tuple(f"warning: {problem}; timings will be oversubscribed" for problem in problems)
    warnings += tuple(f"{configuration_title(config)}: {note}"
                      for config, _, notes in runs for note in notes)
    return MeasurePlan(scenario, configs, runs, warnings,
                       MeasureOptions(ci_target=request.ci, budget_s=request.budget_s))


def result_failures(results) -> list[tuple[str, str]]:
    """(variant, status: message) of each result that is not ok."""
    return [(r.id, f"{r.status}: {r.message}") for r in results if r.status != "ok"]


def measure_plan(plan: MeasurePlan, db: str | None, on_result=None) -> tuple[list, list]:
    """Run every configuration's variants, storing each result as it ends (on_result(result)
    then); (results, (configuration title, why) of those without an ok measurement)."""
    results, ended = [], []
    with open_store(db, plan.scenario, "measure") as store:
        def keep(result):
            store.append_many("measurements", [result.as_row()])
            if on_result:
                on_result(result)

        for config, variants, _ in plan.runs:
            measured = measure_configuration(plan.scenario, config, variants, plan.options,
                                             on_result=keep)
            results += measured
            if not any(r.status == "ok" for r in measured):
                ended.append((configuration_title(config),
                              every_failed(result_failures(measured), "variant")))
    return results, ended


def timed_rounds(request: MeasureRequest, ids: list[str], rounds: int, order,
                 ivp: str | None = None) -> dict:
    """id -> its ok timings on ivp (None: the scenario's only IVP), one per round: each round
    measures every id once, in the order order(ids, round_number) gives (each result stored in
    request.db)."""
    out: dict = {i: [] for i in ids}
    for k in range(rounds):
        plan = plan_measurements(replace(request, variants=list(order(ids, k))))
        for result in measure_plan(plan, request.db)[0]:
            if result.status == "ok" and ivp in (None, result.ivp):
                out[result.id].append(float(result.median_s))
    return out
