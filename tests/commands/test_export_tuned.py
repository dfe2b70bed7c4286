"""`export --tuned`: the dispatch table from a tuned store, the library built with make (by mpicc on MPI ranks), and its bad inputs."""

import json
import math
import os
import shutil
import subprocess

import numpy as np
import pytest

from hybridtune.compiler.build import mpi_compiler
from hybridtune.describe.loader import load
from hybridtune.errors import RequestError
from hybridtune.commands.main import main
from hybridtune.pipeline.tuned_export import table_lines
from hybridtune.generate.pool import pool_for
from hybridtune.measure.launch_env import child_environment, nested_mpi_command
from hybridtune.measure.race import RACE_GAP
from hybridtune.reference.pirk import solve
from hybridtune.pipeline.dispatch_table import dispatch_table, layout_times, measured_times, step_regions
from hybridtune.store import Store
from hybridtune.store.schema import TABLES
from tune_support import BIN, DRIVER, TUNE_SCENARIO, measurement_rows, run, tune_command

SIZES = (600, 24000)        # one time step in L2 and in L3 on one thread of the scenario's machine
UNMEASURED = 600000         # main memory: predicted offline, never measured
MPI_DRIVER = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tuned_mpi.h"
/* main N STEPS H [nompi]: the state after STEPS steps, the blocks gathered on rank 0, which
 * prints the choice, the ranks, its block and the state; nompi: MPI is never initialised. */
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    int steps = atoi(argv[2]), with_mpi = argc < 5 || strcmp(argv[4], "nompi"), rank = 0;
    double h = atof(argv[3]);
    if (with_mpi) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    tuned_mpi_ctx *c = tuned_mpi_create_threads(n, 1);
    if (!c) {                                  /* on every rank alike: no rule of its rank count */
        if (rank == 0) printf("NULL\n");
        if (with_mpi) MPI_Finalize();
        return 0;
    }
    int ranks = tuned_mpi_chosen_ranks(c);
    tuned_mpi_initial_values(c);
    for (int k = 0; k < steps; ++k) tuned_mpi_step(c, k * h, h);
    double *y = tuned_mpi_state(c);
    long lo, hi;
    tuned_mpi_chosen_block(c, &lo, &hi);
    if (ranks > 1) {
        int mine = (int)(hi - lo), at = (int)lo;
        int *counts = malloc(ranks * sizeof(int)), *displs = malloc(ranks * sizeof(int));
        MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Gather(&at, 1, MPI_INT, displs, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : y + lo, mine, MPI_DOUBLE, y, counts, displs,
                    MPI_DOUBLE, 0, MPI_COMM_WORLD);
        free(counts);
        free(displs);
    }
    if (rank == 0) {
        printf("%s %d %d %ld %ld %d\n", tuned_mpi_chosen_variant(c), ranks, tuned_mpi_chosen_measured(c), lo, hi,
               tuned_mpi_chosen_candidates(c));
        for (long j = 0; j < n; ++j) printf("%.17g\n", y[j]);
    }
    tuned_mpi_destroy(c);
    if (with_mpi) MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="module")
def tuned_store(predicted_store, tmp_path_factory):
    """The tune scenario tuned at two sizes on 1 thread (top 3), its shortlists timed on 2 threads
    (`measure`, which also runs where one core is all there is) and predicted in main memory."""
    path = tmp_path_factory.mktemp("tuned") / "tuned.h5"
    shutil.copy(predicted_store, path)
    for n in SIZES:
        done = run(tune_command(path, "-n", str(n), "--threads", "1", "--strategy", "top_k:3"))
        assert done.returncode == 0, done.stderr
        ids = sorted({r["id"] for r in measurement_rows(path) if r["n"] == n})
        done = run([str(BIN / "hybridtune"), "measure", TUNE_SCENARIO, "--db", str(path), "-n",
                    str(n), "--threads", "2", "--budget", "0.1"]
                   + [arg for i in ids for arg in ("--variant", i)])
        assert done.returncode == 0, done.stderr
    done = run([str(BIN / "hybridtune"), "predict", TUNE_SCENARIO, "--db", str(path), "-n",
                str(UNMEASURED)])
    assert done.returncode == 0, done.stderr
    return path


def _export(store, out, *extra):
    return main(["export", TUNE_SCENARIO, "--tuned", "--db", str(store), "-o", str(out),
                 "--name", "tuned_ic", *extra])


