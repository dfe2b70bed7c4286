"""The kerncraft adapter: ECM and roofline analyses of kerncraft-form loops, in-process.

The only module that imports kerncraft.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import io
import math
import os
import re
import shutil
import signal
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from hybridtune.compiler.build import flags_problem
from hybridtune.describe.machine import OWN_COMPILER
from hybridtune.describe.scenario import PREDICTION_MODELS as MODELS
from hybridtune.errors import HybridtuneError

POINTER_INCREMENT_FALLBACK = 8      # bytes: a scalar loop's store pointer step per iteration
# the versions the run-time patches below were written for; pyproject.toml pins the same
PINNED = {"kerncraft": "0.8.18", "osaca": "0.7.1"}
_MACHINES: dict = {}


class CompilerError(HybridtuneError):
    """A machine file whose compiler kerncraft cannot run here."""


class VersionError(HybridtuneError):
    """kerncraft or OSACA is not the version the adapter's patches were written for."""


@dataclass(frozen=True)
class KernelAnalysis:
    """kerncraft's prediction for one loop at one size, or why there is none."""
    status: str                          # "ok" or "failed"
    model: str
    n_sample: int
    message: str = ""
    cycles_per_cl: tuple = ()            # whole loop, per core count 1..cores per NUMA domain
    iterations_per_cl: float = 0.0
    saturation_cores: int = 0            # 0: the memory interface never saturates
    contributions: dict = field(default_factory=dict)


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def check_versions() -> None:
    """Refuse kerncraft and OSACA versions other than the pinned ones, from their installed
    metadata (nothing is imported); checked once per process."""
    found = {name: _installed_version(name) for name in PINNED}
    if found == PINNED:
        return
    seen = " and ".join(f"{name} {version or 'not installed'}" for name, version in found.items())
    wanted = " and ".join(f"{name} {version}" for name, version in PINNED.items())
    pins = " ".join(f"{name}=={version}" for name, version in PINNED.items())
    raise VersionError(f"found {seen}; expected {wanted}, the versions whose internals hybridtune "
                       "patches at run time (hybridtune/predict/kerncraft_adapter.py): run "
                       f"`make install` or `.venv/bin/pip install {pins}`")


def versions() -> dict:
    """kerncraft's and OSACA's versions ('missing' where one cannot be found), without importing
    them: importing kerncraft changes ruamel.yaml's resolvers for the whole process. Called before
    any analysis, it refuses versions other than the pinned ones (check_versions)."""
    check_versions()
    out = {}
    for name in ("kerncraft", "osaca"):
        try:
            found = importlib.util.find_spec(name) is not None
            out[name] = metadata.version(name) if found else "missing"
        except (ValueError, ImportError, metadata.PackageNotFoundError):
            out[name] = "missing"
    return out


@functools.cache
def _tools():
    """kerncraft, and the speed-ups of OSACA (which import it), imported on first use."""
    # on first use: kerncraft imports OSACA; a missing OSACA fails an analysis, not an import
    import kerncraft.incore_model, kerncraft.kerncraft, kerncraft.kernel  # noqa: E401 (see above)
    import kerncraft.machinemodel, kerncraft.models, kerncraft.pycparser_utils  # noqa: E401 (above)
    from hybridtune.predict import osaca_speedups   # imports OSACA: see above
    return kerncraft, osaca_speedups


_ATT_OPERAND = re.compile(r"^\s+[a-z][a-z0-9.]*\s+[^#\n]*%[a-z]", re.MULTILINE)


class _IntelParserForAtt:
    """kerncraft tries OSACA's Intel-syntax parser on every assembly file first and falls back to
    AT&T when it raises, twice per loop (once only to tell the syntax); on gcc's AT&T output that
    attempt takes longer than the real parse. This parser fails at once on AT&T text and is OSACA's
    own otherwise; the syntax test answers AT&T without parsing when registers carry %. OSACA's
    parser is built only when it is used: building its grammar took a third of an analysis."""

    def __init__(self, build):
        self._build = build
        self._built = None

    @property
    def _parser(self):
        if self._built is None:
            self._built = self._build()
        return self._built

    def parse_file(self, code, *args, **kwargs):
        if _ATT_OPERAND.search(code):
            raise ValueError("AT&T syntax: registers carry %")
        return self._parser.parse_file(code, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._parser, name)


