"""Feature rows as numbers, named so that a stored model can rebuild its inputs.

A fixed list of transformed features plus the variant's structure (skeleton, kernel variants,
template shares).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

CONTRIBUTIONS = ("T_comp", "T_RegL1", "T_L1L2", "T_L2L3", "T_L3MEM")
CACHES = ("L1", "L2", "L3")
PLAIN = ("threads", "stages", "corrector_steps", "kernels")
# a feature row written before ranks were a dimension is of one rank, which sends nothing
LAYOUT_DEFAULTS = {"ranks": 1.0, "comm_bytes": 0.0}
# Characteristics offered to the models, in sets kept only where validation says they help
# (`hybridtune evaluate --feature-sets`): of the IVP (predict/features.ivp_characteristics),
# judged by leaving one IVP out, and of the machine file (machine_characteristics), judged by
# leaving one host out.
FEATURE_SETS = {
    "ivp": ("ivp_flops", "ivp_loads", "ivp_transcendentals", "ivp_access_distance",
            "ivp_access_distance_over_n", "ivp_stencil_share"),
    "machine": ("machine_clock_hz", "machine_dp_flops_per_cycle", "machine_L1_bytes",
                "machine_L2_bytes", "machine_L3_bytes", "machine_L2_bytes_per_cycle",
                "machine_L3_bytes_per_cycle"),
}
# The sets the models use: none. On the shipped ground truths the IVP set made the corrections of
# left-out IVPs worse (see docs/models.md), and the machine set is constant on one host's store.
KEPT_SETS: tuple = ()


def _log(value: float) -> float:
    return math.log(value) if value and value > 0 else 0.0


def base_features(features: dict) -> dict:
    """The transformed numeric features every model uses."""
    predicted = features["predicted_s"]
    out = {"log_predicted_s": _log(predicted), "log_n": _log(features["n"]),
           "com_share": features.get("t_com_s", 0.0) / predicted}
    for name in PLAIN:
        out[name] = float(features.get(name, 0.0))
    out["ranks"] = float(features.get("ranks", LAYOUT_DEFAULTS["ranks"]))
    out["log1p_comm_bytes"] = math.log1p(float(features.get("comm_bytes",
                                                            LAYOUT_DEFAULTS["comm_bytes"])))
    for name in CONTRIBUTIONS:
        out[f"share_{name}"] = features.get(f"share_{name}", 0.0)
    for cache in CACHES:
        out[f"log_ws_over_{cache}"] = _log(features.get(f"ws_over_{cache}", 0.0))
    return out


def offered_features(features: dict) -> dict:
    """Every offered characteristic, as log(1 + value): counts and sizes spread over decades."""
    return {name: math.log1p(max(float(features.get(name, 0.0)), 0.0))
            for names in FEATURE_SETS.values() for name in names}


def regime(features: dict) -> str:
    """The first cache level one time step's working set fits in (MEM beyond the last)."""
    for cache in CACHES:
        ratio = features.get(f"ws_over_{cache}")
        if ratio is not None and ratio <= 1:
            return cache
    return "MEM"


def structure_features(variant: str, features: dict) -> dict:
    """The variant's structure: its skeleton, its kernel variants and each template's share of the
    prediction (kernel variant names come from the feature row's template keys and the id), and
    the skeleton and kernel variants again per size regime, as a loop order that suits data in one
    cache level may not suit it in another."""
    predicted = features["predicted_s"]
    where = regime(features)
    skeleton = variant.split("_", 1)[0]
    out = {f"skeleton={skeleton}": 1.0, f"skeleton@{where}={skeleton}": 1.0}
    templates = _templates(tuple(features))
    for template in templates:
        out[f"template_share={template}"] = features[f"tpl_{template}_s"] / predicted
    for part in _kernel_variants(variant, templates):
        out[f"kernel={part}"] = 1.0
        out[f"kernel={part}@{where}"] = 1.0
    return out


def kernel_variants(variant: str, features: dict) -> list[str]:
    """The kernel variants in a variant id: skeleton_<template>_<order>_<template>_<order>...,
    split by the template names the feature row names."""
    return list(_kernel_variants(variant, _templates(tuple(features))))


@lru_cache(maxsize=4096)
def _templates(keys: tuple) -> tuple:
    """The template names among a feature row's keys (tpl_<template>_s), longest first."""
    return tuple(sorted({key[4:-2] for key in keys if key.startswith("tpl_") and key.endswith("_s")
                         and "_T_" not in key}, key=len, reverse=True))


@lru_cache(maxsize=65536)
def _kernel_variants(variant: str, templates: tuple) -> tuple:
    rest, found = variant.split("_", 1)[1] if "_" in variant else "", []
    while rest:
        template = next((t for t in templates if rest.startswith(t + "_")), None)
        if template is None:
            break
        rest = rest[len(template) + 1:]
        order, _, rest = rest.partition("_")
        found.append(f"{template}_{order}")
    return tuple(found)


@dataclass(frozen=True)
class Encoding:
    """The ordered feature names of a model; a row's missing names read as 0."""
    names: tuple

    def matrix(self, variants, feature_rows) -> np.ndarray:
        out = np.zeros((len(variants), len(self.names)))
        index = {name: i for i, name in enumerate(self.names)}
        for row, (variant, features) in enumerate(zip(variants, feature_rows)):
            for name, value in {**base_features(features), **offered_features(features),
                                **structure_features(variant, features)}.items():
                column = index.get(name)
                if column is not None:
                    out[row, column] = value
        return out


def encoding_for(variants, feature_rows, structure: bool = True,
                 feature_sets: tuple = KEPT_SETS) -> Encoding:
    """The names of the base features, of the offered feature sets named and, with structure, of
    every structure feature seen."""
    names = list(base_features(feature_rows[0])) if len(feature_rows) else []
    names += [name for key in feature_sets for name in FEATURE_SETS[key]]
    if structure:
        seen: dict = {}
        for variant, features in zip(variants, feature_rows):
            for name in structure_features(variant, features):
                seen.setdefault(name, None)
        names += sorted(seen)
    return Encoding(tuple(names))
