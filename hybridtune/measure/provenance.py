"""What makes a measurement valid: the generated code, the build and the hardware it ran on."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
from functools import lru_cache
from pathlib import Path

from hybridtune.compiler.build import FLAGS, compiler, toolchain_identity
from hybridtune.generate.cvariant import GENERATOR_VERSION


def node_name() -> str:
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def code_sha256(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@lru_cache(maxsize=None)
def build_identity() -> dict:
    """Compiler, flags and what -march=native resolves to, with their digest as build_id."""
    cc = compiler()
    identity = toolchain_identity(cc)
    flags = " ".join(FLAGS)
    return {"compiler": identity.splitlines()[0], "compiler_flags": flags,
            "generator_version": GENERATOR_VERSION,
            "build_id": digest("\n".join([identity, flags, GENERATOR_VERSION]))}


def _cpuinfo_first(root: Path) -> dict:
    fields: dict = {}
    try:
        text = (root / "proc/cpuinfo").read_text()
    except OSError:
        return fields
    for line in text.split("\n\n")[0].splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def _caches(root: Path) -> list:
    found = []
    for index in sorted((root / "sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            found.append([(index / name).read_text().strip() for name in ("level", "type", "size")])
        except OSError:
            continue
    return found


@lru_cache(maxsize=None)
def hardware_identity(root: str = "/") -> dict:
    """CPU model, its flags and cache sizes (not the core count, so an emulated node matches a
    direct run on the same machine), with their digest as hardware_id."""
    first = _cpuinfo_first(Path(root))
    return identity_of(first.get("model name", "unknown"), first.get("vendor_id", ""),
                       first.get("flags", ""), _caches(Path(root)))


def identity_of(model: str, vendor: str, flags: str, caches: list) -> dict:
    """hardware_identity from the facts themselves (a tuned library reports them from C):
    caches as [level, type, size] in the order of cpu0's cache index names."""
    ordered = " ".join(sorted(flags.split()))
    hardware = {"model": model, "vendor": vendor,
                "flags_sha256": hashlib.sha256(ordered.encode()).hexdigest()[:16],
                "caches": [list(map(str, cache)) for cache in caches]}
    return {"hardware_id": digest(json.dumps(hardware, sort_keys=True)), "hardware": hardware}


def cpu_model() -> str:
    """The CPU's model name, as /proc/cpuinfo gives it."""
    return hardware_identity()["hardware"]["model"]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=root).stdout


def tree_state(root: Path, folders: tuple = ("hybridtune", "native", "scenarios", "jobs")) -> dict:
    """The commit, the uncommitted changes and a digest of the sources under root's folders (a
    change during a run shows as a start state unlike the end state)."""
    sources = hashlib.sha256()
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".c", ".h", ".yaml", ".sh"):
                sources.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return {"commit": _git(root, "rev-parse", "HEAD").strip(),
            "uncommitted": [line for line in _git(root, "status", "--porcelain").splitlines()
                            if line.strip()],
            "sources_sha256": sources.hexdigest()[:16]}
