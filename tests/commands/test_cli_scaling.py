"""predict --scaling from the command line: strong and weak curves of a small MPI scenario on the fat-tree platform file as JSON and as text, and each bad request refused with exit code 2, a message and no store written."""

from __future__ import annotations

import contextlib
import io
import json
import math

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.commands.main import main
from hybridtune.generate.pool import pool_for
from hybridtune.predict.collectives import allgather_distances, allgather_steps
from hybridtune.store import Store
from scaling_support import refusal

SCENARIO = PROJECT_ROOT / "tests" / "data" / "scaling" / "scaling.scenario.yaml"
NO_MPI = PROJECT_ROOT / "tests" / "data" / "predict" / "small.scenario.yaml"
FAT_TREE = PROJECT_ROOT / "tests" / "data" / "platforms" / "fat-tree-100g.xml"
RANKS = [1, 2, 4, 8]
N = 2400
# the fat tree's routes, by hand from its file: four 0.3 us links between the furthest hosts, two
# between neighbours, 100 Gb/s each
FAR, NEAR, BANDWIDTH = 1.2e-6, 0.6e-6, 12.5e9
LEAF = 16               # hosts under one leaf switch of the fat tree


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def scaled(scaling_run):
    """One cold JSON run to 8 ranks on the fat tree, then a warm text run on its store (made once
    a session in scaling_support, whose store the plan and report tests reuse)."""
    return scaling_run


@pytest.fixture(scope="module")
def answer(scaled):
    code, out, err = scaled[0]
    assert code == 0, err
    return json.loads(out)


@pytest.mark.slow
def test_json_names_the_platform_and_its_routes(scaled, answer):
    _, _, err = scaled[0]
    assert answer["platform"] == str(FAT_TREE)
    assert answer["machine"] == "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"
    note = answer["communication"]
    assert note.startswith(f"exchanges on platform {FAT_TREE} (256 hosts, FAT_TREE)")
    assert "1.20 us and 12.50 GB/s between the furthest hosts" in note
    assert "0.60 us between neighbours; one rank per host" in note
    # the note goes to stderr beside JSON, which stdout holds alone
    assert err.strip() == (f"machine {answer['machine']} (machine file "
                           f"{PROJECT_ROOT / 'data' / 'machines' / 'SkylakeSP_Gold-6148.yml'}); "
                           f"{note}")


@pytest.mark.slow
def test_every_variant_has_a_strong_and_a_weak_curve(answer):
    study, = answer["studies"]
    assert (study["method"], study["ivp"], study["n"], study["ranks"]) == (
        "radauIIA7", "Lorenz96", N, RANKS)
    scenario = load(SCENARIO, "scenario")
    pool = pool_for(scenario, scenario.methods[0])
    assert sorted(v["variant"] for v in study["variants"]) == sorted(pool)
    assert {v["skeleton"] for v in study["variants"]} == {"F-mpi", "F-mpi-nx"}
    for variant in study["variants"]:
        strong, weak = variant["strong"], variant["weak"]
        assert [p["ranks"] for p in strong] == [p["ranks"] for p in weak] == RANKS
        assert [p["n"] for p in strong] == [N] * 4
        assert [p["n"] for p in weak] == [N * p for p in RANKS]           # n / P fixed
        assert strong[0]["speedup"] == weak[0]["scaled_speedup"] == 1.0
        assert strong[0]["comm_s"] == weak[0]["comm_s"] == 0.0           # one rank: no exchange
        for p in strong:
            assert p["speedup"] == pytest.approx(strong[0]["seconds"] / p["seconds"])
            assert p["efficiency"] == pytest.approx(p["speedup"] / p["ranks"])
        for p in weak:
            assert p["scaled_speedup"] == pytest.approx(p["ranks"] * weak[0]["seconds"]
                                                        / p["seconds"])
        crossover = next((p["ranks"] for p in strong if p["comm_s"] > p["seconds"] - p["comm_s"]),
                         None)
        assert variant["comm_overtakes_at"] == crossover
        assert variant["amdahl"]["points"] == variant["gustafson"]["points"] == 4


@pytest.mark.slow
def test_the_exchanges_cost_the_platforms_routes(answer):
    """F-mpi gathers y once and the s stage rows m times a step (radauIIA7: s = 4, m = 6); its
    neighbour-exchange form swaps a halo of 2 components of each row (Lorenz96) m + 1 times."""
    scenario = load(SCENARIO, "scenario")
    method, ivp = scenario.methods[0], scenario.ivps[0]
    s, m = method.stages, method.corrector_steps
    study, = answer["studies"]
    for variant in study["variants"]:
        for curve in ("strong", "weak"):
            for point in variant[curve][1:]:
                p, n = point["ranks"], point["n"]
                if variant["skeleton"] == "F-mpi":
                    block = 8 * math.ceil(n / p)
                    one = sum((NEAR if distance < LEAF else FAR) + step / BANDWIDTH
                              for step, distance in zip(allgather_steps(block, p),
                                                        allgather_distances(block, p)))
                    expected = (1 + s * m) * one
                else:
                    halo = ivp.halo(n)
                    # both halos leave through the host's one link
                    expected = (m + 1) * NEAR + (1 + s * m) * 2 * 8 * halo / BANDWIDTH
                assert point["comm_s"] == pytest.approx(expected, rel=1e-9), (variant, p, curve)
    nx = next(v for v in study["variants"] if v["skeleton"] == "F-mpi-nx")
    assert len({p["comm_s"] for p in nx["strong"][1:]}) == 1                 # whatever P
    gathers = next(v for v in study["variants"] if v["skeleton"] == "F-mpi")
    comm = [p["comm_s"] for p in gathers["strong"]]
    assert comm == sorted(comm) and comm[1] < comm[2] < comm[3]


