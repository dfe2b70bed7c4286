"""Blocks whose %in indices use / or % on j: split into blocks of j plus a constant, or refused by check."""

from __future__ import annotations

import numpy as np
import pytest

from hybridtune.describe.ivp_checks import component_reads
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load
from hybridtune.describe.printing import to_c
from hybridtune.commands.main import main
from tests_support import expect_error

PERIODIC = PROJECT_ROOT / "tests" / "data" / "periodic"

RING = """
name: Ring
n: {min: 3}
components:
  - first: 0
    size: n
    code: "%in[(j + n - 1) % n] - 2.0 * %in[j] + %in[(j + 1) % n]"
initial_values:
  - first: 0
    size: n
    code: "sin(j * 1.0)"
"""

TORUS = """
name: Torus
n: {min: 27, cube_of: g}
quantities:
  G: "g * g"
components:
  - first: 0
    size: n
    code: "%in[(j / G) * G + ((j / g) % g) * g + (j % g + 1) % g] + %in[(j / G) * G + ((j / g + 1) % g) * g + j % g] + %in[((j / G + 1) % g) * G + j % G] - 3.0 * %in[j]"
initial_values:
  - first: 0
    size: n
    code: "sin(j * 1.0)"
"""


def shape(block) -> tuple:
    return tuple(None if x is None else to_c(x) for x in
                 (block.first, block.size, block.repeat, block.stride, block.outer_repeat,
                  block.outer_stride))


def reads_by_component(ivp, blocks, n: int) -> dict:
    """component -> the components its code reads, over the given blocks, at size n."""
    env = ivp.environment(n)
    out = {}
    for block in blocks:
        js = block.indices(env)
        if len(js):
            reads = np.stack(list(component_reads(block.code, env, js)), axis=1)
            out.update({int(j): tuple(r) for j, r in zip(js, reads)})
    return out


def test_a_ring_written_with_modulo_splits_into_its_first_inner_and_last_components(write):
    ivp = load(write("ring.ivp.yaml", RING))
    assert [shape(b) for b in ivp.affine_blocks] == [
        ("0", "1", None, None, None, None), ("1", "n - 2", None, None, None, None),
        ("n - 1", "1", None, None, None, None)]
    assert [to_c(b.code) for b in ivp.affine_blocks] == [
        "%in[j + (n - 1)] - 2.0 * %in[j] + %in[j + 1]",
        "%in[j - 1] - 2.0 * %in[j] + %in[j + 1]",
        "%in[j - 1] - 2.0 * %in[j] + %in[j - (n - 1)]"]
    assert {b.origin for b in ivp.affine_blocks} == {0}
    assert ivp.components[0].origin is None and len(ivp.components) == 1


def test_a_ring_written_with_conditions_is_the_ring_written_with_modulo(write):
    conditions = RING.replace("(j + n - 1) % n", "j == 0 ? n - 1 : j - 1").replace(
        "(j + 1) % n", "j < n - 1 ? j + 1 : 0")
    with_conditions = load(write("conditions.ivp.yaml", conditions))
    with_modulo = load(write("ring.ivp.yaml", RING))
    assert [(shape(a), to_c(a.code)) for a in with_conditions.affine_blocks] == \
        [(shape(b), to_c(b.code)) for b in with_modulo.affine_blocks]


def test_neighbours_in_pairs_repeat_with_stride_two(write):
    """j % 2 on an even n: the pairs' halves as blocks of one component repeated with stride 2
    (the first pair on its own: (j + n - 1) % n wraps there)."""
    text = RING.replace("n: {min: 3}", "n: {min: 4, multiple_of: 2}").replace(
        "(j + 1) % n", "j % 2 == 0 ? j + 1 : j - 1")
    ivp = load(write("pairs.ivp.yaml", text))
    assert [shape(b) for b in ivp.affine_blocks] == [
        ("0", "1", None, None, None, None), ("1", "1", None, None, None, None),
        ("2", "1", "(n - 2) / 2", "2", None, None), ("3", "1", "(n - 2) / 2", "2", None, None)]
    for n in (4, 10, 1000):
        assert reads_by_component(ivp, ivp.affine_blocks, n) == \
            reads_by_component(ivp, ivp.components, n)


