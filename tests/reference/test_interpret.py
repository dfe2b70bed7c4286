"""Every variant computes the PIRK step: its programs, executed statement by statement, match the reference."""

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load, load_named
from hybridtune.generate.pool import build_pool
from hybridtune.reference.interpret import VariantInterpreter
from hybridtune.reference.pirk import pirk_step
from hybridtune.reference.rhs import initial_values, right_hand_side
from tests_support import covering_sample

TOLERANCE = 1e-13   # the sums are the same up to association order


def _case(ivp_name, n):
    ivp = load_named("ivp", ivp_name, PROJECT_ROOT)
    rng = np.random.default_rng(7)
    y = initial_values(ivp, n) + 0.01 * rng.standard_normal(n)
    return ivp, y, ivp.step_size(n)


def _error(scenario, method, variant, ivp, n, y, h, t=0.3):
    skeletons = {s.name: s for s in scenario.skeletons}
    interpreter = VariantInterpreter(skeletons[variant.skeleton], scenario.template_map,
                                     variant.kernel_map, method, ivp, n)
    got = interpreter.step(t, y, h)
    want = pirk_step(right_hand_side(ivp, n), t, y, h, method)
    assert np.all(np.isfinite(want))
    return np.max(np.abs(got - want)) / np.max(np.abs(want))


@pytest.mark.parametrize("ivp_name, n", [("Cusp", 9), ("Medakzo", 8), ("Heat2D", 16)])
def test_every_kernel_variant_in_every_skeleton(default_scenario, radau7, ivp_name, n):
    pool = build_pool(default_scenario.skeletons, default_scenario.template_map, radau7)
    ivp, y, h = _case(ivp_name, n)
    sample = covering_sample(pool.variants)
    assert len(sample) >= 8
    for variant in sample:
        err = _error(default_scenario, radau7, variant, ivp, n, y, h)
        assert err <= TOLERANCE, variant.id


@pytest.mark.slow
def test_whole_pool(default_scenario, radau7):
    pool = build_pool(default_scenario.skeletons, default_scenario.template_map, radau7)
    ivp, y, h = _case("InverterChain", 5)
    worst = max(_error(default_scenario, radau7, v, ivp, 5, y, h) for v in pool.variants)
    assert worst <= TOLERANCE


def test_a_skeleton_with_one_corrector_step_too_few_is_caught(default_scenario, radau7, tmp_path):
    path = tmp_path / "short.skeleton.yaml"
    path.write_text((PROJECT_ROOT / "scenarios/skeletons/G.skeleton.yaml").read_text()
                    .replace("%LOOP_START k m - 1", "%LOOP_START k m - 2"))
    short = load(path)
    scenario = default_scenario.__class__(**{**default_scenario.__dict__,
                                             "skeletons": (short,)})
    variant = build_pool((short,), default_scenario.template_map, radau7).variants[0]
    ivp, y, h = _case("Wave1D", 20)
    assert _error(scenario, radau7, variant, ivp, 20, y, h) > 1000 * TOLERANCE
