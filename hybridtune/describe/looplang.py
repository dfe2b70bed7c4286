"""The loop language shared by kernel variants and skeletons: %LOOP_START/%LOOP_END or indented %LOOP."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybridtune.describe.costs import static_is_int
from hybridtune.describe.expr import (RESERVED_NAMES, ExpressionError, Name, Num,
                                      parse_expressions, walk)
from hybridtune.describe.source import Node

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_LINES = 2000


@dataclass(frozen=True)
class Loop:
    """var runs from lower to upper - 1; `unroll` asks for full unrolling; pragmas precede it."""
    var: str
    lower: object
    upper: object
    unroll: bool
    body: tuple
    pragmas: tuple = ()
    line: int | None = None


@dataclass(frozen=True)
class Directive:
    """A non-loop line: %COMP id, %KERNEL name ..., %COM op, %SWAP a b, %PRAGMA text."""
    name: str
    args: tuple
    line: int | None = None


def parse_program(node: Node, directives: set[str], bound_names: set[str]) -> tuple:
    """Parse a code block; `directives` are the allowed non-loop keywords besides PRAGMA."""
    text = node.string()
    raw = text.split("\n")
    if len(raw) > MAX_LINES:
        raise node.error(f"a code block of at most {MAX_LINES} lines", value=f"{len(raw)} lines")
    lines = []
    for number, line in enumerate(raw):
        if line.strip():
            lines.append((len(line) - len(line.lstrip()), line.strip(), number + 1))
    parser = _ProgramParser(node, lines, directives, bound_names)
    items, pos = parser.items(0, end_var=None, parent_indent=None, outer=())
    if not items:
        raise node.error("a code block with at least one statement")
    return items


class _ProgramParser:
    def __init__(self, node: Node, lines: list, directives: set[str], bound_names: set[str]):
        self.node = node
        self.lines = lines
        self.directives = directives
        self.bound_names = bound_names

    def fail(self, expected: str, line: int, text: str):
        return self.node.error(expected, value=text, line_offset=line)

    def items(self, pos: int, end_var: str | None, parent_indent: int | None, outer: tuple):
        items: list = []
        pragmas: list = []
        while pos < len(self.lines):
            indent, text, line = self.lines[pos]
            if parent_indent is not None and indent <= parent_indent:
                break
            words = text.split()
            keyword = words[0]
            if keyword == "%LOOP_END":
                if len(words) != 2 or words[1] != end_var:
                    want = f"'%LOOP_END {end_var}'" if end_var else "no %LOOP_END here"
                    raise self.fail(f"{want} (loops close in the order they open)", line, text)
                if pragmas:
                    raise self.fail("a loop or statement after %PRAGMA", line, text)
                return tuple(items), pos + 1
            if keyword in ("%LOOP_START", "%LOOP"):
                loop, pos = self.loop(pos, words, indent, tuple(pragmas), outer)
                items.append(loop)
                pragmas = []
                continue
            if keyword == "%PRAGMA":
                body = " ".join(words[1:])
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*( [A-Za-z0-9_]+)*", body):
                    raise self.fail("'%PRAGMA name [arguments]' of words and numbers", line, text)
                pragmas.append(body)
                pos += 1
                continue
            name = keyword[1:] if keyword.startswith("%") else None
            if name not in self.directives:
                allowed = ", ".join(f"%{d}" for d in sorted(self.directives | {"PRAGMA"}))
                raise self.fail(f"a line starting with %LOOP_START, %LOOP_END, {allowed}", line,
                                text)
            if pragmas:
                raise self.fail("a loop after %PRAGMA (pragmas apply to the next loop)", line, text)
            items.append(Directive(name, tuple(words[1:]), self.node.line and self.node.line + line))
            pos += 1
        if end_var is not None:
            raise self.node.error(f"'%LOOP_END {end_var}' closing the loop over {end_var} (missing)")
        if pragmas:
            raise self.node.error("a loop after the last %PRAGMA")
        return tuple(items), pos

    def loop(self, pos: int, words: list, indent: int, pragmas: tuple, outer: tuple):
        _, text, line = self.lines[pos]
        if len(words) < 3:
            raise self.fail(f"'{words[0]} var [lower] upper [unroll]'", line, text)
        var = words[1]
        if not _IDENT.match(var) or var in self.bound_names or var in RESERVED_NAMES \
                or var.startswith(("ht_", "ivp_")):
            raise self.fail(f"a loop variable name, not '{var}'", line, text)
        if var in outer:
            raise self.fail(f"a loop variable not already used by an enclosing loop ('{var}')",
                            line, text)
        rest = words[2:]
        unroll = rest[-1] == "unroll"
        if unroll:
            rest = rest[:-1]
        try:
            bounds = parse_expressions(" ".join(rest)) if rest else []
        except ExpressionError as exc:
            raise self.fail(f"loop bounds that are expressions ({exc.reason})", line, text) from None
        if len(bounds) not in (1, 2):
            raise self.fail("one or two bounds: '[lower] upper'", line, text)
        for bound in bounds:
            for part in walk(bound):
                if isinstance(part, Name) and part.id not in self.bound_names \
                        and part.id not in outer:
                    raise self.fail(f"bounds in {', '.join(sorted(self.bound_names))} and "
                                    f"enclosing loop variables (not '{part.id}')", line, text)
            if not static_is_int(bound, self.bound_names | set(outer)):
                raise self.fail("integer bounds (integer literals, sizes and loop variables; C "
                                "integer division)", line, text)
        lower, upper = (bounds[0], bounds[1]) if len(bounds) == 2 else (_ZERO, bounds[0])
        if words[0] == "%LOOP_START":
            body, pos = self.items(pos + 1, end_var=var, parent_indent=None, outer=outer + (var,))
        else:
            body, pos = self.items(pos + 1, end_var=None, parent_indent=indent, outer=outer + (var,))
        if not body:
            raise self.fail("a loop with a body", line, text)
        return Loop(var, lower, upper, unroll, body, pragmas,
                    self.node.line and self.node.line + line), pos


_ZERO = Num(0, "0")


def loops_and_directives(items: tuple, outer: tuple = ()):
    """Every directive with the loop variables enclosing it, in program order."""
    for item in items:
        if isinstance(item, Loop):
            yield from loops_and_directives(item.body, outer + (item,))
        else:
            yield item, outer
