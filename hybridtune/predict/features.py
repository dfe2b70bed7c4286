"""What a correction model learns from, per variant prediction.

ECM contributions, the working set against the caches, the IVP's and the method's characteristics.
"""

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


def machine_characteristics(machine: Machine) -> dict:
    """The machine file's facts a model may learn across hardware from: clock, each cache level's
    capacity per core and upstream throughput, and peak double-precision FLOPs per cycle."""
    out = {"machine_clock_hz": machine.clock_hz, "machine_dp_flops_per_cycle":
           machine.dp_flops_per_cycle}
    for level in machine.levels:
        if level.size_bytes is not None:
            out[f"machine_{level.name}_bytes"] = level.size_bytes / max(1, level.cores_per_group or 1)
        if level.upstream_bytes_per_cycle is not None:
            out[f"machine_{level.name}_bytes_per_cycle"] = level.upstream_bytes_per_cycle
    return out


def working_set_ratios(step_bytes: float, machine: Machine, threads: int) -> dict:
    """One time step's working set over each cache level's capacity for one of the threads."""
    return {f"ws_over_{name}": step_bytes / size
            for name, size in capacities(machine, threads) if size}


def _kernel_terms(kernel: dict) -> list[tuple[str, float]]:
    """A kernel's ECM contributions (T_comp, T_RegL1, T_L1L2, ...) in seconds per step, per part
    in order. A loop's contribution in cycles per cache line is scaled as its predicted cycles are
    (saturation with threads included)."""
    calls = kernel["calls_per_step"]
    terms = []
    for part in kernel["parts"]:
        cycles = part["cycles_per_cl"]
        if not cycles:
            continue
        scale = calls * part["seconds"] / cycles
        for name, value in part["contributions"].items():
            if name.startswith("T_") and name != "T_ECM" and isinstance(value, (int, float)):
                terms.append((name, scale * value))
    return terms


def _summed(kernel_terms) -> tuple[dict, dict]:
    """(template, terms) per kernel -> the contributions summed over the variant, and per
    template."""
    total: dict = {}
    per_template: dict = {}
    for template, terms in kernel_terms:
        into = per_template.setdefault(template, {})
        for name, seconds in terms:
            total[name] = total.get(name, 0.0) + seconds
            into[name] = into.get(name, 0.0) + seconds
    return total, per_template


def contribution_seconds(prediction: VariantPrediction) -> tuple[dict, dict]:
    """ECM contributions in seconds per step: summed over the variant, and per template."""
    return _summed((kernel["template"], _kernel_terms(kernel)) for kernel in prediction.kernels)


def variant_features(prediction: VariantPrediction, method, machine: Machine,
                     step_bytes: float, ivp_facts: dict) -> dict:
    """The flat feature dict stored with a variant prediction (seconds, ratios and counts)."""
    return ranking_features([prediction], method, machine, {prediction.skeleton: step_bytes},
                            ivp_facts)[0]


def _plain(value):
    return _rounded(value) if isinstance(value, float) else value


def ranking_features(predictions, method, machine: Machine, step_bytes: dict,
                     ivp_facts: dict) -> list[dict]:
    """variant_features of each prediction of one configuration (step_bytes: per skeleton); what
    many variants share (a kernel's contributions, the working set of a skeleton) worked out
    once."""
    facts = {key: _plain(value) for key, value in ivp_facts.items()}
    machine_facts = {key: _plain(float(value))
                     for key, value in machine_characteristics(machine).items()}
    ratios: dict = {}
    shares = KernelShares()
    rows = []
    for prediction in predictions:
        if prediction.status != "ok":
            rows.append({})
            continue
        size = step_bytes[prediction.skeleton]
        if (size, prediction.threads) not in ratios:
            ratios[size, prediction.threads] = {
                key: _plain(value)
                for key, value in working_set_ratios(size, machine, prediction.threads).items()}
        kernels = [shares.of(kernel) for kernel in prediction.kernels]
        features = _configuration_features(prediction, method, machine, size)
        features.update(ratios[size, prediction.threads])
        features.update(facts)
        features.update(machine_facts)
        features.update(_contribution_features(kernels, prediction.predicted_s))
        features.update(_template_features(prediction, kernels))
        rows.append(features)
    return rows


class KernelShares:
    """A kernel's share of a step worked out once for every variant that holds it: its parts, its
    contribution terms and its tpl_ feature entries."""

    def __init__(self):
        self._shares: dict = {}

    def of(self, kernel: dict) -> tuple:
        """(parts, terms, the kernel's tpl_ entries) of one kernel of a prediction."""
        template = kernel["template"]
        key = (id(kernel["parts"]), template, kernel["calls_per_step"], kernel["seconds"])
        if key not in self._shares:     # parts kept in the value: its id is not reused meanwhile
            terms = _kernel_terms(kernel)
            own = _summed([(template, terms)])[1][template]
            entries = [(f"tpl_{template}_s", _plain(kernel["seconds"]))]
            entries += [(f"tpl_{template}_{name}_s", _plain(seconds))
                        for name, seconds in own.items() if seconds > 0]
            self._shares[key] = (kernel["parts"], terms, entries)
        return self._shares[key]


def _configuration_features(prediction, method, machine: Machine, size: int) -> dict:
    """The features of a prediction's configuration and layout, before the machine's and IVP's."""
    features = {key: _plain(value) for key, value in (
        ("feature_schema", FEATURE_SCHEMA), ("machine_sha256", machine.sha256),
        ("predicted_s", prediction.predicted_s), ("t_com_s", prediction.t_com_s),
        ("barriers", prediction.barriers), ("n", prediction.n),
        ("threads", prediction.threads), ("stages", method.stages),
        ("corrector_steps", method.corrector_steps), ("step_bytes", size),
        ("kernels", len(prediction.kernels)))}
    if prediction.ranks > 1:    # absent on one rank (learn/encode reads 1 rank, 0 bytes)
        features.update(ranks=prediction.ranks, comm_bytes=_plain(prediction.comm_bytes))
    return features


def _contribution_features(kernels: list, predicted: float) -> dict:
    """ecm_NAME_s and share_NAME: each contribution's seconds over the kernels (their shares) and
    its part of the predicted time."""
    total: dict = {}
    for _, terms, _ in kernels:
        for name, seconds in terms:
            total[name] = total.get(name, 0.0) + seconds
    features = {}
    for name, seconds in total.items():
        features[f"ecm_{name}_s"] = _plain(seconds)
        features[f"share_{name}"] = _plain(seconds / predicted)
    return features


def _template_features(prediction, kernels: list) -> dict:
    """tpl_ entries: per template its seconds and its contributions (kernels: their shares)."""
    features: dict = {}
    if len({kernel["template"] for kernel in prediction.kernels}) == len(kernels):
        for _, _, entries in kernels:     # a template's sums are its one kernel's
            features.update(entries)
        return features
    per_template = contribution_seconds(prediction)[1]
    for kernel in prediction.kernels:
        template = kernel["template"]
        features[f"tpl_{template}_s"] = _plain(kernel["seconds"])
        features.update((f"tpl_{template}_{name}_s", _plain(seconds))
                        for name, seconds in per_template[template].items()
                        if seconds > 0)     # a missing template contribution reads as 0
    return features
