"""Canonical text of a variant specialised on s and m: equal text means equal generated code."""

from __future__ import annotations

from hybridtune.describe.c_arithmetic import EvaluationError, Evaluator
from hybridtune.describe.expr import Num, Rhs, substitute, walk
from hybridtune.describe.kernel import KernelTemplate
from hybridtune.describe.looplang import Loop
from hybridtune.describe.printing import to_c
from hybridtune.describe.skeleton import Skeleton, kernel_call


def _constant(tree, values: dict) -> int | None:
    try:
        value = Evaluator(values)(tree)
    except EvaluationError:
        return None
    return int(value)


def _flatten(items: tuple, values: dict, emit_leaf, depth: int, out: list) -> None:
    """Specialise loops: trip counts known from s and m; single-trip and unroll loops expanded."""
    for item in items:
        if not isinstance(item, Loop):
            emit_leaf(item, values, depth, out)
            continue
        lower, upper = _constant(item.lower, values), _constant(item.upper, values)
        if lower is not None and upper is not None:
            if upper - lower <= 0:
                continue
            if upper - lower == 1 or item.unroll:
                for v in range(lower, upper):
                    _flatten(item.body, {**values, item.var: v}, emit_leaf, depth, out)
                continue
        mapping = {k: Num(v, str(v)) for k, v in values.items()}
        bounds = (to_c(substitute(item.lower, mapping)), to_c(substitute(item.upper, mapping)))
        pragmas = "".join(f" #{p}" for p in item.pragmas)
        out.append("  " * depth + f"for {item.var} in {bounds[0]}..{bounds[1]}{pragmas}")
        _flatten(item.body, values, emit_leaf, depth + 1, out)


def kernel_text(template: KernelTemplate, variant_name: str, s: int) -> list[str]:
    variant = template.variant(variant_name)
    out: list[str] = []

    def leaf(directive, values, depth, out):
        statement = template.computation(directive.args[0])
        mapping = {k: Num(v, str(v)) for k, v in values.items()}
        rhs_text = ""
        if any(isinstance(p, Rhs) for p in walk(statement)):
            rhs_text = (f"f({to_c(substitute(template.rhs_time, mapping))}, "
                        f"{to_c(substitute(template.rhs_input, mapping))})")
        out.append("  " * depth + to_c(substitute(statement, mapping), rhs=lambda: rhs_text))

    _flatten(variant.program, {"s": s}, leaf, 0, out)
    return out


def variant_text(skeleton: Skeleton, kernel_lines: dict, s: int, m: int) -> str:
    """The whole step of a variant, kernels inlined (template -> its kernel_text), for comparison."""
    out: list[str] = []

    def leaf(directive, values, depth, out):
        if directive.name == "KERNEL":
            call = kernel_call(directive)
            binds = " ".join(f"{a}={b}" for a, b in call.bindings)
            out.append("  " * depth + f"kernel {binds}".rstrip())
            out.extend("  " * (depth + 1) + line for line in kernel_lines[call.template])
        else:
            out.append("  " * depth + " ".join((directive.name.lower(),) + directive.args))

    _flatten(skeleton.program, {"s": s, "m": m}, leaf, 0, out)
    return "\n".join(out)
