"""The tuned solver: the chosen variants, renamed apart, linked behind one dispatcher that picks by n and threads."""

from __future__ import annotations

import json

from hybridtune.compiler.build import FLAGS, native_source
from hybridtune.errors import RequestError
from hybridtune.face.export import check_export_name
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.predict.variants import step_vectors
from hybridtune.report.tuned import DispatchTable, dispatch_table, measured_times, predicted_times
from hybridtune.store import Store

ENTRY_POINTS = ("ht_ctx", "ht_create", "ht_destroy", "ht_state", "ht_initial_values", "ht_step",
                "ht_variant_id")

MAKEFILE = """# Builds the tuned solver {name}: lib{name}.so and lib{name}.a.
CC ?= gcc
CFLAGS ?= {flags}
OBJECTS = {objects}

all: lib{name}.so lib{name}.a

%.o: %.c {name}.h
\t$(CC) $(CFLAGS) -fPIC -c -o $@ $<

lib{name}.so: $(OBJECTS)
\t$(CC) $(CFLAGS) -shared -o $@ $(OBJECTS) -lm

lib{name}.a: $(OBJECTS)
\tar rcs $@ $^

clean:
\trm -f lib{name}.so lib{name}.a $(OBJECTS)

.PHONY: all clean
"""

HEADER = """/* {name}.h: the tuned PIRK solver for {method} on {ivp}, {count} variant(s) behind one dispatcher.
 * Use: ht_ctx *c = ht_create(n); ht_initial_values(c) (or fill ht_state(c)); then
 * ht_step(c, t, h) per step (one OpenMP parallel region each); ht_destroy(c).
 * ht_create(n) picks the variant for n and omp_get_max_threads() threads;
 * ht_create_threads(n, T) for an explicit T. A request for T threads uses the rules of the largest
 * thread count in the table that is <= T (the smallest when T is below all) and runs the rule's
 * variant with the rule's thread count (never more than T): fewer threads where fewer measured faster.
 * Every call on a context runs with that context's thread count; the caller's setting is restored.
 * Link with -fopenmp -lm.
 *
 * Dispatch table (n_low <= n < n_high; {json_name} has it as JSON); hardware {hardware}:
{table} */
#ifndef {guard}
#define {guard}

typedef struct ht_ctx ht_ctx;
ht_ctx *ht_create(long n);                       /* NULL when allocation fails */
ht_ctx *ht_create_threads(long n, int threads);  /* NULL also for threads < 1 */
void ht_destroy(ht_ctx *ctx);
double *ht_state(ht_ctx *ctx);                   /* the state vector y, n doubles */
void ht_initial_values(ht_ctx *ctx);             /* y = the IVP's initial values */
void ht_step(ht_ctx *ctx, double t, double h);   /* one PIRK step */
const char *ht_variant_id(void);                 /* "tuned:{name}" */
const char *ht_chosen_variant(const ht_ctx *ctx);   /* the variant this context runs */
int ht_chosen_threads(const ht_ctx *ctx);        /* the threads it runs with */
int ht_chosen_measured(const ht_ctx *ctx);       /* 1: measured best; 0: predicted, not measured */

#endif
"""


def tuned_export(scenario, method, ivp, db: str, name: str) -> tuple[dict, DispatchTable]:
    """(file name -> text, dispatch table) of the tuned solver from the store's measurements."""
    check_export_name(name)
    with Store.open(db, "r") as store:
        measurements = _records(store.frame("measurements"))
        predictions = _records(store.frame("variant_predictions"))
    skeletons = {s.name: s for s in scenario.skeletons}
    pool = {vid: v for vid, v in pool_for(scenario, method).items()
            if not skeletons[v.skeleton].is_mpi}      # the solver library is one process
    if not pool:
        raise RequestError(f"scenario {scenario.name}: the tuned solver exports one process's "
                           "variants, and its skeletons are all MPI skeletons")
    canonical = {alias: v.id for v in pool.values() for alias in (v.id, *v.same_as)}
    try:
        hardware, measured, notes = measured_times(measurements, method.name, ivp.name, canonical)
    except RequestError as exc:
        raise RequestError(f"--db {db}: {exc}") from None
    predicted = predicted_times(predictions, scenario.name, method.name, ivp.name, canonical)
    used = {v for times in [*measured.values(), *predicted.values()] for v in times}
    vectors = max(step_vectors(skeletons[pool[v].skeleton], scenario.template_map, method.stages)
                  for v in used)
    table = dispatch_table(measured, predicted, scenario.machine, vectors, method.name, ivp.name,
                           hardware, notes)
    generated = [generate_variant(pool[v], skeletons[pool[v].skeleton], scenario.template_map,
                                  method, ivp) for v in table.variants]
    return tuned_files(table, generated, name), table


