"""A machine file's compiler target: -march=native resolved for any host, in a form kerncraft uses."""

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


NAME_MAX = 255      # bytes in one file name: kerncraft names a folder after the compiler flags
# the extensions that decide a double-precision loop's instructions, where a host adds them to the
# CPU gcc names (a Zen 4 under gcc 12: znver3 plus AVX-512)
FP_VECTOR = ("-msse3", "-mssse3", "-msse4.1", "-msse4.2", "-mavx", "-mavx2", "-mfma", "-mfma4",
             "-mf16c", "-mavx512f", "-mavx512cd", "-mavx512vl", "-mavx512dq", "-mavx512bw",
             "-mavx512er", "-mavx512pf")


def kerncraft_folder(flags: str) -> str:
    """The folder kerncraft 0.8.18 names after a compiler's flags (KernelCode's intermediates)."""
    return "_".join(flags.split(" ")).replace("/", "")


def kerncraft_target(target: str, flags: str) -> str:
    """target in a form kerncraft can name a folder after, with the flags template around it.

    The whole target where it fits; else the CPU's name, the vector extensions the host adds to it
    and every extension it hides (code that runs on the host; the extensions left out change no
    double-precision loop); else the name and the hidden ones; else -march=native.
    """
    words = target.split() or ["-march=native"]
    hidden = [word for word in words[1:] if word.startswith("-mno-")]
    vector = [word for word in words[1:] if word in FP_VECTOR]
    for form in (words, [words[0], *vector, *hidden], [words[0], *hidden]):
        text = " ".join(form)
        if len(kerncraft_folder(flags.format(target=text)).encode()) <= NAME_MAX:
            return text
    return "-march=native"
