"""The tuned solver's dispatcher in C: the rule table and the choice by ranks, threads and n.

Calls are forwarded to the chosen variant. The public functions are written ht_* here and carry the
library's name (NAME_create, ...) once written: two tuned libraries link into one program.
"""

from __future__ import annotations

import re

from hybridtune.compiler.build import native_source
from hybridtune.generate.civp_api import ivp_functions
from hybridtune.measure.provenance import code_sha256
from hybridtune.pipeline.dispatch_table import DispatchTable

# the library's public names: the rest of the dispatcher is static
PUBLIC = ("ctx", "create", "create_threads", "create_options", "destroy", "state",
          "initial_values", "step", "variant_id", "chosen_variant", "chosen_threads",
          "chosen_measured", "chosen_ranks", "chosen_block", "chosen_candidates",
          "chosen_adapting", "valid_n", "stable_step")
_PUBLIC = re.compile(r"\bht_(" + "|".join(PUBLIC) + r")\b")


def named_api(text: str, name: str) -> str:
    """text with every public ht_* name as NAME_*, and the option HT_ADAPT as NAME_ADAPT."""
    text = re.sub(r"\bHT_ADAPT\b", f"{name.upper()}_ADAPT", text)
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

ADAPTING = """#define HT_ROUNDS 5   /* interleaved rounds of the candidates while adapting */
#define HT_TURN 3     /* a candidate's consecutive steps per turn; a turn's first is not counted */

struct ht_ctx {
    long n;
    int ranks, rank, measured, reporting;
    int count;                    /* candidates created (1 without adaptation) */
    int adapting;                 /* 1 while the candidates take turns */
    int owner;                    /* the candidate whose context owns the state the others share:
                                   * the one that runs once the choice is made */
    int turn, in_turn, round, order[HT_OPTIONS];
    int variant[HT_OPTIONS], threads[HT_OPTIONS];
    void *inner[HT_OPTIONS];
    double *own[HT_OPTIONS];      /* a candidate's own state buffer while it steps the shared one */
    unsigned long long random;
    ht_times times[HT_OPTIONS];
};

static int ht_enter(int threads)
{
    int outer = omp_get_max_threads();
    omp_set_num_threads(threads);
    return outer;
}

/* a fresh order of the candidates for the next round (the same on every rank: one seed) */
static void ht_shuffle(ht_ctx *ctx)
{
    for (int k = 0; k < ctx->count; ++k) ctx->order[k] = k;
    for (int k = ctx->count - 1; k > 0; --k) {
        int j = (int)(ht_next_random(&ctx->random) % (unsigned long long)(k + 1));
        int swap = ctx->order[k];
        ctx->order[k] = ctx->order[j];
        ctx->order[j] = swap;
    }
}

/* the candidate of least median step time (rank 0's choice on every rank) keeps the shared
 * state; the others are destroyed, each with its own state buffer */
static void ht_settle(ht_ctx *ctx)
{
    int best = 0, old = ctx->owner;
    double median[HT_OPTIONS];
    for (int k = 0; k < ctx->count; ++k) {
        median[k] = ht_summarise(&ctx->times[k]).median;
        if (median[k] < median[best]) best = k;
    }
{broadcast}    if (best != old)     /* the old owner takes the buffer best never used, and frees it */
        ht_v_swap_state(ctx->variant[old], ctx->inner[old], ctx->own[best]);
    for (int k = 0; k < ctx->count; ++k) {
        if (k == best) continue;
        if (k != old) ht_v_swap_state(ctx->variant[k], ctx->inner[k], ctx->own[k]);
        int outer = ht_enter(ctx->threads[k]);
        ht_v_destroy(ctx->variant[k], ctx->inner[k]);
        omp_set_num_threads(outer);
        ctx->inner[k] = NULL;
    }
    ctx->owner = best;
    ctx->adapting = 0;
}

static void ht_adapting(ht_ctx *ctx, int k, double seconds)
{
    if (ctx->in_turn > 0) ht_record(&ctx->times[k], seconds);
    if (++ctx->in_turn < HT_TURN) return;
    ctx->in_turn = 0;
    if (++ctx->turn < ctx->count) return;
    ctx->turn = 0;
    if (++ctx->round < HT_ROUNDS) ht_shuffle(ctx);
    else ht_settle(ctx);
}
"""

