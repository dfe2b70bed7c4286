"""Stores as hybrid's prior (tune --prior): a model of this hardware, else their kernel effects."""

from __future__ import annotations

from pathlib import Path

from hybridtune.errors import RequestError
from hybridtune.learn.kernel_effects import KernelEffects, effects_of
from hybridtune.learn.table import CONFIG, hardware_name, joined_rows
from hybridtune.pipeline.corrections import require_model
from hybridtune.pipeline.store_frames import read_frames
from hybridtune.strategies.leave_one_out import whole_pools
from hybridtune.strategies.noise import pass_ratios


def _frames(path: str) -> dict:
    return read_frames(path, ("variant_predictions", "measurements", "runs"))


def store_pools(path: str, frames: dict | None = None) -> tuple[list, str]:
    """A store's whole pools (frames of one configuration each, every variant measured) of its
    latest machine file and that file's hardware, and the CPU they were measured on (frames:
    the store's tables where already read)."""
    frames = _frames(path) if frames is None else frames
    if frames["variant_predictions"].empty or frames["measurements"].empty:
        return [], ""
    rows = joined_rows(frames["variant_predictions"], frames["measurements"],
                       runs=frames["runs"])
    return [pool.frame for pool in whole_pools(rows)], \
        hardware_name(frames["measurements"]) or Path(path).name


def store_passes(path: str) -> list:
    """A store's whole pools (as store_pools) joined to both passes of each variant timed in two
    (columns one and two; pass_ratios pairs them), the pools with fewer than 3 such left out."""
    frames = _frames(path)
    pools, _ = store_pools(path, frames)
    pairs = pass_ratios(frames["measurements"])
    if pairs.empty:
        return []
    by_key = {key: group for key, group in pairs.groupby(list(CONFIG))}
    joined = []
    for pool in pools:
        key = tuple(pool[list(CONFIG)].iloc[0])
        found = by_key.get(key)
        if found is not None:
            both = pool.merge(found[["variant", "one", "two"]], on="variant")
            if len(both) >= 3:
                joined.append(both)
    return joined


def stores_kernel_effects(paths: list) -> KernelEffects | None:
    """The kernel effects fitted on these stores' whole pools together (None with too few)."""
    pools, names = [], []
    for path in paths:
        found, name = store_pools(path)
        pools += found
        if found and name not in names:
            names.append(name)
    return effects_of(pools, tuple(names))


def check_prior_store(path: str, machine_sha256: str) -> None:
    """A --prior store must exist and hold a trained model (of any machine file: a model of other
    hardware serves) or whole pools to fit kernel effects on."""
    if not Path(path).is_file():
        raise RequestError(f"--prior {path}: no store {path}")
    try:
        require_model(path, machine_sha256, f"--prior {path}", any_machine=True)
        return
    except RequestError:
        pools, _ = store_pools(path)
    if not pools:
        raise RequestError(f"--prior {path}: the store holds no trained model (`hybridtune train "
                           f"--db {path}`) and no whole pool (a configuration with every variant "
                           "measured: `tune --strategy run_all`) to learn the kernel effects from")
