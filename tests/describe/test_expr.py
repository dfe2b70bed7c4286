"""The expression parser: the C subset it accepts, what it refuses, and C evaluation semantics."""

import numpy as np
import pytest

from hybridtune.describe.c_arithmetic import EvaluationError, Evaluator
from hybridtune.describe.expr import (Assign, Call, Cond, ExpressionError, Input, Rhs,
                                      parse_assignment, parse_expression, parse_expressions)
from hybridtune.describe.printing import to_c


@pytest.mark.parametrize("text", [
    "1.0 / 16.0", "-sqrt(5.0) / 12.0", "(10.0 - 7.0 * sqrt(5.0)) / 60.0", "a - (b - c)",
    "t <= 5.0 ? 2.0 : 0.0", "%in[j - 1] * -x", "pow(fmax(%in[j - 1] - UT, 0.0), 2.0)",
    "a && b || !c", "(a ? b : c) + 1", "x * (y + z) / w", "1e-3 * 2.5E+2",
])
def test_print_parse_round_trip(text):
    tree = parse_expression(text)
    assert parse_expression(to_c(tree)) == tree


def test_tree_shapes():
    assert isinstance(parse_expression("%in[j + 1]"), Input)
    assert isinstance(parse_expression("t <= 5 ? 2 : 0"), Cond)
    assert isinstance(parse_expression("exp(x)"), Call)
    statement = parse_assignment("dy[j] += b[i] * %RHS")
    assert isinstance(statement, Assign) and statement.op == "+="
    assert isinstance(statement.value.right, Rhs)
    assert parse_expressions("1 m - 1") == [parse_expression("1"), parse_expression("m - 1")]


@pytest.mark.parametrize("text, reason", [
    ("y[0] = 1; system(\"rm -rf /\")", "not allowed"),
    ("0.0; exit(1)", "statement separator"),
    ("#include <stdlib.h>", "preprocessor"),
    ("({ int x = 1; x; })", "brace"),
    ("system(1)", "unknown function 'system'"),
    ("__import__('os')", "character literal"),
    ("__import__(1)", "unknown function '__import__'"),
    ("exp(1, 2)", "takes 1 argument"),
    ("a ? b", "expected ':'"),
    ("x[1](2)", r"unexpected '\('"),
    ("1 +", "an operand"),
    ("`ls`", "not allowed"),
    ("a = b", "unexpected '='"),
    ("+".join(["a"] * 2000), "levels deep"),
    ("(" * 300 + "1" + ")" * 300, "nested at most"),
    ("-" * 300 + "1", "nested at most"),
    ("j + 9223372036854775808", "at most 9223372036854775807"),
    ("9" * 5000, "at most 9223372036854775807"),
    ("010", "leading zero"),
    ("1e309", "a finite number"),
])
def test_refused(text, reason):
    with pytest.raises(ExpressionError, match=reason):
        parse_expression(text)


def test_assignment_needs_target():
    with pytest.raises(ExpressionError, match="left-hand side"):
        parse_assignment("1 = x")
    with pytest.raises(ExpressionError, match="'=' or '\\+='"):
        parse_assignment("x - 1")


def test_c_integer_semantics():
    ev = Evaluator({"n": 10, "j": np.arange(-3, 4)})
    assert ev(parse_expression("n / 3")) == 3
    assert ev(parse_expression("n / 4.0")) == 2.5
    assert list(ev(parse_expression("j / 2"))) == [-1, -1, 0, 0, 0, 1, 1]   # truncation
    assert list(ev(parse_expression("j % 2"))) == [-1, 0, -1, 0, 1, 0, 1]
    assert ev(parse_expression("(n > 3) + (n == 10)")) == 2
    with pytest.raises(EvaluationError, match="division by zero"):
        ev(parse_expression("n / (n - 10)"))


def test_integers_overflowing_c_long_are_refused():
    ev = Evaluator({"n": 10, "j": np.arange(3)})
    for text in ("9223372036854775807 + 1", "-9223372036854775807 - 1", "n * 922337203685477581",
                 "j * 9223372036854775807 * 2", "-(j - 9223372036854775807 - 1)"):
        with pytest.raises(EvaluationError, match="overflow"):
            ev(parse_expression(text))
    assert ev(parse_expression("9223372036854775807 - n + 10")) == 9223372036854775807
    assert ev(parse_expression("1e-400 + 1.0 / 0")) == np.inf
    with pytest.raises(EvaluationError, match="overflow"):
        Evaluator({"n": 2 ** 70})(parse_expression("n"))


def test_deep_nesting_parses_within_the_limit():
    assert Evaluator({})(parse_expression("(" * 62 + "-1" + ")" * 62)) == -1
    assert Evaluator({})(parse_expression("-" * 63 + "1")) == -1


def test_conditional_is_elementwise():
    ev = Evaluator({"t": np.array([4.0, 6.0])})
    assert list(ev(parse_expression("t <= 5.0 ? 2.0 : 0.0"))) == [2.0, 0.0]
