"""The tuned solver's dispatcher in C: the rule table and the choice by ranks, threads and n.

Calls are forwarded to the chosen variant. The public functions are written ht_* here and carry the
library's name (NAME_create, ...) once written: two tuned libraries link into one program.
"""

from __future__ import annotations

import re

from hybridtune.generate.civp_api import ivp_functions
from hybridtune.pipeline.dispatch_table import DispatchTable

# the library's public names: the rest of the dispatcher is static
PUBLIC = ("ctx", "create", "create_threads", "destroy", "state", "initial_values", "step",
          "variant_id", "chosen_variant", "chosen_threads", "chosen_measured", "chosen_ranks",
          "chosen_block", "valid_n", "stable_step")
_PUBLIC = re.compile(r"\bht_(" + "|".join(PUBLIC) + r")\b")


def named_api(text: str, name: str) -> str:
    """text with every public ht_* name as NAME_*."""
    return _PUBLIC.sub(lambda match: f"{name}_{match.group(1)}", text)

# Where MPI runs: this process's rank and the ranks of MPI_COMM_WORLD, else 0 (no MPI: one rank)
WORLD_MPI = """static int ht_world(int *rank)
{
    int up = 0, down = 0, ranks = 1;
    *rank = 0;
    MPI_Initialized(&up);
    if (up) MPI_Finalized(&down);
    if (!up || down) return 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    return ranks;
}
"""
WORLD_ONE = """static int ht_world(int *rank) { *rank = 0; return 0; }   /* one process, no MPI */
"""

RULE_FOR = """/* Of the rules of exactly `ranks` ranks, those of the largest thread count <= threads
 * (else the smallest), and of them the one whose range holds n; NULL where there is none. */
static const ht_rule *ht_rule_for(long n, int ranks, int threads)
{
    int key = 0;
    for (int r = 0; r < ht_rule_count; ++r)
        if (ht_rules[r].ranks == ranks && ht_rules[r].threads <= threads
            && ht_rules[r].threads > key) key = ht_rules[r].threads;
    for (int r = 0; r < ht_rule_count && !key; ++r)
        if (ht_rules[r].ranks == ranks) key = ht_rules[r].threads;
    for (int r = 0; r < ht_rule_count; ++r)
        if (ht_rules[r].ranks == ranks && ht_rules[r].threads == key && n >= ht_rules[r].n_low
            && (ht_rules[r].n_high == 0 || n < ht_rules[r].n_high)) return &ht_rules[r];
    return NULL;
}
"""

CREATE = """ht_ctx *ht_create_threads(long n, int threads)
{
    if (threads < 1 || !ht_valid_n(n)) return NULL;
    int rank, world = ht_world(&rank);
    int ranks = world > 0 ? world : 1;
    const ht_rule *rule = ht_rule_for(n, ranks, threads);
    if (!rule || (ht_variant_mpi[rule->variant] && world == 0)) return NULL;
    ht_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    ctx->n = n;
    ctx->ranks = ranks;
    ctx->rank = rank;
    ctx->variant = rule->variant;
    ctx->threads = rule->run_threads < threads ? rule->run_threads : threads;
    ctx->measured = rule->measured;
    int outer = ht_enter(ctx);
    switch (ctx->variant) {
{cases}
    }
    omp_set_num_threads(outer);
    if (!ctx->inner) { free(ctx); return NULL; }
    return ctx;
}

ht_ctx *ht_create(long n) { return ht_create_threads(n, omp_get_max_threads()); }
"""

CHOSEN = """const char *ht_variant_id(void) { return "tuned:{name}"; }
const char *ht_chosen_variant(const ht_ctx *ctx) { return ht_variant_ids[ctx->variant]; }
int ht_chosen_threads(const ht_ctx *ctx) { return ctx->threads; }
int ht_chosen_measured(const ht_ctx *ctx) { return ctx->measured; }
int ht_chosen_ranks(const ht_ctx *ctx) { return ctx->ranks; }

/* The variants' block partition of components 0..n-1 over the ranks: this rank's [lo, hi). */
void ht_chosen_block(const ht_ctx *ctx, long *lo, long *hi)
{
    long base = ctx->n / ctx->ranks, extra = ctx->n % ctx->ranks;
    *lo = ctx->rank * base + (ctx->rank < extra ? ctx->rank : extra);
    *hi = *lo + base + (ctx->rank < extra ? 1 : 0);
}
"""


