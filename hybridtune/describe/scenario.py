"""Tuning scenarios: which methods, IVPs, templates, skeletons, machine, sizes and thread counts."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from hybridtune.describe import library
from hybridtune.describe.expr import LONG_MAX
from hybridtune.describe.ivp import IVP
from hybridtune.describe.ivp_checks import names_in
from hybridtune.describe.part_loader import load_named
from hybridtune.describe.looplang import loops_and_directives
from hybridtune.describe.machine import Machine
from hybridtune.describe.region_sizes import region_names, sizes_by_region
from hybridtune.describe.skeleton import Skeleton, kernel_call, neighbour_form
from hybridtune.describe.source import Node, Source
from hybridtune.describe.strategy import DEFAULT_SAMPLE, STRATEGIES, Strategy, parse_strategy
from hybridtune.errors import DescriptionError

PREDICTION_MODELS = ("ECM", "Roofline")


@dataclass(frozen=True)
class Sizes:
    """Explicit n values (each must be valid for every IVP), a log-spaced range, or working-set
    regions resolved per IVP on the scenario's machine."""
    values: tuple = ()
    start: int = 0
    stop: int = 0
    points: int = 0
    regions: tuple = ()      # region names (L2, L3, MEM); per_ivp holds what they resolved to
    per_ivp: tuple = ()      # ((ivp name, sizes), ...)

    def for_ivp(self, ivp: IVP) -> tuple[int, ...]:
        if self.values:
            return self.values
        if self.regions:
            return dict(self.per_ivp)[ivp.name]
        if self.points == 1:
            targets = [self.start]
        else:
            ratio = (self.stop / self.start) ** (1.0 / (self.points - 1))
            # within [start, stop] where floating point rounds the ends outwards
            targets = [min(max(round(self.start * ratio ** k), self.start), self.stop)
                       for k in range(self.points)]
        return tuple(sorted({ivp.sizes.next_valid(t) for t in targets}))


@dataclass(frozen=True)
class Scenario:
    name: str
    methods: tuple
    ivps: tuple
    templates: tuple
    skeletons: tuple
    machine: Machine
    machine_note: str
    sizes: Sizes
    threads: tuple
    strategy: Strategy
    path: str = ""
    specialise_n: bool = False    # generate code with n fixed (one build per n) or n at run time
    model: str = "ECM"            # the offline model: kerncraft's ECM or its (faster) roofline
    ranks: tuple = (1,)           # MPI ranks; above 1 only the MPI skeletons run

    @property
    def template_map(self) -> dict:
        return {t.name: t for t in self.templates}

    @property
    def on_host(self) -> bool:
        """Whether the machine is `host`: this machine, so its measured costs apply."""
        return self.machine_note.startswith(library.HOST + ":")


def _names(node: Node) -> list[tuple[str, Node]]:
    if isinstance(node.value, str):
        return [(node.string(), node)]
    return [(item.string(), item) for item in node.sequence(min_len=1)]


def _region_sizes(node: Node, ivps: tuple, methods: tuple, machine: Machine) -> Sizes:
    known = region_names(machine)
    regions = tuple(item.string() for item in node.sequence(min_len=1))
    for item, region in zip(node.sequence(), regions):
        if region not in known:
            raise item.error(f"a region of machine file {machine.path}: one of {', '.join(known)}")
    stages = max(method.stages for method in methods)
    per_ivp = []
    for ivp in ivps:
        sizes = sizes_by_region(ivp, stages, machine, regions)
        if not sizes:
            raise node.error(f"regions in which IVP {ivp.name} takes a size (its valid sizes "
                             f"reach none of {', '.join(regions)} on {machine.path})")
        per_ivp.append((ivp.name, sizes))
    return Sizes(regions=regions, per_ivp=tuple(per_ivp))


