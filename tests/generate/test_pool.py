"""The variant pool: Offsite's 384 variants for A-H, stable ids, identical code folded into one variant."""

from collections import Counter

from hybridtune.describe.collocation import method_yaml
from hybridtune.describe.loader import load
from hybridtune.generate.pool import build_pool, covering_sample

PER_SKELETON = {"A": 48, "B": 48, "C": 64, "D": 64, "E": 32, "F": 32, "G": 48, "H": 48}


def test_default_pool_has_offsites_384(default_scenario, radau7):
    pool = build_pool(default_scenario.skeletons, default_scenario.template_map, radau7)
    assert len(pool.variants) == 384 and pool.duplicates == 0
    assert Counter(v.skeleton for v in pool.variants) == PER_SKELETON
    assert len({v.id for v in pool.variants}) == 384
    assert len({v.code_hash for v in pool.variants}) == 384


def test_the_covering_sample_uses_every_kernel_variant_with_the_fewest_variants(default_scenario,
                                                                              radau7):
    pool = build_pool(default_scenario.skeletons, default_scenario.template_map, radau7)
    sample = covering_sample(pool.variants)
    assert {(v.skeleton, k) for v in sample for k in v.kernels} == \
        {(v.skeleton, k) for v in pool.variants for k in v.kernels}
    # no cover has fewer variants of a skeleton than its template with the most kernel variants
    kernels: dict = {}
    for v in pool.variants:
        for template, kernel in v.kernels:
            kernels.setdefault((v.skeleton, template), set()).add(kernel)
    least = Counter()
    for (skeleton, _), used in kernels.items():
        least[skeleton] = max(least[skeleton], len(used))
    assert Counter(v.skeleton for v in sample) == least
    order = [v.id for v in pool.variants]
    assert [order.index(v.id) for v in sample] == sorted(order.index(v.id) for v in sample)


def test_ids_are_stable(default_scenario, radau7):
    first = build_pool(default_scenario.skeletons, default_scenario.template_map, radau7)
    again = build_pool(default_scenario.skeletons, default_scenario.template_map, radau7)
    assert [v.id for v in first.variants] == [v.id for v in again.variants]
    ids = {v.id: v for v in first.variants}
    variant = ids["A_RHS_predictor_lj_LC_ijl_RHS_lj_Approx_ij_Update_j"]
    assert variant.kernel_map == {"RHS_predictor": "RHS_predictor_lj", "LC": "LC_ijl",
                                  "RHS": "RHS_lj", "Approx": "Approx_ij", "Update": "Update_j"}
    assert "F_RHS_LC_predictor_jli_RHS_LC_ilj_RHS_Approx_Update_ij" in ids


def test_identical_code_is_one_variant(default_scenario, tmp_path):
    # with one stage, the loop orders of LC (and the others) collapse to the same code
    path = tmp_path / "radauIIA1.method.yaml"
    path.write_text(method_yaml("radauIIA1", "radauIIA", 1))
    euler = load(path)
    pool = build_pool(default_scenario.skeletons, default_scenario.template_map, euler)
    assert pool.duplicates > 0
    assert len(pool.variants) + pool.duplicates == 384
    folded = [v for v in pool.variants if v.same_as]
    assert folded and all(other.startswith(v.skeleton) for v in folded for other in v.same_as)
    # at s = 1, LC's six loop orders leave three kernels: in place (ijl = ilj = lij), with an
    # accumulator array (jil) and with a scalar accumulator (jli = lji)
    a_variants = [v for v in pool.variants if v.skeleton == "A"]
    assert {v.kernel_map["LC"] for v in a_variants} == {"LC_ijl", "LC_jil", "LC_jli"}