def tuned_files(table: DispatchTable, generated: list, name: str) -> dict[str, str]:
    """file name -> text: header, dispatcher, one source per variant, Makefile, table as JSON."""
    files = {}
    for index, variant in enumerate(generated):
        files[f"{name}_v{index}.c"] = _variant_source(variant, f"{name}_v{index}", name)
    files[f"{name}.c"] = _dispatcher(table, name)
    files[f"{name}.h"] = HEADER.format(
        name=name, method=table.method, ivp=table.ivp, count=len(generated),
        hardware=table.hardware_id, json_name=f"{name}.json", guard=f"{name.upper()}_H",
        table="\n".join(f" *   {line}" for line in table_lines(table)))
    objects = " ".join(f"{file[:-2]}.o" for file in files if file.endswith(".c"))
    files["Makefile"] = MAKEFILE.format(name=name, flags=" ".join(FLAGS), objects=objects)
    files[f"{name}.json"] = json.dumps({"name": name, **table.as_json()}, indent=1) + "\n"
    return files


def table_lines(table: DispatchTable) -> list[str]:
    """One line per rule, the predicted ones marked; then the notes."""
    lines = []
    for rule in table.rules:
        high = "inf" if rule.n_high is None else str(rule.n_high)
        if rule.measured:
            times = ", ".join(f"{s:.3e} s/step at n={n}" for n, s in rule.median_s)
            how = f"measured ({times})" if times else "measured"
        else:
            how = "PREDICTED, NOT MEASURED"
        lines.append(f"{rule.threads}+ threads asked, n {rule.n_low}..{high} ({rule.level}): "
                     f"{rule.variant} on {rule.run_threads} thread(s); {how}; {rule.basis}")
    return lines + [f"note: {note}" for note in table.notes]


def _variant_source(variant, prefix: str, name: str) -> str:
    """The variant's C with its entry points renamed by the preprocessor, runtime inlined."""
    renames = "".join(f"#define {symbol} {prefix}{symbol[2:]}\n" for symbol in ENTRY_POINTS)
    head = (f"/* {prefix}.c: variant {variant.variant_id} of the tuned solver {name}; its entry "
            f"points are renamed {prefix}_* for the dispatcher in {name}.c. */\n")
    return head + renames + variant.code.replace('#include "ht_runtime.h"',
                                                 native_source("ht_runtime.h").rstrip("\n"))


