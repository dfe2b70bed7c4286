"""Extra-P 4.2.5 itself (run from .venv-extrap, no mocks) beside our PMNF fit: the same hypotheses; on data of known terms, at the edges of its selection rule and over noise seeds both name the same term and extrapolate alike; its text input and printed forms; its errors when missing, failing or printing what cannot be read."""

from __future__ import annotations

import json
import math
import re
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from hybridtune.errors import HybridtuneError
from hybridtune.predict import extrap_adapter
from hybridtune.predict.extrap_adapter import (ENV, PRINT, extrap_executable, fit_extrap,
                                               parse_output, same_leading_term, text_input)
from hybridtune.predict.pmnf import Term, fit_pmnf, hypotheses

RANKS = [2, 4, 8, 16, 32, 64]
SIZES = [64, 128, 256, 512, 1024, 2048]
SEED = 1          # one seed for every noisy set; over seeds 0..9: test_over_noise_seeds_...


@pytest.fixture
def extrap():
    """Extra-P's executable; its absence fails (make test builds it), it is never skipped."""
    found = extrap_executable()
    if found is None or not found.is_file():
        pytest.fail(f"Extra-P not found ({found or 'not on PATH'}): `make extrap` builds it in "
                    f".venv-extrap (or point ${ENV} at an extrap executable)")
    return found


def _data(xs, f, noise, repetitions, seed=SEED):
    rng = np.random.default_rng(seed)
    if not noise:
        return [(x, f(x)) for x in xs]
    return [(x, [f(x) * rng.normal(1, noise) for _ in range(repetitions)]) for x in xs]


def _means(points):
    return [(x, float(np.mean(v))) for x, v in points]


# name: x values, truth, negative exponents, relative noise, repetitions, its term, extrapolated to
SETS = {
    "linear": (RANKS, lambda p: 3 + 0.5 * p, False, 0.0, 1, "p", 128),
    "sqrt": (RANKS, lambda p: 1 + 0.5 * p ** 0.5, False, 0.0, 1, "p^(1/2)", 128),
    "log_squared": (RANKS, lambda p: 2 + 0.3 * math.log2(p) ** 2, False, 0.0, 1, "log2(p)^2", 128),
    "constant": (RANKS, lambda p: 2.5, False, 0.0, 1, "constant", 128),
    "p_log_p_noisy": (RANKS, lambda p: 1 + 0.2 * p * math.log2(p), False, 0.02, 5, "p * log2(p)",
                      128),
    "log_noisy": (RANKS, lambda p: 2 + 0.7 * math.log2(p), False, 0.01, 5, "log2(p)", 128),
    "n_squared_noisy": (SIZES, lambda n: 1e-3 + 2e-6 * n * n, False, 0.03, 5, "p^2", 4096),
    "strong_scaling_noisy": (RANKS, lambda p: 0.07 + 1.9 / p, True, 0.02, 5, "p^-1", 128),
}


@pytest.mark.parametrize("name", SETS)
def test_extrap_and_our_fit_name_the_known_term_and_extrapolate_alike(extrap, name):
    xs, f, negative, noise, repetitions, term, far = SETS[name]
    points = _data(xs, f, noise, repetitions)
    theirs = fit_extrap(points, negative=negative, executable=extrap)
    ours = fit_pmnf(_means(points) if noise else points, negative=negative)
    assert theirs.leading == term, theirs.raw
    assert ours.leading == term and same_leading_term(ours, theirs)
    # the same term fitted by least squares to the same means: the same model
    assert theirs([far])[0] == pytest.approx(ours([far])[0], rel=1e-6)
    assert theirs([far])[0] == pytest.approx(f(far), rel=0.05)
    assert theirs.smape == pytest.approx(ours.smape, rel=1e-6, abs=1e-9) and theirs.rss >= 0


