"""The space of scenarios over the shipped library, as hypothesis strategies (the test extra).

Valid scenarios and ones with one fault on purpose (a duplicate, an empty list, an unknown name, a
bad size, count, machine or strategy spelling, a broken file beside the scenario, an unknown or a
missing key); the tests and jobs/bench_scenarios.py draw from it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from hypothesis import strategies as st

from hybridtune.describe.expr import LONG_MAX
from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.loader import load

LIBRARY = PROJECT_ROOT / "scenarios"
MACHINE_FILE = "SkylakeSP_Gold-6148.yml"
METHODS = tuple(sorted(p.name.split(".")[0] for p in (LIBRARY / "methods").glob("*.method.yaml")))
IVPS = tuple(sorted(p.name.split(".")[0] for p in (LIBRARY / "ivps").glob("*.ivp.yaml")))
KERNELS = tuple(sorted(p.name.split(".")[0] for p in (LIBRARY / "kernels").glob("*.kernel.yaml")))
SKELETONS = tuple("ABCDEFGH")
MPI_SKELETONS = tuple(f"{s}-mpi" for s in SKELETONS)
REGIONS = ("L1", "L2", "L3", "MEM")
HUGE = (10 ** 9, 10 ** 12, 2 ** 62)      # sizes no step of which fits a measurement budget
COMMANDS = ("variants", "predict", "tune")

# strategy spellings, one per form of describe/strategy.FORMS, with K, P, E, SEED filled
STRATEGY_TEXTS = ("preselect:{p}", "top_k:{k}", "run_all", "random:{k}", "random:{k}:{seed}",
                  "tpe:{k}", "tpe:{k}:{seed}", "hybrid", "hybrid:{e}")
BAD_STRATEGIES = ("preselect", "preselect:-1", "preselect:1001", "preselect:x", "top_k",
                  "top_k:0", "top_k:1.5", "random:3:x", "random:0", "random:3:-1", "tpe",
                  "tpe:3:4:5", "hybrid:0", "hybrid:x", "hybrid:-1", "run_all:3", "bogus",
                  "preselect:5+sample:1", "preselect:5+sample:x", "top_k:3+bogus:0.1",
                  "preselect:5+", "", " ", "top_k:1234567890")
BAD_STRATEGY_MAPPINGS = ({"name": "bogus"}, {"name": "tpe"}, {"k": 3},
                         {"name": "top_k", "k": 0}, {"name": "preselect", "deviation_percent": -1},
                         {"name": "preselect", "deviation_percent": "five"},
                         {"name": "random", "k": 3, "sample": 1.5},
                         {"name": "top_k", "k": 3, "extra": 1}, {"name": ["top_k"]})
BAD_SIZES = ([], [0], -5, 0, "big", 1.5, [1000, "x"], [7], {"from": 100, "to": 10, "points": 3},
             {"from": 10, "to": 100, "points": 0}, {"from": 10, "to": 10, "points": 2},
             {"from": 10, "to": 100, "points": 1001}, {"from": 10, "to": 100},
             {"from": 0, "to": 100, "points": 2}, {"regions": ["L4"]}, {"regions": []},
             {"regions": "L2"}, {"regions": ["L2", "L2"]}, {"from": 10, "to": 100, "points": 2,
                                                        "step": 3}, None)
BAD_COUNTS = ([], 0, -1, "two", 1.5, [1, 0], [1, "x"], None, True)


@dataclass
class Drawn:
    """One scenario: its file's values (written as YAML) and the files written beside it."""
    values: dict
    beside: dict = field(default_factory=dict)     # file name -> text
    mpi: bool = False                               # an MPI skeleton among 'skeletons'
    name: str = "drawn.scenario.yaml"

    @property
    def ranks_without_mpi(self) -> bool:
        """ranks above 1 and no MPI skeleton: a scenario the loader must refuse."""
        ranks = self.values.get("ranks", 1)
        ranks = ranks if isinstance(ranks, list) else [ranks]
        numbers = [r for r in ranks if isinstance(r, int) and not isinstance(r, bool)]
        return not self.mpi and bool(numbers) and max(numbers) > 1

    def text(self) -> str:
        # YAML reads JSON, one key a line keeps the error lines apart
        return "".join(f"{key}: {json.dumps(value)}\n" for key, value in self.values.items())

    def write(self, folder: Path) -> Path:
        for name, text in self.beside.items():
            (folder / name).write_text(text)
        path = folder / self.name
        path.write_text(self.text())
        return path

    def describe(self) -> str:
        """The scenario and the files beside it, as one text (a benchmark's report)."""
        parts = [f"# {self.name}\n{self.text()}"]
        parts += [f"# {name}\n{text}" for name, text in self.beside.items()]
        return "\n".join(parts)