def _best_measured(rows, n, threads):
    """(variant, threads) -> seconds at n over thread counts up to threads: per thread count the
    latest re-timing round's variants at their re-timing where the round raced the fastest first
    timing, else first timings (one pass each here)."""
    out = {}
    for t in sorted({row["threads"] for row in rows if row["threads"] <= threads}):
        mine = [row for row in rows if row["status"] == "ok" and row["n"] == n
                and row["threads"] == t]
        first = {row["id"]: row["median_s"] for row in mine if row["timing"] == "alone"}
        again = sorted((row for row in mine if row["timing"] == "interleaved"),
                       key=lambda row: row["row_id"])
        latest = {row["id"]: row["median_s"] for row in again
                  if row["run_id"] == again[-1]["run_id"]} if again else {}
        times = (dict(latest)
                 if first and min(first, key=first.get) in latest else first)
        out.update({(variant, t): seconds for variant, seconds in times.items()})
    return out


@pytest.mark.slow
def test_tuned_export_dispatches_and_matches_the_reference(tuned_store, tmp_path, capsys):
    out = tmp_path / "tuned"
    assert _export(tuned_store, out) == 0
    printed = capsys.readouterr().out
    assert "PREDICTED, NOT MEASURED" in printed
    table = json.loads((out / "tuned_ic.json").read_text())
    variants = table["variants"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["Makefile", "tuned_ic.c", "tuned_ic.h", "tuned_ic.json"]
        + [f"tuned_ic_v{i}.c" for i in range(len(variants))])
    rules = table["rules"]
    print("\n".join(f"{r['threads']} {r['n_low']}..{r['n_high']} {r['level']} {r['variant']} "
                    f"x{r['run_threads']} {'measured' if r['measured'] else 'predicted'} "
                    f"{r['median_s_per_step']}" for r in rules))

    rows = measurement_rows(tuned_store)
    for rule in rules:
        inside = [n for n in SIZES if n >= rule["n_low"]
                  and (rule["n_high"] is None or n < rule["n_high"])]
        assert rule["measured"] == bool(inside), rule
        if rule["measured"]:       # one measured size per region here: its fastest, fewer threads too
            (n,) = inside
            times = _best_measured(rows, n, rule["threads"])
            best = min(times, key=times.get)
            chosen = (rule["variant"], rule["run_threads"])
            # the fastest, or one tied with it that another range chose (fewer variants)
            assert chosen == best or (times[chosen] <= times[best] * (1 + RACE_GAP)
                                      and "tied within" in rule["basis"]), rule
            assert rule["median_s_per_step"] == {str(n): times[chosen]}
    scenario = load(TUNE_SCENARIO, "scenario")
    levels = [level for level, _, _ in step_regions(scenario.machine, table["step_vectors"], 1)]
    assert [r["level"] for r in rules if r["threads"] == 1] == levels == ["L1", "L2", "L3", "MEM"]
    memory = next(r for r in rules if r["threads"] == 1 and r["level"] == "MEM")
    with Store.open(tuned_store, "r") as store:
        predictions = store.frame("variant_predictions")
    top = predictions[(predictions.n == UNMEASURED) & (predictions["rank"] == 1)]
    assert memory["variant"] in set(top.variant) and "offline prediction" in memory["basis"]
    assert "neighbouring" in next(r for r in rules if r["level"] == "L1")["basis"]
    header = (out / "tuned_ic.h").read_text()
    assert header.count("PREDICTED, NOT MEASURED") == sum(not r["measured"] for r in rules)

    subprocess.run(["make", "-s", "-C", str(out)], check=True, capture_output=True)
    driver = tmp_path / "main.c"
    driver.write_text(DRIVER)
    exe = tmp_path / "main"
    subprocess.run(["gcc", "-O2", "-fopenmp", "-I", str(out), str(driver),
                    str(out / "libtuned_ic.a"), "-lm", "-o", str(exe)], check=True)
    method, ivp = scenario.methods[0], scenario.ivps[0]
    for n in (*SIZES, 300):
        h, steps = ivp.step_size(n), 5
        want = solve(method, ivp, n, 0.0, steps * h, steps)
        for threads in (1, 2):
            lines = subprocess.run([str(exe), str(n), str(threads), str(steps), repr(h)],
                                   capture_output=True, text=True, check=True).stdout.split("\n")
            variant, run_threads, measured = lines[0].split()
            rule = next(r for r in rules if r["threads"] == threads and n >= r["n_low"]
                        and (r["n_high"] is None or n < r["n_high"]))
            assert (variant, int(run_threads), bool(int(measured))) == (
                rule["variant"], rule["run_threads"], rule["measured"])
            y = np.array([float(x) for x in lines[1:] if x])
            assert np.max(np.abs(y - want)) <= 1e-12 * np.max(np.abs(want)), (n, threads)