def test_default_modeler_needs_negative_exponents_for_strong_scaling(extrap):
    points = [(p, 0.07 + 1.9 / p) for p in RANKS]
    default = fit_extrap(points, executable=extrap)
    assert default.leading != "p^-1" and default.ar2 < 0.5
    strong = fit_extrap(points, negative=True, executable=extrap)
    assert strong.leading == "p^-1" and strong.ar2 == pytest.approx(1.0)
    assert strong.constant == pytest.approx(0.07) and strong.terms[0][0] == pytest.approx(1.9)


def _extrap_python(extrap) -> str:
    """The interpreter of Extra-P's venv, as its console script names it."""
    first = Path(extrap).read_text().splitlines()[0]
    assert first.startswith("#!"), first
    return first[2:].strip()


def test_our_hypotheses_are_extra_ps_default_building_blocks(extrap):
    """Read from Extra-P's own SingleParameterModeler (its default, with log terms): the same
    terms, 42 and with negative exponents 84 (its order differs, which decides only exact ties)."""
    script = ("import json, sys\n"
              "from extrap.modelers.single_parameter.basic import SingleParameterModeler as M\n"
              "blocks = M.create_default_building_blocks(True, sys.argv[1] == '1')\n"
              "print(json.dumps([[[str(t.exponent), t.term_type] for t in c.simple_terms]\n"
              "                  for c in blocks]))")
    for negative in (False, True):
        run = subprocess.run([_extrap_python(extrap), "-c", script, str(int(negative))],
                             capture_output=True, text=True, timeout=120, check=True)
        theirs = []
        for factors in json.loads(run.stdout):
            exponents = {kind: Fraction(value) for value, kind in factors}
            theirs.append(Term(exponents.get("polynomial", Fraction(0)),
                               int(exponents.get("logarithm", 0))))
        ours = hypotheses(negative)
        assert len(theirs) == len(set(theirs)) == (84 if negative else 42)
        assert set(ours) == set(theirs) and len(ours) == len(theirs)


R1 = [1] + RANKS
EDGES = {   # name: points, negative exponents
    "log terms with p = 1 and negative exponents": ([(p, 1 + math.log2(p)) for p in R1], True),
    "log terms with p = 1": ([(p, 1 + math.log2(p)) for p in R1], False),
    "log terms with p < 1": ([(x, 1 + math.log2(x) ** 2) for x in (0.25, 0.5, 1, 2, 4, 8)], False),
    "a term under 0.05% of every value": ([(p, 1000 + 1e-4 * p) for p in R1], False),
    "a constant under 0.05% of the smallest value": ([(p, 1e-4 + p) for p in R1], False),
    "the constant by its SMAPE over all points": (
        list(zip(RANKS, [2.492, 2.512, 2.499, 2.459, 2.496, 2.478])), False),
}


@pytest.mark.parametrize("name", EDGES)
def test_at_the_edges_of_the_selection_rule_both_choose_alike(extrap, name):
    """Log terms left out below p = 1 (or at it, with negative exponents), the minimum term
    contribution, the constant cleaned in cross-validation, the constant's in-sample SMAPE: the
    same term, model and SMAPE (Extra-P prints the one it chose by)."""
    points, negative = EDGES[name]
    theirs = fit_extrap(points, negative=negative, executable=extrap)
    ours = fit_pmnf(points, negative=negative)
    assert ours.leading == theirs.leading, (ours.text(), theirs.text)
    assert theirs.smape == pytest.approx(ours.smape, rel=1e-6, abs=1e-9)
    assert theirs([128])[0] == pytest.approx(ours([128])[0], rel=1e-9)


