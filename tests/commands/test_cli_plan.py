"""plan from the command line: the small MPI scenario on SkylakeSP nodes (2 NUMA domains of 20 cores) with the fat tree's exchanges, up to 4 nodes: one option per layout, the fastest at 50% parallel efficiency chosen (or at the efficiency asked) and the fastest of all named beside it, both run by SMPI with --simulate, the ranks of a domain predicted together, the interval where the store holds measurements, and each bad request refused with exit code 2, one message and no store written."""

from __future__ import annotations

import json
import shutil

import pytest

from scaling_support import FAT_TREE, SCENARIO, cache_at, refusal, run_cli

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.commands.main import main
from hybridtune.pipeline.offline_stages import predict_scenario
from hybridtune.pipeline.scaling_studies import communication
from hybridtune.generate.pool import pool_for
from hybridtune.store import Store

NO_MPI = PROJECT_ROOT / "tests" / "data" / "predict" / "small.scenario.yaml"
LEARN_FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"
N = 2400
MACHINE = "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"
# SkylakeSP_Gold-6148: 2 NUMA domains of 20 cores a node. 20 splits into ranks of 1, 2 and 4
# threads (8 and 16 do not divide it) and one rank of all 20 cores: (threads, ranks a domain)
SPLITS = [(1, 20), (2, 10), (4, 5), (20, 1)]
LAYOUTS = [(nodes, nodes * 2 * per_domain, threads, per_domain)
           for nodes in (1, 2, 4) for threads, per_domain in SPLITS]
# A size at which the ranks of a domain sharing it matters: the domain's 20 cores hold 2,000,000
# components of each of the step's vectors (16 MB a vector, far beyond its 27.5 MB L3 together:
# memory-bound), while one rank's own 100,000-component block (0.8 MB a vector) would sit in the L3
# if that rank were predicted alone on a core. 4,000,000 divides by 40 ranks: no rank larger.
BIG = 4_000_000
CHOICE = {"nodes", "ranks", "threads", "ranks_per_domain", "variant", "seconds", "comm_s",
          "efficiency", "node_seconds_per_step", "low_s", "high_s"}
MEASURED_ERROR = 0.25           # the hand-written measurements: 1.25 x the offline prediction


def plan_argv(db, *extra) -> list:
    return ["plan", SCENARIO, "--nodes-max", 4, "--platform", FAT_TREE, "--db", db, *extra]


@pytest.fixture(scope="module")
def planned(scaling_run, tmp_path_factory):
    """plan on a copy of the predict --scaling store (its kernel analyses reused): JSON (at the
    default efficiency, 0.5), JSON at an efficiency of 0.9, text, and one node at the big size."""
    db = tmp_path_factory.mktemp("plan") / "store.h5"
    shutil.copy(scaling_run.db, db)
    with cache_at(scaling_run.cache):
        runs = {"fastest": run_cli(*plan_argv(db, "--json")),
                "efficient": run_cli(*plan_argv(db, "--json", "--efficiency", 0.9)),
                "text": run_cli(*plan_argv(db)),
                "big": run_cli("plan", SCENARIO, "--nodes-max", 1, "--platform", FAT_TREE,
                               "-n", BIG, "--json", "--db", db)}
    for code, _, err in runs.values():
        assert code == 0 and err == "", err
    return {name: out if name == "text" else json.loads(out)
            for name, (_, out, _) in runs.items()} | {"db": db}


def only_plan(answer) -> dict:
    plan, = answer["plans"]
    return plan


def layout_of(option) -> tuple:
    return option["nodes"], option["ranks"], option["threads"], option["ranks_per_domain"]


@pytest.mark.slow
def test_the_json_names_the_platform_machine_and_plan(planned):
    answer = planned["fastest"]
    assert set(answer) == {"platform", "machine", "efficiency", "plans"}
    assert (answer["platform"], answer["machine"], answer["efficiency"]) == (str(FAT_TREE),
                                                                             MACHINE, 0.5)
    plan = only_plan(answer)
    assert (plan["method"], plan["ivp"], plan["n"]) == ("radauIIA7", "Lorenz96", N)
    assert set(plan["choice"]) == set(plan["fastest"]) == CHOICE
    assert "simulated" not in plan                      # SMPI runs with --simulate only
    assert plan["note"].startswith(f"exchanges on platform {FAT_TREE} (256 hosts, FAT_TREE)")
    assert ("no measurement of this machine file's predictions in the store: the computation's "
            "spread is unknown (0 used)") in plan["note"]


@pytest.mark.slow
def test_no_interval_where_the_store_has_no_measurement(planned):
    """The store holds kernel analyses only: nothing judges the computation (and the platform's
    links are stated, not fitted), so there is no band, in JSON as in the text."""
    for role in ("choice", "fastest"):
        choice = only_plan(planned["fastest"])[role]
        assert choice["low_s"] is None and choice["high_s"] is None
    assert ("(no interval: the store holds no measurement to judge the computation by)"
            in planned["text"])


