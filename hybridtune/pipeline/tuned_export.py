"""The tuned solver: the chosen variants, renamed apart, behind one dispatcher on ranks, n, threads."""

from __future__ import annotations

import json

from hybridtune.compiler.build import FLAGS
from hybridtune.errors import RequestError
from hybridtune.pipeline.variant_export import (ENTRY_POINTS, check_export_name, makefile_head,
                                                renamed_source)
from hybridtune.generate.civp_api import valid_sizes
from hybridtune.pipeline.dispatcher_source import dispatcher, named_api
from hybridtune.generate.cvariant import generate_variant
from hybridtune.generate.pool import pool_for
from hybridtune.predict.variants import step_vectors
from hybridtune.pipeline.dispatch_table import (DispatchTable, dispatch_table, layout_times, measured_times,
                                     predicted_times)
from hybridtune.store import Store

# what the dispatcher asks of a variant beyond its API, so that an adaptive library's candidates
# step one state (appended to the variant's generated C, whose hash the store keys stays as it is)
STATE_SHARING = ("ht_swap_state",)
SHARED_STATE = """
/* The dispatcher's: step the state y from now on; the buffer held until now is returned (kept,
 * not freed: freeing would move where later buffers are placed, and with it their speed). */
double *ht_swap_state(ht_ctx *ctx, double *y) { double *held = ctx->y; ctx->y = y; return held; }
"""
HALO_PROBES = (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6)   # sizes a neighbour exchange's halo is seen at

MAKE_RULES = """CFLAGS ?= {flags}
OBJECTS = {objects}

all: lib{name}.so lib{name}.a

%.o: %.c {name}.h
\t$(CC) $(CFLAGS) -DHT_CFLAGS='"$(CFLAGS)"' -fPIC -c -o $@ $<

lib{name}.so: $(OBJECTS)
\t$(CC) $(CFLAGS) -shared -o $@ $(OBJECTS) -lm

lib{name}.a: $(OBJECTS)
\tar rcs $@ $^

clean:
\trm -f lib{name}.so lib{name}.a $(OBJECTS)

.PHONY: all clean
"""

USE_ONE = """ * ht_create(n) picks the variant for n and omp_get_max_threads() threads;"""
USE_MPI = """ * ht_create(n) picks the variant for n, the ranks of MPI_COMM_WORLD and omp_get_max_threads()
 * threads per rank;"""
LINK_ONE = " * Link with -fopenmp -lm."
LINK_MPI = """ * Link with -fopenmp -lm by mpicc (the library calls MPI). MPI ranks: where MPI is initialised (and
 * not finalized) a context runs on the MPI_Comm_size(MPI_COMM_WORLD) ranks, else on one; it uses
 * the rules of exactly that rank count (a count the table lacks: NULL). On P > 1 ranks it runs an
 * MPI variant: every rank of MPI_COMM_WORLD makes the same calls (ht_create, ht_initial_values,
 * ht_step, ht_destroy) together; MPI initialised with MPI_THREAD_FUNNELED or more (the main
 * thread of each rank calls MPI inside the parallel region). The n components are split over the
 * ranks in blocks (ht_chosen_block): ht_state(c) is n doubles on every rank, but after ht_step
 * only the rank's block [lo, hi) holds the current state; the other components hold values
 * exchanged earlier (not the state). Gather the blocks (MPI_Allgatherv, MPI_Gatherv) for the whole
 * state. ht_initial_values sets all n on every rank; a state of your own must fill at least each
 * rank's block."""
MPI_NULL = (", where n is too small for the ranks (fewer components than ranks, or a block narrower\n"
            " * than a neighbour exchange's halo), for a one-rank rule that runs an MPI variant (a "
            "table of\n * MPI variants alone) where MPI is not initialised")