def test_the_periodic_grid_with_slash_and_modulo_is_the_blocked_grid():
    """Nine blocks per field, as Brusselator2D is written by hand, reading the same components."""
    written = load(PERIODIC / "GrayScott2D.ivp.yaml")
    blocked = load(PERIODIC / "GrayScott2DBlocked.ivp.yaml")
    assert len(written.components) == 2 and len(written.affine_blocks) == 18
    assert blocked.affine_blocks == blocked.components          # nothing to split there
    assert [b.origin for b in written.affine_blocks] == [0] * 9 + [1] * 9
    assert sorted(b.repeat is not None for b in written.affine_blocks) == [False] * 12 + [True] * 6
    # printed in the IVP's own quantities, as one writes blocks by hand
    assert [to_c(b.first) for b in written.affine_blocks[:9]] == [
        "0", "1", "g - 1", "g", "g + 1", "2 * g - 1", "G - g", "G - g + 1", "G - 1"]
    for n in (18, 800, 20000):
        assert reads_by_component(written, written.affine_blocks, n) == \
            reads_by_component(blocked, blocked.components, n) == \
            reads_by_component(written, written.components, n)


def test_a_periodic_cube_splits_along_two_repeat_levels(write):
    ivp = load(write("torus.ivp.yaml", TORUS))
    blocks = ivp.affine_blocks
    assert len(blocks) == 8
    assert shape(blocks[0]) == ("0", "g - 1", "g - 1", "g", "g - 1", "G")
    assert shape(blocks[-1]) == ("n - 1", "1", None, None, None, None)
    for n in (27, 64, 1000):
        assert reads_by_component(ivp, blocks, n) == reads_by_component(ivp, ivp.components, n)


def test_an_ivp_without_slash_or_modulo_on_j_is_left_as_written():
    ivp = load(PROJECT_ROOT / "scenarios" / "ivps" / "Brusselator2D.ivp.yaml")
    assert ivp.affine_components == () and ivp.affine_blocks is ivp.components


@pytest.mark.parametrize("index, expected", [
    ("(j * j) % n", "this one multiplies two terms in j"),
    ("j + j < n ? j + 1 : 0", "tests a condition that steps by 2 per component"),
    ("j % 2 == 0 ? j : j - 1", "depends on n"),
    ("(2 * j) % n", "steps by 2 per component"),
    ("(n - 1 - j) % n", "falls as j grows"),
])
def test_an_index_the_split_cannot_take_is_refused_naming_block_and_index(write, index, expected):
    text = RING.replace("%in[(j + 1) % n]", f"%in[{index}]")
    path = write("ring.ivp.yaml", text)
    error = expect_error(path, "components[0].code", 6, expected)
    assert error.value.startswith("%in[") and "Brusselator2D" in error.expected


def test_a_sum_reading_with_modulo_is_refused(write):
    text = RING.replace("%in[(j + 1) % n]", "sum(k, 0, n, %in[(j + k) % n])")
    expect_error(write("ring.ivp.yaml", text), "components[0].code", 6,
                 "%in reads inside a sum at an offset from j or the sum's variable")


def test_check_exits_2_with_one_error_line(write, capsys):
    path = write("ring.ivp.yaml", RING.replace("%in[(j + 1) % n]", "%in[(j * j) % n]"))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "components[0].code" in err[0]
    assert "%in[j * j % n]" in err[0]


def test_a_quantity_the_split_cannot_read_matters_only_where_an_index_uses_it(write):
    text = RING.replace("n: {min: 3}", 'n: {min: 8}\nquantities:\n  M: "n % 7 + 1"')
    assert len(load(write("ring.ivp.yaml", text)).affine_blocks) == 3
    used = text.replace("%in[(j + 1) % n]", "%in[(j + M) % n]")
    expect_error(write("used.ivp.yaml", used), "components[0].code", 8,
                 "uses n % 7, which is not arithmetic in n and the quantities")
