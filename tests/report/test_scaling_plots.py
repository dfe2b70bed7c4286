"""The report's scaling figure from hand-written documents: the studies of `predict --scaling --json` and the SMPI points of a bench_scaling document read, and one panel per (method, IVP, n) drawn with the predicted lines of the variants fastest on one and on the most ranks, SMPI's crosses and the store's measured dots (the Figure's axes and lines inspected, not its pixels)."""

from __future__ import annotations

import pandas as pd
import pytest

from hybridtune.report.scaling_plots import scaling_inputs, scaling_plot
from store_support import measurement

RANKS = [1, 2, 4, 8]
# two names alike in their first 40 characters, as the variants of one skeleton are
FIRST = "F-mpi-nx_RHS_LC_predictor_jil_RHS_LC_ijl_RHS_Approx_Update_ji"
LAST = "F-mpi-nx_RHS_LC_predictor_jil_RHS_LC_ijl_RHS_Approx_Update_ij"
NEVER = "F-mpi_RHS_LC_predictor_jil_RHS_LC_ijl_RHS_Approx_Update_ij"


def variant(name: str, seconds: list[float], n: int = 2400) -> dict:
    return {"variant": name, "skeleton": name.split("_")[0],
            "strong": [{"ranks": p, "n": n, "seconds": s, "comm_s": 0.0}
                       for p, s in zip(RANKS, seconds)]}


def study(ivp: str = "Lorenz96", n: int = 2400, variants: list | None = None) -> dict:
    """FIRST fastest on 1 and 2 ranks, LAST from 4 on, NEVER never."""
    variants = variants or [variant(FIRST, [8.0, 4.0, 3.0, 2.5], n),
                            variant(LAST, [9.0, 4.5, 2.0, 1.0], n),
                            variant(NEVER, [10.0, 6.0, 4.0, 3.5], n)]
    best = [min(variants, key=lambda v: v["strong"][i]["seconds"])["variant"]
            for i in range(len(RANKS))]
    return {"method": "radauIIA7", "ivp": ivp, "n": n, "ranks": RANKS,
            "best_strong": [{"ranks": p, "variant": b} for p, b in zip(RANKS, best)],
            "variants": variants}


def point(variant_id: str, ranks: int, seconds: float, status: str = "ok", ivp: str = "Lorenz96",
          n: int = 2400) -> dict:
    return {"method": "radauIIA7", "ivp": ivp, "n": n, "ranks": ranks, "variant": variant_id,
            "predicted_s": seconds * 0.9, "simulated_s": seconds, "status": status}


def bench(*parts) -> dict:
    """A bench_scaling document: platforms by name, each with its file and points."""
    return {"platforms": {name: {"platform": f"data/platforms/{name}.xml", "points": points,
                                 "failed": sum(p["status"] != "ok" for p in points)}
                          for name, points in parts}}


def measured(rows: list[tuple], **changes) -> pd.DataFrame:
    """(id, ivp, n, ranks, threads, median_s) rows as the store's ok measurements (first
    timings, one run), with changes to every row."""
    fields = {"method": "radauIIA7", "run_id": "run-1", **changes}
    return pd.DataFrame([measurement(f"r{k}", id=i, ivp=ivp, n=n, ranks=p, threads=t,
                                     median_s=s, ci_low_s=s * 0.99, ci_high_s=s * 1.01, **fields)
                         for k, (i, ivp, n, p, t, s) in enumerate(rows)])


def lines_of(ax) -> dict:
    """label -> (x, y, marker, linestyle) of each line of a panel."""
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata()), line.get_marker(),
                               line.get_linestyle()) for line in ax.get_lines()}


# ---- the inputs ----------------------------------------------------------------------------------

def test_a_predict_scaling_document_gives_its_studies():
    document = {"platform": "fat-tree-100g.xml", "communication": "...", "machine": "Xeon",
                "studies": [study(), study(n=4800)]}
    studies, points = scaling_inputs([document])
    assert studies == document["studies"] and points == []


