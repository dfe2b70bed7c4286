"""The compiler adapter: gcc builds shared objects and programs, cached by source, compiler and target."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hybridtune.describe.library import PROJECT_ROOT, cache_root
from hybridtune.errors import HybridtuneError

NATIVE = PROJECT_ROOT / "native"
# -fno-trapping-math changes no value; without it gcc keeps a select (fmax with a literal bound)
# as a branch on AVX2 and the loop scalar
FLAGS = ("-O3", "-march=native", "-fno-trapping-math", "-fopenmp", "-std=c11",
         "-D_POSIX_C_SOURCE=200809L")
COMPILE_TIMEOUT_S = 300


class CompilerMissing(HybridtuneError):
    """No C compiler: the measure stage cannot run."""


@dataclass(frozen=True)
class BuildResult:
    """A built artefact, or the compiler's message; failures are data, not exceptions."""
    ok: bool
    path: Path | None
    source: Path
    message: str = ""
    cached: bool = False


def compiler() -> str:
    cc = os.environ.get("CC", "gcc")
    if shutil.which(cc) is None:
        raise CompilerMissing(f"C compiler '{cc}' not found on PATH: install gcc (Debian: apt-get "
                              "install gcc) or set CC")
    return cc


def mpi_compiler() -> str:
    """The MPI compiler wrapper beside this Python (the mpich wheel's mpicc), else one on PATH."""
    beside = Path(sys.executable).parent / "mpicc"
    found = str(beside) if beside.is_file() else shutil.which("mpicc")
    if found is None:
        raise CompilerMissing("MPI compiler 'mpicc' not found beside this Python or on PATH: "
                              "install the project (`make install`: the mpich wheel brings it)")
    return found


@lru_cache(maxsize=None)
def toolchain_identity(cc: str) -> str:
    """Compiler version plus what -march=native resolves to here: part of every cache key."""
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    target = subprocess.run([cc, "-march=native", "-Q", "--help=target"], capture_output=True,
                            text=True).stdout
    resolved = "\n".join(line.strip() for line in target.splitlines()
                         if line.strip().startswith("-m") and "[enabled]" in line
                         or line.strip().startswith(("-march=", "-mtune=")))
    return version.splitlines()[0] + "\n" + resolved


def cache_dir() -> Path:
    return cache_root() / "build"


