"""The SimGrid adapter: its tools, platform files loaded by SimGrid itself, builds by smpicc.

The tools are installed where missing; smpicc builds the variants and the runner.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hybridtune.compiler.build import FLAGS, build, compiler, native_source
from hybridtune.describe.platform import PlatformError
from hybridtune.errors import HybridtuneError
from hybridtune.generate.cvariant import GeneratedVariant

PACKAGE = "libsimgrid-dev"     # Debian's SimGrid: smpicc, smpirun, the headers and libsimgrid
INSTALL_TIMEOUT_S = 900
CHECK_TIMEOUT_S = 60
# smpicc adds -shared -fPIC and SimGrid's own headers to the native flags: a benched run times the
# code that runs natively, not a slower build (docs/benchmarks.md#constants-set-from-measurements);
# an OpenMP region of one thread runs as it does natively (SMPI simulates no threads within a rank)
SMPI_FLAGS = FLAGS
INJECTED, BENCHED = "variant_injected", "variant_benched"   # the library's name says its mode

# Loads a platform file as smpirun does and lists SimGrid's hosts ("name speed" a line); SimGrid
# reports a file it cannot load on stderr and aborts.
CHECKER = """#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    simgrid_init(&argc, argv);
    if (argc != 2) { fprintf(stderr, "usage: ht_platform_check PLATFORM.xml\\n"); return 2; }
    simgrid_load_platform(argv[1]);
    size_t count = sg_host_count();
    sg_host_t *hosts = sg_host_list();
    for (size_t i = 0; i < count; ++i)
        printf("%s %.17g\\n", sg_host_get_name(hosts[i]), sg_host_get_speed(hosts[i]));
    free(hosts);
    return 0;
}
"""


class SimulationError(HybridtuneError):
    """SimGrid is missing and cannot be installed here, or a simulated build cannot be made."""


@dataclass(frozen=True)
class SmpiTools:
    smpicc: str
    smpirun: str


_updated: list[bool] = []      # apt-get update runs once per process


def _found() -> SmpiTools | None:
    smpicc, smpirun = shutil.which("smpicc"), shutil.which("smpirun")
    return SmpiTools(smpicc, smpirun) if smpicc and smpirun else None


def _apt(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        return subprocess.run(["apt-get", *args], capture_output=True, text=True, env=env,
                              timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise SimulationError(f"apt-get {' '.join(args)} did not finish in "
                              f"{INSTALL_TIMEOUT_S} s") from None


def smpi_tools() -> SmpiTools:
    """The paths of smpicc and smpirun; where they are missing and this process runs as root with
    apt-get, Debian's libsimgrid-dev is installed first (SimulationError where it cannot be)."""
    tools = _found()
    if tools:
        return tools
    how = (f"SimGrid's smpicc and smpirun are not on PATH: install SimGrid 3.32 or newer (Debian "
           f"or Ubuntu, as root: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install "
           f"-y {PACKAGE}); the PyPI package simgrid has Python bindings only, not these tools")
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise SimulationError(how)
    if not _updated:
        result = _apt(["update", "-qq"])
        if result.returncode != 0:
            raise SimulationError(f"{how}. apt-get update failed: {result.stderr.strip()[-1500:]}")
        _updated.append(True)
    result = _apt(["install", "-y", "-qq", "--no-install-recommends", PACKAGE])
    tools = _found()
    if result.returncode != 0 or tools is None:
        raise SimulationError(f"{how}. apt-get install {PACKAGE} failed: "
                              f"{(result.stderr or result.stdout).strip()[-1500:]}")
    return tools


@lru_cache(maxsize=1)
def _checker() -> Path:
    smpi_tools()          # the headers and libsimgrid come with the tools
    result = build("ht_platform_check", {"ht_platform_check.c": CHECKER}, shared=False,
                   cc=compiler(), base_flags=("-O2",), libraries=("-lsimgrid",))
    if not result.ok or result.path is None:
        raise SimulationError(f"building SimGrid's platform check failed ({result.source}): "
                              f"{result.message}")
    return result.path