@lru_cache(maxsize=None)
def _ivp(name: str):
    return load(LIBRARY / "ivps" / f"{name}.ivp.yaml", "ivp")


def _targets() -> list[int]:
    sixth = [k ** 6 for k in range(2, 11)]
    return sorted({10, 100, 1000, 6000, 20000, 100000, 600000, *sixth, *(8 * k for k in sixth),
                   *(2 * k for k in sixth), *HUGE})


@lru_cache(maxsize=None)
def valid_sizes(ivps: tuple[str, ...]) -> tuple[int, ...]:
    """Sizes valid for every one of the library IVPs named, from the next valid size of each IVP
    above a few targets."""
    records = [_ivp(name) for name in ivps]
    candidates = {record.sizes.next_valid(t) for record in records for t in _targets()}
    return tuple(sorted(n for n in candidates if all(r.sizes.check(n) is None for r in records)))


def _own_ivp(source: str, name: str, broken: bool) -> str:
    """A shipped IVP under another name, its first constant changed (and broken: an unknown
    function in it)."""
    text = (LIBRARY / "ivps" / f"{source}.ivp.yaml").read_text()
    text = re.sub(r"(?m)^name: .*$", f"name: {name}", text, count=1)
    text = re.sub(r"(?m)^aliases: .*\n", "", text)
    factor = "erf(1.0)" if broken else "1.25"
    return re.sub(r'"double (\w+) = ([^"]*)"', lambda m: f'"double {m[1]} = {factor} * ({m[2]})"',
                  text, count=1)


def _own_method(source: str, name: str | None, broken: bool) -> str:
    """A shipped method under another name (or the file's), with one corrector step fewer where
    it has more than one (and broken: an order its table does not reach)."""
    text = (LIBRARY / "methods" / f"{source}.method.yaml").read_text()
    text = re.sub(r"(?m)^name: .*\n", f"name: {name}\n" if name else "", text, count=1)
    steps = int(re.search(r"(?m)^corrector_steps: (\d+)", text)[1])
    text = re.sub(r"(?m)^corrector_steps: .*$", f"corrector_steps: {max(steps - 1, 1)}", text)
    if broken:
        text = re.sub(r"(?m)^order: .*$", "order: 12", text)
    return text


def _rarely(one_in: int):
    """True once in one_in draws, False where hypothesis draws its simplest value."""
    return st.sampled_from([False] * (one_in - 1) + [True])


def _one_or_list(draw, items: list):
    """A lone name is written as a string or a list of one."""
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return items


FAULTS = ("methods", "ivps", "skeletons", "machine", "n", "threads", "ranks", "strategy", "model",
          "specialise_n", "key", "missing")