def _key(parts: list[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()[:24]


def _included_headers(texts) -> list[Path]:
    """The native/ headers the sources include, directly or through each other."""
    found: dict[Path, None] = {}
    pending = list(texts)
    while pending:
        for match in re.finditer(r'#include\s+"([^"]+)"', pending.pop()):
            header = NATIVE / match.group(1)
            if header.is_file() and header not in found:
                found[header] = None
                pending.append(header.read_text())
    return sorted(found)


def _place(cc: str, name: str, sources: dict[str, str], shared: bool, extra_flags: tuple,
           base_flags: tuple = FLAGS, libraries: tuple = ()) -> tuple[tuple, Path, Path]:
    """The flags, cache folder and artefact path of a build (its key is the folder's name)."""
    flags = tuple(base_flags) + (("-fPIC", "-shared") if shared else ()) + tuple(extra_flags)
    key = _key([name.encode(), toolchain_identity(cc).encode(), " ".join(flags).encode()]
               + ([" ".join(libraries).encode()] if libraries else [])
               + [f"{k}\0{v}".encode() for k, v in sorted(sources.items())]
               + [h.read_bytes() for h in _included_headers(sources.values())])
    folder = cache_dir() / key
    return flags, folder, folder / (name + (".so" if shared else ""))


def is_built(name: str, sources: dict[str, str], shared: bool, extra_flags: tuple = (),
             mpi: bool = False, cc: str | None = None, base_flags: tuple = FLAGS,
             libraries: tuple = ()) -> bool:
    """Whether build() would find its artefact in the cache (nothing is compiled)."""
    cc = cc or (mpi_compiler() if mpi else compiler())
    return _place(cc, name, sources, shared, extra_flags, base_flags, libraries)[2].is_file()


def build(name: str, sources: dict[str, str], shared: bool, extra_flags: tuple = (),
          mpi: bool = False, cc: str | None = None, base_flags: tuple = FLAGS,
          libraries: tuple = ()) -> BuildResult:
    """Compile sources (file name -> text; native/ headers are on the include path) once per key;
    with mpi, by the MPI compiler wrapper; with cc, by that compiler (SimGrid's smpicc) and
    base_flags in place of FLAGS; libraries (-lNAME, or objects) are linked after the sources."""
    cc = cc or (mpi_compiler() if mpi else compiler())
    flags, folder, target = _place(cc, name, sources, shared, extra_flags, base_flags, libraries)
    main_source = folder / sorted(sources)[0]
    if target.is_file():
        return BuildResult(True, target, main_source, cached=True)
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in sources.items():
        (folder / file_name).write_text(text)
    linked = () if "-c" in flags else (*libraries, "-lm")
    return _compiled([cc, *flags, "-I", str(NATIVE), *[str(folder / f) for f in sorted(sources)]],
                     linked, target, main_source)


def build_linked(name: str, units: dict[str, str], whole: str, mpi: bool = False
                 ) -> BuildResult:
    """A shared library linked from units (file name -> text), each compiled to an object once
    per its text, so that libraries sharing a unit compile it once; `whole` (the units as one
    file) is kept beside the library as its source."""
    objects = []
    for file_name, text in sorted(units.items()):
        built = build_unit(file_name, text, mpi)
        if not built.ok:
            return BuildResult(False, None, built.source, built.message)
        objects.append(str(built.path))
    cc = mpi_compiler() if mpi else compiler()
    flags, folder, target = _place(cc, name, {}, True, (), FLAGS, tuple(objects))
    source = folder / (name + ".c")
    if target.is_file():
        return BuildResult(True, target, source, cached=True)
    folder.mkdir(parents=True, exist_ok=True)
    source.write_text(whole)
    return _compiled([cc, *flags], (*objects, "-lm"), target, source)


def is_linked(name: str, units: dict[str, str], mpi: bool = False) -> bool:
    """Whether build_linked would find its library built (nothing is compiled)."""
    return _linked_place(name, units, mpi)[2].is_file()


def build_unit(file_name: str, text: str, mpi: bool = False) -> BuildResult:
    """The object of one unit, compiled once per its text (position-independent)."""
    return build(*_unit(file_name, text), mpi=mpi)


def _unit(file_name: str, text: str) -> tuple:
    """build()'s arguments for the object of one unit."""
    return Path(file_name).stem + ".o", {file_name: text}, False, ("-fPIC", "-c")


def _linked_place(name: str, units: dict[str, str], mpi: bool) -> tuple[tuple, Path, Path]:
    """_place of a library linked from units: its key is its objects' paths (their keys)."""
    cc = mpi_compiler() if mpi else compiler()
    objects = tuple(str(_place(cc, *_unit(f, t))[2]) for f, t in sorted(units.items()))
    return _place(cc, name, {}, True, (), FLAGS, objects)


def _compiled(command: list, linked: tuple, target: Path, source: Path) -> BuildResult:
    """Run the compiler into a temporary file beside target, renamed onto it when it succeeds."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".build.")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        result = subprocess.run([*command, "-o", str(tmp), *linked], capture_output=True,
                                text=True, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        tmp.unlink(missing_ok=True)
        return BuildResult(False, None, source, f"compiler timed out after {COMPILE_TIMEOUT_S} s")
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        return BuildResult(False, None, source, result.stderr.strip()[-4000:])
    os.replace(tmp, target)   # atomic: a killed build leaves no half-written artefact
    return BuildResult(True, target, source)


def native_source(name: str) -> str:
    return (NATIVE / name).read_text()


def _rejects(cc: str, flags: tuple) -> str:
    """The compiler's own words where it cannot compile a C file with these flags, else ''."""
    try:
        result = subprocess.run([cc, *flags, "-x", "c", "-S", "-o", os.devnull, "-"],
                                input="int hybridtune_probe;\n", capture_output=True, text=True,
                                timeout=60, env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    return result.stderr.strip() if result.returncode else ""


@lru_cache(maxsize=None)
def flags_problem(cc: str, flags: str) -> tuple[str, str] | None:
    """Why `cc` cannot compile C with `flags` (a command-line string): the flag at fault (the one
    its message names, else the first it rejects alone) and its own words; None where it can."""
    tokens = tuple(flags.split())
    words = _rejects(cc, tokens)
    if not words:
        return None
    named = [t for t in tokens if t in words or ("=" in t and all(
        part in words for part in t.split("=", 1) if part))]
    culprit = named[0] if named else next((t for t in tokens if _rejects(cc, (t,))), flags)
    lines = words.splitlines()
    return culprit, next((line for line in lines if "error" in line), lines[0]).strip()
