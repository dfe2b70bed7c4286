"""A configuration's error scales fitted to its measurements: quieter variants and timings than
the model expects lower them, residuals as wide as it expects leave them near one."""

from __future__ import annotations

import numpy as np

from hybridtune.learn.adapt import fitted_scales
from hybridtune.learn.belief import Belief
from hybridtune.learn.timing import TIMING_SPREAD
from hybridtune.strategies.hybrid import HybridSearch

SIZE = 40
OWN = 0.06               # the model's expected error of a variant's own (log time)


def _parts(size: int = SIZE):
    return np.full((size, size), 0.2 ** 2), OWN ** 2 * np.eye(size)


def test_variants_that_agree_closely_lower_both_the_scale_and_the_noise_floor():
    fixed, scaled = _parts()
    rng = np.random.default_rng(1)
    residual = 0.1 + 0.004 * rng.standard_normal(SIZE)
    scale, floor = fitted_scales(fixed, scaled, residual, np.zeros(SIZE))
    assert scale < 0.3 and floor < 0.5


def test_residuals_as_wide_as_the_model_expects_keep_the_scale_and_the_floor_near_one():
    fixed, scaled = _parts()
    rng = np.random.default_rng(2)
    residual = -0.1 + np.hypot(OWN, TIMING_SPREAD) * rng.standard_normal(SIZE)
    scale, floor = fitted_scales(fixed, scaled, residual, np.zeros(SIZE))
    assert 0.6 < scale < 2.0 and floor == 1.0


def test_a_search_over_near_ties_the_model_spread_out_stops_sooner_when_it_adapts():
    # the model expects 6% between variants of its own and puts them 20% apart; all lie within 0.5%
    fixed, scaled = _parts(100)
    mean = np.log(np.linspace(1.0, 1.2, 100))
    truth = np.exp(np.random.default_rng(3).normal(0.0, 0.002, 100))
    measured = []
    for parts in ((fixed, scaled, np.zeros(100, int)), ()):
        belief = Belief(mean, fixed + scaled, {}, parts=parts, scales=np.ones(100))
        search = HybridSearch(belief, 100, 0.1, 100)
        count = 0
        while (asked := search.ask(1)):
            search.tell(asked[0], float(truth[asked[0]]))
            count += 1
        measured.append(count)
    adapted, fixed_scales = measured
    assert adapted < fixed_scales / 2, measured


def test_a_widened_prior_keeps_its_factor_on_the_variant_errors_through_refits():
    fixed, scaled = _parts(20)
    prior = Belief(np.zeros(20), fixed + scaled, {}, parts=(fixed, scaled, np.zeros(20, int)),
                   scales=np.ones(20))
    wide = prior.widened(2.0)
    rng = np.random.default_rng(4)
    for index in range(12):
        wide.observe(index, float(0.1 + 0.2 * rng.standard_normal()))
        wide.adapt(index)
    scale = wide.scales[0]
    # the configuration's common error is not widened, the variants' errors are
    np.testing.assert_allclose(wide.cov, fixed + 4 * scale ** 2 * scaled)
    assert not prior.observed and np.all(prior.scales == 1.0)
    np.testing.assert_allclose(prior.cov, fixed + scaled)
