"""Kernel templates and skeletons: the shipped set and the paper's examples load; errors are located."""

import pytest

from hybridtune.describe.library import library_files
from hybridtune.describe.loader import load
from hybridtune.describe.skeleton import neighbour_form
from tests_support import SHARED, expect_error

EXPECTED_VARIANTS = {"RHS_predictor": 2, "LC": 6, "RHS": 2, "Approx": 2, "Update": 1,
                     "ApproxUpdate": 2, "RHS_LC_predictor": 4, "RHS_LC": 4, "RHS_Approx": 2,
                     "RHS_Approx_Update": 2}
BARRIERS = {"A": "2m + 2", "B": "2m + 2", "C": "m + 2", "D": "m + 2", "E": "m + 1", "F": "m + 1",
            "G": "2m + 1", "H": "2m + 1"}


def test_shipped_templates():
    counts = {name: len(load(path).variants) for name, path in library_files("kernel").items()}
    assert counts == EXPECTED_VARIANTS


@pytest.mark.parametrize("name", sorted(BARRIERS))
def test_skeleton_barrier_counts(name):
    skeleton = load(library_files("skeleton")[name])
    assert skeleton.barrier_formula() == BARRIERS[name]
    a, b = (2, 2) if BARRIERS[name].startswith("2m") else (1, 1)
    offset = int(BARRIERS[name][-1])
    for m in range(1, 9):
        assert skeleton.communication_count("omp_barrier", m) == a * m + offset


@pytest.mark.parametrize("name", ["Approx.kernel.yaml", "RHS.kernel.yaml", "A.skeleton.yaml"])
def test_paper_examples_load_unchanged(name):
    assert load(SHARED / "examples" / name)


TEMPLATE = """
datastructs:
  - double b[s]
  - double F[s][n]
  - double dy[n]
computations:
  C0: "dy[j] = b[0] * F[0][j]"
  C1: "dy[j] = dy[j] + b[i] * F[i][j]"
variants:
  - name: Approx_ij
    code: |
      %LOOP_START j n
      %COMP C0
      %LOOP_END j
      %LOOP_START i 1 s
      %LOOP_START j n
      %COMP C1
      %LOOP_END j
      %LOOP_END i
"""


def test_indented_loop_form(write):
    text = TEMPLATE.replace("""      %LOOP_START i 1 s
      %LOOP_START j n
      %COMP C1
      %LOOP_END j
      %LOOP_END i""", """      %LOOP i 1 s
          %PRAGMA ivdep
          %LOOP j n
              %COMP C1""")
    template = load(write("t.kernel.yaml", text))
    loop = template.variants[0].program[1]
    assert loop.var == "i" and loop.body[0].var == "j" and loop.body[0].pragmas == ("ivdep",)


@pytest.mark.parametrize("change, key, line, expected", [
    # a loop variable used outside its loop
    (("      %LOOP_START i 1 s\n      %LOOP_START j n\n      %COMP C1\n      %LOOP_END j\n"
      "      %LOOP_END i", "      %LOOP_START j n\n      %COMP C1\n      %LOOP_END j"),
     "variants[0].code", 15, "loop variable used outside its loop"),
    (("%COMP C1", "%COMP C9"), "variants[0].code", 16, "naming a computation"),
    (("%LOOP_END i", "%LOOP_END j"), "variants[0].code", 18, "'%LOOP_END i'"),
    (("      %LOOP_END i\n", ""), "variants[0].code", None, "missing"),
    (("%COMP C0", "%COMP C0; x"), "variants[0].code", 12, "naming a computation"),
    (("%LOOP_START i 1 s", "%LOOP_START i 1 q"), "variants[0].code", 14, "not 'q'"),
    (("%LOOP_START i 1 s", "%LOOP_START i 1 s/2.0"), "variants[0].code", 14, "integer bounds"),
    (("%LOOP_START i 1 s", "%LOOP_START i 1 1e309"), "variants[0].code", 14, "a finite number"),
    (("%LOOP_START i 1 s", "%LOOP_START i 1 99999999999999999999999"), "variants[0].code", 14,
     "at most 9223372036854775807"),
    (("%LOOP_START i 1 s", "%LOOP_START j 1 s"), "variants[0].code", 15, "enclosing loop"),
    (("%LOOP_START i 1 s", "%LOOP_START i 1 s\n      #include <x>"), "variants[0].code", 15,
     "a line starting with"),
    (("%LOOP_START i 1 s", "%LOOP_START i 1 s\n      int x = 0;"), "variants[0].code", 15,
     "a line starting with"),
    (("  - double dy[n]\n", ""), "computations.C0", 5, "undeclared 'dy'"),
    (("b[i] * F[i][j]", "b[i] * G[i][j]"), "computations.C1", 7, "undeclared 'G'"),
    (("b[i] * F[i][j]", "b[i] * F[i]"), "computations.C1", 7, "all 2 subscript(s)"),
    (("b[i] * F[i][j]", "b[i] * exp(F[i][j]) + q"), "variants[0].code", 16, "loops over q"),
    (("b[i] * F[i][j]", "b[i] * F[i][j]; system(0)"), "computations.C1", 7, "statement"),
    (("b[i] * F[i][j]", "%RHS"), "rhs", 1, "an 'rhs' key"),
    (("  - double b[s]", "  - double b[m]"), "datastructs[0]", 2, "sizes in s and n"),
    (("  - double b[s]", "  - float b[s]"), "datastructs[0]", 2, "a declaration"),
    (("  - double F[s][n]", "  - double b[n]"), "datastructs[1]", 3, "declared once"),
    (("  - double F[s][n]", "  - double for[s][n]"), "datastructs[1]", 3, "not a C keyword"),
])
def test_malformed_template(write, change, key, line, expected):
    assert change[0] in TEMPLATE
    path = write("bad.kernel.yaml", TEMPLATE.replace(*change, 1))
    expect_error(path, key=key, line=line, expected=expected)