def _sizes(node: Node, ivps: tuple, methods: tuple, machine: Machine) -> Sizes:
    if isinstance(node.value, dict) and "regions" in node.value:
        fields = node.mapping(required=("regions",))
        return _region_sizes(fields["regions"], ivps, methods, machine)
    if isinstance(node.value, dict):
        fields = node.mapping(required=("from", "to", "points"))
        start, stop = fields["from"].integer(1, LONG_MAX), fields["to"].integer(1, LONG_MAX)
        points = fields["points"].integer(minimum=1)
        if stop < start or (points > 1 and stop == start):
            raise fields["to"].error(f"an upper size > from = {start}")
        if points > 1000:
            raise fields["points"].error("at most 1000 sizes")
        for ivp in ivps:
            if ivp.sizes.next_valid(stop) > LONG_MAX:
                raise fields["to"].error(f"an upper size whose next valid size for IVP {ivp.name} "
                                         f"is at most {LONG_MAX} (C long)")
        return Sizes(start=start, stop=stop, points=points)
    values = []
    for item in node.sequence(min_len=1) if isinstance(node.value, list) else [node]:
        n = item.integer(1, LONG_MAX)
        for ivp in ivps:
            problem = ivp.sizes.check(n)
            if problem:
                raise item.error(f"{problem} for IVP {ivp.name} (or give n as a range "
                                 "{from, to, points}, rounded up to each IVP's valid sizes)")
        values.append(n)
    return Sizes(values=tuple(sorted(set(values))))


def _strategy(node: Node | None) -> Strategy:
    if node is None:
        return Strategy(sample=DEFAULT_SAMPLE)
    if isinstance(node.value, str):
        try:
            return parse_strategy(node.value)
        except ValueError as error:
            raise node.error(str(error)) from None
    fields = node.mapping(required=("name",), optional=("deviation_percent", "k", "sample"))
    name = fields["name"].string()
    if name not in STRATEGIES:
        raise fields["name"].error(f"one of {', '.join(STRATEGIES)}")
    deviation = 5.0
    if "deviation_percent" in fields:
        value = fields["deviation_percent"].value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not \
                0 <= value <= 1000 or math.isnan(value):
            raise fields["deviation_percent"].error("a percentage between 0 and 1000")
        deviation = float(value)
    if name == "tpe" and "k" not in fields:
        raise fields["name"].error("k beside name: tpe, the number of variants it measures "
                                   "(tpe:K on the command line)", value="tpe without k")
    k = fields["k"].integer(minimum=1) if "k" in fields else \
        (3 if name in ("top_k", "random") else 0)
    sample = 0.0
    if "sample" in fields:
        sample = fields["sample"].value
        if isinstance(sample, bool) or not isinstance(sample, (int, float)) or \
                not 0 <= sample < 1:
            raise fields["sample"].error("the share of measurements on a space-filling sample, "
                                         "0 <= S < 1")
    return Strategy(name, deviation, k, sample=float(sample))


def _check_skeleton(skeleton: Skeleton, templates: dict) -> None:
    """Every %KERNEL names a known template; bound arrays exist; buffers agree in shape; every
    exchange names a buffer of a kernel."""
    shapes: dict[str, tuple] = {}
    exchanges = []
    for directive, _ in loops_and_directives(skeleton.program):
        def fail(expected: str, value: str) -> DescriptionError:
            return DescriptionError(skeleton.path, "code", value, expected, line=directive.line)

        if directive.name == "COM" and len(directive.args) == 2:
            exchanges.append((directive.args[1], directive.line))
        if directive.name != "KERNEL":
            continue
        call = kernel_call(directive)

        template = templates.get(call.template)
        if template is None:
            raise fail(f"a kernel template of the scenario ({', '.join(templates) or 'none'})",
                       f"%KERNEL {call.template}")
        bound = dict(call.bindings)
        for array in bound:
            decl = template.decl(array)
            if decl is None or not decl.dims or decl not in template.datastructs:
                raise fail(f"a binding of an array declared in {call.template}'s datastructs",
                           f"{array}={bound[array]}")
        for decl in template.datastructs:
            buffer = bound.get(decl.name, decl.name)
            if shapes.setdefault(buffer, decl.dims) != decl.dims:
                raise fail(f"buffer '{buffer}' used with one shape by every kernel",
                           f"%KERNEL {call.template}")
    vectors = sorted(b for b, dims in shapes.items() if dims and "n" in names_in(dims[-1]))
    for buffer, line in exchanges:
        if buffer not in vectors:
            raise DescriptionError(skeleton.path, "code", buffer, "an exchanged buffer of n "
                                   f"components that a kernel of the skeleton uses "
                                   f"({', '.join(vectors)})", line=line)


