"""IVP descriptions: valid sizes, derived quantities, constants and component blocks as trees."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from hybridtune.describe.costs import input_index_trees, input_reads, operation_counts, static_is_int
from hybridtune.describe.evaluate import EvaluationError, Evaluator, is_int
from hybridtune.describe.expr import (MATH_CONSTANTS, RESERVED_NAMES, Binary, Call, Cond, Input, Name, Num, Unary,
                                      parse_expression, walk)
from hybridtune.describe.source import Node, Source
from hybridtune.errors import RequestError

_CONSTANT = re.compile(r"^\s*double\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*$", re.S)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED = {"j", "n", "t"} | set(MATH_CONSTANTS) | RESERVED_NAMES
SAMPLE_TARGETS = (100, 1000, 10000)
CHECK_LIMIT = 10 ** 6      # the rules are checked at the smallest valid n: it must stay this small


@dataclass(frozen=True)
class SizeRule:
    """Which n are valid: n >= minimum, n a multiple of multiple_of, optionally n = root^2."""
    minimum: int = 1
    multiple_of: int = 1
    square_of: str | None = None

    def check(self, n: int) -> str | None:
        """None when n is valid, else what was expected."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            return "an integer n"
        if n < self.minimum:
            return f"n >= {self.minimum}"
        if n % self.multiple_of:
            return f"n a multiple of {self.multiple_of}"
        if self.square_of and math.isqrt(n) ** 2 != n:
            return f"n a perfect square (n = {self.square_of}^2)"
        return None

    def next_valid(self, n: int) -> int:
        """The smallest valid size >= n."""
        n = max(int(n), self.minimum)
        if not self.square_of:
            return n + (-n) % self.multiple_of
        step = _root_step(self.multiple_of)     # n = root^2 is a valid multiple iff step | root
        root = math.isqrt(n - 1) + 1
        root += (-root) % step
        return root * root

    def samples(self) -> list[int]:
        """A few valid sizes for checking a description: the smallest and some larger."""
        first = self.next_valid(self.minimum)
        values = [first, self.next_valid(first + 1)]
        values.append(self.next_valid(values[-1] + 1))
        values += [self.next_valid(target) for target in SAMPLE_TARGETS if target > values[-1]]
        return sorted(set(values))