@pytest.mark.slow
def test_one_option_per_layout(planned):
    plan = only_plan(planned["fastest"])
    assert [layout_of(o) for o in plan["options"]] == LAYOUTS
    scenario = load(SCENARIO, "scenario")
    pool = set(pool_for(scenario, scenario.methods[0]))
    one = min(o["seconds"] for o in plan["options"] if o["nodes"] == 1)
    for o in plan["options"]:
        assert o["variant"] in pool and o["variant"].startswith("F-mpi")
        assert 0 <= o["comm_s"] < o["seconds"]
        assert o["efficiency"] == pytest.approx(one / (o["nodes"] * o["seconds"]))
        assert o["node_seconds_per_step"] == pytest.approx(o["nodes"] * o["seconds"])
    assert max(o["efficiency"] for o in plan["options"] if o["nodes"] == 1) == 1.0


def _unbanded(option: dict) -> dict:
    option = dict(option)
    del option["low_s"], option["high_s"]
    return option


@pytest.mark.slow
def test_the_fastest_option_is_named_beside_the_choice(planned):
    plan = only_plan(planned["fastest"])
    fastest = min(plan["options"], key=lambda o: (o["seconds"], o["node_seconds_per_step"],
                                                  o["nodes"]))
    assert _unbanded(plan["fastest"]) == fastest
    # at n = 2400 a fourth of the work still pays on 4 nodes, at a low efficiency
    assert plan["fastest"]["nodes"] == 4 and plan["fastest"]["efficiency"] < 0.5


@pytest.mark.slow
def test_by_default_the_choice_is_the_fastest_at_half_efficiency(planned):
    """The default on purpose: the fastest layout at 50% parallel efficiency or more (2 nodes at
    56% here), not the fastest of all (4 nodes at under 50%, for twice the node-hours)."""
    plan = only_plan(planned["fastest"])
    reaching = [o for o in plan["options"] if o["efficiency"] >= 0.5]
    choice = _unbanded(plan["choice"])
    assert choice == min(reaching, key=lambda o: (o["seconds"], o["node_seconds_per_step"],
                                                  o["nodes"]))
    assert choice["nodes"] == 2 and choice["seconds"] > plan["fastest"]["seconds"]


@pytest.mark.slow
def test_with_an_efficiency_the_choice_meets_it(planned):
    answer = planned["efficient"]
    assert answer["efficiency"] == 0.9
    plan = only_plan(answer)
    assert plan["options"] == only_plan(planned["fastest"])["options"]
    reaching = [o for o in plan["options"] if o["efficiency"] >= 0.9]
    assert plan["choice"]["efficiency"] >= 0.9
    assert plan["choice"]["seconds"] == min(o["seconds"] for o in reaching)
    assert plan["choice"]["seconds"] > only_plan(planned["fastest"])["fastest"]["seconds"]


@pytest.mark.slow
def test_the_text_marks_the_choice(planned):
    plan = only_plan(planned["fastest"])
    lines = planned["text"].splitlines()
    assert lines[0] == ("radauIIA7 Lorenz96 n=2400: the fastest variant of each layout; 'vs 1 "
                        "node': parallel efficiency over the nodes, the best one-node time over "
                        "nodes x this time")
    assert lines[1].split() == ["nodes", "ranks", "threads", "s/step", "vs", "1", "node",
                                "node-s/step", "variant"]
    rows = lines[2:2 + len(LAYOUTS)]
    marked = [row for row in rows if row.startswith("*")]
    assert len(marked) == 1
    c, f = plan["choice"], plan["fastest"]
    assert marked[0].split()[1:4] == [str(c["nodes"]), str(c["ranks"]), str(c["threads"])]
    fastest, = [row for row in rows if row.startswith("+")]
    assert fastest.split()[1:4] == [str(f["nodes"]), str(f["ranks"]), str(f["threads"])]
    assert [tuple(map(int, row[1:].split()[:3])) for row in rows] == [l[:3] for l in LAYOUTS]
    assert lines[2 + len(LAYOUTS)].startswith(
        f"  chosen: {c['variant']} on 2 nodes, {c['ranks']} ranks x "
        f"{c['threads']} thread{'s' * (c['threads'] != 1)}: ")
    assert lines[2 + len(LAYOUTS)].endswith("; the fastest layout at 50% parallel efficiency or "
                                            "more")
    assert lines[3 + len(LAYOUTS)].startswith(f"  fastest: {f['variant']} on 4 nodes, ")
    assert lines[3 + len(LAYOUTS)].endswith(
        f"{c['seconds'] / f['seconds']:.2f}x faster than the choice for "
        f"{f['node_seconds_per_step'] / c['node_seconds_per_step']:.2f}x its node-hours, below "
        "the 50% asked")
    assert lines[-1] == plan["note"]


