"""YAML description files read with line numbers, and typed access that fails with located errors."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from hybridtune.describe.expr import ExpressionError
from hybridtune.errors import DescriptionError

MAX_FILE_BYTES = 4 * 1024 * 1024
PARSED_KEPT = 256       # parsed files kept per process, by path and content
_PARSED: OrderedDict = OrderedDict()


@dataclass(frozen=True)
class Source:
    """A loaded description file: its path, text hash and YAML tree."""
    path: str
    sha256: str
    root: object


def read_source(path: str | Path, text: str | None = None) -> Source:
    """Read and parse a YAML file (or the given text, reported under that path); a text parsed
    before under the same name is not parsed again (its tree is read, never changed)."""
    name = str(path)
    if text is None:
        try:
            raw = Path(path).read_bytes()
        except FileNotFoundError:
            raise DescriptionError(name, None, None, "an existing file") from None
        except IsADirectoryError:
            raise DescriptionError(name, None, None, "a file, not a directory") from None
        except OSError as exc:
            raise DescriptionError(name, None, None, f"a readable file ({exc.strerror})") from None
        if len(raw) > MAX_FILE_BYTES:
            raise DescriptionError(name, None, None, f"a file of at most {MAX_FILE_BYTES} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DescriptionError(name, None, None, f"UTF-8 text (bad byte at {exc.start})") from None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    # a machine file's 150 kB of tables take a second to parse
    return kept(_PARSED, (name, digest), lambda: _parsed(name, digest, text))


def _parsed(name: str, digest: str, text: str) -> Source:
    reader = YAML(typ="rt", pure=True)   # round-trip mode builds plain maps and lists, never objects
    reader.allow_duplicate_keys = False
    try:
        root = reader.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise DescriptionError(name, None, None, f"valid YAML ({exc.problem or exc.context})",
                               line=line) from None
    except (YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise DescriptionError(name, None, None, f"valid YAML ({exc})") from None
    _untag_units(root)
    return Source(name, digest, root)


def kept(cache: OrderedDict, key, make, most: int = PARSED_KEPT):
    """make() for key, kept in cache with the `most` keys last used (what make raises is not
    kept)."""
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    cache[key] = value = make()
    if len(cache) > most:
        cache.popitem(last=False)
    return value


def _untag_units(value) -> None:
    """Plain text again where kerncraft's import made ruamel tag it: kerncraft registers, for
    every YAML reader of the process, an implicit '!prefixed' unit tag on scalars that start with
    a number and a space ('32.00 kB', but also '2 * N - 1')."""
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, child in list(items):
        tag = getattr(getattr(child, "tag", None), "value", None)
        if type(child).__name__ == "TaggedScalar" and tag == "!prefixed":
            value[key] = child.value
        else:
            _untag_units(child)


def _line_of(container, key) -> int | None:
    lc = getattr(container, "lc", None)
    if lc is None:
        return None
    try:
        if isinstance(key, int) and isinstance(container, list):
            return lc.item(key)[0] + 1
        return lc.key(key)[0] + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


class Node:
    """A value inside a source, with its key path and line, for located errors."""

    def __init__(self, source: Source, value, path: tuple = (), line: int | None = None):
        self.source = source
        self.value = value
        self.path = path
        self.line = line

    @classmethod
    def root(cls, source: Source) -> "Node":
        return cls(source, source.root, (), 1)

    @property
    def key(self) -> str:
        text = ""
        for part in self.path:
            text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        return text

    def error(self, expected: str, value=None, line_offset: int | None = None,
              key_suffix: str = "") -> DescriptionError:
        line = self.line
        if line is not None and line_offset is not None:
            line += line_offset
        shown = self.value if value is None else value
        if isinstance(shown, (dict, list)) and value is None:
            shown = None
        return DescriptionError(self.source.path, (self.key + key_suffix) or None, shown,
                                expected, line=line)

    def child(self, key) -> "Node":
        line = _line_of(self.value, key)
        return Node(self.source, self.value[key], self.path + (key,),
                    line if line is not None else self.line)

    # typed views ---------------------------------------------------------------------------
    def mapping(self, required: tuple = (), optional: tuple = ()) -> dict:
        """Check this is a mapping with exactly the allowed keys; return key -> Node."""
        if not isinstance(self.value, dict):
            raise self.error(f"a mapping with keys {', '.join(required + optional)}",
                             value=_kind(self.value))
        allowed = set(required) | set(optional) | {"schema_version"}
        for key in self.value:
            if not isinstance(key, str) or key not in allowed:
                raise Node(self.source, key, self.path + (str(key),),
                           _line_of(self.value, key) or self.line).error(
                    f"one of the keys {', '.join(sorted(allowed))} (unknown key)", value=key)
        for key in required:
            if key not in self.value:
                raise self.error(f"the key '{key}' (missing)", value=None,
                                 key_suffix=("." if self.path else "") + key)
        if "schema_version" in self.value:
            version = self.child("schema_version")
            if version.value != 1 or isinstance(version.value, bool):
                raise version.error("schema_version 1")
        return {key: self.child(key) for key in self.value if key != "schema_version"}

    def free_mapping(self) -> dict:
        """A mapping with user-chosen string keys; return key -> Node."""
        if not isinstance(self.value, dict):
            raise self.error("a mapping of names to values", value=_kind(self.value))
        for key in self.value:
            if not isinstance(key, str):
                raise self.error("string keys", value=key)
        return {key: self.child(key) for key in self.value}

    def sequence(self, min_len: int = 0) -> list["Node"]:
        if not isinstance(self.value, list):
            raise self.error("a list", value=_kind(self.value))
        if len(self.value) < min_len:
            raise self.error(f"a list of at least {min_len} item(s)", value=list(self.value))
        return [self.child(i) for i in range(len(self.value))]

    def string(self) -> str:
        if not isinstance(self.value, str) or not self.value.strip():
            raise self.error("a non-empty string")
        return str(self.value)

    def integer(self, minimum: int | None = None, maximum: int | None = None) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.error("an integer")
        if (minimum is not None and self.value < minimum) or \
                (maximum is not None and self.value > maximum):
            raise self.error(_integer_range(minimum, maximum))
        return int(self.value)

    def scalar_text(self) -> str:
        """A number or an expression string, as text for the expression parser."""
        if isinstance(self.value, bool) or self.value is None:
            raise self.error("a number or an expression string")
        if isinstance(self.value, (int, float)):
            return repr(float(self.value)) if isinstance(self.value, float) else str(int(self.value))
        if isinstance(self.value, str) and self.value.strip():
            return str(self.value)
        raise self.error("a number or an expression string", value=_kind(self.value))

    def parsed(self, parse, line_offset: int | None = None):
        """Parse this node's text with the given parser; syntax errors become located errors."""
        text = self.scalar_text()
        try:
            return parse(text)
        except ExpressionError as exc:
            raise self.error(f"a valid expression ({exc.reason}"
                             + (f", column {exc.column})" if exc.column else ")"),
                             line_offset=line_offset) from None


def _integer_range(minimum: int | None, maximum: int | None) -> str:
    if maximum is None:
        return f"an integer >= {minimum}"
    if minimum is None:
        return f"an integer <= {maximum}"
    return f"an integer between {minimum} and {maximum}"


def _kind(value) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)
