"""Generated MPI variants on simulated clusters (SimGrid SMPI): injected seconds plus communication, benched runs, SimGrid's own word on a platform file, failures as data."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hybridtune.describe.loader import load
from hybridtune.describe.platform import PlatformError, load_platform
from hybridtune.errors import RequestError
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.simulate import smpi, smpi_run
from hybridtune.simulate.smpi import SimulationError, build_simulated, check_platform
from hybridtune.simulate.smpi_run import simulate

FLAT16 = Path(__file__).parents[1] / "data" / "platforms" / "flat-16.xml"
N = 240            # Lorenz96: 30 components a rank on 8 ranks
H = 0.005
SCENARIO = """name: simulated
methods: [radauIIA7]
ivps: [Lorenz96]
skeletons: [A-mpi]
machine: SkylakeSP_Gold-6148.yml
n: [240]
threads: [1]
ranks: [1, 2]
"""


@pytest.fixture(scope="module")
def variant(tmp_path_factory):
    """A-mpi on Lorenz96 (allgather form) and how many kernel calls one step makes."""
    path = tmp_path_factory.mktemp("simulated") / "simulated.scenario.yaml"
    path.write_text(SCENARIO)
    scenario = load(path)
    method, ivp = scenario.methods[0], scenario.ivps[0]
    chosen = next(v for v in pool_for(scenario, method).values() if v.skeleton == "A-mpi")
    generated = generate_variant(chosen, scenario.skeletons[0], scenario.template_map, method, ivp)
    # RHS_predictor, Approx and Update once a step, LC and RHS once a corrector step
    return generated, 3 + 2 * method.corrector_steps


def test_injected_seconds_plus_communication_on_1_to_8_ranks(variant):
    generated, calls = variant
    assert generated.call_templates == ("RHS_predictor", "LC", "RHS", "Approx", "Update")
    d = 1e-4
    once, twice = (build_simulated(generated, [x] * len(generated.call_templates))
                   for x in (d, 2 * d))
    communication = {}
    for ranks in (1, 2, 4, 8):
        run = simulate(once, N, ranks, FLAT16, steps=5, h=H)
        assert run.status == "ok", run.message
        assert run.ranks == ranks and run.mode == "injected" and run.finite is None
        assert run.wall_s > 0 and run.max_rss_bytes > 0
        communication[ranks] = run.seconds_per_step - d * calls
        more = simulate(twice, N, ranks, FLAT16, steps=5, h=H)
        assert more.seconds_per_step - run.seconds_per_step == pytest.approx(d * calls, rel=1e-3)
    assert communication[1] == pytest.approx(0.0, abs=1e-7)     # one rank exchanges nothing
    assert 0 < communication[2] < communication[4] < communication[8] < d * calls


def test_benched_on_two_ranks_computes_a_finite_state(variant):
    generated, _ = variant
    run = simulate(build_simulated(generated), N, 2, FLAT16, steps=3, h=H, mode="benched")
    assert run.status == "ok", run.message
    assert run.finite is True and run.seconds_per_step > 0


def test_simgrid_loads_the_platform_and_names_the_line_it_cannot_read(tmp_path):
    assert check_platform(FLAT16) == tuple(sorted(load_platform(FLAT16).hosts))
    not_xml = tmp_path / "not-xml.xml"
    not_xml.write_text("cluster: 16 nodes\n")
    with pytest.raises(PlatformError, match=r"not-xml.xml, line 1: SimGrid cannot load it: "
                                            r"Invalid XML .*Unexpected character"):
        check_platform(not_xml)
    unknown = tmp_path / "unknown.xml"
    unknown.write_text(FLAT16.read_text().replace('lat="1us"', 'lat="1us" colour="red"'))
    with pytest.raises(PlatformError, match=r"unknown.xml, line 5: .*Bad attribute `colour' in "
                                            r"`cluster'"):
        check_platform(unknown)
    bare = tmp_path / "bare.xml"          # no XML declaration and DOCTYPE: SimGrid refuses it
    bare.write_text("\n".join(line for line in FLAT16.read_text().splitlines()
                              if not line.startswith(("<?xml", "<!DOCTYPE"))))
    with pytest.raises(PlatformError, match=r"bare.xml, line 2: .*in prolog.*<!DOCTYPE platform "
                                            r"SYSTEM"):
        check_platform(bare)


def test_ranks_beyond_the_hosts_are_refused_before_anything_runs(variant, monkeypatch):
    generated, _ = variant
    library = build_simulated(generated, [1e-4] * len(generated.call_templates))

    def nothing_may_run():
        raise AssertionError("smpirun was to be started")
    monkeypatch.setattr(smpi_run, "smpi_runner", nothing_may_run)
    with pytest.raises(PlatformError, match="17 ranks asked, the platform has 16 hosts"):
        simulate(library, N, 17, FLAT16, steps=2, h=H)
    with pytest.raises(RequestError, match="built for injected runs, asked to run benched"):
        simulate(library, N, 2, FLAT16, steps=2, h=H, mode="benched")


def test_a_crash_and_a_hang_are_failed_runs_with_their_words(variant):
    generated, _ = variant
    seconds = [1e-4] * len(generated.call_templates)
    head = "void ht_step(ht_ctx *ctx, double t, double h)\n{\n"
    crash = replace(generated, code=generated.code.replace(
        head, head + '    if (ctx->rank == 1) { fprintf(stderr, "rank 1 gives up\\n"); abort(); }\n'
    ).replace('#include "ht_runtime.h"', '#include <stdio.h>\n#include "ht_runtime.h"'))
    run = simulate(build_simulated(crash, seconds), N, 2, FLAT16, steps=2, h=H)
    assert run.status == "failed" and run.seconds_per_step is None
    assert "rank 1 gives up" in run.message and "exited with status" in run.message
    hang = replace(generated, code=generated.code.replace(
        head, head + "    for (volatile int spin = 1; spin;) ;\n"))
    run = simulate(build_simulated(hang, seconds), N, 2, FLAT16, steps=2, h=H, timeout_s=2)
    assert run.status == "failed" and "no end within 2 s" in run.message
    assert 2 <= run.wall_s < 10


def test_builds_refuse_what_cannot_be_simulated(variant, tmp_path):
    generated, _ = variant
    with pytest.raises(SimulationError, match=r"compute_s has 2 values, expected 5 \(one per "
                                              r"call site: RHS_predictor, LC, RHS, Approx, Update"):
        build_simulated(generated, [1e-4, 1e-4])
    with pytest.raises(SimulationError, match="is not a finite number of seconds"):
        build_simulated(generated, [1e-4] * 4 + [float("nan")])
    with pytest.raises(SimulationError, match="not an MPI variant"):
        build_simulated(replace(generated, mpi=False))


def test_missing_tools_say_what_to_install(monkeypatch):
    monkeypatch.setattr(smpi.shutil, "which", lambda name: None)
    monkeypatch.setattr(smpi.os, "geteuid", lambda: 1000)
    with pytest.raises(SimulationError, match=r"apt-get install -y libsimgrid-dev"):
        smpi.smpi_tools()
