"""A scaling study as text: the best variant at each rank count with its speedup, efficiency and share of communication, the crossover sentences and the fitted laws."""

from __future__ import annotations

import re

import pytest

from hybridtune.predict.scaling_curves import scaling_study
from hybridtune.report.scaling_text import crossover_text, study_lines
from scaling_support import STRONG, WEAK, tables

N = 1000


@pytest.fixture
def lines():
    return study_lines(scaling_study("radauIIA7", "Lorenz96", N, tables(STRONG), tables(WEAK)))


def row(lines: list[str], start: int, ranks: int) -> list[str]:
    """The fields of the table row of `ranks` ranks after line `start`."""
    for line in lines[start:]:
        fields = line.split()
        if fields and fields[0] == str(ranks):
            return fields
    raise AssertionError(f"no row of {ranks} ranks after line {start}: {lines}")


def test_the_strong_table_names_the_best_variant_at_each_rank_count(lines):
    assert lines[0] == ("radauIIA7 Lorenz96 n=1000, one thread per rank: strong scaling "
                        "(fixed n), 2 variants; speedup over the fastest variant on one rank")
    assert lines[1].split() == ["ranks", "n", "s/step", "speedup", "efficiency", "comm",
                                "best", "variant"]
    # speedups over the fastest variant on one rank (A, 8 s)
    assert row(lines, 2, 1) == ["1", "1000", "8.000e+00", "1.00x", "100.0%", "0%", "A-mpi_x"]
    assert row(lines, 2, 2) == ["2", "1000", "4.500e+00", "1.78x", "88.9%", "11%", "A-mpi_x"]
    assert row(lines, 2, 4) == ["4", "1000", "2.500e+00", "3.20x", "80.0%", "0%", "F-mpi-nx_y"]
    assert row(lines, 2, 8) == ["8", "1000", "1.250e+00", "6.40x", "80.0%", "0%", "F-mpi-nx_y"]


def test_the_weak_table_grows_n_with_the_ranks(lines):
    start = next(i for i, line in enumerate(lines) if "weak scaling" in line)
    assert lines[start] == ("radauIIA7 Lorenz96 n=1000, one thread per rank: weak scaling "
                            "(n/P = 1000); scaled speedup P T(1, n) / T(P, P n) of the fastest "
                            "variant on one rank")
    assert "weak eff." in lines[start + 1] and "scaled" in lines[start + 1]
    assert row(lines, start, 1) == ["1", "1000", "8.000e+00", "1.00x", "100.0%", "0%", "A-mpi_x"]
    assert row(lines, start, 2) == ["2", "2000", "8.500e+00", "1.88x", "94.1%", "6%", "A-mpi_x"]
    assert row(lines, start, 8) == ["8", "8000", "9.500e+00", "6.74x", "84.2%", "16%", "A-mpi_x"]
    assert start == len(lines) - 7          # the table, then Gustafson's law for A-mpi_x
    assert lines[-1].strip().startswith("Gustafson: serial fraction")
    assert lines[-1].endswith(" for A-mpi_x")


def test_the_crossover_sentences_and_laws_of_the_first_and_last_best_variants(lines):
    assert "  communication overtakes computation at 8 ranks for A-mpi_x" in lines
    assert "  communication stays below computation up to 8 ranks for F-mpi-nx_y" in lines
    amdahl = [line.strip() for line in lines if line.strip().startswith("Amdahl")]
    gustafson = [line.strip() for line in lines if line.strip().startswith("Gustafson")]
    assert len(amdahl) == 2 and len(gustafson) == 1          # A-mpi_x fastest on every weak P
    assert re.fullmatch(r"Amdahl: serial fraction 0\.\d{4}, speedup at most \d+x \(curve fitted "
                        r"within \d+\.\d% rms\)", amdahl[0])
    assert amdahl[1] == "Amdahl: serial fraction 0.0000 (curve fitted within 0.0% rms)"
    assert re.fullmatch(r"Gustafson: serial fraction 0\.\d{4} \(curve fitted within \d+\.\d% "
                        r"rms\) for A-mpi_x", gustafson[0])
    index = lines.index("  communication overtakes computation at 8 ranks for A-mpi_x")
    assert lines[index + 1].strip() == amdahl[0]


def test_one_variant_best_everywhere_is_described_once_and_short_curves_have_no_laws():
    curve = {"F-mpi_z": {1: (2.0, 0.0, N), 2: (1.5, 0.9, N)}}
    weak = {"F-mpi_z": {1: (2.0, 0.0, N), 2: (3.0, 0.9, 2 * N)}}
    study = scaling_study("radauIIA7", "Lorenz96", N, tables(curve), tables(weak))
    lines = study_lines(study)
    assert "strong scaling (fixed n), 1 variant" in lines[0]
    assert [line for line in lines if "communication" in line] == [
        "  communication overtakes computation at 2 ranks for F-mpi_z"]
    assert "    Amdahl: needs 2 rank counts above 1" in lines
    assert "    Gustafson: needs 2 rank counts above 1 for F-mpi_z" in lines
    assert row(lines, 2, 2)[3:6] == ["1.33x", "66.7%", "60%"]
    assert crossover_text(study.variants[0], study.ranks) == lines[4]


def test_a_super_linear_curve_gets_no_serial_fraction():
    curve = {"A-mpi_s": {1: (8.0, 0.0, N), 2: (3.0, 0.1, N), 4: (1.5, 0.1, N)}}
    study = scaling_study("radauIIA7", "Lorenz96", N, tables(curve), tables(curve))
    amdahl, = [line.strip() for line in study_lines(study) if line.strip().startswith("Amdahl")]
    assert amdahl.startswith("Amdahl: does not apply, the speedup is super-linear (efficiency "
                             "up to 133%")