def _row(**values):
    """A full measurements row: the columns not given empty, NaN or zero."""
    empty = {"str": "", "int": 0, "float": math.nan, "json": {}, "bool": False}
    row = {name: empty[kind] for name, kind in TABLES["measurements"].columns}
    return {**row, "ranks": 1, "nodes": 1, **values}


def test_tuned_export_refuses_a_store_without_ok_measurements(tmp_path, capsys):
    store = tmp_path / "bare.h5"
    with Store.open(store, "a") as opened:
        opened.append_many("measurements", [
            _row(id="x", method="radauIIA7", ivp="InverterChain", n=600, threads=1,
                 status="wrong_answer"),
            _row(id="x", method="radauIIA7", ivp="Cusp", n=600, threads=1, status="ok",
                 median_s=1e-5)])
    out = tmp_path / "out"
    assert _export(store, out) == 2
    err = capsys.readouterr().err
    assert "no ok measurement of radauIIA7 on InverterChain" in err and "radauIIA7/Cusp" in err
    assert not out.exists()


MIXED = ("methods: [radauIIA5]\nivps: [{ivp}]\nskeletons: [{skeletons}]\n"
         "machine: SkylakeSP_Gold-6148\nn: [576]\nthreads: [1]\nranks: [1, 2]\n")


def _mixed(tmp_path, ivp: str = "InverterChain", skeletons: str = "F, F-mpi"):
    """A scenario of F over threads and F-mpi over ranks, and the first variant of each form."""
    path = tmp_path / "mixed.scenario.yaml"
    path.write_text(MIXED.format(ivp=ivp, skeletons=skeletons))
    scenario = load(path, "scenario")
    firsts = {}
    for variant in pool_for(scenario, scenario.methods[0]).values():
        firsts.setdefault(variant.skeleton, variant.id)
    return path, firsts


def _store(path, *measured):
    """A store of ok measurements (id, IVP, ranks, seconds) at n = 576 on one thread per rank."""
    with Store.open(path, "a") as opened:
        opened.append_many("measurements", [
            _row(id=v, method="radauIIA5", ivp=ivp, n=576, threads=1, ranks=p, status="ok",
                 median_s=s, timing="alone", hardware_id="h", row_id=f"r{i}", run_id="x")
            for i, (v, ivp, p, s) in enumerate(measured)])
    return path


