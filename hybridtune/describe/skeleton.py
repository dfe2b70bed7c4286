"""Implementation skeletons: the order of kernels, corrector loops, buffer swaps and communication."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from hybridtune.describe.c_arithmetic import Evaluator
from hybridtune.describe.looplang import Directive, Loop, loops_and_directives, parse_program
from hybridtune.describe.source import Node, Source

BOUND_NAMES = {"m", "s"}
BARRIERS = {"omp_barrier", "mpi_barrier"}                      # %COM op
EXCHANGES = {"mpi_allgather", "mpi_neighbour_exchange"}          # %COM op buffer
COMMUNICATION = BARRIERS | EXCHANGES
NEIGHBOUR_SUFFIX = "-nx"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class KernelCall:
    """%KERNEL name [array=buffer ...]: run a template's chosen variant on the named buffers."""
    template: str
    bindings: tuple   # (template array, skeleton buffer), ...


@dataclass(frozen=True)
class Skeleton:
    name: str
    program: tuple
    description: str = ""
    path: str = ""
    derived: bool = False     # written by neighbour_form, not by hand

    @property
    def templates(self) -> tuple[str, ...]:
        """Distinct kernel templates in order of first use."""
        seen: dict[str, None] = {}
        for directive, _ in loops_and_directives(self.program):
            if directive.name == "KERNEL":
                seen.setdefault(directive.args[0], None)
        return tuple(seen)

    def count(self, predicate, m: int, s: int = 1) -> int:
        """How often per step a directive matching predicate runs for m corrector steps."""
        return _count(self.program, predicate, {"m": m, "s": s})

    def communication_count(self, op: str, m: int) -> int:
        return self.count(lambda d: d.name == "COM" and d.args[0] == op, m)

    @property
    def is_mpi(self) -> bool:
        """Runs on MPI ranks: some %COM is an MPI operation."""
        return any(d.name == "COM" and d.args[0].startswith("mpi_")
                   for d, _ in loops_and_directives(self.program))

    def exchange_kinds(self) -> set[str]:
        return {d.args[0] for d, _ in loops_and_directives(self.program)
                if d.name == "COM" and d.args[0] in EXCHANGES}

    def barrier_formula(self) -> str:
        """Barriers per step as a linear function of m >= 1, e.g. '2m + 2' (checked up to m = 12)."""
        counts = {m: self.communication_count("omp_barrier", m) for m in range(1, 13)}
        slope = counts[2] - counts[1]
        offset = counts[1] - slope
        if any(c != slope * m + offset for m, c in counts.items()):
            return ", ".join(f"m={m}: {c}" for m, c in counts.items())
        if slope == 0:
            return str(offset)
        head = "m" if slope == 1 else f"{slope}m"
        return head if offset == 0 else f"{head} {'+' if offset > 0 else '-'} {abs(offset)}"


def _count(items: tuple, predicate, env: dict) -> int:
    total = 0
    for item in items:
        if isinstance(item, Loop):
            trips = max(0, int(Evaluator(env)(item.upper)) - int(Evaluator(env)(item.lower)))
            total += trips * _count(item.body, predicate, env)
        elif predicate(item):
            total += 1
    return total


def kernel_call(directive: Directive) -> KernelCall:
    bindings = tuple(tuple(arg.split("=", 1)) for arg in directive.args[1:])
    return KernelCall(directive.args[0], bindings)


def _directive_problem(directive) -> str:
    """What a malformed %KERNEL, %COM or %SWAP directive should have been ("" where it is well
    formed)."""
    args = directive.args
    if directive.name == "KERNEL":
        ok = args and _IDENT.match(args[0]) and all(
            re.fullmatch(r"[A-Za-z_]\w*=[A-Za-z_]\w*", arg) for arg in args[1:])
        return "" if ok else "'%KERNEL template [array=buffer ...]'"
    if directive.name == "COM":
        op = args[0] if args else ""
        barrier = op in BARRIERS and len(args) == 1
        exchange = op in EXCHANGES and len(args) == 2 and _IDENT.match(args[1])
        return "" if barrier or exchange else (
            f"'%COM op' with op one of {', '.join(sorted(BARRIERS))}, or "
            f"'%COM op buffer' with op one of {', '.join(sorted(EXCHANGES))}")
    if directive.name == "SWAP":
        ok = len(args) == 2 and all(_IDENT.match(a) for a in args) and args[0] != args[1]
        return "" if ok else "'%SWAP buffer1 buffer2' naming two buffers"
    return ""


def parse_skeleton(source: Source) -> Skeleton:
    root = Node.root(source)
    fields = root.mapping(required=("code",), optional=("name", "kind", "description"))
    code = fields["code"]
    program = parse_program(code, {"KERNEL", "COM", "SWAP"}, BOUND_NAMES)
    kernels = 0
    for directive, _ in loops_and_directives(program):
        kernels += directive.name == "KERNEL"
        expected = _directive_problem(directive)
        if expected:
            raise code.error(expected, value=" ".join((f"%{directive.name}",) + directive.args),
                             line_offset=directive.line - code.line if directive.line else None)
    if not kernels:
        raise code.error("a skeleton with at least one %KERNEL")
    name = fields["name"].string() if "name" in fields else Path(source.path).name.split(".")[0]
    description = fields["description"].string() if "description" in fields else ""
    return Skeleton(name, program, description, source.path)


def neighbour_form(skeleton: Skeleton) -> Skeleton | None:
    """The skeleton with every %COM mpi_allgather BUFFER exchanging only the boundary components
    with the neighbouring ranks, named NAME-nx; None where it gathers nothing."""
    if "mpi_allgather" not in skeleton.exchange_kinds():
        return None

    def rewrite(items: tuple) -> tuple:
        out = []
        for item in items:
            if isinstance(item, Loop):
                out.append(replace(item, body=rewrite(item.body)))
            elif item.name == "COM" and item.args[0] == "mpi_allgather":
                out.append(replace(item, args=("mpi_neighbour_exchange",) + item.args[1:]))
            else:
                out.append(item)
        return tuple(out)

    return Skeleton(skeleton.name + NEIGHBOUR_SUFFIX, rewrite(skeleton.program),
                    f"{skeleton.description} (neighbour exchange instead of allgather)".strip(),
                    skeleton.path, derived=True)