def dispatcher(table: DispatchTable, name: str, mpi_variants: frozenset, ivp) -> str:
    """NAME.c: the rule table and the API NAME_* over the variants NAME_v0, NAME_v1, ...;
    MPI-aware (mpi.h, the rank count of MPI_COMM_WORLD) where a rule has more than one rank."""
    variants = table.variants
    index = {v: i for i, v in enumerate(variants)}
    mpi = table.mpi
    picks = "ranks, n and threads" if mpi else "n and threads"
    out = [f"/* {name}.c: the dispatcher of the tuned solver {name}: picks a variant by "
           f"{picks}. */",
           *(["#include <mpi.h>"] if mpi else []), "#include <math.h>", "#include <omp.h>",
           "#include <stdlib.h>",
           f'#include "{name}.h"', ""]
    for i in range(len(variants)):
        p = f"{name}_v{i}"
        out += [f"struct {p}_ctx;", f"struct {p}_ctx *{p}_create(long n);",
                f"void {p}_destroy(struct {p}_ctx *ctx);",
                f"double *{p}_state(struct {p}_ctx *ctx);",
                f"void {p}_initial_values(struct {p}_ctx *ctx);",
                f"void {p}_step(struct {p}_ctx *ctx, double t, double h);", ""]
    out += ["typedef struct { int ranks, threads; long n_low, n_high; int variant, run_threads, "
            "measured; } ht_rule;   /* n_high 0: unbounded */",
            "static const ht_rule ht_rules[] = {"]
    for rule in table.rules:
        out.append(f"    {{{rule.ranks}, {rule.threads}, {rule.n_low}L, {rule.n_high or 0}L, "
                   f"{index[rule.variant]}, {rule.run_threads}, {int(rule.measured)}}},")
    out += ["};", f"static const int ht_rule_count = {len(table.rules)};",
            "static const char *const ht_variant_ids[] = {"]
    out += [f'    "{v}",' for v in variants]
    out += ["};", "/* 1: an MPI variant, which calls MPI on MPI_COMM_WORLD */",
            "static const int ht_variant_mpi[] = {"
            + ", ".join(str(int(v in mpi_variants)) for v in variants) + "};", "",
            "struct ht_ctx { void *inner; long n; int variant, threads, measured, ranks, rank; };",
            "", "static int ht_enter(const ht_ctx *ctx)", "{",
            "    int outer = omp_get_max_threads();",
            "    omp_set_num_threads(ctx->threads);", "    return outer;", "}", "",
            WORLD_MPI if mpi else WORLD_ONE, ivp_functions(ivp, "ht"), RULE_FOR]
    cases = "\n".join(f"    case {i}: ctx->inner = {name}_v{i}_create(n); break;"
                      for i in range(len(variants)))
    out.append(CREATE.replace("{cases}", cases))
    out += _forward(name, len(variants), "void ht_destroy(ht_ctx *ctx)", "destroy",
                    "    if (!ctx) return;", "    free(ctx);")
    out += _forward(name, len(variants), "void ht_initial_values(ht_ctx *ctx)", "initial_values")
    out += _forward(name, len(variants), "void ht_step(ht_ctx *ctx, double t, double h)", "step",
                    args="ctx->inner, t, h")
    out += ["double *ht_state(ht_ctx *ctx)", "{", "    switch (ctx->variant) {"]
    out += [f"    case {i}: return {name}_v{i}_state(ctx->inner);" for i in range(len(variants))]
    out += ["    }", "    return NULL;", "}", "", CHOSEN.replace("{name}", name).rstrip("\n")]
    return named_api("\n".join(out) + "\n", name)


def _forward(name: str, count: int, signature: str, call: str, first: str = "",
             last: str = "", args: str = "ctx->inner") -> list[str]:
    """A dispatcher function that calls the context's variant with the context's threads."""
    out = [signature, "{"] + ([first] if first else []) + ["    int outer = ht_enter(ctx);",
                                                          "    switch (ctx->variant) {"]
    out += [f"    case {i}: {name}_v{i}_{call}({args}); break;" for i in range(count)]
    out += ["    }", "    omp_set_num_threads(outer);"] + ([last] if last else []) + ["}", ""]
    return out
