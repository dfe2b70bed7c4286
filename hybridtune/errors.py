"""The root error class and the description error that names file, line, key, value and expectation."""

from __future__ import annotations


class HybridtuneError(Exception):
    """Root of every error hybridtune raises on purpose; the CLI turns it into a message and exit 2."""


class DescriptionError(HybridtuneError):
    """A description file (or a request built from one) is not what it must be."""

    def __init__(self, file: str | None, key: str | None, value: object, expected: str,
                 line: int | None = None):
        self.file = file
        self.key = key
        self.value = value
        self.expected = expected
        self.line = line
        super().__init__(self.message())

    def message(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        parts = [where]
        if self.key:
            parts.append(f"key '{self.key}'")
        if self.value is not None:
            shown = repr(self.value) if not isinstance(self.value, str) else repr(self.value)
            if len(shown) > 120:
                shown = shown[:117] + "..."
            parts.append(f"value {shown}")
        return ": ".join(parts) + f": expected {self.expected}"


class RequestError(HybridtuneError):
    """A command-line request that cannot be carried out (invalid n, zero steps, unknown name)."""