def _fail_fast_on_att() -> None:
    incore_model = _tools()[0].incore_model
    original = incore_model.get_parser
    if getattr(original, "fails_fast_on_att", False):
        return

    def get_parser(isa, *args, **kwargs):
        syntax = kwargs.get("syntax", args[0] if args else None)
        if syntax == "intel":
            return _IntelParserForAtt(lambda: original(isa, *args, **kwargs))
        return original(isa, *args, **kwargs)

    get_parser.fails_fast_on_att = True
    incore_model.get_parser = get_parser
    detect = incore_model.detect_x86_syntax
    incore_model.detect_x86_syntax = lambda code: "ATT" if _ATT_OPERAND.search(code) else detect(code)


DIGEST_CHARS = 16


def digest(*parts: str) -> str:
    """A short name for texts (a compiler's flags) to stand in a path where they could not."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:DIGEST_CHARS]


def _short_intermediate_locations() -> None:
    """kerncraft names the folder of a kernel's intermediates after the machine file, the compiler
    and its flags joined: a probed file's resolved flags (-march=NAME plus a dozen -m flags) make
    that name longer than the 255 bytes a file name may have. The flags go in as a digest."""
    KernelCode = _tools()[0].kernel.KernelCode
    original = KernelCode.get_intermediate_location
    if getattr(original, "keys_flags_by_digest", False):
        return

    def located(self, name, machine_and_compiler_dependent=True, other_dependencies=[]):
        if not machine_and_compiler_dependent:
            return original(self, name, False, other_dependencies)
        compiler, flags = self._machine.get_compiler()
        folders = [digest(self._machine.get_identifier()), digest(compiler),
                   digest(compiler, *flags), *other_dependencies]
        return original(self, name, False, folders)

    located.keys_flags_by_digest = True
    KernelCode.get_intermediate_location = located


def patch_kerncraft() -> None:
    """The run-time changes every in-process kerncraft analysis needs (idempotent)."""
    _tools()[1].patch_osaca()
    _fail_fast_on_att()
    _short_intermediate_locations()


def check_compiler(machine) -> None:
    """Refuse a machine file whose compilers kerncraft cannot run: none of them on PATH, or the
    one it would take (the first found, as kerncraft chooses) rejecting a flag."""
    found = [(name, flags) for name, flags in machine.compilers if shutil.which(name)]
    probe = "`make probe` writes a machine file for this host (hybridtune machine probe -o FILE)"
    if not found:
        listed = ", ".join(name for name, _ in machine.compilers) or "none"
        raise CompilerError(f"{machine.path}: key 'compiler': expected a C compiler on PATH for "
                            f"kerncraft's builds, found none of the file's ({listed}); {probe}")
    name, flags = found[0]
    problem = flags_problem(name, flags)
    if problem is not None:
        flag, words = problem
        raise CompilerError(f"{machine.path}: key 'compiler', {name}: flag {flag!r} is rejected by "
                            f"{name} ({words}); expected flags that this host's {name} accepts: {probe}")


def _machine(path: str, args):
    """kerncraft's model of a machine file, once per path. Where the file has OWN_COMPILER (a
    probed target too long for kerncraft's folder names), the first of its compilers on PATH and
    its flags become kerncraft's --compiler and --compiler-flags, which the model reads from args."""
    if path not in _MACHINES:
        machine = _tools()[0].machinemodel.MachineModel(path, args=args)
        own = machine[OWN_COMPILER] if OWN_COMPILER in machine else {}
        for name, flags in own.items() if isinstance(own, dict) else ():
            if shutil.which(name):
                args.compiler, args.compiler_flags = name, str(flags)
                break
        _MACHINES[path] = machine
    return _MACHINES[path]


def _arguments(machine_path: str, code_path: str, model: str, pointer_increment):
    parser = _tools()[0].kerncraft.create_parser()
    pmodel = "ECM" if model == "ECM" else "RooflineFLOP"
    args = parser.parse_args(["-m", machine_path, "-p", pmodel, "-P", "LC", "-i", "OSACA",
                              "--pointer-increment", str(pointer_increment), "-u", "cy/CL",
                              code_path])
    for handle in (args.machine, args.code_file):
        handle.close()
    return parser, args


def _float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float(value["cy/CL"])