@st.composite
def _names(draw, library: tuple, most: int, what: str, beside: dict, fault: bool):
    """1..most library names, maybe with a file of the user's own; a fault where asked."""
    names = draw(st.lists(st.sampled_from(library), min_size=1, max_size=most, unique=True))
    refs = list(names)
    kind = draw(st.sampled_from(["duplicate", "unknown", "empty", "own_broken"] if fault else
                                ["plain", "plain", "plain", "own", "case"]))
    if kind in ("own", "own_broken") and what == "ivp":
        source = draw(st.sampled_from(IVPS))
        own = f"My{source}"
        beside[f"{own}.ivp.yaml"] = _own_ivp(source, own, kind == "own_broken")
        refs.append(draw(st.sampled_from([f"./{own}.ivp.yaml", f"{own}.ivp.yaml"])))
        names = names + [source]          # its sizes are its source's
    elif kind in ("own", "own_broken") and what == "method":
        source = draw(st.sampled_from(METHODS))
        own = draw(st.sampled_from([None, "mine"]))
        beside["Mine.method.yaml"] = _own_method(source, own, kind == "own_broken")
        refs.append(draw(st.sampled_from(["./Mine.method.yaml", "Mine.method.yaml"])))
    elif kind == "duplicate":
        refs.append(draw(st.sampled_from(refs)))
    elif kind == "unknown":
        refs.append(draw(st.sampled_from(["Nonesuch", "./missing.ivp.yaml", "A-H", "radau"])))
    elif kind == "empty":
        refs = []
    elif kind == "case":
        refs = [ref.lower() for ref in refs]
    draw(st.randoms()).shuffle(refs)
    return _one_or_list(draw, refs), tuple(names)


@st.composite
def _skeletons(draw, fault: bool):
    """Skeleton subsets of A..H and A-mpi..H-mpi, with and without MPI forms."""
    pool = draw(st.sampled_from(["openmp", "mpi", "both"]))
    library = {"openmp": SKELETONS, "mpi": MPI_SKELETONS, "both": SKELETONS + MPI_SKELETONS}[pool]
    size = draw(st.sampled_from([1, 1, 2, 2, 3, 4, 8]))
    names = draw(st.lists(st.sampled_from(library), min_size=1, max_size=size, unique=True))
    kind = draw(st.sampled_from(["duplicate", "unknown", "empty", "nx"])) if fault else None
    if kind == "duplicate":
        names.append(names[0])
    elif kind == "unknown":
        names.append(draw(st.sampled_from(["I", "A-omp", "Z-mpi"])))
    elif kind == "empty":
        names = []
    elif kind == "nx":                 # the derived neighbour-exchange form, named directly
        names.append("A-mpi-nx")
    return _one_or_list(draw, names), any(name.endswith("-mpi") for name in names)


@st.composite
def _sizes(draw, ivps: tuple, fault: bool):
    if fault:
        return draw(st.sampled_from(BAD_SIZES))
    form = draw(st.sampled_from(["list", "list", "int", "range", "range", "regions"]))
    valid = valid_sizes(tuple(sorted(set(ivps)))) if ivps else ()
    if form in ("list", "int") and valid:
        small = [n for n in valid if n <= 1_000_000] or list(valid)
        picked = draw(st.lists(st.sampled_from(small), min_size=1, max_size=3, unique=True))
        huge = [n for n in valid if n >= HUGE[0]]
        if huge and draw(_rarely(10)):
            picked.append(draw(st.sampled_from(huge)))
        if draw(_rarely(10)):                  # a size outside one IVP's valid sizes
            picked.append(draw(st.sampled_from([1, 7, 10, 11, 1001, 10 ** 7 + 1])))
        return picked[0] if form == "int" and len(picked) == 1 else picked
    if form in ("range", "list", "int"):
        start = draw(st.sampled_from([1, 9, 100, 1000, 5000, 20000]))
        points = draw(st.integers(1, 4))
        stop = start if points == 1 and draw(st.booleans()) else \
            start * draw(st.sampled_from([2, 10, 100]))
        if draw(_rarely(10)):
            stop = draw(st.sampled_from(HUGE + (LONG_MAX,)))
        return {"from": start, "to": stop, "points": points}
    return {"regions": draw(st.lists(st.sampled_from(REGIONS), min_size=1, max_size=3,
                                     unique=True))}


def _counts(draw, most: int, fault: bool):
    if fault:
        return draw(st.sampled_from(BAD_COUNTS))
    # mostly counts that fit a 2-core machine, so tune's dry run goes beyond its layout check
    top = draw(st.sampled_from([2, 2, 2, most]))
    values = draw(st.lists(st.sampled_from(range(1, top + 1)), min_size=1, max_size=3))
    return values[0] if len(values) == 1 and draw(st.booleans()) else values


