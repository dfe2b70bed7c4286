"""Kernel effects: recovered from pools drawn with known effects, a prior whose measurements teach every variant sharing a kernel, refused for kernels it never saw, and the shipped file is what the shipped ground truths give."""

from __future__ import annotations

import numpy as np
import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.learn.prior import (EFFECTS_SLOPE_SPREAD, OFFSET_SPREAD, THREADS_CORRELATION,
                                    kernel_prior, prior_belief)
from hybridtune.learn.kernel_effects import (PREDICTED, effects_prior, fitted_effects, shipped,
                                             tokens)
from hybridtune.pipeline.prior_stores import stores_kernel_effects
from hybridtune.strategies.leave_one_out import whole_pools

OWN = 0.02
EFFECT_SPREAD = 0.05        # how a token's effect differs between pools


def _drawn(fixture_rows, seed: int = 0, pools: int = 3) -> tuple[list, dict]:
    """The fixture's whole pools (repeated to `pools` draws) with log times drawn from known
    effects per token (each pool's effects about them) and a variant's own error."""
    generator = np.random.default_rng(seed)
    frames = [p.frame for p in whole_pools(fixture_rows)]
    names = sorted({t for f in frames for v, r in zip(f["variant"], f["features"])
                    for t in tokens(v, r)})
    truth = dict(zip(names, generator.normal(0, 0.2, len(names))))
    out = []
    for index in range(pools):
        frame = frames[index % len(frames)]
        mine = {t: e + generator.normal(0, EFFECT_SPREAD) for t, e in truth.items()}
        log_t = np.array([sum(mine[t] for t in tokens(v, r))
                          for v, r in zip(frame["variant"], frame["features"])])
        log_t += -9.0 + generator.normal(0, OWN, len(frame))
        out.append(frame.assign(median_s=np.exp(log_t)))
    return out, truth


def test_effects_are_recovered_from_pools_drawn_with_them(fixture_rows):
    pools, truth = _drawn(fixture_rows, pools=24)
    found = fitted_effects(pools, ("host",))
    assert found.pools == 24 and found.hosts == ("host",) and found.names[-1] == PREDICTED
    assert found.own == pytest.approx(OWN, rel=0.5)
    # the effects are told apart only up to what every variant of a template shares: compare the
    # pools' predicted centred log times with the truth's
    frame = pools[0]
    lp = np.log(frame["predicted_s"].to_numpy(float))
    mean, cov, _ = effects_prior(found, frame["variant"].tolist(), frame["features"].tolist(), lp)
    true = np.array([sum(truth[t] for t in tokens(v, r))
                     for v, r in zip(frame["variant"], frame["features"])])
    assert np.corrcoef(mean, true)[0, 1] > 0.95
    # a variant's spread about the mean: the effects' spread between pools and its own error
    assert np.sqrt(np.diag(cov)).mean() == pytest.approx(
        np.std([np.log(p["median_s"]).to_numpy() - np.log(p["median_s"]).mean() - (true - true.mean())
                for p in pools]), rel=0.8)


def _one_pool_belief(fixture_rows):
    """A drawn pool's variants, feature rows and its belief under the effects of seven others."""
    pools, _ = _drawn(fixture_rows, pools=8)
    effects = fitted_effects(pools[1:])
    frame = pools[0]
    variants, rows = frame["variant"].tolist(), frame["features"].tolist()
    lp = np.log(frame["predicted_s"].to_numpy(float))
    return variants, rows, kernel_prior(variants, rows, lp, [(1, 1)] * len(variants), effects)


def test_a_measurement_teaches_the_variants_that_share_its_kernels(fixture_rows):
    variants, rows, belief = _one_pool_belief(fixture_rows)
    effect = belief.mean - belief.mean.mean()
    assert belief.parts and np.allclose(
        belief.parts[0], OFFSET_SPREAD ** 2 + EFFECTS_SLOPE_SPREAD ** 2 * np.outer(effect, effect))
    first = 0
    kernels = set(tokens(variants[first], rows[first]))
    shared = {i: len(kernels & set(tokens(variants[i], rows[i]))) for i in range(1, len(variants))}
    sharing = [i for i, n in shared.items() if n == max(shared.values())]
    apart = [i for i, n in shared.items() if n == min(shared.values())]
    assert sharing and apart and min(shared.values()) < max(shared.values())
    _, before = belief.posterior()
    belief.observe(first, belief.mean[first] + 0.3)
    mean, after = belief.posterior()
    # the level moves every variant; those sharing its kernels learn more of their own effects
    assert np.all(mean[1:] > belief.mean[1:])
    assert np.mean((after / before)[sharing]) < np.mean((after / before)[apart])


def test_a_pool_flatter_than_the_effects_say_is_told_by_a_few_measurements(fixture_rows):
    variants, rows, belief = _one_pool_belief(fixture_rows)
    # six measurements, the fastest and slowest expected among them, all of one time
    by_mean = np.argsort(belief.mean)
    measured = [*by_mean[:3], *by_mean[-3:]]
    for i in measured:
        belief.observe(int(i), float(belief.mean.mean()))
    mean, _ = belief.posterior()
    rest = np.setdiff1d(np.arange(len(variants)), measured)
    assert np.std(mean[rest]) < 0.5 * np.std(belief.mean[rest])


