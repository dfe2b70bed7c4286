"""An IVP's sizes and stable step in C for an exported library: NAME_valid_n, NAME_stable_step."""

from __future__ import annotations

from hybridtune.describe.expr import substitute
from hybridtune.describe.ivp import IVP
from hybridtune.describe.printing import to_c
from hybridtune.generate.ckernel import ivp_declarations, ivp_names

_POWERS = {2: ("sqrt", "square"), 3: ("cbrt", "cube")}


def _checks(rule) -> list[tuple[str, list[str]]]:
    """Each condition of a sizes rule: in words, and as C lines that return 0 where n fails it."""
    checks = [(f"n >= {rule.minimum}", [f"    if (n < {rule.minimum}L) return 0;"])]
    if rule.maximum is not None:
        checks.append((f"n <= {rule.maximum}", [f"    if (n > {rule.maximum}L) return 0;"]))
    if rule.multiple_of > 1:
        checks.append((f"a multiple of {rule.multiple_of}",
                       [f"    if (n % {rule.multiple_of}L) return 0;"]))
    if rule.root:
        name, degree = rule.root
        times = f"{rule.fields} times " if rule.fields > 1 else ""
        factor = f"{rule.fields} " if rule.fields > 1 else ""
        power = " * ".join(["root"] * degree)
        checks.append((f"{times}a perfect {_POWERS[degree][1]} (n = {factor}{name}^{degree})", [
            f"    if (n % {rule.fields}L) return 0;",
            f"    long root = (long)({_POWERS[degree][0]}((double)(n / {rule.fields}L)) + 0.5);",
            f"    if ({power} * {rule.fields}L != n) return 0;"]))
    return checks


def valid_sizes(ivp: IVP) -> str:
    """The sizes the IVP takes, in words: "n >= 9, a multiple of 3"."""
    return ", ".join(words for words, _ in _checks(ivp.sizes))


def ivp_functions(ivp: IVP, name: str) -> str:
    """C of NAME_valid_n(n) (1 where the IVP takes n) and NAME_stable_step(n) (the IVP's stable
    step h at n; 0 where n is not valid or the IVP names none). Needs <math.h>."""
    checks = [line for _, lines in _checks(ivp.sizes) for line in lines]
    out = [f"/* 1 where {ivp.name} takes n ({valid_sizes(ivp)}), else 0 */",
           f"int {name}_valid_n(long n)", "{", *checks, "    return 1;", "}", "",
           f"/* {ivp.name}'s stable step h at n; 0 where n is not valid"
           + (" */" if ivp.stable_step is not None else " (the IVP names no stable step) */"),
           f"double {name}_stable_step(long n)", "{"]
    if ivp.stable_step is None:
        out += ["    (void)n;", "    return 0.0;", "}"]
        return "\n".join(out) + "\n"
    declared = ivp_declarations(ivp)
    used = [line.split("=")[0].split()[-1] for line in declared]
    out += [f"    if (!{name}_valid_n(n)) return 0.0;", *("    " + line for line in declared),
            *(f"    (void){variable};" for variable in used),
            f"    return {to_c(substitute(ivp.stable_step, ivp_names(ivp)))};", "}"]
    return "\n".join(out) + "\n"
