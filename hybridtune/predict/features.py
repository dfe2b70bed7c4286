"""What a correction model learns from, per variant prediction: ECM contributions, working set against the caches, the IVP's and the method's characteristics."""

from __future__ import annotations

import math

from hybridtune.describe.machine import Machine
from hybridtune.predict.variants import VariantPrediction
from hybridtune.predict.working_set import capacities

# Bump when a feature is added, removed or changes meaning: models record the schema they were
# fitted on and refuse features of another.
FEATURE_SCHEMA = "variant-features-1"
TRANSCENDENTAL = frozenset({"exp", "log", "log10", "log2", "pow", "sqrt", "cbrt", "sin", "cos",
                            "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "erf"})
SPECIAL_BLOCK_SIZE = 2      # a block of at most this many components per repetition is special


def _rounded(value: float) -> float:
    return float(f"{value:.5g}") if math.isfinite(value) else 0.0


def ivp_characteristics(ivp, n: int) -> dict:
    """Per component evaluation at size n: flops, loads and transcendental calls (means over the
    components), the access distance (absolute and over n) and the share of components in stencil
    blocks (more than SPECIAL_BLOCK_SIZE components per repetition) rather than special ones."""
    facts = ivp.block_facts(n)
    env = ivp.environment(n)
    total = sum(f["components"] for f in facts) or 1
    flops = loads = calls = stencil = 0.0
    for fact, block in zip(facts, ivp.components):
        count = fact["components"]
        operations = fact["operations"]
        flops += count * sum(v for k, v in operations.items() if k != "select")
        calls += count * sum(v for k, v in operations.items() if k in TRANSCENDENTAL)
        loads += count * fact["loads"]
        if count and count / block.count(env) > SPECIAL_BLOCK_SIZE:
            stencil += count
    distance = max((f["access_distance"] for f in facts), default=0)
    return {"ivp_flops": flops / total, "ivp_loads": loads / total,
            "ivp_transcendentals": calls / total, "ivp_access_distance": float(distance),
            "ivp_access_distance_over_n": distance / n, "ivp_stencil_share": stencil / total}


def working_set_ratios(step_bytes: float, machine: Machine, threads: int) -> dict:
    """One time step's working set over each cache level's capacity for one of the threads."""
    return {f"ws_over_{name}": step_bytes / size
            for name, size in capacities(machine, threads) if size}


def contribution_seconds(prediction: VariantPrediction) -> tuple[dict, dict]:
    """ECM contributions (T_comp, T_RegL1, T_L1L2, ...) in seconds per step: summed over the
    variant, and per template. A loop's contribution in cycles per cache line is scaled as its
    predicted cycles are (saturation with threads included)."""
    total: dict = {}
    per_template: dict = {}
    for kernel in prediction.kernels:
        calls = kernel["calls_per_step"]
        into = per_template.setdefault(kernel["template"], {})
        for part in kernel["parts"]:
            cycles = part["cycles_per_cl"]
            if not cycles:
                continue
            scale = calls * part["seconds"] / cycles
            for name, value in part["contributions"].items():
                if name.startswith("T_") and name != "T_ECM" and isinstance(value, (int, float)):
                    total[name] = total.get(name, 0.0) + scale * value
                    into[name] = into.get(name, 0.0) + scale * value
    return total, per_template


def variant_features(prediction: VariantPrediction, method, machine: Machine,
                     step_bytes: float, ivp_facts: dict) -> dict:
    """The flat feature dict stored with a variant prediction (seconds, ratios and counts)."""
    if prediction.status != "ok":
        return {}
    predicted = prediction.predicted_s
    total, per_template = contribution_seconds(prediction)
    features = {"feature_schema": FEATURE_SCHEMA, "machine_sha256": machine.sha256,
                "predicted_s": predicted, "t_com_s": prediction.t_com_s,
                "barriers": prediction.barriers, "n": prediction.n,
                "threads": prediction.threads, "stages": method.stages,
                "corrector_steps": method.corrector_steps, "step_bytes": step_bytes,
                "kernels": len(prediction.kernels)}
    features.update(working_set_ratios(step_bytes, machine, prediction.threads))
    features.update(ivp_facts)
    for name, seconds in total.items():
        features[f"ecm_{name}_s"] = seconds
        features[f"share_{name}"] = seconds / predicted
    for kernel in prediction.kernels:
        template = kernel["template"]
        features[f"tpl_{template}_s"] = kernel["seconds"]
        for name, seconds in per_template[template].items():
            if seconds > 0:         # a missing template contribution reads as 0
                features[f"tpl_{template}_{name}_s"] = seconds
    return {key: _rounded(value) if isinstance(value, float) else value
            for key, value in features.items()}
