"""Kernel templates: declared data, named computations and variants written in the loop language."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hybridtune.describe.expr import (RESERVED_NAMES, Assign, Index, Name, Rhs, parse_assignment,
                                      parse_expression, walk)
from hybridtune.describe.looplang import Directive, Loop, loops_and_directives, parse_program
from hybridtune.describe.source import Node, Source

_DECL = re.compile(r"^\s*double\s+([A-Za-z_][A-Za-z0-9_]*)\s*((?:\[[^\[\]]+\]\s*)*)$")
SIZE_NAMES = {"s", "n"}
COMPONENT_LOOP = "j"


@dataclass(frozen=True)
class Decl:
    """A declared scalar (no dims) or array, sizes as trees in s and n."""
    name: str
    dims: tuple


@dataclass(frozen=True)
class KernelVariant:
    name: str
    program: tuple
    line: int | None = None


@dataclass(frozen=True)
class KernelTemplate:
    name: str
    datastructs: tuple       # Decl, ...: shared data the kernel reads and writes
    locals: tuple            # Decl, ...: per-thread temporaries
    computations: tuple      # (id, Assign), ...
    rhs_input: object        # tree naming the input vector of %RHS (None without %RHS)
    rhs_time: object
    variants: tuple
    path: str = ""

    def computation(self, ident: str) -> Assign:
        return dict(self.computations)[ident]

    def decl(self, name: str) -> Decl | None:
        for decl in self.datastructs + self.locals:
            if decl.name == name:
                return decl
        return None

    def variant(self, name: str) -> KernelVariant | None:
        for variant in self.variants:
            if variant.name == name:
                return variant
        return None

    @property
    def evaluates_rhs(self) -> bool:
        return self.rhs_input is not None


def _decls(node: Node, taken: set[str]) -> tuple:
    decls = []
    for item in node.sequence():
        match = _DECL.match(item.string())
        if not match:
            raise item.error("a declaration 'double NAME' or 'double NAME[size]...' with sizes in "
                             "s and n")
        name, dims_text = match.groups()
        if name in taken or name in SIZE_NAMES:
            raise item.error(f"a name declared once ('{name}' is taken)")
        if name in RESERVED_NAMES or name.startswith(("ht_", "ivp_")):
            raise item.error(f"a name that is not a C keyword, a math function or reserved for "
                             f"generated code ('{name}')")
        dims = []
        for dim in re.findall(r"\[([^\[\]]+)\]", dims_text):
            tree = Node(item.source, dim, item.path, item.line).parsed(parse_expression)
            bad = {p.id for p in walk(tree) if isinstance(p, Name)} - SIZE_NAMES
            if bad:
                raise item.error(f"array sizes in s and n (not {', '.join(sorted(bad))})")
            dims.append(tree)
        taken.add(name)
        decls.append(Decl(name, tuple(dims)))
    return tuple(decls)


def _check_refs(node: Node, tree, decls: dict, bound: set[str], what: str,
                whole_array: bool = False) -> None:
    """Every array reference declared with its rank, every plain name declared or bound."""
    for part in walk(tree):
        if whole_array and part is tree:
            continue
        if isinstance(part, Index):
            decl = decls.get(part.array)
            if decl is None:
                raise node.error(f"{what} using declared arrays (undeclared '{part.array}')")
            if len(part.indices) > len(decl.dims):
                raise node.error(f"{what} indexing '{part.array}' with at most {len(decl.dims)} "
                                 f"subscript(s), as declared")
        elif isinstance(part, Name):
            if part.id in decls and decls[part.id].dims:
                raise node.error(f"{what} indexing array '{part.id}'")
            if part.id not in decls and part.id not in bound:
                raise node.error(f"{what} using declared names (undefined '{part.id}')")


def _full_refs(node: Node, tree, decls: dict, what: str, vector_ok: object = None) -> None:
    for part in walk(tree):
        if isinstance(part, Index) and part is not vector_ok \
                and len(part.indices) != len(decls[part.array].dims):
            raise node.error(f"{what} giving all {len(decls[part.array].dims)} subscript(s) of "
                             f"'{part.array}'")


def _bound_vars(tree, decls: dict) -> set[str]:
    return {p.id for p in walk(tree) if isinstance(p, Name) and p.id not in decls}


def parse_kernel(source: Source) -> KernelTemplate:
    root = Node.root(source)
    fields = root.mapping(required=("datastructs", "computations", "variants"),
                          optional=("locals", "rhs", "name", "kind", "description"))
    taken: set[str] = set()
    datastructs = _decls(fields["datastructs"], taken)
    local_decls = _decls(fields["locals"], taken) if "locals" in fields else ()
    decls = {d.name: d for d in datastructs + local_decls}
    computations = _computations(fields["computations"], decls)
    uses_rhs = {ident for ident, st in computations if any(isinstance(p, Rhs) for p in walk(st))}
    rhs_input = rhs_time = None
    if "rhs" in fields:
        rhs_input, rhs_time = _rhs(fields["rhs"], decls)
    elif uses_rhs:
        raise root.error(f"an 'rhs' key (input and time) since computation(s) "
                         f"{', '.join(sorted(uses_rhs))} use %RHS", key_suffix="rhs")
    rhs_vars = (_bound_vars(rhs_input, decls) | _bound_vars(rhs_time, decls)) if rhs_input else set()
    comp_map = dict(computations)
    free = {ident: _free_vars(ident, comp_map, decls, uses_rhs, rhs_vars) for ident in comp_map}
    variants = []
    for vnode in fields["variants"].sequence(min_len=1):
        variants.append(_variant(vnode, variants, decls, free))
    name = fields["name"].string() if "name" in fields else Path(source.path).name.split(".")[0]
    return KernelTemplate(name, datastructs, local_decls, tuple(computations), rhs_input, rhs_time,
                          tuple(variants), source.path)


def _computations(node: Node, decls: dict) -> list:
    """(id, statement) of each computation, its target declared and its references checked."""
    computations = []
    for ident, cnode in node.free_mapping().items():
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", ident):
            raise cnode.error("a computation id made of letters, digits and _", value=ident)
        statement = cnode.parsed(parse_assignment)
        target = statement.target
        target_name = target.array if isinstance(target, Index) else target.id
        if target_name not in decls:
            raise cnode.error(f"a computation assigning a declared name (undeclared "
                              f"'{target_name}')")
        _check_refs(cnode, statement, decls, _bound_vars(statement, decls), "a computation")
        _full_refs(cnode, statement, decls, "a computation")
        computations.append((ident, statement))
    if not computations:
        raise node.error("at least one computation")
    return computations


def _rhs(node: Node, decls: dict) -> tuple:
    """The right-hand side's input vector and time, checked against the declarations."""
    rfields = node.mapping(required=("input", "time"))
    rhs_input = rfields["input"].parsed(parse_expression)
    rhs_time = rfields["time"].parsed(parse_expression)
    ref = rhs_input
    if not (isinstance(ref, Name) and ref.id in decls and decls[ref.id].dims == (Name("n"),)) \
            and \
            not (isinstance(ref, Index) and ref.array in decls
                 and len(ref.indices) == len(decls[ref.array].dims) - 1
                 and decls[ref.array].dims[-1] == Name("n")):
        raise rfields["input"].error("an input vector of n components: a declared array "
                                     "[n] or a row such as Y[l] of an array [s][n]")
    _check_refs(rfields["input"], rhs_input, decls, _bound_vars(rhs_input, decls), "rhs input",
                whole_array=True)
    _check_refs(rfields["time"], rhs_time, decls, _bound_vars(rhs_time, decls), "rhs time")
    _full_refs(rfields["time"], rhs_time, decls, "rhs time")
    return rhs_input, rhs_time