def parse_scenario(source: Source) -> Scenario:
    root = Node.root(source)
    fields = root.mapping(required=("methods", "ivps", "skeletons", "machine", "n", "threads"),
                          optional=("name", "kernels", "strategy", "kind", "description",
                                    "specialise_n", "model", "ranks"))
    base = Path(source.path).parent
    methods = tuple(load_named("method", ref, base, where) for ref, where in
                    _names(fields["methods"]))
    ivps = tuple(load_named("ivp", ref, base, where) for ref, where in _names(fields["ivps"]))
    skeletons = tuple(load_named("skeleton", ref, base, where) for ref, where in
                      _names(fields["skeletons"]))
    kernel_refs = _names(fields["kernels"]) if "kernels" in fields else \
        _named_templates(skeletons, base, fields["skeletons"])
    templates = {}
    for ref, where in kernel_refs:
        template = load_named("kernel", ref, base, where)
        templates[template.name] = template
    for skeleton in skeletons:
        _check_skeleton(skeleton, templates)
    for kind, items in (("method", methods), ("ivp", ivps), ("skeleton", skeletons)):
        seen = set()
        for item in items:
            if item.name in seen:
                raise fields[kind + "s"].error(f"each {kind} listed once",
                                               value=f"'{item.name}' twice")
            seen.add(item.name)

    machine_ref = fields["machine"].string()
    machine = load_named("machine", machine_ref, base, fields["machine"])
    note = library.host_machine_file()[1] if machine_ref == library.HOST else \
        f"machine file {machine.path}"
    sizes = _sizes(fields["n"], ivps, methods, machine)
    threads = _positive_integers(fields["threads"])
    ranks = _positive_integers(fields["ranks"]) if "ranks" in fields else (1,)
    if max(ranks) > 1 and not any(s.is_mpi for s in skeletons):
        raise fields["ranks"].error("ranks above 1 only with MPI skeletons among 'skeletons' "
                                    "(A-mpi ... H-mpi)", value=str(list(ranks)))
    skeletons = with_neighbour_forms(skeletons)
    name = fields["name"].string() if "name" in fields else Path(source.path).name.split(".")[0]
    specialise = fields["specialise_n"].value if "specialise_n" in fields else False
    if not isinstance(specialise, bool):
        raise fields["specialise_n"].error("true or false")
    model = "ECM"
    if "model" in fields:
        model = fields["model"].string()
        if model not in PREDICTION_MODELS:
            raise fields["model"].error(f"one of {', '.join(PREDICTION_MODELS)}")
    return Scenario(name, methods, ivps, tuple(templates.values()), skeletons, machine, note,
                    sizes, threads, _strategy(fields.get("strategy")), source.path, specialise,
                    model, ranks)


def _named_templates(skeletons: tuple, base: Path, where: Node) -> list:
    """(reference, node) of the kernel templates the skeletons name, found beside the scenario or
    in the library; one found in neither is reported as the skeleton's unknown template, at its
    line."""
    shipped = {k.lower() for k in library.library_files("kernel")}
    refs = []
    for name in dict.fromkeys(name for sk in skeletons for name in sk.templates):
        beside = base / f"{name}.kernel.yaml"
        if beside.is_file():
            refs.append((beside.name, where))
        elif name.lower() in shipped:
            refs.append((name, where))
    return refs


def _positive_integers(node: Node) -> tuple[int, ...]:
    """An integer >= 1 or a list of them, sorted, each once."""
    items = node.sequence(min_len=1) if isinstance(node.value, list) else [node]
    return tuple(sorted({item.integer(minimum=1) for item in items}))


def with_neighbour_forms(skeletons: tuple) -> tuple:
    """The skeletons, each MPI skeleton that gathers followed by its neighbour-exchange form."""
    out = []
    for skeleton in skeletons:
        out.append(skeleton)
        derived = neighbour_form(skeleton)
        if derived is not None and derived.name not in {s.name for s in skeletons}:
            out.append(derived)
    return tuple(out)