def _ecm_results(results: dict) -> tuple:
    construction = results["ECM Model Construction"]
    ecm = results["ECM"]
    contributions = {"T_comp": float(ecm[0])}
    for name, value in zip(construction[1:-1], ecm[1:-1]):
        contributions[name] = float(value)
    for name, value in zip(construction[-1], ecm[-1]):
        contributions[name] = float(value)
    contributions["T_ECM"] = _float(results["total cycles"])
    contributions["flops_per_iteration"] = float(results["flops per iteration"])
    contributions["pointer_increment"] = int(results.get("pointer_increment") or 0)
    if results.get("memory bandwidth kernel"):
        contributions["memory_bandwidth_kernel"] = str(results["memory bandwidth kernel"])
    cycles = tuple(_float(s["performance"]) for s in results["scaling prediction"])
    saturation = results["scaling cores"]
    return cycles, (0 if math.isinf(saturation) else int(saturation)), contributions


def _roofline_results(results: dict, machine, cores: int) -> tuple:
    """kerncraft's roofline: the slowest of its bottlenecks, in cy/CL for 1..cores cores."""
    total = _float(results["min performance"])
    bottleneck = results["mem bottlenecks"][results["bottleneck level"]]
    contributions = {"T_roofline": total, "bottleneck_level": str(bottleneck.get("level", "")),
                     "flops_per_iteration": float(results.get("flops per iteration", 0) or 0)}
    cycles = tuple(total / p for p in range(1, cores + 1))
    return cycles, 0, contributions


def analyse(code: str, folder: str, machine_path: str, samples: tuple, model: str = "ECM"
            ) -> list[KernelAnalysis]:
    """Analyse one kerncraft-form loop at each sample (n, {name: value}); failures as results.

    The in-core analysis runs once and serves every sample. kerncraft writes intermediates beside
    the loop's file, so `folder` must be a folder of the project's own.
    """
    check_versions()
    if model not in MODELS:
        return [KernelAnalysis("failed", model, n, f"unknown model {model!r}, expected one of "
                               f"{', '.join(MODELS)}") for n, _ in samples]
    path = Path(folder) / "kernel.c"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code)
    message = ""
    for increment in ("auto", POINTER_INCREMENT_FALLBACK):
        try:
            return _analyse(path, machine_path, samples, model, increment, message)
        except (SystemExit, Exception) as exc:    # kerncraft fails in many ways; each is a result
            text = f"{type(exc).__name__}: {exc}".strip()
            if "pointer_increment could not be detected" in text and increment == "auto":
                message = (f"pointer increment not detected by kerncraft; assumed "
                           f"{POINTER_INCREMENT_FALLBACK} bytes")
                continue
            return [KernelAnalysis("failed", model, n, _short(text)) for n, _ in samples]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 400 else text[:397] + "..."


def _analyse(path: Path, machine_path: str, samples: tuple, model: str, increment,
             note: str) -> list[KernelAnalysis]:
    kerncraft = _tools()[0]
    models, KernelCode, clean_code = (kerncraft.models, kerncraft.kernel.KernelCode,
                                      kerncraft.pycparser_utils.clean_code)
    patch_kerncraft()
    parser, args = _arguments(machine_path, str(path), model, increment)
    machine = _machine(machine_path, args)
    cores = int(machine["cores per NUMA domain"])
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        kernel = KernelCode(clean_code(path.read_text()), filename=str(path), machine=machine,
                            keep_intermediates=True)
    out = []
    for n, defines in samples:
        kernel.clear_state()
        for name, value in defines.items():
            kernel.set_constant(name, int(value))
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            if model == "ECM":
                analysis = models.ECM(kernel, machine, args, parser)
                analysis.analyze()
                cycles, saturation, contributions = _ecm_results(analysis.results)
            else:
                analysis = models.RooflineFLOP(kernel, machine, args, parser)
                analysis.analyze()
                analysis.results["flops per iteration"] = sum(kernel._flops.values())
                cycles, saturation, contributions = _roofline_results(analysis.results, machine,
                                                                       cores)
        contributions.update(_traffic(analysis.results))
        per_cl = float(analysis.results.get("iterations per cacheline")
                       or machine["cacheline size"] / 8)
        out.append(KernelAnalysis("ok", model, int(n), note, tuple(cycles[:cores]), per_cl,
                                  saturation, contributions))
    return out


def _traffic(results: dict) -> dict:
    """Cache lines loaded and stored per level per cache line of work (kerncraft's predictor)."""
    out = {}
    for key in ("misses", "hits", "evicts"):
        values = results.get(key)
        if isinstance(values, (list, tuple)):
            out[key] = [float(v) for v in values]
    return out


def worker_environment() -> None:
    """A worker process of the offline stage: kerncraft's compiler calls one thread each (analyses
    run one per process), and SIGTERM or SIGINT end the worker quietly (the parent decides what a
    stop means)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)