def _extrap_models(extrap, datasets, negative):
    """Extra-P's model of each data set, all over the same x, in one run (a region each; the
    run's start-up is most of its time): fit_extrap's input, options and printed form."""
    regions = [text_input(points, region=f"r{k}").split("REGION ") for k, points in
               enumerate(datasets)]
    with tempfile.TemporaryDirectory(prefix="hybridtune-extrap-") as folder:
        path = Path(folder) / "input.txt"
        path.write_text(regions[0][0] + "".join("REGION " + region for _, region in regions))
        command = [str(extrap), "--text", "--disable-progress", "--print", "{callpath}\n" + PRINT,
                   str(path)] + (["--options", "allow_negative_exponents=True"] if negative else [])
        run = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    parts = re.split(r"^(r\d+)$", run.stdout, flags=re.MULTILINE)
    models = {name: parse_output(text) for name, text in zip(parts[1::2], parts[2::2])}
    return [models[f"r{k}"] for k in range(len(datasets))]


def test_over_noise_seeds_both_name_the_same_term(extrap):
    """Each data set with its noise (2% where it has none) and 5 repetitions, seeds 0..9: the
    same leading term in at least 90% of the 80 fits (in all 80 here), and where the same, the
    same model."""
    fits = []
    for xs, negative in {(tuple(xs), negative) for xs, _, negative, *_ in SETS.values()}:
        runs = [(name, seed, _data(xs, f, noise or 0.02, 5, seed=seed), far)
                for name, (x, f, neg, noise, _, _, far) in SETS.items()
                if (tuple(x), neg) == (xs, negative) for seed in range(10)]
        theirs = _extrap_models(extrap, [points for _, _, points, _ in runs], negative)
        fits += [(name, seed, fit_pmnf(_means(points), negative=negative), model, far)
                 for (name, seed, points, far), model in zip(runs, theirs)]
    assert len(fits) == 80
    differ = [(name, seed, ours.text(), theirs.text) for name, seed, ours, theirs, _ in fits
              if not same_leading_term(ours, theirs)]
    assert len(differ) <= 0.1 * len(fits), differ
    for _, _, ours, theirs, far in fits:
        if same_leading_term(ours, theirs):
            assert theirs([far])[0] == pytest.approx(ours([far])[0], rel=1e-6)


def test_text_input_sorts_the_points_and_writes_each_points_repetitions():
    assert text_input([(4, [1.0, 1.5]), (2, 0.5), (8.5, (2, 1e-7))], metric="seconds") == (
        "PARAMETER p\nPOINTS 2 4 8.5\nREGION r\nMETRIC seconds\n"
        "DATA 0.5\nDATA 1 1.5\nDATA 2 1e-07\n")


@pytest.mark.parametrize("points, parameter", [
    ([(2, 1.0), (2, 2.0)], "p"), ([(0, 1.0), (2, 2.0)], "p"), ([(2, []), (4, 2.0)], "p"),
    ([(2, math.nan), (4, 2.0)], "p"), ([], "p"), ([(2, 1.0)], "two words")])
def test_text_input_refuses_what_extrap_cannot_read(points, parameter):
    with pytest.raises(HybridtuneError, match="distinct positive|one word"):
        text_input(points, parameter=parameter)


@pytest.mark.parametrize("model, constant, terms, leading", [
    ("2.5", 2.5, (), "constant"),
    ("2.999999999999998 + 0.5 * p^(1)", 2.999999999999998, ((0.5, 1, 0),), "p"),
    ("1.8006900289550068e-16 + log2(p)^(1)", 1.8006900289550068e-16, ((1, 0, 1),), "log2(p)"),
    ("0.9784375000000012 + -0.1704910714285716 * log2(p)^(1)", 0.9784375000000012,
     ((-0.1704910714285716, 0, 1),), "log2(p)"),
    ("1.0 + 0.19999999999999996 * p^(1) * log2(p)^(1)", 1.0, ((0.19999999999999996, 1, 1),),
     "p * log2(p)"),
    ("1.0 + 0.5 * p^(3/4) * log2(p)^(2)", 1.0, ((0.5, 0.75, 2),), "p^(3/4) * log2(p)^2"),
    ("0.07 + 1.9 * p^(-1)", 0.07, ((1.9, -1, 0),), "p^-1"),
    ("0.1 + 2 * p^(-1/2) * log2(p)^(-1)", 0.1, ((2, -0.5, -1),), "p^(-1/2) * log2(p)^-1"),
    ("0.5 * p^(0.5)", 0.0, ((0.5, 0.5, 0),), "p^(1/2)"),
])
def test_each_printed_form_is_read(model, constant, terms, leading):
    """The forms Extra-P 4.2.5 printed here (a coefficient 1 and a constant 0 left out, decimal
    exponents from --options poly_exponents=0.5, negative log exponents with negative ones)."""
    parsed = parse_output(f"Model: {model}\nRSS: 0.25\nAdjusted R^2: 1\nSMAPE: 3.5\n")
    assert (parsed.text, parsed.constant, parsed.terms, parsed.leading) == (
        model, constant, terms, leading)
    assert (parsed.rss, parsed.ar2, parsed.smape) == (0.25, 1.0, 3.5)


