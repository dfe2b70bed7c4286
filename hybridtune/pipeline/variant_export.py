"""A variant's solver as a self-contained C source, header and Makefile for the user's own code."""

from __future__ import annotations

import re

from hybridtune.errors import RequestError
from hybridtune.generate.cvariant import GeneratedVariant
from hybridtune.compiler.build import FLAGS, native_source

MAKEFILE = """# Builds the tuned solver {name}: lib{name}.so and lib{name}.a.
CC ?= gcc
CFLAGS ?= {flags}

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

USAGE = """/* {name}.h: the tuned PIRK solver {variant}.
 * Use: ht_ctx *c = ht_create(n); ht_initial_values(c) (or fill ht_state(c)); then
 * ht_step(c, t, h) per step (one OpenMP parallel region each); ht_destroy(c).
 * Link with -fopenmp -lm. */
"""


def check_export_name(name: str) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise RequestError(f"--name: expected a C identifier, got {name!r}")


def export_files(generated: GeneratedVariant, name: str) -> dict[str, str]:
    """file name -> text of the exported solver."""
    check_export_name(name)
    header = USAGE.format(name=name, variant=generated.variant_id) + native_source("ht_runtime.h")
    source = generated.code.replace('#include "ht_runtime.h"', f'#include "{name}.h"')
    flags = " ".join(FLAGS)
    return {f"{name}.h": header, f"{name}.c": source,
            "Makefile": MAKEFILE.format(name=name, flags=flags)}
