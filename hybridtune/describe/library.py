"""Where descriptions live: the shipped library under scenarios/ and data/machines, and name lookup."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = {
    "method": (".method.yaml", ".ode"),
    "ivp": (".ivp.yaml",),
    "kernel": (".kernel.yaml",),
    "skeleton": (".skeleton.yaml",),
    "machine": (".yml", ".machine.yaml"),
    "scenario": (".scenario.yaml",),
}
FOLDERS = {"method": "methods", "ivp": "ivps", "kernel": "kernels", "skeleton": "skeletons"}
HOST = "host"
HOST_FALLBACK = "SkylakeSP_Gold-6148.yml"


def scenarios_dir() -> Path:
    return Path(os.environ.get("HYBRIDTUNE_LIBRARY", PROJECT_ROOT / "scenarios"))


def machines_dir() -> Path:
    return Path(os.environ.get("HYBRIDTUNE_MACHINES", PROJECT_ROOT / "data" / "machines"))


def cache_root() -> Path:
    """The project's cache of intermediates (builds, kerncraft's files): safe to delete."""
    return Path(os.environ.get("HYBRIDTUNE_CACHE", PROJECT_ROOT / "data" / "cache"))


def default_store() -> Path:
    """The store commands use without --db."""
    return Path(os.environ.get("HYBRIDTUNE_STORE", PROJECT_ROOT / "data" / "store" / "hybridtune.h5"))


def folder(kind: str) -> Path:
    return machines_dir() if kind == "machine" else scenarios_dir() / FOLDERS[kind]


def stem(path: Path, kind: str) -> str:
    name = path.name
    for suffix in SUFFIXES[kind]:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name.split(".")[0]


def library_files(kind: str) -> dict[str, Path]:
    """name -> path of the shipped descriptions of a kind."""
    base = folder(kind)
    if not base.is_dir():
        return {}
    return {stem(p, kind): p for p in sorted(base.iterdir())
            if p.is_file() and any(p.name.endswith(s) for s in SUFFIXES[kind])}


def looks_like_path(ref: str) -> bool:
    return "/" in ref or any(ref.endswith(s) for suffixes in SUFFIXES.values() for s in suffixes) \
        or ref.endswith((".yaml", ".yml"))


def host_machine_file() -> tuple[Path, str]:
    """The machine file `host` stands for, and a note saying how it was chosen."""
    probed = machines_dir() / "host.yml"
    if probed.is_file():
        return probed, f"host: probed machine file {probed}"
    fallback = machines_dir() / HOST_FALLBACK
    return fallback, (f"host: not probed yet, using the shipped kerncraft file {HOST_FALLBACK} "
                      "(an AVX-512 server core) until a machine probe writes data/machines/host.yml")
