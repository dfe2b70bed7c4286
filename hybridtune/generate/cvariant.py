"""C for a whole variant: its kernels, a step in one OpenMP parallel region, state, initial values.

For an MPI skeleton the step works on the rank's block of components, with its exchanges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybridtune import __version__
from hybridtune.describe.c_arithmetic import Evaluator
from hybridtune.describe.expr import substitute
from hybridtune.describe.ivp import IVP
from hybridtune.describe.looplang import Loop, loops_and_directives
from hybridtune.describe.method import Method
from hybridtune.describe.printing import to_c
from hybridtune.describe.skeleton import Skeleton, kernel_call
from hybridtune.generate import cmpi
from hybridtune.generate.ckernel import (GenerationError, block_loops, ivp_declarations,
                                         ivp_names, kernel_function)
from hybridtune.generate.pool import Variant

# Part of every measurement's validity: raise it when generated code changes meaning without its
# text changing (the text itself is hashed into each measurement).
GENERATOR_VERSION = "4"   # 4: a library linked from one object per kernel (compile_units)
HIDDEN = '__attribute__((visibility("hidden")))'
_KERNEL = re.compile(r"static void (k_\w+)\((.*)\)")


@dataclass(frozen=True)
class GeneratedVariant:
    variant_id: str
    code: str
    buffers: tuple    # (name, rows): rows = s for [s][n] buffers, 1 for [n]
    mpi: bool = False  # an MPI program's library: built with mpicc, run on ranks by ht_mpi_runner
    call_templates: tuple = ()  # the kernel template of each %KERNEL call site of ht_step, in code
    # order: call site k of an MPI variant is HT_COMPUTE(k) (cmpi.injection)
    one_file: bool = False      # built as one file, its kernels inlined (a comparison's twin)


def _literal_table(name: str, values) -> str:
    if isinstance(values[0], (tuple, list)):
        rows = ", ".join("{" + ", ".join(repr(float(x)) for x in row) + "}" for row in values)
        return f"static const double ht_{name}[{len(values)}][{len(values[0])}] = {{{rows}}};"
    return f"static const double ht_{name}[{len(values)}] = {{{', '.join(repr(float(x)) for x in values)}}};"


def generate_variant(variant: Variant, skeleton: Skeleton, templates: dict, method: Method,
                     ivp: IVP, fixed_n: int | None = None, halo: int | None = None
                     ) -> GeneratedVariant:
    """The C source of one variant, specialised on method and IVP (and n when fixed_n is given);
    a neighbour-exchange variant needs its halo width."""
    s, m = method.stages, method.corrector_steps
    choice = variant.kernel_map
    functions = {}
    for name in skeleton.templates:
        functions[name] = kernel_function(templates[name], choice[name], method, ivp,
                                          f"k_{choice[name]}")

    buffers, calls = _buffers_and_calls(skeleton, templates, functions, s)
    if "y" not in buffers or buffers["y"] != 1:
        raise GenerationError(f"skeleton {skeleton.name}: no kernel uses the state vector y[n]")

    n_source = f"#define HT_FIXED_N {fixed_n}L\n" if fixed_n else ""
    mpi = skeleton.is_mpi
    neighbour = "mpi_neighbour_exchange" in skeleton.exchange_kinds()
    mpi_head = cmpi.preamble(neighbour, halo) if mpi else []
    lines = [
        f"/* hybridtune {__version__} generated variant {variant.id}",
        f" * method {method.name} (s = {s}, m = {m}), IVP {ivp.name}"
        f"{f', n = {fixed_n}' if fixed_n else ', n at run time'}",
        f" * skeleton {skeleton.name}: {', '.join(f'{k}={v}' for k, v in variant.kernels)}",
        " * Pragmas: ivdep -> GCC ivdep, unroll N -> GCC unroll N; nounroll_and_jam has no gcc",
        " * meaning and is dropped. */",
        "#include <math.h>", "#include <omp.h>", *mpi_head, '#include "ht_runtime.h"',
        *(cmpi.injection(len(calls)) if mpi else []), n_source,
        _literal_table("A", method.A), _literal_table("b", method.b), _literal_table("c", method.c),
        "",
        "struct ht_ctx {", "    long n;"] + [f"    double *{b};" for b in buffers] + (
        cmpi.CONTEXT_FIELDS if mpi else []) + ["};", ""]
    if mpi:
        lines += cmpi.exchange_functions(neighbour)
    for function in functions.values():
        lines += [function.code, ""]

    lines += _step(skeleton, functions, calls, buffers, m, s, fixed_n)
    lines += _lifecycle(variant, ivp, buffers, fixed_n, s, mpi, neighbour)
    return GeneratedVariant(variant.id, "\n".join(lines) + "\n", tuple(buffers.items()), mpi,
                            tuple(call.template for call in calls))


def compile_units(code: str) -> dict[str, str]:
    """The files a variant's code is built from (file name -> text): each kernel function in a
    file of its own with the lines above the context struct (the includes and the method's
    tables: the same in every variant of a method and IVP that calls it), and the code with the
    kernels' prototypes in their place; they are hidden, not static, there. Code of another
    shape is one file."""
    lines = code.split("\n")
    if "struct ht_ctx {" not in lines or not lines[0].startswith("/*"):
        return {"variant.c": code}
    head = lines[next(i for i, line in enumerate(lines) if line.endswith("*/")) + 1:
                 lines.index("struct ht_ctx {")]
    units, rest, index = {}, [], 0
    while index < len(lines):
        found = _KERNEL.fullmatch(lines[index])
        end = lines.index("}", index) if found and "}" in lines[index:] else -1
        if end < 0:
            rest.append(lines[index])
            index += 1
            continue
        signature = f"{HIDDEN} void {found.group(1)}({found.group(2)})"
        units[found.group(1) + ".c"] = "\n".join(head + [signature] + lines[index + 1:end + 1]
                                                 + [""])
        rest.append(signature + ";")
        index = end + 1
    return {**units, "variant.c": "\n".join(rest)} if units else {"variant.c": code}


def _buffers_and_calls(skeleton: Skeleton, templates: dict, functions: dict, s: int
                       ) -> tuple[dict, list]:
    """The skeleton's buffers (name -> rows: s for a stage array, 1 for a vector) in order of first
    use, and its %KERNEL calls; a buffer of two shapes or bound twice in one call is an error."""
    buffers: dict[str, int] = {}
    calls = []
    for directive, _ in loops_and_directives(skeleton.program):
        if directive.name != "KERNEL":
            continue
        call = kernel_call(directive)
        template = templates[call.template]
        bound = dict(call.bindings)
        used = []
        for array in functions[call.template].params:
            rows = s if len(template.decl(array).dims) == 2 else 1
            buffer = bound.get(array, array)
            if buffers.setdefault(buffer, rows) != rows:
                raise GenerationError(f"buffer {buffer} has two shapes in skeleton {skeleton.name}")
            used.append(buffer)
        if len(set(used)) != len(used):
            raise GenerationError(f"skeleton {skeleton.name}: %KERNEL {call.template} binds two "
                                  "arrays to one buffer (restrict would be violated)")
        calls.append(call)
    return buffers, calls


def _step(skeleton, functions, calls, buffers, m, s, fixed_n) -> list[str]:
    out = ["void ht_step(ht_ctx *ctx, double t, double h)", "{",
           "    const long n = " + ("HT_FIXED_N;" if fixed_n else "ctx->n;"),
           "    #pragma omp parallel default(shared)", "    {"]
    out += cmpi.thread_block() if skeleton.is_mpi else [
        "        long lo, hi;",
        "        ht_block(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);"]
    out += [f"        double *{b} = ctx->{b};" for b in buffers]
    call_iter = iter(enumerate(calls))
    context = {"mpi": skeleton.is_mpi, "buffers": buffers}
    out += _skeleton_items(skeleton.program, functions, call_iter, {"m": m, "s": s}, "        ",
                           context)
    out += [f"        (void){b};" for b in buffers]
    out += ["    }", "}", ""]
    return out


def _skeleton_items(items, functions, calls, values, indent, context) -> list[str]:
    out = []
    for item in items:
        if isinstance(item, Loop):
            lower = int(Evaluator(values)(item.lower))
            upper = int(Evaluator(values)(item.upper))
            body = _skeleton_items(item.body, functions, calls, values, indent + "    ", context)
            if upper > lower:
                out.append(f"{indent}for (int {item.var} = {lower}; {item.var} < {upper}; "
                           f"++{item.var}) {{")
                out += body
                out.append(indent + "}")
            continue
        if item.name == "KERNEL":
            site, call = next(calls)
            bound = dict(call.bindings)
            function = functions[call.template]
            args = ["n", "lo", "hi", "t", "h"] + [bound.get(a, a) for a in function.params]
            compute = f"HT_COMPUTE({site}) " if context["mpi"] else ""
            out.append(f"{indent}{compute}{function.name}({', '.join(args)});")
        elif item.name == "COM":
            if context["mpi"]:
                out += cmpi.communication(item.args[0], item.args[1:], context["buffers"], indent)
            else:
                out.append(f"{indent}#pragma omp barrier")
        elif item.name == "SWAP":
            a, b = item.args
            out.append(f"{indent}{{ double *ht_tmp = {a}; {a} = {b}; {b} = ht_tmp; }}")
    return out


def _lifecycle(variant, ivp: IVP, buffers: dict, fixed_n, s: int, mpi: bool, neighbour: bool
               ) -> list[str]:
    rename = ivp_names(ivp)
    out = ["ht_ctx *ht_create(long n)", "{"]
    if fixed_n:
        out.append("    if (n != HT_FIXED_N) return NULL;")
    out += ["    ht_ctx *ctx = calloc(1, sizeof *ctx);", "    if (!ctx) return NULL;",
            "    ctx->n = n;"]
    if mpi:
        out += cmpi.create(s, neighbour)
    alloc = "HT_ALLOC" if mpi else "ht_alloc"
    for buffer, rows in buffers.items():
        out.append(f"    ctx->{buffer} = {alloc}({rows}L * n);")
        out.append(f"    if (!ctx->{buffer}) {{ ht_destroy(ctx); return NULL; }}")
    out += ["#ifndef HT_INJECT"] if mpi else []   # folded buffers are never touched
    out += ["    #pragma omp parallel", "    {", "        long lo, hi;",
            "        ht_block(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);"]
    for buffer, rows in buffers.items():   # first touch with the partition of the time step
        out.append(f"        for (long r = 0; r < {rows}; ++r)")
        out.append(f"            for (long j = lo; j < hi; ++j) ctx->{buffer}[r * n + j] = 0.0;")
    out += ["    }"] + (["#endif"] if mpi else [])
    out += ["    return ctx;", "}", "",
            "void ht_destroy(ht_ctx *ctx)", "{", "    if (!ctx) return;"]
    out += [f"    free(ctx->{b});" for b in buffers]
    out += cmpi.destroy(neighbour) if mpi else []
    out += ["    free(ctx);", "}", "", "double *ht_state(ht_ctx *ctx) { return ctx->y; }", "",
            f'const char *ht_variant_id(void) {{ return "{variant.id}"; }}', "",
            "void ht_initial_values(ht_ctx *ctx)", "{", "    const long n = ctx->n;",
            "    double *restrict y = ctx->y;", "    #pragma omp parallel", "    {"]
    body = ivp_declarations(ivp) + [
        "long lo, hi;", "ht_block(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);"]
    body += block_loops(ivp, ivp.initial_values,
                        lambda block: [f"y[j] = {to_c(substitute(block.code, rename))};"], "")
    out += ["        " + line for line in body]
    out += ["    }", "}"]
    return out

