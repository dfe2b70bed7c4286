"""The Extra-P adapter: `extrap --text` run from its own venv, its PMNF model read back.

Its text input is written, Extra-P runs from the venv `make extrap` builds, and the printed model is
parsed.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from hybridtune.errors import HybridtuneError
from hybridtune.predict.pmnf import MIN_POINTS, Term

ENV = "HYBRIDTUNE_EXTRAP"
VENV_EXTRAP = Path(__file__).resolve().parents[2] / ".venv-extrap" / "bin" / "extrap"
# what `extrap --print` writes per model: full-precision numbers, and the SMAPE the default omits
PRINT = "Model: {model}\nRSS: {rss}\nAdjusted R^2: {ar2}\nSMAPE: {smape}"
_FIELD = re.compile(r"^\s*(Model|RSS|Adjusted R\^2|SMAPE): (.*?)\s*$", re.MULTILINE)
_FACTOR = re.compile(r"(p|log2\(p\))\^\(([-+0-9./e]+)\)")     # p^(2/3), log2(p)^(-1), p^(0.5)


@dataclass(frozen=True)
class ExtrapModel:
    """Extra-P's model constant + sum of c * p^i * log2(p)^j, terms as (c, i, j), with its fit
    statistics as printed (SMAPE None where not printed) and the output it was read from."""
    text: str
    constant: float
    terms: tuple
    rss: float
    ar2: float
    smape: float | None
    raw: str

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        return self.constant + sum((c * x ** i * np.log2(x) ** j for c, i, j in self.terms),
                                   np.zeros_like(x))

    @property
    def leading(self) -> str:
        """The fastest-growing term named as PMNFModel.leading names its term, or 'constant'."""
        if not self.terms:
            return "constant"
        _, i, j = max(self.terms, key=lambda t: (t[1], t[2]))
        j = int(j) if float(j).is_integer() else Fraction(j).limit_denominator(100)
        return Term(Fraction(i).limit_denominator(100), j).text("p")


def extrap_executable() -> Path | None:
    """$HYBRIDTUNE_EXTRAP if set, else the repository's .venv-extrap, else `extrap` on PATH."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    if VENV_EXTRAP.exists():
        return VENV_EXTRAP
    found = shutil.which("extrap")
    return Path(found) if found else None


def _number(value) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def text_input(points, parameter: str = "p", region: str = "r", metric: str = "time") -> str:
    """Extra-P's text format for one parameter: points are (x, value) or (x, [repetitions]),
    written in ascending x, one DATA line of repetitions per point."""
    if not re.fullmatch(r"[A-Za-z_]\w*", parameter):
        raise HybridtuneError(f"an Extra-P parameter is one word, got {parameter!r}")
    for what, name in (("region", region), ("metric", metric)):
        if not name.strip() or "\n" in name:
            raise HybridtuneError(f"an Extra-P {what} is a non-empty line, got {name!r}")
    rows = sorted((float(x), [float(v) for v in (values if np.iterable(values) else [values])])
                  for x, values in points)
    if not rows or len({x for x, _ in rows}) != len(rows) or any(
            not (x > 0 and math.isfinite(x)) or not values
            or not all(math.isfinite(v) for v in values) for x, values in rows):
        raise HybridtuneError("Extra-P input needs distinct positive finite x, each with at least "
                              f"one finite value, got {points!r}")
    lines = [f"PARAMETER {parameter}", "POINTS " + " ".join(_number(x) for x, _ in rows),
             f"REGION {region}", f"METRIC {metric}"]
    lines += ["DATA " + " ".join(_number(v) for v in values) for _, values in rows]
    return "\n".join(lines) + "\n"


def _term(text: str) -> tuple[float, float, float]:
    coefficient, i, j = 1.0, 0.0, 0.0
    for factor in text.split(" * "):
        match = _FACTOR.fullmatch(factor)
        if match is None:
            coefficient *= float(factor)
        elif match.group(1) != "p":
            j += float(Fraction(match.group(2)))
        else:
            i += float(Fraction(match.group(2)))
    return coefficient, i, j


def parse_output(output: str) -> ExtrapModel:
    """The one model in `extrap --print PRINT` output (or its default listing); ValueError if
    there is not exactly one or it is not of the form constant + c * p^(i) * log2(p)^(j) + ..."""
    fields: dict[str, list[str]] = {}
    for name, value in _FIELD.findall(output):
        fields.setdefault(name, []).append(value)
    if len(fields.get("Model", [])) != 1 or len(fields.get("RSS", [])) != 1:
        raise ValueError("expected one 'Model:' and one 'RSS:' line")
    text = fields["Model"][0]
    constant, terms = 0.0, []
    for part in text.split(" + "):
        if "p" in part:                                 # p^(..), log2(p)^(..); no number has a p
            terms.append(_term(part))
        else:
            constant += float(part)
    smape = fields.get("SMAPE")
    return ExtrapModel(text, constant, tuple(terms), float(fields["RSS"][0]),
                       float(fields.get("Adjusted R^2", ["nan"])[0]),
                       float(smape[0]) if smape else None, output)


def _tail(output: str, lines: int = 8) -> str:
    return "\n".join(output.strip().splitlines()[-lines:]) or "(no output)"


def fit_extrap(points, negative: bool = False, executable: Path | str | None = None,
               timeout_s: float = 120) -> ExtrapModel:
    """Extra-P's model of the points (as text_input takes them; at least MIN_POINTS, which
    Extra-P itself only warns about), by its default modeler on the mean of each point's
    repetitions; negative allows negative exponents (strong scaling)."""
    points = list(points)
    if len(points) < MIN_POINTS:
        raise HybridtuneError(f"an Extra-P model needs at least {MIN_POINTS} points, got "
                              f"{len(points)}")
    exe = Path(executable) if executable is not None else extrap_executable()
    if exe is None or not exe.is_file():
        where = f"{exe} does not exist" if exe is not None else "extrap is not on PATH"
        raise HybridtuneError(f"Extra-P not found ({where}; ${ENV} names another): `make extrap` "
                              "builds it in .venv-extrap")
    with tempfile.TemporaryDirectory(prefix="hybridtune-extrap-") as folder:
        path = Path(folder) / "input.txt"
        path.write_text(text_input(points))
        command = [str(exe), "--text", "--disable-progress", "--print", PRINT, str(path)]
        if negative:
            command += ["--options", "allow_negative_exponents=True"]
        shown = " ".join(command).replace("\n", r"\n")
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise HybridtuneError(f"`{shown}` ran past {timeout_s} s") from None
        except OSError as error:
            raise HybridtuneError(f"`{shown}` could not start: {error}") from None
    output = run.stdout + run.stderr
    if run.returncode != 0:
        raise HybridtuneError(f"`{shown}` exited with {run.returncode}:\n{_tail(output)}")
    try:
        return parse_output(run.stdout)
    except ValueError as error:
        raise HybridtuneError(f"cannot read a model in the output of `{shown}` ({error}):\n"
                              f"{_tail(output)}") from None


def same_leading_term(ours, theirs: ExtrapModel) -> bool:
    """Whether our PMNF model (pmnf.PMNFModel) and Extra-P's name the same leading term."""
    return ours.leading == theirs.leading