@pytest.mark.slow
def test_the_ranks_of_a_domain_are_predicted_together(planned, scaling_run):
    """20 one-thread ranks a domain compute at once: each is predicted as the domain's 20 cores on
    all 20 blocks, as the one rank of 20 threads is, so at a memory-bound size every split of one
    node takes the same compute time. Predicting a rank alone, one core on its own block (the L3 to
    itself), would be well over twice as fast: the check tells the two apart."""
    plan = only_plan(planned["big"])
    assert plan["n"] == BIG
    options = {o["threads"]: o for o in plan["options"]}
    assert [layout_of(o) for o in plan["options"]] == LAYOUTS[:4]
    compute = {t: o["seconds"] - o["comm_s"] for t, o in options.items()}
    for threads in (1, 2, 4):
        assert compute[threads] == pytest.approx(compute[20], rel=0.02), compute
    # the same variant with each of the 40 ranks predicted alone on one core
    scenario = load(SCENARIO, "scenario")
    with Store.open(planned["db"], "r") as store, cache_at(scaling_run.cache):
        models = communication(scenario, [1], store, str(FAT_TREE), measure=False)
        ranking, = predict_scenario(scenario, BIG, [1], store, ranks=[40], communication=models,
                                    keep_rankings=False, dry_run=True).rankings
    alone = next(p for p in ranking.predictions if p.id == options[1]["variant"])
    assert alone.status == "ok"
    assert alone.predicted_s - alone.t_com_s < 0.5 * compute[1]


@pytest.mark.slow
def test_plan_keeps_its_runs_and_no_rankings(planned):
    with Store.open(planned["db"], "r") as store:
        assert list(store.frame("runs")["command"]).count("plan") == 4
        assert len(store.frame("variant_predictions")) == 0


@pytest.mark.slow
def test_simulate_runs_the_choice_and_the_fastest_by_smpi(simgrid, scaling_run, tmp_path):
    """Both layouts on the fat tree, their ranks placed on their nodes: SMPI's step beside the
    prediction, close to it (the kernels run as predicted; SMPI adds the exchanges, and prices
    those within a node by the host's loopback where the plan takes the network's)."""
    db = tmp_path / "store.h5"
    shutil.copy(scaling_run.db, db)
    with cache_at(scaling_run.cache):
        code, out, err = run_cli(*plan_argv(db, "--json", "--simulate"))
        assert code == 0, err
        text = run_cli(*plan_argv(db, "--simulate"))[1]
    plan = only_plan(json.loads(out))
    checks = {c["role"]: c for c in plan["simulated"]}
    assert set(checks) == {"choice", "fastest"}
    for role, check in checks.items():
        assert (check["nodes"], check["ranks"], check["variant"]) == (
            plan[role]["nodes"], plan[role]["ranks"], plan[role]["variant"])
        assert check["status"] == "ok", check["message"]
        assert check["error"] == pytest.approx(check["predicted_s"] / check["simulated_s"] - 1)
        assert abs(check["error"]) <= 0.20
    smpi = [line for line in text.splitlines() if line.startswith("  SMPI, ")]
    assert [line.split(":")[0] for line in smpi] == ["  SMPI, choice", "  SMPI, fastest"]


def test_simulate_needs_a_platform(refused):
    err = refused(SCENARIO, "--nodes-max", 4, "--simulate")
    assert "--simulate runs the layouts on a simulated cluster: give --platform FILE" in err


# ---- the interval where the store holds measurements ---------------------------------------------

def measurement_rows(predictions, template: dict) -> list[dict]:
    """One ok measurement of each prediction, MEASURED_ERROR slower than predicted; the other
    columns from a real measurement of the learning fixture."""
    rows = []
    for i, p in enumerate(predictions.itertuples()):
        seconds = p.predicted_s * (1 + MEASURED_ERROR)
        rows.append({**template, "row_id": f"plan-test-{i}", "id": p.variant,
                     "method": p.method, "ivp": p.ivp, "n": p.n, "threads": p.threads,
                     "ranks": p.ranks, "nodes": 1, "status": "ok", "median_s": seconds,
                     "ci_low_s": seconds * 0.99, "ci_high_s": seconds * 1.01, "ci_rel": 0.02})
    return rows