def test_a_bench_document_gives_its_ok_points_with_their_platform():
    fat = [point(FIRST, 2, 4.2), point(FIRST, 4, float("nan"), status="timeout"),
           point(LAST, 8, 1.1)]
    ethernet = [point(LAST, 2, 6.0), point(LAST, 4, 5.0, status="failed")]
    studies, points = scaling_inputs([bench(("fat-tree-100g", fat), ("ethernet-10g", ethernet))])
    assert studies == []
    assert points == [{**fat[0], "platform": "data/platforms/fat-tree-100g.xml"},
                      {**fat[2], "platform": "data/platforms/fat-tree-100g.xml"},
                      {**ethernet[0], "platform": "data/platforms/ethernet-10g.xml"}]


def test_documents_of_both_kinds_add_up_in_order():
    first, second = study(), study(ivp="Lorenz96", n=4800)
    no_file = {"platforms": {"flat": {"points": [point(FIRST, 2, 3.0)]}}}
    studies, points = scaling_inputs([{"studies": [first]}, no_file, {"studies": [second]},
                                      bench(("fat-tree-100g", [point(LAST, 4, 2.0)]))])
    assert studies == [first, second]
    assert [(p["platform"], p["variant"]) for p in points] == [("", FIRST),
                                                                ("data/platforms/fat-tree-100g.xml",
                                                                 LAST)]


def test_documents_without_curves_give_nothing():
    assert scaling_inputs([]) == ([], [])
    assert scaling_inputs([{"studies": []}, {"platforms": {}},
                           bench(("fat-tree-100g", [point(FIRST, 2, 1.0, "failed")]))]) == ([], [])


# ---- the figure ----------------------------------------------------------------------------------

def test_one_panel_per_method_ivp_and_size():
    simulated = [point(LAST, 4, 2.2, n=9600), point(FIRST, 2, 4.1, ivp="Heat2D", n=1024)]
    plot = scaling_plot([study(n=4800), study()], simulated, measured([]))
    assert plot.file == "scaling.png" and plot.title == "Scaling: predicted, simulated, measured"
    axes = plot.figure.axes
    assert [ax.get_title() for ax in axes] == ["radauIIA7 Heat2D n=1024",
                                               "radauIIA7 Lorenz96 n=2400",
                                               "radauIIA7 Lorenz96 n=4800",
                                               "radauIIA7 Lorenz96 n=9600"]
    for ax in axes:
        assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("ranks", "s / step")
        assert ax.get_legend() is not None
    assert plot.figure.get_suptitle() == "Time per step against ranks (one thread per rank)"


def test_predicted_lines_of_the_fastest_on_one_and_on_the_most_ranks():
    plot = scaling_plot([study()], [], measured([]))
    ax, = plot.figure.axes
    drawn = lines_of(ax)
    assert drawn == {f"predicted {FIRST}": (RANKS, [8.0, 4.0, 3.0, 2.5], ".", "-"),
                     f"predicted {LAST}": (RANKS, [9.0, 4.5, 2.0, 1.0], ".", "-")}
    # the two names differ only in their last letters, and so do their legend entries
    assert len({text.get_text() for text in ax.get_legend().get_texts()}) == 2


def test_one_line_where_one_variant_is_fastest_throughout():
    only = study(variants=[variant(FIRST, [8.0, 4.0, 2.0, 1.0]),
                           variant(LAST, [9.0, 5.0, 3.0, 2.0])])
    ax, = scaling_plot([only], [], measured([])).figure.axes
    assert list(lines_of(ax)) == [f"predicted {FIRST}"]


def test_smpi_points_are_crosses_sorted_by_ranks():
    simulated = [point(NEVER, 8, 3.1), point(NEVER, 2, 5.9), point(NEVER, 4, 4.2),
                 point(LAST, 2, 4.6), point(FIRST, 4, 9.9, n=4800)]
    ax = next(ax for ax in scaling_plot([study()], simulated, measured([])).figure.axes
              if ax.get_title() == "radauIIA7 Lorenz96 n=2400")
    drawn = lines_of(ax)
    assert drawn[f"SMPI {NEVER}"] == ([2, 4, 8], [5.9, 4.2, 3.1], "x", "None")
    assert drawn[f"SMPI {LAST}"] == ([2], [4.6], "x", "None")
    assert len(drawn) == 4                                  # two predicted, two simulated


