"""Compulsory memory traffic of a variant's step: each n-sized array its kernels touch, once.

An array a kernel call only reads is transferred once; one it writes twice (the store and its
write-allocate, or the store and the read it also has). Coefficient tables (no n in their sizes)
and a kernel's locals are left out: they stay in cache.
"""

from __future__ import annotations

import math

from hybridtune.describe.c_arithmetic import Evaluator
from hybridtune.describe.expr import Index, Name, Rhs, walk
from hybridtune.describe.looplang import loops_and_directives


def _array(target) -> str:
    return target.array if isinstance(target, Index) else target.id


def _touched(template, statement) -> tuple[set, set]:
    """The arrays one computation reads and the one it writes."""
    target = statement.target
    reads, writes = set(), {_array(target)}
    if statement.op == "+=":
        reads.add(_array(target))
    parts = list(walk(statement.value)) + [part for index in getattr(target, "indices", ())
                                           for part in walk(index)]
    for part in parts:
        if isinstance(part, Index):
            reads.add(part.array)
        elif isinstance(part, Name):
            reads.add(part.id)
        elif isinstance(part, Rhs):
            reads.add(_array(template.rhs_input))
    return reads, writes


def _sized_by_n(declaration) -> bool:
    return any(isinstance(part, Name) and part.id == "n"
               for dimension in declaration.dims for part in walk(dimension))


def kernel_traffic(template, kernel_variant: str, s: int, n: int) -> dict:
    """The arrays of size n or s*n one call of the kernel variant reads or writes, each with its
    elements and transfers, and their bytes in all."""
    reads, writes = set(), set()
    for directive, _ in loops_and_directives(template.variant(kernel_variant).program):
        if directive.name == "COMP":
            read, written = _touched(template, template.computation(directive.args[0]))
            reads |= read
            writes |= written
    arrays = {}
    evaluate = Evaluator({"s": s, "n": n})
    for declaration in template.datastructs:
        if declaration.name not in reads | writes or not _sized_by_n(declaration):
            continue
        elements = math.prod(int(evaluate(d)) for d in declaration.dims)
        read, written = declaration.name in reads, declaration.name in writes
        transfers = int(read) + int(written) + int(written and not read)
        arrays[declaration.name] = {"elements": elements, "read": read, "written": written,
                                    "transfers": transfers, "bytes": 8 * elements * transfers}
    return {"arrays": arrays, "bytes": sum(a["bytes"] for a in arrays.values())}


def step_traffic(variant, skeleton, templates: dict, method, n: int) -> dict:
    """The compulsory traffic of one step: each kernel's per call times its calls in the skeleton
    (m corrector steps, s stages)."""
    s, m = method.stages, method.corrector_steps
    calls = []
    for name, choice in variant.kernels:
        count = skeleton.count(lambda d, name=name: d.name == "KERNEL" and d.args[0] == name, m, s)
        per_call = kernel_traffic(templates[name], choice, s, n)
        calls.append({"template": name, "variant": choice, "calls": count,
                      "bytes_per_call": per_call["bytes"], "arrays": per_call["arrays"]})
    return {"kernels": calls, "bytes": sum(c["calls"] * c["bytes_per_call"] for c in calls)}