@st.composite
def _strategy(draw, fault: bool):
    if fault:
        return draw(st.sampled_from(BAD_STRATEGIES + BAD_STRATEGY_MAPPINGS))
    form = draw(st.sampled_from(["none", "text", "text", "text", "mapping"]))
    if form == "none":
        return None
    if form == "text":
        text = draw(st.sampled_from(STRATEGY_TEXTS)).format(
            p=draw(st.sampled_from([0, 5, 12.5, 1000])), k=draw(st.integers(1, 12)),
            seed=draw(st.integers(0, 99)), e=draw(st.sampled_from([0.1, 0.5, 2, 1000])))
        if draw(st.booleans()):
            text += f"+sample:{draw(st.sampled_from([0, 0.1, 0.25, 0.5, 0.99]))}"
        return text
    name = draw(st.sampled_from(["preselect", "top_k", "run_all", "random", "tpe", "hybrid"]))
    mapping = {"name": name}
    if name == "tpe" or draw(st.booleans()):
        mapping["k"] = draw(st.integers(1, 10))
    if draw(st.booleans()):
        mapping["deviation_percent"] = draw(st.sampled_from([0, 5, 7.5, 1000]))
    if draw(st.booleans()):
        mapping["sample"] = draw(st.sampled_from([0, 0.25, 0.5]))
    return mapping


@st.composite
def scenarios(draw) -> Drawn:
    """A scenario over the shipped library: five in eight valid by construction, the others
    with one fault (a scenario drawn valid can still be refused, for instance ranks above 1 without
    an MPI skeleton or a size outside an IVP's valid sizes)."""
    fault = draw(st.sampled_from((None,) * 20 + FAULTS))
    beside: dict = {}
    values: dict = {}
    if draw(st.booleans()):
        values["name"] = draw(st.sampled_from(["drawn", "x"]))
    values["methods"], _ = draw(_names(METHODS, 3, "method", beside, fault == "methods"))
    values["ivps"], ivps = draw(_names(IVPS + ("IC",), 3, "ivp", beside, fault == "ivps"))
    ivps = tuple("InverterChain" if name == "IC" else name for name in ivps)
    values["skeletons"], mpi = draw(_skeletons(fault == "skeletons"))
    if draw(_rarely(8)):
        values["kernels"] = ["LC"] if draw(_rarely(4)) else list(KERNELS)
    values["machine"] = draw(st.sampled_from(
        ["./SkylakeSP_Gold-6148.yml", "NoSuchMachine.yml", "Nonesuch", "host.yml"]
        if fault == "machine" else [MACHINE_FILE] * 3 + ["SkylakeSP_Gold-6148"]))
    values["n"] = draw(_sizes(ivps, fault == "n"))
    values["threads"] = _counts(draw, 4, fault == "threads")
    if fault == "ranks" or draw(st.booleans()):
        values["ranks"] = _counts(draw, 4, fault == "ranks")
    strategy = draw(_strategy(fault == "strategy"))
    if strategy is not None:
        values["strategy"] = strategy
    if fault == "model" or draw(_rarely(5)):
        values["model"] = draw(st.sampled_from(["roofline", "Bogus", 1] if fault == "model" else
                                               ["ECM", "Roofline"]))
    if fault == "specialise_n" or draw(_rarely(5)):
        values["specialise_n"] = draw(st.sampled_from(["yes", 1, None] if fault == "specialise_n"
                                                      else [True, False]))
    if fault == "key":
        key, value = draw(st.sampled_from([("nodes", 2), ("schema_version", 2),
                                           ("kind", "ivp"), ("Threads", 1)]))
        values[key] = value
    if fault == "missing":
        del values[draw(st.sampled_from(["methods", "ivps", "skeletons", "machine", "n",
                                         "threads"]))]
    return Drawn(values, beside, mpi)