def test_other_thread_counts_of_one_size_learn_from_each_other_other_sizes_do_not(fixture_rows):
    pools, _ = _drawn(fixture_rows, pools=8)
    effects = fitted_effects(pools[1:])
    frame = pools[0]
    size = len(frame)
    variants = frame["variant"].tolist() * 3
    rows = frame["features"].tolist() * 3
    lp = np.tile(np.log(frame["predicted_s"].to_numpy(float)), 3)
    configurations = [(6000, 1)] * size + [(6000, 2)] * size + [(600, 1)] * size
    belief = kernel_prior(variants, rows, lp, configurations, effects)
    _, own, z = effects_prior(effects, frame["variant"].tolist(), frame["features"].tolist(),
                              lp[:size])
    first, threads, other_size = (slice(i * size, (i + 1) * size) for i in range(3))
    np.testing.assert_allclose(belief.cov[first, threads],
                               THREADS_CORRELATION * z @ np.asarray(effects.cov) @ z.T)
    assert not belief.cov[first, other_size].any() and not belief.cov[threads, other_size].any()
    effect = belief.mean[first] - belief.mean[first].mean()
    np.testing.assert_allclose(belief.cov[first, first], OFFSET_SPREAD ** 2 + own
                               + EFFECTS_SLOPE_SPREAD ** 2 * np.outer(effect, effect))
    # a variant slower than expected at one thread count is expected slower at the other
    before = belief.mean.copy()
    for i in range(4):
        belief.observe(i, before[i] + 0.3 * (i % 2) - 0.1)
    mean, _ = belief.posterior()
    shift = (mean - before)[size:2 * size] - np.mean((mean - before)[size:2 * size])
    assert np.corrcoef(shift[:4], [0.3 * (i % 2) for i in range(4)])[0, 1] > 0.5
    np.testing.assert_allclose(mean[2 * size:], before[2 * size:])


def test_kernels_it_never_saw_fall_back_to_the_offline_prior(fixture_rows):
    pools, _ = _drawn(fixture_rows, pools=4)
    effects = fitted_effects(pools)
    frame = pools[0]
    renamed = [v.split("_", 1)[0] + "_Other_ij" for v in frame["variant"]]
    rows = [{k: v for k, v in r.items() if not k.startswith("tpl_")} | {"tpl_Other_s": 1e-6}
            for r in frame["features"]]
    lp = np.log(frame["predicted_s"].to_numpy(float))
    assert effects_prior(effects, renamed, rows, lp) is None
    _, note = prior_belief(None, renamed, rows, frame["predicted_s"], effects=effects)
    assert "offline model itself" in note
    _, note = prior_belief(None, frame["variant"].tolist(), frame["features"].tolist(),
                           frame["predicted_s"], effects=effects)
    assert "kernel effects measured on 4 whole pools" in note


def test_without_a_model_the_prior_is_the_shipped_kernel_effects(fixture_rows):
    frame = whole_pools(fixture_rows)[0].frame
    belief, note = prior_belief(None, frame["variant"].tolist(), frame["features"].tolist(),
                                frame["predicted_s"])
    held = shipped()
    assert f"kernel effects measured on {held.pools} whole pools of {' and '.join(held.hosts)}" \
        in note
    lp = np.log(frame["predicted_s"].to_numpy(float))
    mean, *_ = effects_prior(held, frame["variant"].tolist(), frame["features"].tolist(), lp)
    np.testing.assert_allclose(belief.mean, mean)


def test_fewer_than_three_pools_are_refused(fixture_rows):
    pools, _ = _drawn(fixture_rows, pools=2)
    with pytest.raises(ValueError, match="2 measured pool"):
        fitted_effects(pools)


@pytest.mark.slow
def test_the_shipped_effects_are_what_the_shipped_ground_truths_give():
    stores = ["data/groundtruth/ground-truth.h5", "data/groundtruth/amd-epyc/ground-truth.h5"]
    found = stores_kernel_effects([str(PROJECT_ROOT / s) for s in stores])
    held = shipped()
    assert held is not None and held.names == found.names and held.hosts == found.hosts
    np.testing.assert_allclose(held.mean, found.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(held.cov, found.cov, rtol=1e-9, atol=1e-12)
    assert held.own == pytest.approx(found.own, rel=1e-9) and held.pools == found.pools == 34


def test_the_own_error_two_passes_agree_on_leaves_their_timing_noise_out(fixture_rows):
    """Each pool drawn with own error OWN, timed in two passes each with independent noise 3x
    as wide: the residuals of the stored (one-pass) times hold both, their covariance only OWN."""
    from hybridtune.learn.kernel_effects import own_between_passes
    pools, _ = _drawn(fixture_rows, pools=24)
    generator = np.random.default_rng(7)
    passes = [pool.assign(one=pool["median_s"] * np.exp(generator.normal(0, 3 * OWN, len(pool))),
                          two=pool["median_s"] * np.exp(generator.normal(0, 3 * OWN, len(pool))))
              for pool in pools]
    names = fitted_effects(pools).names
    agreed, count = own_between_passes(names, passes)
    stored = fitted_effects([p.assign(median_s=p["one"]) for p in passes]).own
    assert count == 24
    assert agreed == pytest.approx(OWN, rel=0.35)
    assert stored > 2.5 * OWN          # the one-pass residuals carry the timing noise
    assert own_between_passes(names, [])[1] == 0


@pytest.mark.slow
def test_both_passes_of_the_amd_epyc_ground_truth_are_joined_to_its_whole_pools():
    from hybridtune.pipeline.prior_stores import store_passes
    paired = store_passes(str(PROJECT_ROOT / "data/groundtruth/amd-epyc/ground-truth.h5"))
    assert len(paired) == 19 and all(len(pool) == 384 for pool in paired)
    pool = paired[0]
    # the stored time lies between (or at) its two passes
    low, high = np.minimum(pool["one"], pool["two"]), np.maximum(pool["one"], pool["two"])
    assert ((pool["median_s"] >= low * (1 - 1e-9)) & (pool["median_s"] <= high * (1 + 1e-9))).all()
