"""Report figures and page from the learning fixture's plain data: real PNGs from matplotlib, the page's tables, references and reasons for what is missing."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.strategies.leave_one_out import Evaluation, evaluate
from hybridtune.learn.table import KEY, joined_rows
from hybridtune.report import plots
from hybridtune.report.html import page, strategy_rows
from hybridtune.store import Store

FIXTURE = PROJECT_ROOT / "tests" / "data" / "learn" / "fixture.h5"
PNG = b"\x89PNG\r\n\x1a\n"


def png_bytes(plot: plots.Plot) -> bytes:
    buffer = io.BytesIO()
    plot.figure.savefig(buffer, format="png")
    return buffer.getvalue()


def assert_png(data: bytes) -> None:
    assert data[:8] == PNG
    assert b"Matplotlib" in data[:4000]           # the Software text chunk matplotlib writes
    assert len(data) > 10_000


@pytest.fixture(scope="module")
def rows():
    with Store.open(FIXTURE, "r") as store:
        return joined_rows(store.frame("variant_predictions"), store.frame("measurements"))


@pytest.fixture(scope="module")
def evaluation(rows):
    return evaluate(rows)


@pytest.mark.slow
def test_figures_of_the_fixture_are_pngs(rows, evaluation):
    measured = rows.measured
    chosen = plots.representative(measured)
    assert sorted(chosen) == ["Cusp", "InverterChain", "Medakzo", "Wave1D"]
    assert {key[2] for key in chosen.values()} == {6000}       # equal counts: the largest n
    features = dict(zip(map(tuple, rows.frame[list(KEY)].itertuples(index=False)),
                        rows.frame["features"]))
    drawn = [plots.predicted_vs_measured(evaluation.predictions),
             plots.ranking(evaluation.predictions, chosen),
             plots.best_found(evaluation.curves),
             plots.time_per_component(plots.fastest(measured), features),
             plots.ecm_breakdown(measured, chosen)]
    assert len({plot.file for plot in drawn}) == len(drawn)
    for plot in drawn:
        assert plot.figure.axes and plot.title and plot.caption
        assert_png(png_bytes(plot))
    ranking_axes = drawn[1].figure.axes
    assert len(ranking_axes) == 4 and all(ax.get_yscale() == "log" for ax in ranking_axes)
    pvm = drawn[0].figure.axes[0]
    assert pvm.get_xscale() == "log" and pvm.get_yscale() == "log"


def test_fastest_and_speedup_over_threads():
    best = pd.DataFrame({"method": "m", "ivp": "A", "n": [100, 100, 100, 100, 200],
                         "threads": [1, 1, 2, 4, 1], "variant": ["a", "b", "a", "b", "a"],
                         "median_s": [2.0, 1.0, 0.6, 0.4, 3.0]})
    fastest = plots.fastest(best)
    assert fastest[["n", "threads", "variant"]].values.tolist() == [[100, 1, "b"], [100, 2, "a"],
                                                                    [100, 4, "b"], [200, 1, "a"]]
    table = plots.speedups(best)
    assert table["threads"].tolist() == [1, 2, 4]             # n = 200: one thread count only
    # each thread count against the same variants at one thread: a at 2 threads, b at 4
    assert table["speedup"].tolist() == pytest.approx([1.0, 2.0 / 0.6, 1.0 / 0.4])
    assert table["variants"].tolist() == [2, 1, 1]
    assert_png(png_bytes(plots.speedup(table)))
    assert plots.speedups(best[best["n"] == 200]).empty


def test_cache_sizes_in_n_from_working_set_ratios():
    features = [{"n": 600, "step_bytes": 48000, "ws_over_L1": 1.5, "ws_over_L2": 0.048},
                {"n": 6000, "step_bytes": 480000, "ws_over_L1": 15.0, "ws_over_L2": 0.48},
                None, {}]
    sizes = plots.cache_sizes_in_n(features)
    assert sizes == pytest.approx({"L1": 400.0, "L2": 12500.0})


def test_page_holds_the_tables_the_figures_and_what_is_missing():
    strategy = {"configurations": 3, "measured_mean": 2.5, "loss_pct_max": 4.0,
                "loss_pct_mean": 1.25, "frac_loss_le_3pct": 0.5, "overhead_pct_mean": 3.0,
                "gain_pct_mean": 20.0, "score": 0.4, "score_interval": [0.1, 0.7]}
    accuracy = {name: {"median_rel_error": 0.25, "kendall_tau": 0.5}
                for name in ("offline", "trivial", "linear", "gp")}
    evaluation = Evaluation({"hybrid": strategy, "RunAll": strategy},
                            {"Wave1D": {"rows": 10, "training_rows": 30, **accuracy}}, [],
                            {"hybrid": 0.5, "offline_top1": 0.25, "random": 0.1},
                            {"per_configuration": [2, 4], "reached": 2, "mean": 3.0},
                            notes=["a <note>"],
                            transfer={"mean_of_other_ivps": {"first_within_5pct": 0.25,
                                                             "to_within_3pct_mean": 12.5,
                                                             "configurations": 3},
                                      "level_outside_other_ivps": 1 / 3, "configurations": 3})
    figure = plots.best_found({"hybrid": [1.2, 1.0], "random expectation": [1.5, 1.1]})
    text = page("a&b.h5", [{"command": "tune", "host": "node1", "started_at": "2026-12-02"}],
                [{"hardware_id": "hw1", "model": "CPU", "vendor": "V",
                  "caches": [["1", "Data", "48K"]], "measurements": 7}],
                [{"status": "ok", "timing": "alone", "count": 7}], evaluation, None, [figure],
                [plots.Missing("Speedup", "one thread count only")], [],
                {"machine_sha256": "abcdef0123456789", "machine_file": "spr.yml",
                 "regimes": {"L2": {"rows": 5, "median_rel_error": 0.5, "median_ratio": 1.5}}})
    assert "<h1>hybridtune report: a&amp;b.h5</h1>" in text
    assert '<img src="best_found.png"' in text
    for row in strategy_rows(evaluation.strategies):
        assert "".join(f'<td class="num">{cell}</td>' for cell in row[1:]) in text
    assert "<td>hybrid</td>" in text and "<td>RunAll</td>" in text
    assert "0.250 / 0.50" in text and "L1 data 48K" in text and "node1" in text
    assert "Not drawn: one thread count only." in text
    assert "a &lt;note&gt;" in text
    assert ('<td class="num">25%</td><td class="num">12.5</td><td class="num">3</td>' in text
            and "hindsight" not in text)         # an order the evaluation lacks is not shown
    assert '<td class="num">50%</td><td class="num">3.0</td><td class="num">2</td>' in text
    assert "at the same n and threads in 33% of the 3 configurations" in text
    assert "abcdef012345 (spr.yml)" in text
    assert '<tr><td>L2</td><td class="num">5</td><td class="num">0.500</td>' in text
    missing = page("s.h5", [], [], [], None, "the store's measurements cover 1 IVP(s)", [], [], [])
    assert "Not evaluated: the store&#x27;s measurements cover 1 IVP(s)." in missing
    assert "<h2>Strategies</h2>" not in missing