def _simgrid_words(stderr: str) -> str:
    """SimGrid's own message in its log lines ('[...] file.cpp:95: [category/ERROR] message')."""
    messages = [re.sub(r"^\[[^\]]*\]\s*(\S+:\d+:\s*)?\[[^\]]*\]\s*", "", line).strip()
                for line in stderr.splitlines() if re.match(r"^\[[^\]]*\]", line)]
    messages = [m for m in messages if m and not m.startswith(("Exiting now", "Current backtrace"))]
    return messages[0] if messages else (stderr.strip().splitlines() or ["(no message)"])[-1]


def check_platform(path: str | Path) -> tuple:
    """Let SimGrid load the platform file as smpirun will: the names of its hosts, or
    PlatformError with SimGrid's own message and the line it names."""
    path = Path(path)
    if not path.is_file():
        raise PlatformError(f"platform file {path}: no such file")
    try:
        result = subprocess.run([str(_checker()), str(path)], capture_output=True, text=True,
                                timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise PlatformError(f"platform file {path}: SimGrid did not load it in "
                            f"{CHECK_TIMEOUT_S} s") from None
    if result.returncode == 0:
        return tuple(line.split()[0] for line in result.stdout.splitlines() if line.strip())
    words = _simgrid_words(result.stderr)
    parse = re.match(r"Parse error at (.*):(\d+): (.*)$", words)
    if parse:
        hint = (" (SimGrid needs the file to begin with <?xml version='1.0'?> and <!DOCTYPE "
                "platform SYSTEM \"https://simgrid.org/simgrid.dtd\">)"
                if "in prolog" in parse.group(3) else "")
        raise PlatformError(f"platform file {path}, line {parse.group(2)}: SimGrid cannot load "
                            f"it: {parse.group(3)}{hint}")
    raise PlatformError(f"platform file {path}: SimGrid cannot load it: {words}")


def _built(name: str, source_name: str, code: str, shared: bool, extra: tuple = ()) -> Path:
    result = build(name, {source_name: code}, shared=shared, extra_flags=extra,
                   cc=smpi_tools().smpicc, base_flags=SMPI_FLAGS)
    if not result.ok or result.path is None:
        raise SimulationError(f"smpicc could not build {result.source}: {result.message}")
    return result.path


def smpi_runner() -> Path:
    """ht_mpi_runner built by smpicc (once: cached by source and flags)."""
    return _built("ht_mpi_runner", "ht_mpi_runner.c", native_source("ht_mpi_runner.c"), False)


def build_simulated(generated: GeneratedVariant, compute_s=None) -> Path:
    """The variant's library built by smpicc (cached): benched as it is (its kernels run and are
    timed), or, given compute_s (seconds per call of each call site, in the order of
    generated.call_templates), with every kernel call replaced by its injected seconds."""
    if not generated.mpi:
        raise SimulationError(f"variant {generated.variant_id} is not an MPI variant: only MPI "
                              "skeletons run on simulated ranks")
    if compute_s is None:
        return _built(BENCHED, "variant.c", generated.code, True)
    seconds = [float(x) for x in compute_s]
    sites = generated.call_templates
    if len(seconds) != len(sites):
        raise SimulationError(f"variant {generated.variant_id}: compute_s has {len(seconds)} "
                              f"values, expected {len(sites)} (one per call site: "
                              f"{', '.join(sites)})")
    bad = [x for x in seconds if not (math.isfinite(x) and x >= 0)]
    if bad:
        raise SimulationError(f"variant {generated.variant_id}: compute_s {bad[0]!r} is not a "
                              "finite number of seconds >= 0")
    flags = ("-DHT_INJECT", "-DHT_COMPUTE_S=" + ",".join(repr(x) for x in seconds))
    return _built(INJECTED, "variant.c", generated.code, True, flags)
