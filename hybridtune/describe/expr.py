"""Expression trees for description code: a tokenizer and parser for a side-effect-free C subset."""

from __future__ import annotations

import re

from hybridtune.describe.nodes import (Assign, Binary, Call, Cond, ExpressionError, Index, Input,
                                       Name, Num, Rhs, Sum, Unary, children, names, rewrite,
                                       substitute, walk)

MAX_LENGTH = 20000
MAX_DEPTH = 64
MAX_TREE_DEPTH = 300
LONG_MAX = 2 ** 63 - 1     # C long, the integer type of generated code

# math.h functions a description may call, with their arity.
FUNCTIONS = {
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "atan2": 2,
    "sinh": 1, "cosh": 1, "tanh": 1, "exp": 1, "log": 1, "log10": 1, "sqrt": 1,
    "pow": 2, "fabs": 1, "fmax": 2, "fmin": 2, "floor": 1, "ceil": 1,
}
MATH_CONSTANTS = {"M_PI": 3.141592653589793, "M_E": 2.718281828459045}
# names a description may not give a variable: C keywords and what generated code relies on
RESERVED_NAMES = frozenset("""auto break case char const continue default do double else enum
extern float for goto if inline int long register restrict return short signed sizeof static
struct switch typedef union unsigned void volatile while _Bool _Complex _Imaginary lo hi sum
""".split()) | frozenset(FUNCTIONS)
SUM = "sum"     # sum(k, LO, HI, BODY): the reduction over k = LO .. HI-1

# the node records and walks live in nodes.py; importing them from here is what callers do
__all__ = ["Assign", "Binary", "Call", "Cond", "ExpressionError", "Index", "Input", "Name", "Num",
           "Rhs", "Sum", "Unary", "children", "names", "rewrite", "substitute", "walk",
           "FUNCTIONS", "LONG_MAX", "MATH_CONSTANTS", "RESERVED_NAMES", "parse_assignment",
           "parse_expression", "parse_expressions", "tokenize", "tree_depth"]


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<special>%in\b|%RHS\b)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\+=|<=|>=|==|!=|&&|\|\||[-+*/%()\[\],?:<>!=])
""", re.VERBOSE)

_FORBIDDEN = {
    ";": "a statement separator ';' (descriptions hold expressions, not statements)",
    "{": "a brace (descriptions hold expressions, not blocks)",
    "}": "a brace (descriptions hold expressions, not blocks)",
    "#": "a preprocessor character '#'",
    '"': "a string literal", "'": "a character literal",
}


def tokenize(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, column) triples; refuses anything outside the expression subset."""
    if not isinstance(text, str):
        raise ExpressionError(f"a code string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"at most {MAX_LENGTH} characters of code")
    tokens = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            ch = text[pos]
            what = _FORBIDDEN.get(ch, f"character {ch!r}")
            raise ExpressionError(f"{what} is not allowed", pos + 1)
        kind = m.lastgroup
        if kind != "ws":
            tokens.append((kind, m.group(), pos + 1))
        pos = m.end()
    tokens.append(("end", "", len(text) + 1))
    return tokens


class _ExpressionParser:
    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.pos = 0
        self.depth = 0
        self.in_sum = False

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.pos]

    def take(self) -> tuple[str, str, int]:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def expect(self, text: str) -> None:
        kind, tok, col = self.take()
        if tok != text:
            raise ExpressionError(f"expected '{text}', found {tok!r}" if tok else
                                  f"expected '{text}' before the end", col)

    def at(self, *texts: str) -> bool:
        kind, tok, _ = self.peek()
        return kind == "op" and tok in texts

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"expressions nested at most {MAX_DEPTH} deep", self.peek()[2])

    def expression(self):
        self.enter()
        test = self.binary(0)
        if self.at("?"):
            self.take()
            then = self.expression()
            self.expect(":")
            other = self.expression()
            test = Cond(test, then, other)
        self.depth -= 1
        return test

    _LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%"))
    _LEVEL_OF = {op: level for level, ops in enumerate(_LEVELS) for op in ops}

    def binary(self, level: int):
        """Operators binding at least as tightly as `level`, left-associative; one frame per
        operand rather than one per precedence level keeps deep nesting off Python's stack."""
        left = self.unary()
        while True:
            kind, op, _ = self.peek()
            found = self._LEVEL_OF.get(op) if kind == "op" else None
            if found is None or found < level:
                return left
            self.take()
            left = Binary(op, left, self.binary(found + 1))

    def unary(self):
        if self.at("-", "+", "!"):
            self.enter()
            op = self.take()[1]
            node = Unary(op, self.unary())
            self.depth -= 1
            return node
        return self.postfix()

    def postfix(self):
        kind, tok, col = self.peek()
        node = self.primary()
        if self.at("["):
            if not isinstance(node, Name):
                raise ExpressionError("only a named array can be indexed", col)
            indices = []
            while self.at("["):
                self.take()
                indices.append(self.expression())
                self.expect("]")
            node = Index(node.id, tuple(indices))
        return node

    def primary(self):
        kind, tok, col = self.take()
        if kind == "num":
            if re.fullmatch(r"\d+", tok):
                return Num(_integer_literal(tok, col), tok)
            value = float(tok)
            if value != value or value in (float("inf"), float("-inf")):
                raise ExpressionError(f"a finite number, got {tok}", col)
            return Num(value, tok)
        if kind == "special":
            if tok == "%RHS":
                return Rhs()
            self.expect("[")
            index = self.expression()
            self.expect("]")
            return Input(index)
        if kind == "name":
            if tok == SUM and self.at("("):
                return self.reduction(col)
            if self.at("("):
                if tok not in FUNCTIONS:
                    raise ExpressionError(
                        f"unknown function '{tok}' (allowed: {', '.join(sorted(FUNCTIONS))})", col)
                self.take()
                args = [self.expression()]
                while self.at(","):
                    self.take()
                    args.append(self.expression())
                self.expect(")")
                if len(args) != FUNCTIONS[tok]:
                    raise ExpressionError(f"{tok} takes {FUNCTIONS[tok]} argument(s), got {len(args)}", col)
                return Call(tok, tuple(args))
            return Name(tok)
        if kind == "op" and tok == "(":
            node = self.expression()
            self.expect(")")
            return node
        if kind == "end":
            raise ExpressionError("an operand before the end", col)
        raise ExpressionError(f"unexpected {tok!r}", col)

    def reduction(self, col: int) -> Sum:
        """sum(VAR, LO, HI, BODY), after its name; a sum inside a sum is refused."""
        if self.in_sum:
            raise ExpressionError("a sum inside a sum is not supported (one reduction per "
                                  "expression level)", col)
        self.take()
        kind, var, var_col = self.take()
        if kind != "name" or not self.at(","):
            raise ExpressionError("sum(VAR, LO, HI, BODY) whose first argument is a plain name",
                                  var_col)
        self.in_sum = True
        parts = []
        for _ in range(3):
            self.expect(",")
            parts.append(self.expression())
        if self.at(","):
            raise ExpressionError("sum takes 4 arguments: sum(VAR, LO, HI, BODY)", self.peek()[2])
        self.expect(")")
        self.in_sum = False
        return Sum(Name(var), *parts)

    def finish(self) -> None:
        kind, tok, col = self.peek()
        if kind != "end":
            raise ExpressionError(f"unexpected {tok!r} after a complete expression", col)