def _dispatcher(table: DispatchTable, name: str) -> str:
    variants = table.variants
    index = {v: i for i, v in enumerate(variants)}
    out = [f"/* {name}.c: the dispatcher of the tuned solver {name}: picks a variant by n and "
           "threads. */", "#include <omp.h>", "#include <stdlib.h>", f'#include "{name}.h"', ""]
    for i in range(len(variants)):
        p = f"{name}_v{i}"
        out += [f"struct {p}_ctx;", f"struct {p}_ctx *{p}_create(long n);",
                f"void {p}_destroy(struct {p}_ctx *ctx);",
                f"double *{p}_state(struct {p}_ctx *ctx);",
                f"void {p}_initial_values(struct {p}_ctx *ctx);",
                f"void {p}_step(struct {p}_ctx *ctx, double t, double h);", ""]
    out += ["typedef struct { int threads; long n_low, n_high; int variant, run_threads, measured; "
            "} ht_rule;   /* n_high 0: unbounded */", "static const ht_rule ht_rules[] = {"]
    for rule in table.rules:
        out.append(f"    {{{rule.threads}, {rule.n_low}L, {rule.n_high or 0}L, "
                   f"{index[rule.variant]}, {rule.run_threads}, {int(rule.measured)}}},")
    out += ["};", f"static const int ht_rule_count = {len(table.rules)};",
            "static const char *const ht_variant_ids[] = {"]
    out += [f'    "{v}",' for v in variants]
    out += ["};", "",
            "struct ht_ctx { void *inner; int variant, threads, measured; };", "",
            "static int ht_enter(const ht_ctx *ctx)", "{",
            "    int outer = omp_get_max_threads();",
            "    omp_set_num_threads(ctx->threads);", "    return outer;", "}", "",
            "static const ht_rule *ht_rule_for(long n, int threads)", "{",
            "    int key = ht_rules[0].threads;",
            "    for (int r = 0; r < ht_rule_count; ++r)",
            "        if (ht_rules[r].threads <= threads && ht_rules[r].threads > key) "
            "key = ht_rules[r].threads;",
            "    for (int r = 0; r < ht_rule_count; ++r)",
            "        if (ht_rules[r].threads == key && n >= ht_rules[r].n_low",
            "            && (ht_rules[r].n_high == 0 || n < ht_rules[r].n_high)) "
            "return &ht_rules[r];",
            "    return NULL;", "}", "",
            "ht_ctx *ht_create_threads(long n, int threads)", "{",
            "    const ht_rule *rule = ht_rule_for(n, threads);",
            "    if (threads < 1 || !rule) return NULL;",
            "    ht_ctx *ctx = calloc(1, sizeof *ctx);", "    if (!ctx) return NULL;",
            "    ctx->variant = rule->variant;",
            "    ctx->threads = rule->run_threads < threads ? rule->run_threads : threads;",
            "    ctx->measured = rule->measured;", "    int outer = ht_enter(ctx);",
            "    switch (ctx->variant) {"]
    out += [f"    case {i}: ctx->inner = {name}_v{i}_create(n); break;"
            for i in range(len(variants))]
    out += ["    }", "    omp_set_num_threads(outer);",
            "    if (!ctx->inner) { free(ctx); return NULL; }", "    return ctx;", "}", "",
            "ht_ctx *ht_create(long n) { return ht_create_threads(n, omp_get_max_threads()); }",
            ""]
    out += _forward(name, len(variants), "void ht_destroy(ht_ctx *ctx)", "destroy",
                    "    if (!ctx) return;", "    free(ctx);")
    out += _forward(name, len(variants), "void ht_initial_values(ht_ctx *ctx)", "initial_values")
    out += _forward(name, len(variants), "void ht_step(ht_ctx *ctx, double t, double h)", "step",
                    args="ctx->inner, t, h")
    out += ["double *ht_state(ht_ctx *ctx)", "{", "    switch (ctx->variant) {"]
    out += [f"    case {i}: return {name}_v{i}_state(ctx->inner);" for i in range(len(variants))]
    out += ["    }", "    return NULL;", "}", "",
            f'const char *ht_variant_id(void) {{ return "tuned:{name}"; }}',
            "const char *ht_chosen_variant(const ht_ctx *ctx) "
            "{ return ht_variant_ids[ctx->variant]; }",
            "int ht_chosen_threads(const ht_ctx *ctx) { return ctx->threads; }",
            "int ht_chosen_measured(const ht_ctx *ctx) { return ctx->measured; }"]
    return "\n".join(out) + "\n"


def _forward(name: str, count: int, signature: str, call: str, first: str = "",
             last: str = "", args: str = "ctx->inner") -> list[str]:
    """A dispatcher function that calls the context's variant with the context's threads."""
    out = [signature, "{"] + ([first] if first else []) + ["    int outer = ht_enter(ctx);",
                                                          "    switch (ctx->variant) {"]
    out += [f"    case {i}: {name}_v{i}_{call}({args}); break;" for i in range(count)]
    out += ["    }", "    omp_set_num_threads(outer);"] + ([last] if last else []) + ["}", ""]
    return out


def _records(frame) -> list[dict]:
    return [] if frame.empty else frame.to_dict("records")