HEADER = """/* {name}.h: the tuned PIRK solver for {method} on {ivp}, {count} variant(s) behind one dispatcher.
 * Every public name carries the library's name, so that tuned libraries of other IVPs link beside it.
 * Use: double h = ht_stable_step(n); ht_ctx *c = ht_create(n); ht_initial_values(c) (or fill
 * ht_state(c)); then ht_step(c, t, h) per step (one OpenMP parallel region each); ht_destroy(c).
{use}
 * ht_create_threads(n, T) for an explicit T. A request for T threads uses the rules of the largest
 * thread count in the table that is <= T (the smallest when T is below all) and runs the rule's
 * variant with the rule's thread count (never more than T): fewer threads where fewer measured faster.
 * Every call on a context runs with that context's thread count; the caller's setting is restored.
 * The tuning pinned its threads: OMP_PLACES=cores OMP_PROC_BIND=close{binding}.
 * Adaptive (ht_create_options(n, T, HT_ADAPT), or HYBRIDTUNE_ADAPT=1 in the environment for every
 * create): where the rule for n keeps candidates ({candidates}), the first steps of the run go to
 * them in turn, HT_TURN steps a turn, in HT_ROUNDS rounds of a fresh random order, all on the one
 * state (no step is wasted or repeated); then the candidate of least median step time runs the
 * rest and the others are freed. Reporting (HYBRIDTUNE_REPORT=FILE): every step is timed and
 * ht_destroy appends one line per variant timed to FILE (rank 0; see docs/tuned-solver.md in
 * hybridtune); a file that cannot be written is named once on stderr and the run goes on.
 * HYBRIDTUNE_VARIANT=ID: a context runs that candidate of its rule alone (NULL where it is none).
{link}
 *
 * Dispatch table (n_low <= n < n_high; {json_name} has it as JSON); hardware {hardware}:
{table} */
#ifndef {guard}
#define {guard}

typedef struct ht_ctx ht_ctx;
/* NULL where {ivp} does not take n (ht_valid_n), where the rules have no variant for this
 * process's rank count{mpi_null}, where HYBRIDTUNE_VARIANT names no candidate of the rule, or
 * where allocation fails */
ht_ctx *ht_create(long n);
ht_ctx *ht_create_threads(long n, int threads);  /* as ht_create; NULL also for threads < 1 */
#define HT_ADAPT 1                               /* an option: time the rule's candidates first */
ht_ctx *ht_create_options(long n, int threads, int options);   /* as ht_create_threads */
void ht_destroy(ht_ctx *ctx);                    /* NULL is allowed */
double *ht_state(ht_ctx *ctx);                   /* the state vector y, n doubles */
void ht_initial_values(ht_ctx *ctx);             /* y = the IVP's initial values */
void ht_step(ht_ctx *ctx, double t, double h);   /* one PIRK step from t to t + h */
int ht_valid_n(long n);                          /* 1 where {ivp} takes n: {sizes} */
double ht_stable_step(long n);                   /* {ivp}'s stable step h at n (0: n not valid{no_step}) */
const char *ht_variant_id(void);                 /* "tuned:{name}" */
const char *ht_chosen_variant(const ht_ctx *ctx);   /* the variant this context runs */
int ht_chosen_threads(const ht_ctx *ctx);        /* the threads it runs with (per rank) */
int ht_chosen_measured(const ht_ctx *ctx);       /* 1: measured best; 0: predicted, not measured */
int ht_chosen_ranks(const ht_ctx *ctx);          /* the MPI ranks it runs on (1 without MPI) */
int ht_chosen_candidates(const ht_ctx *ctx);     /* the candidates it times or timed (1: none) */
int ht_chosen_adapting(const ht_ctx *ctx);       /* 1 while it still times its candidates */
/* the components [lo, hi) whose current state this rank's ht_state holds ([0, n) on one rank) */
void ht_chosen_block(const ht_ctx *ctx, long *lo, long *hi);

#endif
"""
STATE_ONE = "the whole state: n doubles"
STATE_MPI = ("n doubles on every rank, of which after ht_step only the rank's block [lo, hi) "
             "(ht_chosen_block) is the current state, the rest values exchanged earlier: gather "
             "the blocks for the whole state")


def tuned_export(scenario, method, ivp, db: str, name: str,
                 candidates: int = 1) -> tuple[dict, DispatchTable]:
    """(file name -> text, dispatch table) of the tuned solver from the store's measurements: one
    process's variants on one rank, the MPI variants on the rank counts they were measured (or
    predicted) on; each measured range with up to `candidates` variants for the adaptive library."""
    check_export_name(name)
    with Store.open(db, "r") as store:
        measurements = _records(store.frame("measurements"))
        predictions = _records(store.frame("variant_predictions"))
    skeletons = {s.name: s for s in scenario.skeletons}
    pool = pool_for(scenario, method)
    canonical = {alias: v.id for v in pool.values() for alias in (v.id, *v.same_as)}
    try:
        hardware, measured, notes = measured_times(measurements, method.name, ivp.name, canonical)
    except RequestError as exc:
        raise RequestError(f"--db {db}: {exc}") from None
    predicted = predicted_times(predictions, scenario.name, method.name, ivp.name, canonical,
                                scenario.machine.sha256)
    mpi = frozenset(v for v in pool if skeletons[pool[v].skeleton].is_mpi)
    measured, predicted, left_out = layout_times(measured, predicted, mpi)
    if not measured:
        raise RequestError(_nothing_runs(scenario.name, db, method, ivp))
    neighbour = {v for times in [*measured.values(), *predicted.values()] for v in times
                 if "mpi_neighbour_exchange" in skeletons[pool[v].skeleton].exchange_kinds()}
    halo = _halo(ivp, {n for n, _, _ in [*measured, *predicted]}) if neighbour else None
    if neighbour and halo is None:
        measured, predicted = (_without(times, neighbour) for times in (measured, predicted))
        left_out.append(f"{ivp.name}'s halo grows with n: the neighbour-exchange variants "
                        "(a halo fixed when built) left out, the allgather forms run")
        if not measured:
            raise RequestError(_nothing_runs(scenario.name, db, method, ivp))
    used = {v for times in [*measured.values(), *predicted.values()] for v in times}
    vectors = max(step_vectors(skeletons[pool[v].skeleton], scenario.template_map, method.stages)
                  for v in used)
    table = dispatch_table(measured, predicted, scenario.machine, vectors, method.name, ivp.name,
                           hardware, [*notes, *left_out], candidates)
    generated = [generate_variant(pool[v], skeletons[pool[v].skeleton], scenario.template_map,
                                  method, ivp, halo=halo if v in neighbour else None)
                 for v in table.variants]
    return tuned_files(table, generated, name, ivp), table


