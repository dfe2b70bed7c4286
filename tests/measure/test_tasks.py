"""Building ahead of timing: every library compiled once, what failed kept with its message."""

from dataclasses import replace
from pathlib import Path

from hybridtune.describe.loader import load
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.measure.tasks import prebuild

FAULTS = Path(__file__).parents[1] / "data" / "faults" / "faults.scenario.yaml"
BASE = "A_RHS_predictor_jl_LC_jli_RHS_jl_Approx_ji_"


def test_prebuild_counts_what_it_built_and_keeps_what_failed():
    faults = load(FAULTS)
    method, ivp = faults.methods[0], faults.ivps[0]
    variant = pool_for(faults, method)[BASE + "Update_j"]
    good = generate_variant(variant, faults.skeletons[0], faults.template_map, method, ivp)
    broken = replace(good, variant_id="broken",
                     code=good.code.replace("void ht_step", "void ht_step oops"))
    built = prebuild([good, broken])
    assert built.variants == 2 and built.runners_ok
    assert built.compiled + built.cached == 1
    [(failed_id, message)] = built.failed
    assert failed_id == "broken" and "error" in message
    again = prebuild([good])
    assert again.cached == 1 and again.compiled == 0 and not again.failed
    assert again.as_json()["failed"] == []


def test_configurations_of_one_ivp_and_n_share_one_reference_state_computed_once(monkeypatch):
    from hybridtune.describe.configuration import configurations
    from hybridtune.measure import tasks
    faults = load(FAULTS)
    one, two = configurations(faults, None, [1, 2])
    assert (one.threads, two.threads) == (1, 2) and one.n == two.n
    computed = []
    real = tasks.reference_after
    monkeypatch.setattr(tasks, "reference_after",
                        lambda *args: computed.append(args) or real(*args))
    pool = pool_for(faults, faults.methods[0])
    kept: dict = {}
    planned = [tasks.with_reference(tasks.plan_tasks(faults, c, [pool[BASE + "Update_j"]],
                                                     reference=False), c, kept=kept)
               for c in (one, two)]
    assert len(computed) == 1 and planned[0][0].reference is planned[1][0].reference
    alone = tasks.with_reference(tasks.plan_tasks(faults, two, [pool[BASE + "Update_j"]],
                                                  reference=False), two)
    assert (alone[0].reference == planned[1][0].reference).all() and len(computed) == 2


def test_configurations_of_one_ivp_share_one_generated_code_whatever_the_n(monkeypatch):
    from hybridtune.describe.configuration import Configuration
    from hybridtune.measure import tasks
    faults = load(FAULTS)
    method, ivp = faults.methods[0], faults.ivps[0]
    generated = []
    real = tasks.generate_variant
    monkeypatch.setattr(tasks, "generate_variant",
                        lambda *args: generated.append(args) or real(*args))
    variant = pool_for(faults, method)[BASE + "Update_j"]
    shared: dict = {}
    planned = [tasks.plan_tasks(faults, Configuration(method, ivp, n, threads), [variant],
                                reference=False, generated=shared)[0]
               for n, threads in ((2000, 1), (2000, 2), (20000, 1))]
    assert len(generated) == 1
    assert planned[0].generated is planned[1].generated is planned[2].generated
    assert [task.n for task in planned] == [2000, 2000, 20000]
    [alone] = tasks.plan_tasks(faults, Configuration(method, ivp, 20000, 1), [variant],
                               reference=False)
    assert alone.generated == planned[2].generated and len(generated) == 2


def test_reference_states_are_computed_side_by_side_once_each_and_match_one_by_one(monkeypatch):
    from hybridtune.describe.configuration import Configuration
    from hybridtune.measure import tasks
    faults = load(FAULTS)
    method, ivp = faults.methods[0], faults.ivps[0]
    computed = []
    real = tasks.reference_after
    monkeypatch.setattr(tasks, "reference_after",
                        lambda *args: computed.append(args[2]) or real(*args))
    variant = pool_for(faults, method)[BASE + "Update_j"]
    layouts = [Configuration(method, ivp, n, threads)
               for n, threads in ((2000, 1), (2000, 2), (20000, 1), (4000, 1))]
    wanted = [(c, tasks.plan_tasks(faults, c, [variant], reference=False)) for c in layouts]
    wanted[3] = (layouts[3], [])             # nothing left to run: no reference needed
    kept = tasks.reference_states(wanted, workers=2)
    assert sorted(computed) == [2000, 20000] and len(kept) == 2
    one_by_one = [tasks.plan_tasks(faults, c, [variant])[0].reference for c in layouts[:3]]
    assert len(computed) == 5
    planned = [tasks.with_reference(todo, c, kept=kept) for c, todo in wanted[:3]]
    assert len(computed) == 5                # with_reference found every state kept
    for task, state in zip(planned, one_by_one):
        assert (task[0].reference == state).all()
    assert tasks.reference_states(wanted, kept=kept) is kept and len(computed) == 5