CREATE = """ht_ctx *ht_create_options(long n, int threads, int options)
{
    if (threads < 1 || !ht_valid_n(n)) return NULL;
    int rank, world = ht_world(&rank);
    int ranks = world > 0 ? world : 1;
    const ht_rule *rule = ht_rule_for(n, ranks, threads);
    if (!rule || (ht_variant_mpi[rule->option[0]] && world == 0)) return NULL;
    ht_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    const char *adapt = getenv("HYBRIDTUNE_ADAPT"), *report = getenv("HYBRIDTUNE_REPORT");
    const char *only = getenv("HYBRIDTUNE_VARIANT");
    int adapting = (options & HT_ADAPT) || (adapt && strcmp(adapt, "1") == 0);
    int picks[HT_OPTIONS], wanted = adapting ? rule->count : 1;
    for (int k = 0; k < wanted; ++k) picks[k] = k;
    if (only && *only) {         /* one candidate of the rule, named: it alone runs */
        wanted = 0;
        for (int k = 0; k < rule->count && !wanted; ++k)
            if (strcmp(ht_variant_ids[rule->option[k]], only) == 0) picks[wanted++] = k;
        if (!wanted) {
            free(ctx);
            return NULL;
        }
    }
    ctx->n = n;
    ctx->ranks = ranks;
    ctx->rank = rank;
    ctx->measured = rule->measured;
    ctx->reporting = report && *report;
    ctx->random = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < wanted; ++k) {
        ctx->variant[k] = rule->option[picks[k]];
        ctx->threads[k] = rule->option_threads[picks[k]] < threads ? rule->option_threads[picks[k]]
                                                                    : threads;
        int outer = ht_enter(ctx->threads[k]);
        ctx->inner[k] = ht_v_create(ctx->variant[k], n);
        omp_set_num_threads(outer);
        if (!ctx->inner[k]) break;
        if (k > 0)     /* every candidate steps the one state: none repeats or wastes a step */
            ctx->own[k] = ht_v_swap_state(ctx->variant[k], ctx->inner[k],
                                          ht_v_state(ctx->variant[0], ctx->inner[0]));
        ctx->count = k + 1;
    }
    if (ctx->count < wanted) {
        ht_destroy(ctx);
        return NULL;
    }
    ctx->adapting = ctx->count > 1;
    ht_shuffle(ctx);
    return ctx;
}

ht_ctx *ht_create_threads(long n, int threads) { return ht_create_options(n, threads, 0); }

ht_ctx *ht_create(long n) { return ht_create_options(n, omp_get_max_threads(), 0); }

void ht_destroy(ht_ctx *ctx)
{
    if (!ctx) return;
    for (int k = 0; k < ctx->count; ++k) {
        if (ctx->rank == 0 && ctx->reporting) {
            ht_report_about about = {"{name}", ht_variant_ids[ctx->variant[k]], ht_method, ht_ivp,
                                     ht_hardware_id, ht_variant_sha256[ctx->variant[k]], ctx->n,
                                     ctx->ranks, ctx->threads[k],
                                     !ctx->adapting && k == ctx->owner, ctx->count};
            ht_report(&about, &ctx->times[k]);
        }
        if (!ctx->inner[k]) continue;
        if (k != ctx->owner) ht_v_swap_state(ctx->variant[k], ctx->inner[k], ctx->own[k]);
        int outer = ht_enter(ctx->threads[k]);
        ht_v_destroy(ctx->variant[k], ctx->inner[k]);
        omp_set_num_threads(outer);
    }
    free(ctx);
}

double *ht_state(ht_ctx *ctx) { return ht_v_state(ctx->variant[ctx->owner], ctx->inner[ctx->owner]); }

void ht_initial_values(ht_ctx *ctx)
{
    int outer = ht_enter(ctx->threads[ctx->owner]);
    ht_v_initial_values(ctx->variant[ctx->owner], ctx->inner[ctx->owner]);
    omp_set_num_threads(outer);
}

/* One step by the candidate whose turn it is (the kept one once settled); timed while adapting
 * or reporting. */
void ht_step(ht_ctx *ctx, double t, double h)
{
    int k = ctx->adapting ? ctx->order[ctx->turn] : ctx->owner;
    int timed = ctx->adapting || ctx->reporting;
    int outer = ht_enter(ctx->threads[k]);
    double start = timed ? omp_get_wtime() : 0.0;
    ht_v_step(ctx->variant[k], ctx->inner[k], t, h);
    double seconds = timed ? omp_get_wtime() - start : 0.0;
    omp_set_num_threads(outer);
    if (ctx->adapting) ht_adapting(ctx, k, seconds);
    else if (ctx->reporting) ht_record(&ctx->times[k], seconds);
}
"""

CHOSEN = """const char *ht_variant_id(void) { return "tuned:{name}"; }
const char *ht_chosen_variant(const ht_ctx *ctx) { return ht_variant_ids[ctx->variant[ctx->owner]]; }
int ht_chosen_threads(const ht_ctx *ctx) { return ctx->threads[ctx->owner]; }
int ht_chosen_measured(const ht_ctx *ctx) { return ctx->measured; }
int ht_chosen_ranks(const ht_ctx *ctx) { return ctx->ranks; }
int ht_chosen_candidates(const ht_ctx *ctx) { return ctx->count; }
int ht_chosen_adapting(const ht_ctx *ctx) { return ctx->adapting; }

/* The variants' block partition of components 0..n-1 over the ranks: this rank's [lo, hi). */
void ht_chosen_block(const ht_ctx *ctx, long *lo, long *hi)
{
    long base = ctx->n / ctx->ranks, extra = ctx->n % ctx->ranks;
    *lo = ctx->rank * base + (ctx->rank < extra ? ctx->rank : extra);
    *hi = *lo + base + (ctx->rank < extra ? 1 : 0);
}
"""
BROADCAST = """    if (ctx->ranks > 1) MPI_Bcast(&best, 1, MPI_INT, 0, MPI_COMM_WORLD);
"""
# the calls each variant NAME_vI answers, and what they take beyond its context
CALLS = (("create", "void *", "long n", "n"), ("destroy", "void", "", ""),
         ("state", "double *", "", ""), ("initial_values", "void", "", ""),
         ("step", "void", "double t, double h", "t, h"),
         ("swap_state", "double *", "double *y", "y"))