@pytest.fixture(scope="module")
def measured(scaling_run, tmp_path_factory):
    """plan on a store with one-rank rankings of the scenario (predict --ranks 1) and measurements
    of three of their variants, each 25% slower than predicted."""
    db = tmp_path_factory.mktemp("plan-measured") / "store.h5"
    shutil.copy(scaling_run.db, db)
    with cache_at(scaling_run.cache):
        code, _, err = run_cli("predict", SCENARIO, "--ranks", 1, "--db", db)
        assert code == 0, err
        with Store.open(LEARN_FIXTURE, "r") as fixture:
            template = fixture.frame("measurements").iloc[0].to_dict()
        del template["run_id"]
        with Store.open(db, "a", run={"command": "test", "host": "testhost"}) as store:
            predictions = store.frame("variant_predictions")
            picked = predictions[predictions["predicted_s"] > 0].head(3)
            assert len(picked) == 3
            store.append_many("measurements", measurement_rows(picked, template))
        as_json = run_cli(*plan_argv(db, "--json"))
        as_text = run_cli(*plan_argv(db))
    for code, _, err in (as_json, as_text):
        assert code == 0 and err == "", err
    return json.loads(as_json[1]), as_text[1]


@pytest.mark.slow
def test_the_interval_spreads_the_computation_by_the_models_error(measured):
    """The platform's links are stated (no communication error), the offline model is 25% off on
    the store's measurements (each of them): the band is the choice's compute time x 25% either
    side, the 95% quantile of those errors."""
    answer, text = measured
    plan = only_plan(answer)
    c = plan["choice"]
    half = MEASURED_ERROR * (c["seconds"] - c["comm_s"])
    assert c["low_s"] == pytest.approx(c["seconds"] - half, rel=1e-9)
    assert c["high_s"] == pytest.approx(c["seconds"] + half, rel=1e-9)
    assert 0 <= c["low_s"] < c["seconds"] < c["high_s"]
    assert ("computation within 25% at 95% (the offline model's errors on 3 measured variants in "
            "the store)") in plan["note"]
    assert "communication as the platform's stated links give it (no fit error)" in plan["note"]
    assert f"(95%: {c['low_s']:.3e} to {c['high_s']:.3e})" in text


# ---- bad requests: exit code 2, one message, no store written ------------------------------------

@pytest.fixture
def refused(tmp_path):
    return refusal(tmp_path, "plan")


@pytest.mark.parametrize("nodes", [0, -2])
def test_fewer_than_one_node_is_refused(refused, nodes):
    err = refused(SCENARIO, "--nodes-max", nodes, "--platform", FAT_TREE)
    assert f"--nodes-max {nodes}: expected a node count of at least 1" in err


@pytest.mark.parametrize("efficiency, shown", [("0", "0.0"), ("1.5", "1.5"), ("-0.2", "-0.2"),
                                               ("nan", "nan")])
def test_an_efficiency_outside_zero_to_one_is_refused(refused, efficiency, shown):
    err = refused(SCENARIO, "--nodes-max", 4, "--efficiency", efficiency, "--platform", FAT_TREE)
    assert f"--efficiency {shown}: expected a fraction in (0, 1]" in err


def test_more_nodes_than_the_platforms_hosts_are_refused(refused):
    err = refused(SCENARIO, "--nodes-max", 300, "--platform", FAT_TREE)
    assert (f"{FAT_TREE}: --nodes-max 300 asks for 300 nodes, the platform has 256 hosts "
            "(one node per host)") in err


def test_a_platform_file_that_is_not_xml_is_refused_with_file_and_line(refused, tmp_path):
    bad = tmp_path / "platform.yaml"
    bad.write_text("cluster: fat-tree\nbw: 100Gbps\n")
    err = refused(SCENARIO, "--nodes-max", 4, "--platform", bad)
    assert f"platform file {bad}, line 1: not XML" in err


def test_a_missing_platform_file_is_refused(refused, tmp_path):
    err = refused(SCENARIO, "--nodes-max", 4, "--platform", tmp_path / "absent.xml")
    assert f"platform file {tmp_path / 'absent.xml'}: No such file" in err


def test_a_scenario_without_mpi_skeletons_is_refused(refused):
    err = refused(NO_MPI, "--nodes-max", 4, "--platform", FAT_TREE)
    assert f"plan: scenario small ({NO_MPI}) has no MPI skeleton" in err


@pytest.mark.parametrize("argv, message", [
    (["--platform", str(FAT_TREE)], "the following arguments are required: --nodes-max"),
    (["--nodes-max", "many"], "--nodes-max: invalid int value: 'many'"),
    (["--nodes-max", "4", "--efficiency", "high"], "--efficiency: invalid float value: 'high'")])
def test_a_missing_or_unreadable_number_is_a_usage_error(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main(["plan", str(SCENARIO), *argv, "--db", str(tmp_path / "never.h5")])
    assert info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "never.h5").exists()


def test_a_size_invalid_for_an_ivp_is_refused_before_anything_is_written(refused):
    err = refused(SCENARIO, "--nodes-max", 2, "-n", 2)
    assert "IVP Lorenz96" in err and "n = 2 is not valid: expected n >= 4" in err