def test_the_default_listing_is_read_without_smape():
    parsed = parse_output("Callpath: r\n\tMetric: time\n\t\tModel: 3.0 + 0.5 * p^(1)\n"
                          "\t\tRSS: 6.94E-29\n\t\tAdjusted R^2: 1.00E+00\n")
    assert parsed.terms == ((0.5, 1, 0),) and parsed.rss == 6.94e-29 and parsed.smape is None
    np.testing.assert_allclose(parsed([2, 128]), [4.0, 67.0])


def test_a_missing_executable_is_named_with_how_to_build_it(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-extrap"
    monkeypatch.setenv(ENV, str(missing))
    assert extrap_executable() == missing
    with pytest.raises(HybridtuneError, match=f"{missing} does not exist.*make extrap"):
        fit_extrap([(p, p) for p in RANKS])


def test_fewer_points_than_a_model_needs_are_refused_before_running():
    """Extra-P only warns below 5 points and fits anyway."""
    with pytest.raises(HybridtuneError, match="at least 5 points, got 4"):
        fit_extrap([(p, p) for p in (2, 4, 8, 16)], executable="/nonexistent")


def _script(folder, body):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "extrap"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_a_failing_executable_is_named_with_its_last_output(tmp_path, monkeypatch):
    """A stand-in script: the real extrap exits 1 only on inputs the adapter never writes."""
    broken = _script(tmp_path, "echo 'Traceback: something broke' >&2\nexit 1\n")
    monkeypatch.setenv(ENV, str(broken))
    with pytest.raises(HybridtuneError) as caught:
        fit_extrap([(p, p) for p in RANKS], negative=True)
    message = str(caught.value)
    assert f"`{broken} --text" in message and "allow_negative_exponents=True" in message
    assert "exited with 1" in message and "something broke" in message


def test_output_without_a_model_is_refused_naming_the_command(tmp_path):
    """A stand-in script again: the real extrap, given the adapter's input, always prints one."""
    chatty = _script(tmp_path, "echo 'Loading file: done'\n")
    with pytest.raises(HybridtuneError, match=r"cannot read a model in the output of `.*--text"
                                              r"(.|\n)*Loading file: done"):
        fit_extrap([(p, p) for p in RANKS], executable=chatty)


def test_the_lookup_order_is_variable_then_the_repositorys_venv_then_path(tmp_path, monkeypatch):
    venv = _script(tmp_path / "venv", "exit 0\n")
    on_path = _script(tmp_path / "bin", "exit 0\n")
    monkeypatch.setattr(extrap_adapter, "VENV_EXTRAP", venv)
    monkeypatch.setenv("PATH", str(on_path.parent))
    monkeypatch.setenv(ENV, str(tmp_path / "named"))
    assert extrap_executable() == tmp_path / "named"
    monkeypatch.delenv(ENV)
    assert extrap_executable() == venv
    monkeypatch.setattr(extrap_adapter, "VENV_EXTRAP", tmp_path / "absent")
    assert extrap_executable() == on_path
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert extrap_executable() is None