def test_tuned_export_of_mpi_variants_measured_on_one_rank_alone_is_refused(tmp_path, capsys):
    scenario, firsts = _mixed(tmp_path, skeletons="F-mpi")
    store = _store(tmp_path / "s.h5", (firsts["F-mpi"], "InverterChain", 1, 1e-5))
    out = tmp_path / "out"
    assert main(["export", str(scenario), "--tuned", "--db", str(store), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "MPI variants on the rank counts they were measured on beyond one" in err, err
    assert not out.exists()


def test_tuned_export_builds_a_neighbour_exchange_with_a_fixed_halo_only(tmp_path, capsys):
    # InverterChain reads one component to each side at every n: its -nx form runs, halo 1;
    # Heat2D reads a grid row, which grows with n: the allgather form takes its place
    for ivp, halo in (("InverterChain", 1), ("Heat2D", None)):
        scenario, firsts = _mixed(tmp_path, ivp)
        store = _store(tmp_path / f"{ivp}.h5", (firsts["F"], ivp, 1, 1e-5),
                       (firsts["F-mpi"], ivp, 2, 3e-5), (firsts["F-mpi-nx"], ivp, 2, 2e-5))
        out = tmp_path / ivp
        assert main(["export", str(scenario), "--tuned", "--db", str(store), "-o", str(out),
                     "--name", "t"]) == 0
        printed = capsys.readouterr().out
        table = json.loads((out / "t.json").read_text())
        two = {r["variant"] for r in table["rules"] if r["ranks"] == 2}
        assert {r["variant"] for r in table["rules"] if r["ranks"] == 1} == {firsts["F"]}
        assert table["mpi"] and "by mpicc" in printed
        if halo:
            assert two == {firsts["F-mpi-nx"]}
            source = (out / f"t_v{table['variants'].index(firsts['F-mpi-nx'])}.c").read_text()
            assert "#define HT_HALO 1L" in source
        else:
            assert two == {firsts["F-mpi"]} and "halo grows with n" in printed


def _mpi_run(command: list[str], **env) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={**child_environment(os.environ), **env})


@pytest.mark.mpi
@pytest.mark.slow
def test_tuned_export_dispatches_on_ranks_and_two_ranks_match_one(tmp_path):
    """F measured on one rank, two F-mpi variants on one and two (`measure`); the library built by
    mpicc with two candidates per range, run without MPI and by mpiexec on 2 and 3 ranks at
    n = 577 (two uneven blocks), and adaptive on 2 ranks."""
    scenario_file, firsts = _mixed(tmp_path)
    scenario = load(scenario_file, "scenario")
    method, ivp, n = scenario.methods[0], scenario.ivps[0], 577
    openmp = firsts["F"]
    mpis = [v.id for v in pool_for(scenario, method).values() if v.skeleton == "F-mpi"][:2]
    store = tmp_path / "s.h5"
    done = run([str(BIN / "hybridtune"), "measure", str(scenario_file), "--db", str(store),
                "-n", "576", "--threads", "1", "--ranks", "1", "--ranks", "2", "--budget", "0.1",
                "--variant", openmp, *(arg for v in mpis for arg in ("--variant", v))])
    assert done.returncode == 0, done.stdout + done.stderr

    out = tmp_path / "tuned"
    assert main(["export", str(scenario_file), "--tuned", "--db", str(store), "-o", str(out),
                 "--name", "tuned_mpi", "--candidates", "2"]) == 0
    table = json.loads((out / "tuned_mpi.json").read_text())
    assert table["mpi"] and {r["ranks"] for r in table["rules"]} == {1, 2}
    one, two = (next(r for r in table["rules"] if r["ranks"] == ranks and r["n_low"] <= n
                     and (r["n_high"] is None or n < r["n_high"])) for ranks in (1, 2))
    assert one["variant"] == openmp and two["variant"] in mpis    # one rank needs no MPI
    assert {c["variant"] for c in two["candidates"]} == set(mpis)
    assert two["layout"] == "2 rank(s) x 1 thread(s)"
    assert "block" in table["ht_state_by_ranks"]["more than 1"]
    assert "CC = mpicc" in (out / "Makefile").read_text()
    assert "#include <mpi.h>" in (out / "tuned_mpi.c").read_text()
    assert "2 rank(s) x 1+ threads asked" in (out / "tuned_mpi.h").read_text()

    cc = mpi_compiler()
    subprocess.run(["make", "-s", "-C", str(out), f"CC={cc}"], check=True, capture_output=True)
    (tmp_path / "main.c").write_text(MPI_DRIVER)
    exe = tmp_path / "main"
    subprocess.run([cc, "-O2", "-fopenmp", "-I", str(out), str(tmp_path / "main.c"),
                    str(out / "libtuned_mpi.a"), "-lm", "-o", str(exe)], check=True)
    h, steps = ivp.step_size(n), 4
    args = [str(exe), str(n), str(steps), repr(h)]
    states = {}
    for ranks, command in ((1, [*args, "nompi"]), (2, nested_mpi_command(2, args))):
        done = _mpi_run(command)
        assert done.returncode == 0, done.stderr
        head, *values = done.stdout.split("\n")
        variant, chosen_ranks, measured, lo, hi, candidates = head.split()
        assert candidates == "1"
        rule = one if ranks == 1 else two
        assert (variant, int(chosen_ranks), bool(int(measured))) == (
            rule["variant"], ranks, rule["measured"])
        assert (int(lo), int(hi)) == ((0, n) if ranks == 1 else (0, (n + 1) // 2))
        states[ranks] = np.array([float(x) for x in values if x])
    assert np.max(np.abs(states[2] - states[1])) <= 1e-10 * np.max(np.abs(states[1]))
    want = solve(method, ivp, n, 0.0, steps * h, steps)
    assert np.max(np.abs(states[1] - want)) <= 1e-10 * np.max(np.abs(want))
    three = _mpi_run(nested_mpi_command(3, args))                   # no 3-rank rule: NULL
    assert (three.returncode, three.stdout) == (0, "NULL\n"), three.stderr
    # adaptive on two ranks: 2 candidates x 5 rounds x 3 steps, then rank 0's choice on both
    steps = 40
    done = _mpi_run(nested_mpi_command(2, [str(exe), str(n), str(steps), repr(h)]),
                    HYBRIDTUNE_ADAPT="1")
    assert done.returncode == 0, done.stderr
    head, *values = done.stdout.split("\n")
    assert head.split()[0] in mpis and head.split()[1] == "2" and head.split()[5] == "2"
    want = solve(method, ivp, n, 0.0, steps * h, steps)
    adapted = np.array([float(x) for x in values if x])
    assert np.max(np.abs(adapted - want)) <= 1e-10 * np.max(np.abs(want))


def test_tuned_export_bad_arguments(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["export", TUNE_SCENARIO, "--tuned", "-o", str(out)]) == 2
    assert "--tuned: expected --db FILE" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["export", TUNE_SCENARIO, "--tuned", "--variant", "F_x", "--db", "x.h5", "-o",
              str(out)])
    assert exited.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    assert _export(tmp_path / "missing.h5", out) == 2
    assert "no such store" in capsys.readouterr().err
    assert not out.exists()


def _rows(*measured):
    return [{"id": v, "method": "m", "ivp": "i", "n": n, "threads": t, "status": "ok",
             "median_s": s, "timing": timing, "hardware_id": hw, "row_id": row, "run_id": "r",
             "generator_version": 1, "code_sha256": v, "compiler_flags": "-O3",
             "ci_low_s": s, "ci_high_s": s, "ci_rel": 0.0}
            for row, (v, n, t, s, timing, hw) in enumerate(measured)]


def test_dispatch_table_rules():
    machine = load(TUNE_SCENARIO, "scenario").machine
    ids = {v: v for v in ("a", "b", "c")}
    rows = _rows(("a", 600, 1, 1.0, "alone", "h"), ("b", 600, 1, 1.1, "alone", "h"),
                 ("a", 600, 1, 1.3, "interleaved", "h"),       # the re-timing round counts:
                 ("b", 600, 1, 1.15, "interleaved", "h"),      # b wins
                 ("a", 2000, 1, 2.0, "alone", "h"), ("b", 2000, 1, 2.4, "alone", "h"),
                 ("a", 600, 2, 0.9, "alone", "h"), ("b", 600, 2, 1.5, "alone", "h"),
                 ("c", 600, 1, 0.1, "alone", "other"))        # another machine, fewer rows
    hardware, measured, notes = measured_times(rows, "m", "i", ids)
    assert hardware == "h" and measured[(600, 1, 1)] == pytest.approx({"a": 1.3, "b": 1.15})
    assert "2 machines" in notes[0]
    table = dispatch_table(measured, {}, machine, 10, "m", "i", hardware, notes)
    # n = 600 and 2000 share L2 on one thread and disagree: a is 1.13 + 1.0, b 1.0 + 1.2
    assert table.rule_for(600, 1).variant == "a" and table.rule_for(600, 1).measured
    assert any("disagree" in note for note in table.notes)
    assert table.rule_for(100, 1).variant == "a" and not table.rule_for(100, 1).measured
    # two threads: a with 2 (0.9) beats b with 1 (1.1); a 1-thread request takes the 1-thread key
    assert (table.rule_for(600, 2).variant, table.rule_for(600, 2).run_threads) == ("a", 2)
    assert table.rule_for(600, 8).threads == 2
    slower = dispatch_table(*measured_times(
        _rows(("a", 600, 1, 1.0, "alone", "h"), ("a", 600, 2, 1.4, "alone", "h")),
        "m", "i", ids)[1:2], {(10 ** 6, 1, 2): {"b": 3.0, "c": 2.0}}, machine, 10, "m", "i", "h")
    assert slower.rule_for(600, 2).run_threads == 1              # fewer threads measured faster
    assert (slower.rule_for(10 ** 6, 2).variant, slower.rule_for(10 ** 6, 2).measured) == ("c", False)
    with pytest.raises(RequestError, match="no ok measurement of m on j"):
        measured_times(rows, "m", "j", ids)


def test_dispatch_table_keys_rank_counts():
    machine = load(TUNE_SCENARIO, "scenario").machine
    ids = {v: v for v in ("a", "b", "m1", "m2")}
    rows = _rows(("a", 600, 1, 1.0, "alone", "h"), ("b", 600, 1, 1.2, "alone", "h"),
                 ("m1", 600, 1, 0.5, "alone", "h"),       # an MPI variant on one rank
                 ("m1", 600, 1, 0.6, "alone", "h"), ("m2", 600, 1, 0.7, "alone", "h"),
                 ("m1", 600, 2, 0.4, "alone", "h"), ("m2", 600, 2, 0.3, "alone", "h"))
    for row, ranks in zip(rows, (None, 1, 1, 2, 2, 2, 2)):
        if ranks:                                         # a row without ranks is of one rank
            row["ranks"] = ranks
    hardware, measured, notes = measured_times(rows, "m", "i", ids)
    assert measured == {(600, 1, 1): {"a": 1.0, "b": 1.2, "m1": 0.5},
                        (600, 2, 1): {"m1": 0.6, "m2": 0.7},
                        (600, 2, 2): {"m1": 0.4, "m2": 0.3}}
    predicted = {(10 ** 6, 2, 1): {"m1": 2.0, "m2": 3.0}, (10 ** 6, 1, 1): {"m2": 1.0}}
    measured, predicted, left = layout_times(measured, predicted, frozenset({"m1", "m2"}))
    assert measured[(600, 1, 1)] == {"a": 1.0, "b": 1.2} and (10 ** 6, 1, 1) not in predicted
    assert "2 MPI variant(s)' one-rank times left out" in left[0]
    table = dispatch_table(measured, predicted, machine, 10, "m", "i", hardware, left)
    assert table.rank_keys == (1, 2) and table.thread_keys(2) == (1, 2)
    assert table.rule_for(600, 1).variant == "a"                           # one rank: no MPI
    assert (table.rule_for(600, 1, ranks=2).variant, table.rule_for(600, 1, ranks=2).measured) \
        == ("m1", True)
    two = table.rule_for(600, 4, ranks=2)                   # the 2-thread key: m2 on 2 threads
    assert (two.ranks, two.threads, two.variant, two.run_threads) == (2, 2, "m2", 2)
    assert table.rule_for(600, 1, ranks=3) is None         # rank counts match exactly
    far = table.rule_for(10 ** 6, 1, ranks=2)
    assert (far.variant, far.measured) == ("m1", False) and "offline prediction" in far.basis
    # the regions of a layout split one time step over ranks x threads cores
    assert [r.n_high for r in table.rules if (r.ranks, r.threads) == (2, 1)] == [
        high for _, _, high in step_regions(machine, 10, 2)]
    lines = table_lines(table)
    assert any(line.startswith("2 rank(s) x 2+ threads asked") and "m2 on 2 rank(s) x 2 "
               "thread(s)" in line for line in lines)
    assert table.as_json()["rules"][-1]["layout"] == "2 rank(s) x 2 thread(s)"
    # MPI variants alone: one rank runs them too, where they have times on more than one rank
    alone, _, left = layout_times({(600, 1, 1): {"m1": 1.0}, (600, 2, 1): {"m2": 0.5}}, {},
                                  frozenset({"m1", "m2"}))
    assert alone == {(600, 1, 1): {"m1": 1.0}, (600, 2, 1): {"m2": 0.5}} and not left
    assert layout_times({(600, 1, 1): {"m1": 1.0}}, {}, frozenset({"m1"}))[0] == {}


def test_a_range_takes_a_variant_tied_with_its_fastest_that_another_range_chose():
    machine = load(TUNE_SCENARIO, "scenario").machine
    ids = {v: v for v in ("a", "b")}
    # a is 1% faster at n = 600, a gap too small to matter; b is 10% faster at n = 10^5
    rows = _rows(("a", 600, 1, 1.0, "alone", "h"), ("b", 600, 1, 1.01, "alone", "h"),
                 ("a", 10 ** 5, 1, 2.2, "alone", "h"), ("b", 10 ** 5, 1, 2.0, "alone", "h"))
    hardware, measured, notes = measured_times(rows, "m", "i", ids)
    table = dispatch_table(measured, {}, machine, 10, "m", "i", hardware, notes)
    small, large = table.rule_for(600, 1), table.rule_for(10 ** 5, 1)
    assert small.level != large.level
    assert (small.variant, large.variant) == ("b", "b") and table.variants == ("b",)
    assert "tied within 2% at every size with a (1 thread)" in small.basis
    assert small.median_s == ((600, 1.01),)
    # 3% apart is no tie: each range keeps its fastest
    rows[1]["median_s"] = 1.03
    apart = dispatch_table(*measured_times(rows, "m", "i", ids)[1:2], {}, machine, 10, "m",
                           "i", "h")
    assert (apart.rule_for(600, 1).variant, apart.rule_for(10 ** 5, 1).variant) == ("a", "b")