def test_at_most_six_simulated_variants_a_panel():
    names = [f"F-mpi_v{i}" for i in range(8)]
    ax, = scaling_plot([], [point(name, 2, 1.0 + i) for i, name in enumerate(names)],
                       measured([])).figure.axes
    assert sorted(lines_of(ax)) == [f"SMPI {name}" for name in names[:6]]


def test_measured_dots_of_the_drawn_variants_at_one_thread():
    rows = measured([(FIRST, "Lorenz96", 2400, 1, 1, 7.5), (FIRST, "Lorenz96", 2400, 2, 1, 4.4),
                     (NEVER, "Lorenz96", 2400, 4, 1, 4.1),   # simulated only, yet drawn
                     (LAST, "Lorenz96", 2400, 2, 2, 9.0),    # two threads a rank: not this figure
                     ("F-mpi_other", "Lorenz96", 2400, 2, 1, 9.0),  # not drawn: left out
                     (FIRST, "Lorenz96", 4800, 2, 1, 9.0)])  # another panel's size
    ax, = scaling_plot([study()], [point(NEVER, 8, 3.0)], rows).figure.axes
    dots = [line for line in ax.get_lines() if line.get_label() == "measured"]
    assert len(dots) == 1
    dot, = dots
    assert (dot.get_marker(), dot.get_linestyle(), dot.get_color()) == ("o", "None", "black")
    assert sorted(zip(dot.get_xdata(), dot.get_ydata())) == [(1, 7.5), (2, 4.4), (4, 4.1)]


def test_a_panel_per_method_and_dots_of_its_own_method_hardware_and_passes():
    """Two methods' studies of one IVP and size are two panels; a variant timed in two passes is
    one dot at their geometric mean; another hardware's (fewer) times are not drawn."""
    other = {**study(), "method": "gauss4"}
    rows = pd.concat([
        measured([(FIRST, "Lorenz96", 2400, 1, 1, 4.0)]),
        measured([(FIRST, "Lorenz96", 2400, 1, 1, 9.0)], run_id="run-2"),
        measured([(FIRST, "Lorenz96", 2400, 1, 1, 1.0)], method="gauss4"),
        measured([(FIRST, "Lorenz96", 2400, 2, 1, 0.1)], hardware_id="g" * 16)])
    axes = scaling_plot([study(), other], [], rows).figure.axes
    assert [ax.get_title() for ax in axes] == ["gauss4 Lorenz96 n=2400", "radauIIA7 Lorenz96 n=2400"]
    dots = {ax.get_title(): [(x, y) for line in ax.get_lines() if line.get_label() == "measured"
                             for x, y in zip(line.get_xdata(), line.get_ydata())] for ax in axes}
    assert dots["gauss4 Lorenz96 n=2400"] == [(1, 1.0)]
    assert dots["radauIIA7 Lorenz96 n=2400"] == [(1, pytest.approx(6.0))]


def test_no_dots_where_nothing_was_measured_there():
    rows = measured([(FIRST, "Lorenz96", 4800, 2, 1, 9.0)])
    ax, = scaling_plot([study()], [], rows).figure.axes
    assert "measured" not in lines_of(ax)
    ax, = scaling_plot([study()], [], pd.DataFrame()).figure.axes
    assert "measured" not in lines_of(ax)


@pytest.mark.parametrize("count, shape", [(1, (1, 1)), (3, (1, 3)), (4, (2, 3)), (7, (3, 3))])
def test_the_panels_fill_a_grid_of_three_columns_unused_cells_removed(count, shape):
    studies = [study(n=1000 * (i + 1)) for i in range(count)]
    figure = scaling_plot(studies, [], measured([])).figure
    assert len(figure.axes) == count
    assert figure.axes[0].get_subplotspec().get_gridspec().get_geometry() == shape