def _free_vars(ident: str, comp_map: dict, decls: dict, uses_rhs: set, rhs_vars: set) -> set:
    """The loop variables computation ident needs from the loops around its %COMP."""
    free = _bound_vars(comp_map[ident], decls) | (rhs_vars if ident in uses_rhs else set())
    free -= SIZE_NAMES
    if ident in uses_rhs:
        free.add(COMPONENT_LOOP)
    return free


def _variant(vnode: Node, variants: list, decls: dict, free: dict) -> KernelVariant:
    """One variant of the template (variants: those before it), each %COMP inside the loops its
    computation needs (free: computation id -> those loop variables)."""
    vfields = vnode.mapping(required=("name", "code"))
    vname = vfields["name"].string()
    if any(v.name == vname for v in variants):
        raise vfields["name"].error("a variant name used once in the template")
    program = parse_program(vfields["code"], {"COMP"}, SIZE_NAMES)
    for directive, loops in loops_and_directives(program):
        enclosing = {loop.var for loop in loops}
        offset = (directive.line - vfields["code"].line) if directive.line else None
        if len(directive.args) != 1 or directive.args[0] not in free:
            raise vfields["code"].error(
                f"'%COMP id' naming a computation ({', '.join(free)})",
                value=" ".join(("%COMP",) + directive.args), line_offset=offset)
        ident = directive.args[0]
        outside = sorted(free[ident] - enclosing)
        if outside:
            raise vfields["code"].error(
                f"computation {ident} inside loops over {', '.join(outside)} (a loop variable "
                f"used outside its loop)", value=f"%COMP {ident}", line_offset=offset)
    for loop in _loops(program):
        if loop.var in decls:
            raise vfields["code"].error(f"a loop variable that is not a declared name "
                                        f"('{loop.var}')")
    return KernelVariant(vname, program, vnode.line)


def _loops(items: tuple):
    for item in items:
        if isinstance(item, Loop):
            yield item
            yield from _loops(item.body)
        elif not isinstance(item, Directive):
            raise TypeError(item)
