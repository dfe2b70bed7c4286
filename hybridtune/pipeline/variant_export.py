"""A variant's solver as a self-contained C source, header and Makefile for the user's own code."""

from __future__ import annotations

import re

from hybridtune.errors import RequestError
from hybridtune.generate.cvariant import GeneratedVariant
from hybridtune.compiler.build import FLAGS, native_source
from hybridtune.generate.civp_api import ivp_functions, valid_sizes

# make's built-in default (cc) would win over `CC ?= ...`: the default alone is replaced, so that
# CC from the command line or the environment still wins
MAKEFILE_HEAD = """# Builds {name}: lib{name}.so and lib{name}.a by {cc}{why}; `make CC=...` for another.
ifeq ($(origin CC),default)
CC = {cc}
endif
"""
MAKEFILE = """CFLAGS ?= {flags}

all: lib{name}.so lib{name}.a

lib{name}.so: {name}.c {name}.h
\t$(CC) $(CFLAGS) -fPIC -shared -o $@ {name}.c -lm

{name}.o: {name}.c {name}.h
\t$(CC) $(CFLAGS) -c -o $@ {name}.c

lib{name}.a: {name}.o
\tar rcs $@ $^

clean:
\trm -f lib{name}.so lib{name}.a {name}.o

.PHONY: all clean
"""

ENTRY_POINTS = ("ht_ctx", "ht_create", "ht_destroy", "ht_state", "ht_initial_values", "ht_step",
                "ht_variant_id")

HEADER = """/* {name}.h: the PIRK solver {variant} for {method} on {ivp}.
 * Every public name carries the library's name, so that solvers of other IVPs link beside it.
 * Use: double h = {name}_stable_step(n); {name}_ctx *c = {name}_create(n); {name}_initial_values(c)
 * (or fill {name}_state(c)); then {name}_step(c, t, h) per step (one OpenMP parallel region each,
 * omp_get_max_threads() threads); {name}_destroy(c). Link with -fopenmp -lm. The tuning pinned
 * its threads: OMP_PLACES=cores OMP_PROC_BIND=close. */
#ifndef {guard}
#define {guard}

typedef struct {name}_ctx {name}_ctx;
/* NULL where {ivp} does not take n ({name}_valid_n) or where allocation fails */
{name}_ctx *{name}_create(long n);
void {name}_destroy({name}_ctx *ctx);            /* NULL is allowed */
double *{name}_state({name}_ctx *ctx);           /* the state vector y, n doubles */
void {name}_initial_values({name}_ctx *ctx);     /* y = the IVP's initial values */
void {name}_step({name}_ctx *ctx, double t, double h);   /* one PIRK step from t to t + h */
int {name}_valid_n(long n);                      /* 1 where {ivp} takes n: {sizes} */
double {name}_stable_step(long n);               /* {ivp}'s stable step h at n (0: n not valid) */
const char *{name}_variant_id(void);             /* "{variant}" */

#endif
"""
CHECKED_CREATE = """
{name}_ctx *{name}_create(long n) {{ return {name}_valid_n(n) ? {name}_any_create(n) : NULL; }}
"""


def renamed_source(code: str, renames: dict, head: str) -> str:
    """A variant's C with its entry points renamed by the preprocessor (ht_create -> ...) and
    the runtime inlined: it needs no header of hybridtune's."""
    defines = "".join(f"#define {old} {new}\n" for old, new in renames.items())
    return head + defines + code.replace('#include "ht_runtime.h"',
                                         native_source("ht_runtime.h").rstrip("\n"))


def makefile_head(name: str, cc: str = "gcc", why: str = "") -> str:
    """The Makefile's first lines: what it builds and with which compiler."""
    return MAKEFILE_HEAD.format(name=name, cc=cc, why=why)


def check_export_name(name: str) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise RequestError(f"--name: expected a C identifier, got {name!r}")


def export_files(generated: GeneratedVariant, name: str, method, ivp) -> dict[str, str]:
    """file name -> text of the exported solver: its API NAME_*, where NAME_create refuses an n
    the IVP does not take."""
    check_export_name(name)
    header = HEADER.format(name=name, variant=generated.variant_id, method=method.name,
                           ivp=ivp.name, sizes=valid_sizes(ivp), guard=f"{name.upper()}_H")
    renames = {symbol: f"{name}{symbol[2:]}" for symbol in ENTRY_POINTS}
    renames["ht_create"] = f"{name}_any_create"
    head = (f"/* {name}.c: the PIRK solver {generated.variant_id}; API in {name}.h. */\n"
            f'#include <math.h>\n#include "{name}.h"\n')
    source = (renamed_source(generated.code, renames, head) + "\n" + ivp_functions(ivp, name)
              + CHECKED_CREATE.format(name=name))
    flags = " ".join(FLAGS)
    return {f"{name}.h": header, f"{name}.c": source,
            "Makefile": makefile_head(name) + MAKEFILE.format(name=name, flags=flags)}
