"""Building ahead of timing: every library compiled once, what failed kept with its message."""

from dataclasses import replace
from pathlib import Path

from hybridtune.describe.loader import load
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.measure.tasks import prebuild

FAULTS = Path(__file__).parents[1] / "data" / "faults" / "faults.scenario.yaml"
BASE = "A_RHS_predictor_jl_LC_jli_RHS_jl_Approx_ji_"


def test_prebuild_counts_what_it_built_and_keeps_what_failed():
    faults = load(FAULTS)
    method, ivp = faults.methods[0], faults.ivps[0]
    variant = pool_for(faults, method)[BASE + "Update_j"]
    good = generate_variant(variant, faults.skeletons[0], faults.template_map, method, ivp)
    broken = replace(good, variant_id="broken",
                     code=good.code.replace("void ht_step", "void ht_step oops"))
    built = prebuild([good, broken])
    assert built.variants == 2 and built.runners_ok
    assert built.compiled + built.cached == 1
    [(failed_id, message)] = built.failed
    assert failed_id == "broken" and "error" in message
    again = prebuild([good])
    assert again.cached == 1 and again.compiled == 0 and not again.failed
    assert again.as_json()["failed"] == []
