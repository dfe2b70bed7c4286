"""Numeric evaluation of expression trees with C semantics, on numbers or numpy arrays."""

from __future__ import annotations

import operator
from typing import Callable, Mapping

import numpy as np

from hybridtune.describe.expr import (LONG_MAX, MATH_CONSTANTS, Binary, Call, Cond, Index, Input,
                                      Name, Num, Rhs, Sum, Unary)
from hybridtune.errors import HybridtuneError

_FUNCS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "exp": np.exp, "log": np.log, "log10": np.log10, "sqrt": np.sqrt, "pow": np.power,
    "fabs": np.abs, "fmax": np.fmax, "fmin": np.fmin, "floor": np.floor, "ceil": np.ceil,
}


_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul}
# int64 arrays wrap silently; a float result this large means the exact one left C long's range
_FLOAT_LIMIT = 2.0 ** 63


class EvaluationError(HybridtuneError):
    """An expression that cannot be evaluated (unknown name, integer division by zero, overflow);
    `name` is the quantity or constant being evaluated, where one is."""

    def __init__(self, reason: str, name: str | None = None):
        self.name = name
        super().__init__(reason)


def is_int(value) -> bool:
    """Whether a value has C integer type (Python int or an integer numpy array/scalar)."""
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, (int, np.integer)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in "iub"


def _as_float(value):
    return np.asarray(value, dtype=float) if isinstance(value, np.ndarray) else np.float64(value)


def _int_result(value):
    if isinstance(value, np.ndarray):
        return value.astype(np.int64)
    return int(value)


def _long(value: int) -> int:
    """An exact integer result, refused outside C long's range (C leaves overflow undefined)."""
    if not -LONG_MAX <= value <= LONG_MAX:
        raise EvaluationError(f"an integer overflow: {value} is beyond C long's range "
                              f"(+-{LONG_MAX})")
    return value


def _has_array(*values) -> bool:
    return any(isinstance(v, np.ndarray) for v in values)


def _int_arith(op: str, a, b):
    """a + b, a - b or a * b on integers, refused where C long overflows."""
    if not _has_array(a, b):
        return _long(_ARITH[op](int(a), int(b)))
    approximate = _ARITH[op](_as_float(a), _as_float(b))
    if np.any(np.abs(approximate) >= _FLOAT_LIMIT):
        raise EvaluationError(f"an integer overflow: a value beyond C long's range (+-{LONG_MAX})")
    return _ARITH[op](np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))


