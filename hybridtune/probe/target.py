"""The compiler target of a machine file: -march=native resolved to flags that mean the same on any host."""

from __future__ import annotations

import re
import subprocess


def target_help(march: str) -> str:
    """gcc's own account of -march=MARCH (`gcc -march=MARCH -Q --help=target`); '' without gcc."""
    try:
        return subprocess.run(["gcc", f"-march={march}", "-Q", "--help=target"],
                              capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def target_flags(help_text: str) -> tuple[str, set]:
    """The -march= name and the enabled -m flags in a `gcc -Q --help=target` output."""
    match = re.search(r"^\s*-march=\s*(\S+)", help_text, re.MULTILINE)
    enabled = set(re.findall(r"^\s*(-m[a-z0-9.-]+)\s+\[enabled\]", help_text, re.MULTILINE))
    return (match.group(1) if match else "unknown"), enabled


def portable_target(native_help: str, named_help: str) -> str:
    """-march=native as flags that mean the same on any host, from gcc's accounts of -march=native
    and of the name it resolves to: that name, then the ISA extensions this CPU (or its
    hypervisor) adds to or hides from it."""
    name, native = target_flags(native_help)
    if name in ("unknown", "native"):
        return "-march=native"
    _, named = target_flags(named_help)
    hidden = [f"-mno-{flag[2:]}" for flag in sorted(named - native)]
    return " ".join([f"-march={name}", *sorted(native - named), *hidden])


def resolved_target() -> str:
    """This host's -march=native as portable flags (portable_target of gcc's outputs here)."""
    native = target_help("native")
    name, _ = target_flags(native)
    return portable_target(native, target_help(name) if name not in ("unknown", "native") else "")
