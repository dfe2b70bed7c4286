"""Failures grouped by cause: a line per cause with its count and first example; the list as JSON."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CAUSE = 160
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|‘[^’]*’")
_PATH_LIKE = re.compile(r"[\w.+-]/|/[\w.+-]")      # a quoted path, not a quoted '/' or '%'
_PATH = re.compile(r"(?<![\w.])(?:\.{0,2}/)?(?:[\w.+-]+/)+[\w.+-]*(?::\d+)*:?")
_PARENTHESES = re.compile(r"\s*\([^()]*\)")
_DIGEST = re.compile(r"\b[0-9a-f]{8,}\b")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?(?![\w.])", re.IGNORECASE)


@dataclass(frozen=True)
class FailureGroup:
    """Failures that share a cause: the cause in the first one's words, and who failed."""
    cause: str
    names: tuple
    messages: tuple

    @property
    def count(self) -> int:
        return len(self.names)


def readable(message: str) -> str:
    """A failure message on one line without the paths that make it long: its first line that
    says 'error' (a compiler's output), else its first line. A quoted operator stays
    (KeyError: '/')."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    line = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")
    line = _QUOTED.sub(lambda quoted: "" if _PATH_LIKE.search(quoted.group()) else quoted.group(),
                       line)
    text = " ".join(_PATH.sub("", line).split()).strip(" :")
    return text if len(text) <= MAX_CAUSE else text[:MAX_CAUSE - 3] + "..."


def cause_key(message: str) -> str:
    """What two failures must share to have one cause: the readable message without what differs
    from one failure to the next (quoted names, numbers, digests, where in parentheses)."""
    return _NUMBER.sub("#", _DIGEST.sub("#", _QUOTED.sub("'…'", cause_text(message))))


def cause_text(message: str) -> str:
    """A failure's cause in its own words: readable, without where it happened (in parentheses)."""
    return _PARENTHESES.sub("", readable(message)).strip()


def group_failures(failures) -> list[FailureGroup]:
    """(name, message) pairs grouped by cause, the most frequent cause first."""
    groups: dict = {}
    for name, message in failures:
        groups.setdefault(cause_key(message), []).append((str(name), str(message)))
    ordered = sorted(groups.values(), key=lambda members: -len(members))
    return [FailureGroup(cause_text(members[0][1]) or "no message",
                         tuple(n for n, _ in members), tuple(m for _, m in members))
            for members in ordered]


def every_failed(failures, what: str) -> str:
    """Why nothing of a configuration succeeded: 'every WHAT failed (its most frequent cause)'."""
    groups = group_failures(failures)
    return f"every {what} failed ({groups[0].cause})" if groups else f"no {what}"


def failure_lines(groups: list[FailureGroup], total: int, what: str) -> list[str]:
    """'114 of 114 kerncraft analyses failed: CAUSE (first: NAME)', one per cause."""
    return [f"{group.count} of {total} {what} failed: {group.cause} (first: {group.names[0]})"
            for group in groups]


def failures_json(groups: list[FailureGroup]) -> list[dict]:
    return [{"cause": group.cause, "count": group.count,
             "failed": [{"name": name, "message": message}
                        for name, message in zip(group.names, group.messages)]}
            for group in groups]


def without_choice_line(causes: list[tuple[str, str]], total: int, what: str) -> str:
    """The last line of a run where configurations ended without a choice: how many of `total`
    and why, e.g. '4 of 16 configurations have no measured choice: 3 every shortlisted variant
    failed (crash: killed by signal SIGSEGV), 1 ...'; causes are (configuration, why) pairs."""
    groups: dict = {}
    for configuration, reason in causes:
        groups.setdefault(reason, []).append(configuration)
    why = "; ".join(f"{reason} in {len(names)} (first: {names[0]})"
                    for reason, names in sorted(groups.items(), key=lambda item: -len(item[1])))
    return f"{len(causes)} of {total} configurations have {what}: {why}"