SKELETON = """
code: |
  %COM omp_barrier
  %KERNEL RHS_predictor
  %LOOP_START k m - 1
  %COM omp_barrier
  %KERNEL RHS Y=Yprev
  %SWAP Yprev Ycur
  %LOOP_END k
"""


def test_skeleton_grammar(write):
    skeleton = load(write("s.skeleton.yaml", SKELETON))
    assert skeleton.templates == ("RHS_predictor", "RHS")
    assert skeleton.barrier_formula() == "m"
    assert not skeleton.is_mpi and neighbour_form(skeleton) is None


@pytest.mark.parametrize("name", sorted(BARRIERS))
def test_each_skeleton_has_an_mpi_form_with_its_neighbour_exchange(name):
    skeleton = load(library_files("skeleton")[name + "-mpi"])
    assert skeleton.is_mpi and skeleton.templates == load(library_files("skeleton")[name]).templates
    assert skeleton.exchange_kinds() == {"mpi_allgather"}
    assert skeleton.communication_count("mpi_allgather", 6) == 7    # y, and after each corrector
    derived = neighbour_form(skeleton)
    assert derived.name == name + "-mpi-nx" and derived.derived
    assert derived.exchange_kinds() == {"mpi_neighbour_exchange"}
    assert derived.communication_count("mpi_neighbour_exchange", 6) == 7
    assert derived.communication_count("omp_barrier", 6) == \
        skeleton.communication_count("omp_barrier", 6)


def test_an_exchange_of_a_buffer_no_kernel_uses_is_located(write):
    write("s.skeleton.yaml", SKELETON.replace("%COM omp_barrier\n  %KERNEL RHS Y",
                                              "%COM mpi_allgather Z\n  %KERNEL RHS Y", 1))
    path = write("s.scenario.yaml", "methods: [radauIIA5]\nivps: [Lorenz96]\n"
                 "skeletons: [./s.skeleton.yaml]\nmachine: SkylakeSP_Gold-6148\nn: [100]\n"
                 "threads: [1]\nranks: [1, 2]\n")
    expect_error(path, key="code", line=5, expected="an exchanged buffer of n components that "
                 "a kernel of the skeleton uses (F, Yprev, y)", file=path.parent / "s.skeleton.yaml")


def test_ranks_above_one_need_an_mpi_skeleton(write):
    path = write("s.scenario.yaml", "methods: [radauIIA5]\nivps: [Lorenz96]\nskeletons: [A]\n"
                 "machine: SkylakeSP_Gold-6148\nn: [100]\nthreads: [1]\nranks: [1, 2]\n")
    expect_error(path, key="ranks", line=7, expected="ranks above 1 only with MPI skeletons")


@pytest.mark.parametrize("change, line, expected", [
    (("%COM omp_barrier\n  %KERNEL RHS Y", "%COM omp_fence\n  %KERNEL RHS Y"), 5, "%COM op"),
    (("%COM omp_barrier\n  %KERNEL RHS Y", "%COM mpi_allgather\n  %KERNEL RHS Y"), 5,
     "'%COM op buffer' with op one of mpi_allgather, mpi_neighbour_exchange"),
    (("%COM omp_barrier\n  %KERNEL RHS Y", "%COM omp_barrier Y\n  %KERNEL RHS Y"), 5,
     "'%COM op' with op one of mpi_barrier, omp_barrier"),
    (("%COM omp_barrier\n  %KERNEL RHS Y", "%COM mpi_allgather Y[0]\n  %KERNEL RHS Y"), 5,
     "%COM op buffer"),
    (("%SWAP Yprev Ycur", "%SWAP Yprev"), 7, "%SWAP buffer1 buffer2"),
    (("%KERNEL RHS Y=Yprev", "%KERNEL RHS Y=Yprev[i]"), 6, "%KERNEL template"),
    (("%LOOP_START k m - 1", "%LOOP_START k n"), 4, "bounds in m, s"),
    (("%LOOP_START k m - 1", "%LOOP_START k m - 1 - ("), 4, "loop bounds that are expressions"),
    (("%COM omp_barrier\n  %KERNEL RHS_predictor", "%BARRIER\n  %KERNEL RHS_predictor"), 2,
     "a line starting with"),
])
def test_malformed_skeleton(write, change, line, expected):
    assert change[0] in SKELETON
    path = write("bad.skeleton.yaml", SKELETON.replace(*change, 1))
    expect_error(path, key="code", line=line, expected=expected)