def dispatcher(table: DispatchTable, name: str, generated: list, ivp) -> str:
    """NAME.c: the rule table and the API NAME_* over the variants NAME_v0, NAME_v1, ... (their
    generated C in table.variants' order); MPI-aware (mpi.h, the rank count of MPI_COMM_WORLD)
    where a rule has more than one rank; with a rule's candidates, adaptive when asked."""
    variants = table.variants
    index = {v: i for i, v in enumerate(variants)}
    mpi = table.mpi
    most = max(len(rule.options) for rule in table.rules)
    picks = "ranks, n and threads" if mpi else "n and threads"
    out = [f"/* {name}.c: the dispatcher of the tuned solver {name}: picks a variant by "
           f"{picks}. */",
           *(["#include <mpi.h>"] if mpi else []), "#include <math.h>", "#include <omp.h>",
           "#include <stdlib.h>", "#include <string.h>", f'#include "{name}.h"',
           native_source("ht_production.h").rstrip("\n"), ""]
    for i in range(len(variants)):
        p = f"{name}_v{i}"
        out += [f"struct {p}_ctx;"] + [
            f"{kind}{'' if kind.endswith('*') else ' '}{p}_{call}("
            + (args if call == "create" else f"struct {p}_ctx *ctx{', ' + args if args else ''}")
            + ");" for call, kind, args, _ in CALLS] + [""]
    out += [f"#define HT_OPTIONS {most}   /* candidates of a rule at most */",
            "typedef struct { int ranks, threads; long n_low, n_high; int measured, count; "
            "int option[HT_OPTIONS], option_threads[HT_OPTIONS]; } ht_rule;"
            "   /* n_high 0: unbounded; option 0 is the choice */",
            "static const ht_rule ht_rules[] = {"]
    for rule in table.rules:
        options = [index[v] for v, _ in rule.options] + [0] * (most - len(rule.options))
        threads = [t for _, t in rule.options] + [0] * (most - len(rule.options))
        out.append(f"    {{{rule.ranks}, {rule.threads}, {rule.n_low}L, {rule.n_high or 0}L, "
                   f"{int(rule.measured)}, {len(rule.options)}, "
                   f"{{{', '.join(map(str, options))}}}, "
                   f"{{{', '.join(map(str, threads))}}}}},")
    out += ["};", f"static const int ht_rule_count = {len(table.rules)};",
            "static const char *const ht_variant_ids[] = {"]
    out += [f'    "{v}",' for v in variants]
    out += ["};", "/* the SHA-256 of each variant's generated C: the code the store's measurements "
            "name */", "static const char *const ht_variant_sha256[] = {"]
    out += [f'    "{code_sha256(g.code)}",' for g in generated]
    out += ["};", "/* 1: an MPI variant, which calls MPI on MPI_COMM_WORLD */",
            "static const int ht_variant_mpi[] = {"
            + ", ".join(str(int(g.mpi)) for g in generated) + "};",
            f'static const char ht_method[] = "{table.method}", ht_ivp[] = "{table.ivp}", '
            f'ht_hardware_id[] = "{table.hardware_id}";', ""]
    for call, kind, args, passed in CALLS:
        params = ("int v, " + args) if call == "create" else \
            f"int v, void *ctx{', ' + args if args else ''}"
        value = "return " if kind != "void" else ""
        out += [f"static {kind}{'' if kind.endswith('*') else ' '}ht_v_{call}({params})", "{",
                "    switch (v) {"]
        out += [f"    case {i}: {value}{name}_v{i}_{call}("
                + (passed if call == "create" else f"ctx{', ' + passed if passed else ''}")
                + f");{'' if value else ' break;'}" for i in range(len(variants))]
        out += ["    }"] + (["    return NULL;"] if value else []) + ["}", ""]
    out += [WORLD_MPI if mpi else WORLD_ONE, ivp_functions(ivp, "ht"), RULE_FOR,
            ADAPTING.replace("{broadcast}", BROADCAST if mpi else ""),
            CREATE.replace("{name}", name), CHOSEN.replace("{name}", name).rstrip("\n")]
    return named_api("\n".join(out) + "\n", name)
