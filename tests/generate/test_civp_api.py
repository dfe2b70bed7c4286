"""NAME_valid_n and NAME_stable_step in C agree with the IVP's sizes rule and stable step for every IVP of the library."""

from __future__ import annotations

import ctypes
import subprocess

import pytest

from hybridtune.describe.library import folder
from hybridtune.describe.loader import load_named
from hybridtune.generate.civp_api import ivp_functions, valid_sizes

IVPS = sorted(p.name.split(".")[0] for p in folder("ivp").glob("*.ivp.yaml"))
SIZES = [*range(-2, 2100), 5994, 6000, 6006, 20000, 600000, 10 ** 7]


@pytest.mark.parametrize("name", IVPS)
def test_c_sizes_and_stable_step_match_the_description(name, tmp_path):
    ivp = load_named("ivp", name, folder("ivp"))
    source = tmp_path / "ivp.c"
    source.write_text("#include <math.h>\n" + ivp_functions(ivp, "x"))
    library = tmp_path / "libivp.so"
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o",
                    str(library), str(source), "-lm"], check=True)
    c = ctypes.CDLL(str(library))
    c.x_valid_n.argtypes = [ctypes.c_long]
    c.x_stable_step.argtypes = [ctypes.c_long]
    c.x_stable_step.restype = ctypes.c_double
    valid = [n for n in SIZES if ivp.sizes.check(n) is None]
    assert [n for n in SIZES if c.x_valid_n(n)] == valid
    assert [c.x_stable_step(n) for n in valid] == [ivp.step_size(n) for n in valid]
    assert c.x_stable_step(min(SIZES)) == 0.0
    assert valid_sizes(ivp).startswith(f"n >= {ivp.sizes.minimum}")


def test_the_sizes_in_words():
    assert valid_sizes(load_named("ivp", "Brusselator2D", folder("ivp"))) == \
        "n >= 18, 2 times a perfect square (n = 2 g^2)"
    assert valid_sizes(load_named("ivp", "NBody", folder("ivp"))) == \
        "n >= 12, n <= 6000, a multiple of 6"
