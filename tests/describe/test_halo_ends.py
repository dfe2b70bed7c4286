"""An IVP's halo from each affine block's first and last component equals the largest distance
over every component's reads, on every library IVP and the periodic test IVPs."""

from pathlib import Path

import numpy as np
import pytest

from hybridtune.describe.ivp_checks import component_reads
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load

IVP_FILES = sorted((PROJECT_ROOT / "scenarios/ivps").glob("*.ivp.yaml")) + \
    sorted((PROJECT_ROOT / "tests/data").rglob("*.ivp.yaml"))


def _every_component(ivp, n: int) -> int:
    env = ivp.environment(n)
    width = 0
    for block in ivp.components:
        js = block.indices(env)
        if len(js):
            for reads, in_sum in component_reads(block.code, env, js, in_sums=True):
                distance = np.abs(reads - js)
                if not in_sum:
                    distance = np.minimum(distance, n - distance)
                width = max(width, int(np.max(distance)))
    return width


@pytest.mark.parametrize("path", IVP_FILES, ids=lambda p: Path(p).name)
def test_the_halo_from_block_ends_is_the_halo_over_every_component(path):
    ivp = load(path, "ivp")
    sizes = list(ivp.sizes.samples())[:6] + [ivp.sizes.next_valid(t) for t in (997, 20000)]
    for n in sizes:
        env = ivp.environment(n)
        for block in ivp.components + tuple(ivp.affine_components):
            js, ends = block.indices(env), block.ends(env)
            assert list(ends) == ([int(js.min()), int(js.max())] if len(js) else [])
        assert ivp.halo(n) == _every_component(ivp, n), n
