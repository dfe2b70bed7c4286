"""C-syntax printing of expression trees, with a hook for how %in and %RHS are spelt."""

from __future__ import annotations

from typing import Callable

from hybridtune.describe.expr import (Assign, Binary, Call, Cond, Index, Input, Name, Num, Rhs,
                                      Sum, Unary)

_PRECEDENCE = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4,
               "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}
_UNARY = 7
_COND = 0


def to_c(node, input_ref: Callable[[str], str] | None = None,
         rhs: Callable[[], str] | None = None) -> str:
    """C text of a tree; input_ref(index_text) spells %in[...], rhs() spells %RHS."""
    return _print(node, input_ref or (lambda idx: f"%in[{idx}]"), rhs or (lambda: "%RHS"), -1)


def _print(node, input_ref, rhs, outer: int) -> str:
    def sub(n, prec=-1):
        return _print(n, input_ref, rhs, prec)

    if isinstance(node, Num):
        return node.text
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Index):
        return node.array + "".join(f"[{sub(i)}]" for i in node.indices)
    if isinstance(node, Input):
        return input_ref(sub(node.index))
    if isinstance(node, Rhs):
        return "(" + rhs() + ")"
    if isinstance(node, Call):
        return f"{node.func}({', '.join(sub(a) for a in node.args)})"
    if isinstance(node, Unary):
        text = node.op + sub(node.operand, _UNARY)
        return f"({text})" if outer > _UNARY else text
    if isinstance(node, Binary):
        prec = _PRECEDENCE[node.op]
        # left-associative: the right operand needs parentheses at equal precedence
        text = f"{sub(node.left, prec)} {node.op} {sub(node.right, prec + 1)}"
        return f"({text})" if outer > prec else text
    if isinstance(node, Cond):
        text = f"{sub(node.test, _COND + 1)} ? {sub(node.then)} : {sub(node.other)}"
        return f"({text})" if outer >= _COND else text
    if isinstance(node, Sum):
        # a GNU C statement expression (gcc and clang): the reduction as one value
        var = sub(node.var)
        return (f"({{ double ht_sum = 0.0; for (long {var} = {sub(node.lower)}; {var} < "
                f"{sub(node.upper)}; ++{var}) ht_sum += {sub(node.body)}; ht_sum; }})")
    if isinstance(node, Assign):
        return f"{sub(node.target)} {node.op} {sub(node.value)}"
    raise TypeError(f"not an expression node: {node!r}")