def _root_step(k: int) -> int:
    """The smallest r such that k divides r^2: each prime of k to half its power, rounded up."""
    step, p = 1, 2
    while p * p <= k:
        power = 0
        while k % p == 0:
            k //= p
            power += 1
        step *= p ** ((power + 1) // 2)
        p += 1
    return step * k


@dataclass(frozen=True)
class Block:
    """Components first .. first+size-1, repeated `repeat` times `stride` apart, sharing code."""
    first: object
    size: object
    code: object
    repeat: object = None
    stride: object = None
    line: int | None = None

    def count(self, env: dict) -> int:
        """How often the block recurs (1 without `repeat`)."""
        return 1 if self.repeat is None else int(Evaluator(env)(self.repeat))

    def starts(self, env: dict) -> list[int]:
        first = int(Evaluator(env)(self.first))
        if self.repeat is None:
            return [first]
        stride = int(Evaluator(env)(self.stride))
        return [first + r * stride for r in range(self.count(env))]

    def indices(self, env: dict) -> np.ndarray:
        """Every component j this block covers at the given environment."""
        size = int(Evaluator(env)(self.size))
        if size <= 0 or self.count(env) <= 0:
            return np.zeros(0, dtype=np.int64)
        starts = np.array(self.starts(env), dtype=np.int64)
        return (starts[:, None] + np.arange(size, dtype=np.int64)[None, :]).ravel()


@dataclass(frozen=True)
class IVP:
    name: str
    sizes: SizeRule
    quantities: tuple        # ((name, tree), ...) integer quantities derived from n
    constants: tuple         # ((name, tree), ...) double constants
    components: tuple        # Block, ...
    initial_values: tuple    # Block, ...
    aliases: tuple = ()
    stable_step: object = None
    description: str = ""
    path: str = ""

    @property
    def int_names(self) -> set[str]:
        names = {"j", "n"} | {q for q, _ in self.quantities}
        if self.sizes.square_of:
            names.add(self.sizes.square_of)
        return names

    def check_n(self, n: int) -> None:
        problem = self.sizes.check(n)
        if problem:
            raise RequestError(f"IVP {self.name} ({self.path}): n = {n} is not valid: expected "
                               f"{problem}")

    def environment(self, n: int) -> dict:
        """Values of n, the integer quantities and the constants at size n."""
        env: dict = {"n": int(n)}
        if self.sizes.square_of:
            env[self.sizes.square_of] = math.isqrt(int(n))
        for name, tree in self.quantities:
            env[name] = _named_value(name, tree, env)
        for name, tree in self.constants:
            env[name] = float(_named_value(name, tree, env))
        return env

    def step_size(self, n: int) -> float | None:
        if self.stable_step is None:
            return None
        return float(Evaluator(self.environment(n))(self.stable_step))

    def block_facts(self, n: int) -> list[dict]:
        """Per component block: flops, calls, loads and access distance at size n."""
        env = self.environment(n)
        facts = []
        for number, block in enumerate(self.components):
            js = block.indices(env)
            distance = 0
            for index in input_index_trees(block.code):
                if len(js):
                    reads = Evaluator({**env, "j": js})(index)
                    distance = max(distance, int(np.max(np.abs(np.asarray(reads) - js))))
            facts.append({"block": number, "components": int(len(js)),
                          "operations": dict(operation_counts(block.code, self.int_names)),
                          "loads": len(input_reads(block.code)),
                          "access_distance": distance})
        return facts

    def access_distance(self, n: int) -> int:
        return max((f["access_distance"] for f in self.block_facts(n)), default=0)


def _named_value(name: str, tree, env: dict):
    try:
        return Evaluator(env)(tree)
    except EvaluationError as exc:
        raise EvaluationError(str(exc), name) from None


# --- parsing -------------------------------------------------------------------------------

def _check_tree(node: Node, tree, allowed: set[str], int_names: set[str], *, inputs: bool,
                what: str) -> None:
    for part in walk(tree):
        if isinstance(part, Name) and part.id not in allowed and part.id not in MATH_CONSTANTS:
            raise node.error(f"{what} using only {', '.join(sorted(allowed)) or 'numbers'} "
                             f"(undefined name '{part.id}')")
        if isinstance(part, Input):
            if not inputs:
                raise node.error(f"{what} without %in (it is read only in component code)")
            if not static_is_int(part.index, int_names):
                raise node.error(f"{what} whose %in indices are integer expressions in j, n and "
                                 "the integer quantities")
            if names_in(part.index) - int_names:
                raise node.error(f"{what} whose %in indices use only j, n and integer quantities "
                                 f"(not {', '.join(sorted(names_in(part.index) - int_names))})")
        if isinstance(part, Binary) and part.op == "%" and not (
                static_is_int(part.left, int_names) and static_is_int(part.right, int_names)):
            raise node.error(f"{what} applying '%' to integer operands only (fmod is not "
                             "offered; C's % needs integers)")
        if not isinstance(part, (Num, Name, Binary, Unary, Call, Cond, Input)):
            raise node.error(f"{what} without array references or %RHS")


def names_in(tree) -> set[str]:
    return {p.id for p in walk(tree) if isinstance(p, Name)}


def _integer_expression(node: Node, int_names: set[str], what: str):
    tree = node.parsed(parse_expression)
    _check_tree(node, tree, int_names, int_names, inputs=False, what=what)
    if not static_is_int(tree, int_names):
        raise node.error(f"{what} of integer type (integer literals, n and integer quantities; "
                         "C integer division)")
    return tree


def _sizes(node: Node | None) -> SizeRule:
    if node is None:
        return SizeRule()
    fields = node.mapping(optional=("min", "multiple_of", "square_of"))
    minimum = fields["min"].integer(1, CHECK_LIMIT) if "min" in fields else 1
    multiple = fields["multiple_of"].integer(1, CHECK_LIMIT) if "multiple_of" in fields else 1
    square = None
    if "square_of" in fields:
        square = fields["square_of"].string()
        if not _IDENT.match(square) or square in RESERVED:
            raise fields["square_of"].error("a new name for sqrt(n), such as g")
    rule = SizeRule(minimum, multiple, square)
    smallest = rule.next_valid(minimum)
    if smallest > CHECK_LIMIT:
        raise node.error(f"sizes whose smallest valid n is at most {CHECK_LIMIT}, where the rules "
                         f"are checked (it is {smallest})")
    return rule


def _blocks(node: Node, int_names: set[str], allowed: set[str], inputs: bool) -> tuple:
    blocks = []
    for item in node.sequence(min_len=1):
        fields = item.mapping(required=("first", "size", "code"), optional=("repeat", "stride"))
        first = _integer_expression(fields["first"], int_names, "a first component")
        size = _integer_expression(fields["size"], int_names, "a block size")
        repeat = stride = None
        if ("repeat" in fields) != ("stride" in fields):
            raise item.error("'repeat' and 'stride' given together (a block repeated with a stride)")
        if "repeat" in fields:
            repeat = _integer_expression(fields["repeat"], int_names, "a repeat count")
            stride = _integer_expression(fields["stride"], int_names, "a stride")
        code = fields["code"].parsed(parse_expression)
        _check_tree(fields["code"], code, allowed, int_names, inputs=inputs,
                    what="component code" if inputs else "initial-value code")
        blocks.append(Block(first, size, code, repeat, stride, item.line))
    return tuple(blocks)


def _check_cover(node: Node, blocks: tuple, env: dict, n: int) -> None:
    spans = []
    for number, block in enumerate(blocks):
        where = node.child(number)
        try:
            size, count = int(Evaluator(env)(block.size)), block.count(env)
            if not 0 <= count <= n:
                raise where.child("repeat").error(f"a repeat count between 0 and n at n = {n} "
                                                  f"(it is {count})")
            if not 0 <= size <= n:
                raise where.child("size").error(f"a size between 0 and n at n = {n} (it is {size})")
            starts = block.starts(env)
        except EvaluationError as exc:
            raise where.error(f"bounds that evaluate at n = {n} ({exc})") from None
        spans += [(start, start + size, number) for start in starts if size > 0]
    spans.sort()
    expected = 0
    for start, stop, number in spans:
        if start != expected:
            kind = "a gap" if start > expected else "an overlap"
            raise node.child(number).child("first").error(
                f"blocks covering components 0..n-1 in order without gap or overlap: at n = {n} "
                f"this block starts at component {start} where {expected} was due ({kind})")
        expected = stop
    if expected != n:
        raise node.error(f"blocks covering components 0..n-1: at n = {n} they end at component "
                         f"{expected}")


def _check_reads(node: Node, blocks: tuple, env: dict, n: int) -> None:
    for number, block in enumerate(blocks):
        js = block.indices(env)
        if not len(js):
            continue
        for index in input_index_trees(block.code):
            try:
                reads = np.asarray(Evaluator({**env, "j": js})(index)) * np.ones_like(js)
            except EvaluationError as exc:
                raise node.child(number).child("code").error(
                    f"%in indices that evaluate at n = {n} ({exc})") from None
            bad = (reads < 0) | (reads >= n)
            if np.any(bad):
                j = int(js[np.argmax(bad)])
                raise node.child(number).child("code").error(
                    f"%in indices within 0..n-1: at n = {n}, j = {j} it reads component "
                    f"{int(reads[np.argmax(bad)])}")


def parse_ivp(source: Source) -> IVP:
    root = Node.root(source)
    fields = root.mapping(required=("name", "components", "initial_values"),
                          optional=("n", "quantities", "constants", "stable_step", "aliases",
                                    "description", "kind"))
    name = fields["name"].string()
    aliases = tuple(a.string() for a in fields["aliases"].sequence()) if "aliases" in fields else ()
    sizes = _sizes(fields.get("n"))
    int_names = {"j", "n"} | ({sizes.square_of} if sizes.square_of else set())
    known = {"n"} | ({sizes.square_of} if sizes.square_of else set())

    quantities = []
    value_nodes = {}
    if "quantities" in fields:
        for qname, qnode in fields["quantities"].free_mapping().items():
            if not _IDENT.match(qname) or qname in RESERVED or qname in known:
                raise qnode.error("a new integer quantity name (not j, n, t or a name used before)",
                                  value=qname)
            tree = _integer_expression(qnode, known - {"j"}, f"quantity {qname}, an expression")
            quantities.append((qname, tree))
            value_nodes[qname] = qnode
            known.add(qname)
            int_names.add(qname)

    constants = []
    for item in fields["constants"].sequence() if "constants" in fields else []:
        text = item.string()
        match = _CONSTANT.match(text)
        if not match:
            raise item.error("a constant declaration 'double NAME = value'")
        cname, value_text = match.groups()
        if cname in RESERVED or cname in known:
            raise item.error(f"a new constant name ('{cname}' is already defined or reserved)")
        tree = Node(item.source, value_text, item.path, item.line).parsed(parse_expression)
        _check_tree(item, tree, known - {"j"}, int_names, inputs=False, what="a constant value")
        constants.append((cname, tree))
        value_nodes[cname] = item
        known.add(cname)

    code_names = known | {"j", "t"}
    components = _blocks(fields["components"], int_names, code_names, inputs=True)
    initial = _blocks(fields["initial_values"], int_names, known | {"j"}, inputs=False)
    stable_step = None
    if "stable_step" in fields:
        stable_step = fields["stable_step"].parsed(parse_expression)
        _check_tree(fields["stable_step"], stable_step, known, int_names, inputs=False,
                    what="a step size")
    description = fields["description"].string() if "description" in fields else ""
    ivp = IVP(name, sizes, tuple(quantities), tuple(constants), components, initial, aliases,
              stable_step, description, source.path)

    for n in sizes.samples():
        try:
            env = ivp.environment(n)
        except EvaluationError as exc:
            where = value_nodes.get(exc.name, root)
            raise where.error(f"a value that evaluates at n = {n} ({exc})") from None
        for qname, _ in quantities:
            if not is_int(env[qname]):
                raise fields["quantities"].error(f"quantity {qname} of integer type")
        _check_cover(fields["components"], components, env, n)
        _check_cover(fields["initial_values"], initial, env, n)
        _check_reads(fields["components"], components, env, n)
    return ivp