@pytest.mark.slow
def test_the_best_variant_at_each_rank_count(answer):
    study, = answer["studies"]
    for key, curve in (("best_strong", "strong"), ("best_weak", "weak")):
        assert [b["ranks"] for b in study[key]] == RANKS
        for i, best in enumerate(study[key]):
            fastest = min(study["variants"], key=lambda v: (v[curve][i]["seconds"], v["variant"]))
            assert best["variant"] == fastest["variant"]
    # on 8 ranks of the fat tree, exchanging halos beats gathering whole blocks
    assert study["best_strong"][-1]["variant"].startswith("F-mpi-nx_")


@pytest.mark.slow
def test_the_warm_text_run_names_the_best_variants_and_the_crossover(scaled, answer):
    code, out, err = scaled[1]
    assert code == 0 and err == "", err
    study, = answer["studies"]
    lines = out.splitlines()
    assert lines[0] == ("radauIIA7 Lorenz96 n=2400, one thread per rank: strong scaling "
                        "(fixed n), 64 variants; speedup over the fastest variant on one rank")
    weak_at = next(i for i, line in enumerate(lines) if "weak scaling (n/P = 2400)" in line)
    for start, key in ((0, "best_strong"), (weak_at, "best_weak")):
        rows = [line.split() for line in lines[start + 2:start + 2 + len(RANKS)]]
        assert [int(r[0]) for r in rows] == RANKS
        assert [r[-1] for r in rows] == [b["variant"] for b in study[key]]
    first = study["best_strong"][0]["variant"]
    at = next(v["comm_overtakes_at"] for v in study["variants"] if v["variant"] == first)
    sentence = (f"  communication overtakes computation at {at} ranks for {first}" if at else
                f"  communication stays below computation up to 8 ranks for {first}")
    assert sentence in lines
    assert lines[-1].startswith("machine Intel(R) Xeon(R) Gold 6148") and "FAT_TREE" in lines[-1]


@pytest.mark.slow
def test_the_store_holds_the_runs(scaled):
    with Store.open(scaled[2], "r") as store:
        commands = list(store.frame("runs")["command"])
        assert commands.count("predict --scaling") == 2
        assert len(store.frame("variant_predictions")) == 0          # rankings are not kept
        assert len(store.frame("kernel_predictions")) > 0            # the analyses are


# ---- bad requests: exit code 2, one message, no store written ------------------------------------

@pytest.fixture
def refused(tmp_path):
    return refusal(tmp_path, "predict")


def test_ranks_max_zero_is_refused(refused):
    err = refused(SCENARIO, "--scaling", "--ranks-max", 0, "--platform", FAT_TREE)
    assert "--ranks-max 0: expected a rank count of at least 1" in err


def test_a_platform_file_that_is_not_xml_is_refused_with_file_and_line(refused, tmp_path):
    bad = tmp_path / "platform.yaml"
    bad.write_text("cluster: fat-tree\nbw: 100Gbps\n")
    err = refused(SCENARIO, "--scaling", "--ranks-max", 8, "--platform", bad)
    assert f"platform file {bad}, line 1: not XML" in err


def test_a_missing_platform_file_is_refused(refused, tmp_path):
    err = refused(SCENARIO, "--scaling", "--platform", tmp_path / "absent.xml")
    assert f"platform file {tmp_path / 'absent.xml'}: No such file" in err


def test_more_ranks_than_the_platforms_hosts_are_refused(refused):
    err = refused(SCENARIO, "--scaling", "--ranks-max", 300, "--platform", FAT_TREE)
    assert f"{FAT_TREE}: 300 ranks asked, the platform has 256 hosts" in err


@pytest.mark.parametrize("extra", [["--ranks", "2"], ["--threads", "2"], ["--corrected"]])
def test_scaling_with_a_layout_of_its_own_is_refused(refused, extra):
    err = refused(SCENARIO, "--scaling", *extra)
    assert "--scaling chooses the layouts itself" in err and "drop --ranks, --threads" in err


def test_a_scenario_without_mpi_skeletons_is_refused(refused):
    err = refused(NO_MPI, "--scaling", "--ranks-max", 8, "--platform", FAT_TREE)
    assert f"scenario small ({NO_MPI}) has no MPI skeleton" in err


def test_a_ranks_max_that_is_no_number_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["predict", str(SCENARIO), "--scaling", "--ranks-max", "many",
              "--db", str(tmp_path / "never.h5")])
    assert info.value.code == 2
    assert "--ranks-max: invalid int value: 'many'" in capsys.readouterr().err
    assert not (tmp_path / "never.h5").exists()


@pytest.mark.parametrize("extra", [["--platform", FAT_TREE], ["--ranks-max", "8"],
                                   ["--platform", FAT_TREE, "--ranks-max", "8", "--json"]])
def test_scaling_options_without_scaling_are_refused(refused, extra):
    """Nothing is ignored silently: a plain predict given --platform or --ranks-max is told to add
    --scaling, before the scenario is predicted."""
    err = refused(SCENARIO, *extra)
    assert "--ranks-max and --platform belong to --scaling: add --scaling" in err


def test_a_size_invalid_for_an_ivp_is_refused_before_anything_is_written(refused):
    err = refused(SCENARIO, "--scaling", "--ranks-max", 4, "-n", 2)
    assert "IVP Lorenz96" in err and "n = 2 is not valid: expected n >= 4" in err