def _c_divmod(a, b):
    if np.any(np.asarray(b) == 0):
        raise EvaluationError("integer division by zero")
    if not _has_array(a, b):
        a, b = int(a), int(b)
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return q, a - q * b
    q = (np.abs(a) // np.abs(b)) * np.sign(a) * np.sign(b)
    return _int_result(q), _int_result(a - q * b)


class Evaluator:
    """Evaluates trees against names, arrays, an input vector and an %RHS callback."""

    def __init__(self, env: Mapping[str, object], arrays: Mapping[str, np.ndarray] | None = None,
                 input_vector: Callable | None = None, rhs: Callable | None = None):
        self.env = env
        self.arrays = arrays or {}
        self.input_vector = input_vector
        self.rhs = rhs

    def __call__(self, node):
        with np.errstate(all="ignore"):
            return self._eval(node)

    def _eval(self, node):
        if isinstance(node, Num):
            return _long(node.value) if isinstance(node.value, int) else node.value
        if isinstance(node, Name):
            if node.id in self.env:
                value = self.env[node.id]
                return _long(value) if isinstance(value, int) and not isinstance(value, bool) \
                    else value
            if node.id in MATH_CONSTANTS:
                return MATH_CONSTANTS[node.id]
            raise EvaluationError(f"undefined name '{node.id}'")
        if isinstance(node, Index):
            if node.array not in self.arrays:
                raise EvaluationError(f"undefined array '{node.array}'")
            idx = tuple(self._eval(i) for i in node.indices)
            return self.arrays[node.array][idx]
        if isinstance(node, Input):
            if self.input_vector is None:
                raise EvaluationError("%in is not available here")
            index = self._eval(node.index)
            if not is_int(index):
                raise EvaluationError("an %in index must be an integer expression")
            return self.input_vector(index)
        if isinstance(node, Rhs):
            if self.rhs is None:
                raise EvaluationError("%RHS is not available here")
            return self.rhs()
        if isinstance(node, Call):
            args = [_as_float(self._eval(a)) for a in node.args]
            return _FUNCS[node.func](*args)
        if isinstance(node, Unary):
            value = self._eval(node.operand)
            if node.op == "-":
                return _int_arith("-", 0, value) if is_int(value) else -value
            if node.op == "+":
                return value
            return _int_result(np.logical_not(value))
        if isinstance(node, Binary):
            return self._binary(node.op, self._eval(node.left), self._eval(node.right))
        if isinstance(node, Cond):
            test = self._eval(node.test)
            then, other = self._eval(node.then), self._eval(node.other)
            if isinstance(test, np.ndarray) or isinstance(then, np.ndarray) \
                    or isinstance(other, np.ndarray):
                if not (is_int(then) and is_int(other)):
                    then, other = _as_float(then), _as_float(other)
                return np.where(np.asarray(test) != 0, then, other)
            return then if test else other
        if isinstance(node, Sum):
            return self._sum(node)
        raise EvaluationError(f"cannot evaluate {type(node).__name__}")

    def bounds(self, node: Sum) -> tuple[int, int]:
        """A sum's lower and upper bound: integers that do not vary with j."""
        lower, upper = self._eval(node.lower), self._eval(node.upper)
        if not (is_int(lower) and is_int(upper)) or np.ndim(lower) or np.ndim(upper):
            raise EvaluationError(f"the bounds of sum over {node.var.id} must be integers that "
                                  "do not vary with j")
        return int(lower), int(upper)

    def _sum(self, node: Sum):
        """The body at every value of the variable at once: the variable as a column against
        an array j (its shape (K, 1)), the body broadcast and summed over the first axis."""
        lower, upper = self.bounds(node)
        j = self.env.get("j")
        column = isinstance(j, np.ndarray) and j.ndim == 1
        k = np.arange(lower, max(lower, upper), dtype=np.int64)
        inner = Evaluator({**self.env, node.var.id: k[:, None] if column else k}, self.arrays,
                          self.input_vector, self.rhs)
        body = np.asarray(inner._eval(node.body), dtype=float)
        shape = np.broadcast_shapes(body.shape, (len(k), len(j)) if column else (len(k),))
        total = np.broadcast_to(body, shape).sum(axis=0)
        return total if total.ndim else np.float64(total)

    @staticmethod
    def _binary(op, a, b):
        if op in ("&&", "||"):
            fn = np.logical_and if op == "&&" else np.logical_or
            return _int_result(fn(np.asarray(a) != 0, np.asarray(b) != 0))
        if op in ("<", "<=", ">", ">=", "==", "!="):
            fn = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                  "==": np.equal, "!=": np.not_equal}[op]
            return _int_result(fn(a, b))
        both_int = is_int(a) and is_int(b)
        if op == "%":
            if not both_int:
                raise EvaluationError("'%' needs integer operands")
            return _c_divmod(a, b)[1]
        if op == "/" and both_int:
            return _c_divmod(a, b)[0]
        if both_int:
            return _int_arith(op, a, b)
        a, b = _as_float(a), _as_float(b)
        return a / b if op == "/" else _ARITH[op](a, b)


class RealEvaluator(Evaluator):
    """Evaluates constant arithmetic in real numbers: every literal is a double, as in a table."""

    def _eval(self, node):
        if isinstance(node, Num):
            return float(node.value)
        return super()._eval(node)
