"""IVP descriptions: valid sizes, derived quantities, constants and component blocks as trees."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from hybridtune.describe.costs import (input_reads, operation_counts, static_is_int, sum_operations,
                                       sums_in)
from hybridtune.describe.c_arithmetic import EvaluationError, Evaluator, is_int
from hybridtune.describe.expr import Input, parse_expression, walk
from hybridtune.describe.ivp_block import Block
from hybridtune.describe.ivp_checks import (RESERVED, check_cover, check_reads, check_tree,
                                            component_reads, names_in)
from hybridtune.describe.ivp_split import (Refusal, split_blocks, split_indices,
                                           unsplittable_sum_reads)
from hybridtune.describe.printing import to_c
from hybridtune.describe.sizes import POWERS, SizeRule
from hybridtune.describe.source import Node, Source
from hybridtune.errors import RequestError

_CONSTANT = re.compile(r"^\s*double\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*$", re.S)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
CHECK_LIMIT = 10 ** 6      # the rules are checked at the smallest valid n: it must stay this small


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
    affine_components: tuple = ()   # the components split where indices use / or % on j

    @property
    def affine_blocks(self) -> tuple:
        """The component blocks with every %in index j plus a constant on each (the kerncraft
        form and the generated C loop over these): the written blocks where they already are."""
        return self.affine_components or self.components

    @property
    def int_names(self) -> set[str]:
        names = {"j", "n"} | {q for q, _ in self.quantities}
        if self.sizes.root:
            names.add(self.sizes.root[0])
        return names

    def check_n(self, n: int) -> None:
        problem = self.sizes.check(n)
        if problem:
            raise RequestError(f"IVP {self.name} ({self.path}): n = {n} is not valid: expected "
                               f"{problem}")

    def environment(self, n: int) -> dict:
        """Values of n, the integer quantities and the constants at size n."""
        env: dict = {"n": int(n)}
        if self.sizes.root:
            env[self.sizes.root[0]] = self.sizes.root_value(n)
        for name, tree in self.quantities:
            env[name] = _named_value(name, tree, env)
        for name, tree in self.constants:
            env[name] = float(_named_value(name, tree, env))
        return env

    def step_size(self, n: int) -> float | None:
        if self.stable_step is None:
            return None
        return float(Evaluator(self.environment(n))(self.stable_step))

    def _operations(self, block: Block, env: dict) -> tuple[dict, int]:
        """(operations, loads) of one component of block. A sum's terms count as often as it has
        terms at n; a read inside it that varies with its variable counts once per term, the
        others once."""
        operations = operation_counts(block.code, self.int_names)
        loads = len(input_reads(block.code))
        for reduction in sums_in(block.code):
            lower, upper = Evaluator(env).bounds(reduction)
            terms = max(upper - lower, 0)
            for key, count in sum_operations(reduction, self.int_names).items():
                operations[key] += terms * count
            reads = {to_c(part.index): reduction.var.id in names_in(part.index)
                     for part in walk(reduction.body) if isinstance(part, Input)}
            loads += sum(terms if varying else 1 for varying in reads.values())
        return dict(+operations), loads

    def block_operations(self, n: int) -> list[dict]:
        """Per component block: components, flops, calls and loads at size n, from the code and
        the repeat counts alone (no component is evaluated, so any n costs the same)."""
        env = self.environment(n)
        facts = []
        for number, block in enumerate(self.components):
            operations, loads = self._operations(block, env)
            facts.append({"block": number, "components": block.components(env),
                          "operations": operations, "loads": loads})
        return facts

    def block_facts(self, n: int) -> list[dict]:
        """block_operations and each block's access distance at size n (every component's reads
        evaluated: time and memory grow with n)."""
        env = self.environment(n)
        facts = []
        for fact, block in zip(self.block_operations(n), self.components):
            js = block.indices(env)
            distance = 0
            if len(js):
                for reads in component_reads(block.code, env, js):
                    distance = max(distance, int(np.max(np.abs(reads - js))))
            facts.append({**fact, "access_distance": distance})
        return facts

    def access_distance(self, n: int) -> int:
        return max((f["access_distance"] for f in self.block_facts(n)), default=0)

    def halo(self, n: int) -> int:
        """The components on each side of a block of components that the block reads, counted
        around the ring 0..n-1 (a read inside a sum by the farther end of its range, which bounds
        the range): what a rank needs from its neighbours at size n. Each read of an affine block
        is j plus a term free of j, so its first and last component bound the distance: any n
        costs the same."""
        env = self.environment(n)
        width = 0
        for block in self.affine_blocks:
            js = block.ends(env)
            if not len(js):
                continue
            for reads, in_sum in component_reads(block.code, env, js, in_sums=True):
                distance = np.abs(reads - js)
                if not in_sum:
                    distance = np.minimum(distance, n - distance)
                width = max(width, int(np.max(distance)))
        return width


def _named_value(name: str, tree, env: dict):
    try:
        return Evaluator(env)(tree)
    except EvaluationError as exc:
        raise EvaluationError(str(exc), name) from None


# --- parsing -------------------------------------------------------------------------------

def _integer_expression(node: Node, int_names: set[str], what: str):
    tree = node.parsed(parse_expression)
    check_tree(node, tree, int_names, int_names, inputs=False, what=what)
    if not static_is_int(tree, int_names):
        raise node.error(f"{what} of integer type (integer literals, n and integer quantities; "
                         "C integer division)")
    return tree


def _sizes(node: Node | None) -> SizeRule:
    if node is None:
        return SizeRule()
    fields = node.mapping(optional=("min", "max", "multiple_of", "square_of", "cube_of", "fields"))
    minimum = fields["min"].integer(1, CHECK_LIMIT) if "min" in fields else 1
    maximum = fields["max"].integer(1, 2 ** 62) if "max" in fields else None
    multiple = fields["multiple_of"].integer(1, CHECK_LIMIT) if "multiple_of" in fields else 1
    grid = [key for key in POWERS if key in fields]
    if len(grid) > 1:
        raise node.error("one of square_of and cube_of (n is a square or a cube, not both)")
    roots = {}
    for key in grid:
        root = fields[key].string()
        if not _IDENT.match(root) or root in RESERVED:
            what = "sqrt(n / fields)" if POWERS[key] == 2 else "cbrt(n / fields)"
            raise fields[key].error(f"a new name for {what}, such as g", value=root)
        roots[key] = root
    per_point = fields["fields"].integer(1, CHECK_LIMIT) if "fields" in fields else 1
    if "fields" in fields and not grid:
        raise fields["fields"].error("fields together with square_of or cube_of (n = fields * "
                                     "g^2 or fields * g^3)")
    rule = SizeRule(minimum, multiple, roots.get("square_of"), roots.get("cube_of"), maximum,
                    per_point)
    if maximum is not None and maximum < minimum:
        raise fields["max"].error(f"a maximum of at least the minimum {minimum}", value=maximum)
    smallest = rule.smallest_at_least(minimum)
    if smallest > CHECK_LIMIT:
        raise node.error(f"sizes whose smallest valid n is at most {CHECK_LIMIT}, where the rules "
                         f"are checked (it is {smallest})")
    if maximum is not None and smallest > maximum:
        raise fields["max"].error(f"a maximum the rules can meet: the smallest valid n is "
                                  f"{smallest}", value=maximum)
    return rule


def _blocks(node: Node, int_names: set[str], allowed: set[str], inputs: bool) -> tuple:
    blocks = []
    for item in node.sequence(min_len=1):
        fields = item.mapping(required=("first", "size", "code"),
                              optional=("repeat", "stride", "outer_repeat", "outer_stride"))
        first = _integer_expression(fields["first"], int_names, "a first component")
        size = _integer_expression(fields["size"], int_names, "a block size")
        levels = {}
        for repeat_key, stride_key in (("repeat", "stride"), ("outer_repeat", "outer_stride")):
            levels[repeat_key] = levels[stride_key] = None
            if (repeat_key in fields) != (stride_key in fields):
                raise item.error(f"'{repeat_key}' and '{stride_key}' given together (a block "
                                 "repeated with a stride)")
            if repeat_key in fields:
                levels[repeat_key] = _integer_expression(fields[repeat_key], int_names,
                                                         "a repeat count")
                levels[stride_key] = _integer_expression(fields[stride_key], int_names, "a stride")
        if "outer_repeat" in fields and "repeat" not in fields:
            raise item.error("'outer_repeat' with 'repeat' (the outer level repeats the pattern "
                             "of the inner one)")
        code = fields["code"].parsed(parse_expression)
        check_tree(fields["code"], code, allowed, int_names, inputs=inputs,
                   what="component code" if inputs else "initial-value code")
        blocks.append(Block(first, size, code, levels["repeat"], levels["stride"], item.line,
                            levels["outer_repeat"], levels["outer_stride"]))
    return tuple(blocks)


def parse_ivp(source: Source) -> IVP:
    root = Node.root(source)
    fields = root.mapping(required=("name", "components", "initial_values"),
                          optional=("n", "quantities", "constants", "stable_step", "aliases",
                                    "description", "kind"))
    name = fields["name"].string()
    aliases = tuple(a.string() for a in fields["aliases"].sequence()) if "aliases" in fields else ()
    sizes = _sizes(fields.get("n"))
    roots = {sizes.root[0]} if sizes.root else set()
    int_names = {"j", "n"} | roots
    known = {"n"} | roots

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

    constants = _constants(fields["constants"], known, int_names, value_nodes) \
        if "constants" in fields else []

    code_names = known | {"j", "t"}
    components = _blocks(fields["components"], int_names, code_names, inputs=True)
    initial = _blocks(fields["initial_values"], int_names, known | {"j"}, inputs=False)
    stable_step = None
    if "stable_step" in fields:
        stable_step = fields["stable_step"].parsed(parse_expression)
        check_tree(fields["stable_step"], stable_step, known, int_names, inputs=False,
                    what="a step size")
    description = fields["description"].string() if "description" in fields else ""
    ivp = IVP(name, sizes, tuple(quantities), tuple(constants), components, initial, aliases,
              stable_step, description, source.path)
    for n in sizes.samples():
        _check_at(ivp, n, fields, value_nodes, root)
    return _with_affine_blocks(ivp, fields["components"])


def _constants(node: Node, known: set, int_names: set, value_nodes: dict) -> list:
    """(name, value) of each constant declaration, each value reading only names known before it;
    each name is added to known and its node to value_nodes."""
    constants = []
    for item in node.sequence():
        text = item.string()
        match = _CONSTANT.match(text)
        if not match:
            raise item.error("a constant declaration 'double NAME = value'")
        cname, value_text = match.groups()
        if cname in RESERVED or cname in known:
            raise item.error(f"a new constant name ('{cname}' is already defined or reserved)")
        tree = Node(item.source, value_text, item.path, item.line).parsed(parse_expression)
        check_tree(item, tree, known - {"j"}, int_names, inputs=False, what="a constant value")
        constants.append((cname, tree))
        value_nodes[cname] = item
        known.add(cname)
    return constants


def _check_at(ivp: IVP, n: int, fields: dict, value_nodes: dict, root: Node) -> None:
    """At size n the values evaluate, quantities are integers and the blocks cover the components
    once and read only what exists (value_nodes: a value's name -> its node)."""
    try:
        env = ivp.environment(n)
    except EvaluationError as exc:
        where = value_nodes.get(exc.name, root)
        raise where.error(f"a value that evaluates at n = {n} ({exc})") from None
    for qname, _ in ivp.quantities:
        if not is_int(env[qname]):
            raise fields["quantities"].error(f"quantity {qname} of integer type")
    check_cover(fields["components"], ivp.components, env, n)
    check_cover(fields["initial_values"], ivp.initial_values, env, n)
    check_reads(fields["components"], ivp.components, env, n)


def _with_affine_blocks(ivp: IVP, node: Node) -> IVP:
    """The IVP with its blocks split where %in indices use / or % on j, or the error that names
    the block and the index the split cannot take."""
    for number, block in enumerate(ivp.components):
        for index in unsplittable_sum_reads(block.code):
            raise node.child(number).child("code").error(
                "%in reads inside a sum at an offset from j or the sum's variable (a read there "
                "that uses / or % on them, or a condition, has no kerncraft form)",
                value=f"%in[{to_c(index)}]")
    if not any(split_indices(block.code) for block in ivp.components):
        return ivp
    split = split_blocks(ivp)
    if isinstance(split, Refusal):
        raise node.child(split.block).child("code").error(
            f"%in indices that split into blocks on which each is j plus a constant, as the "
            f"kerncraft form needs: this one {split.reason}; write the component as such blocks "
            "(scenarios/ivps/Brusselator2D.ivp.yaml)", value=f"%in[{split.index}]")
    return replace(ivp, affine_components=split)