def _integer_literal(text: str, column: int) -> int:
    """The value of a decimal integer literal, which C must read as the same long."""
    if len(text) > 1 and text[0] == "0":
        raise ExpressionError("a decimal integer literal without a leading zero (C reads 010 as "
                              "octal, 8)", column)
    if len(text) > len(str(LONG_MAX)) or int(text) > LONG_MAX:
        raise ExpressionError(f"an integer literal of at most {LONG_MAX} (C long); a larger "
                              "number needs a point or an exponent", column)
    return int(text)


def tree_depth(node) -> int:
    """Height of a tree, computed without recursion."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children(current))
    return deepest


def _checked(node):
    if tree_depth(node) > MAX_TREE_DEPTH:
        raise ExpressionError(f"an expression tree at most {MAX_TREE_DEPTH} levels deep")
    return node


def parse_expression(text: str):
    """Parse one expression into a tree."""
    parser = _ExpressionParser(text)
    node = parser.expression()
    parser.finish()
    return _checked(node)


def parse_expressions(text: str) -> list:
    """Parse a space-separated sequence of expressions, as in a loop bound 'lower upper'."""
    parser = _ExpressionParser(text)
    nodes = []
    while parser.peek()[0] != "end":
        nodes.append(_checked(parser.expression()))
    return nodes


def parse_assignment(text: str) -> Assign:
    """Parse a kernel computation 'target = value' or 'target += value'."""
    parser = _ExpressionParser(text)
    col = parser.peek()[2]
    target = parser.postfix()
    if not isinstance(target, (Name, Index)):
        raise ExpressionError("the left-hand side must be a variable or an array element", col)
    kind, op, col = parser.take()
    if op not in ("=", "+="):
        raise ExpressionError(f"expected '=' or '+=' after the target, found {op!r}", col)
    value = parser.expression()
    parser.finish()
    return _checked(Assign(target, op, value))