def tuned_files(table: DispatchTable, generated: list, name: str, ivp) -> dict[str, str]:
    """file name -> text: header, dispatcher, one source per variant, Makefile, table as JSON; a
    table with rules for more than one rank makes an MPI library (mpi.h, mpicc)."""
    mpi = table.mpi
    files = {}
    for index, variant in enumerate(generated):
        prefix = f"{name}_v{index}"
        files[f"{prefix}.c"] = renamed_source(
            variant.code, {symbol: f"{prefix}{symbol[2:]}" for symbol in (*ENTRY_POINTS,
                                                                           *STATE_SHARING)},
            f"/* {prefix}.c: variant {variant.variant_id} of the tuned solver {name}; its entry "
            f"points are renamed {prefix}_* for the dispatcher in {name}.c. */\n") + SHARED_STATE
    files[f"{name}.c"] = dispatcher(table, name, generated, ivp)
    files[f"{name}.h"] = named_api(HEADER.format(
        name=name, method=table.method, ivp=table.ivp, count=len(generated),
        use=USE_MPI if mpi else USE_ONE, link=LINK_MPI if mpi else LINK_ONE,
        binding=", mpiexec -bind-to core:T on T threads per rank" if mpi else "",
        mpi_null=MPI_NULL if mpi else "", sizes=valid_sizes(ivp),
        candidates=f"up to {max(len(r.options) for r in table.rules)}, --candidates"
        if any(len(r.options) > 1 for r in table.rules) else "none here: export --candidates K",
        no_step="" if ivp.stable_step is not None else "; the IVP names none",
        hardware=table.hardware_id, json_name=f"{name}.json", guard=f"{name.upper()}_H",
        table="\n".join(f" *   {line}" for line in table_lines(table))), name)
    objects = " ".join(f"{file[:-2]}.o" for file in files if file.endswith(".c"))
    files["Makefile"] = makefile_head(
        name, *(("mpicc", " by the MPI compiler wrapper: its rules for more than one rank run MPI "
                 "variants") if mpi else ("gcc", ""))) + MAKE_RULES.format(
        name=name, flags=" ".join(FLAGS), objects=objects)
    state = {"1": STATE_ONE, **({"more than 1": STATE_MPI} if mpi else {})}
    files[f"{name}.json"] = json.dumps({"name": name, **table.as_json(), "mpi": mpi,
                                        "valid_n": valid_sizes(ivp),
                                        "ht_state_by_ranks": state}, indent=1) + "\n"
    return files


def table_lines(table: DispatchTable) -> list[str]:
    """One line per rule, the predicted ones marked; then the notes. Rank counts are named where
    a rule has more than one rank."""
    mpi = table.mpi
    lines = []
    for rule in table.rules:
        high = "inf" if rule.n_high is None else str(rule.n_high)
        if rule.measured:
            times = ", ".join(f"{s:.4e} s/step at n={n}" for n, s in rule.median_s)
            how = f"measured ({times})" if times else "measured"
        else:
            how = "PREDICTED, NOT MEASURED"
        asked = f"{rule.ranks} rank(s) x {rule.threads}+ threads" if mpi else \
            f"{rule.threads}+ threads"
        runs = rule.layout if mpi else f"{rule.run_threads} thread(s)"
        lines.append(f"{asked} asked, n {rule.n_low}..{high} ({rule.level}): "
                     f"{rule.variant} on {runs}; {how}; {rule.basis}")
    return lines + [f"note: {note}" for note in table.notes]


def _halo(ivp, sizes: set) -> int | None:
    """The halo a neighbour exchange is built with (the library takes n at run time): the IVP's
    largest at the table's sizes, where it is one width at those of them and of HALO_PROBES from
    100 up; None where it grows with n."""
    halos = {n: ivp.halo(n) for n in sorted(set(sizes) | set(HALO_PROBES))}
    if len({h for n, h in halos.items() if n >= 100}) > 1:
        return None
    return max(halos.values())


def _without(times: dict, variants: set) -> dict:
    out = {key: {v: s for v, s in options.items() if v not in variants}
           for key, options in times.items()}
    return {key: options for key, options in out.items() if options}


def _nothing_runs(scenario: str, db: str, method, ivp) -> str:
    return (f"--db {db}: no ok measurement of {method.name} on {ivp.name} that the tuned solver "
            f"can run: it runs scenario {scenario}'s one-process variants on one rank and its MPI "
            "variants on the rank counts they were measured on beyond one (measure them with "
            "--ranks P, P > 1)")


def _records(frame) -> list[dict]:
    return [] if frame.empty else frame.to_dict("records")
