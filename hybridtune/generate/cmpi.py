"""C for a variant's MPI side: each rank's block, the exchanges of a buffer's blocks, their set-up."""

from __future__ import annotations

from hybridtune.generate.ckernel import GenerationError

CONTEXT_FIELDS = ["    int rank, ranks;      /* this rank's block of components is [lo, hi) */",
                  "    long lo, hi;", "    int *counts, *displs; /* every rank's block */",
                  "    MPI_Datatype halo[2];  /* the halo of a [n] and of an [s][n] buffer */"]

ALLGATHER = """/* Every rank's block of buffer (rows x n) to every rank, in place. */
static void ht_allgather(ht_ctx *ctx, double *buffer, int rows)
{
    if (ctx->ranks == 1) return;
    for (int r = 0; r < rows; ++r)
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer + (long)r * ctx->n,
                       ctx->counts, ctx->displs, MPI_DOUBLE, MPI_COMM_WORLD);
}
"""

NEIGHBOUR = """/* The HT_HALO components on each side of this rank's block (cyclically, every row) from the
 * neighbouring ranks, which own them: HT_HALO is at most the smallest block. */
static void ht_neighbour_exchange(ht_ctx *ctx, double *buffer, int rows)
{
    if (ctx->ranks == 1 || HT_HALO == 0) return;
    const long n = ctx->n;
    const int left = (ctx->rank + ctx->ranks - 1) % ctx->ranks;
    const int right = (ctx->rank + 1) % ctx->ranks;
    MPI_Datatype type = ctx->halo[rows == 1 ? 0 : 1];
    MPI_Request requests[4];
    MPI_Irecv(buffer + (ctx->lo - HT_HALO + n) % n, 1, type, left, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(buffer + ctx->hi % n, 1, type, right, 1, MPI_COMM_WORLD, &requests[1]);
    MPI_Isend(buffer + ctx->lo, 1, type, left, 1, MPI_COMM_WORLD, &requests[2]);
    MPI_Isend(buffer + ctx->hi - HT_HALO, 1, type, right, 0, MPI_COMM_WORLD, &requests[3]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
}
"""


def preamble(neighbour: bool, halo: int | None) -> list[str]:
    """Includes, the halo width and the exchange functions a variant of this kind uses."""
    lines = ["#include <mpi.h>"]
    if neighbour:
        if halo is None or halo < 0:
            raise GenerationError("a neighbour-exchange variant needs the halo width (the IVP's "
                                  "cyclic access distance at this n)")
        lines.append(f"#define HT_HALO {int(halo)}L")
    return lines


def injection(sites: int) -> list[str]:
    """HT_COMPUTE(k), written before call site k of ht_step, and HT_ALLOC of the buffers: natively
    nothing and ht_alloc. Built for SimGrid's SMPI with -DHT_INJECT -DHT_COMPUTE_S=s0,s1,...
    (smpicc), call site k does not run and ht_compute_s[k] seconds of computation are simulated in
    its place, and the buffers fold onto memory shared by all simulated ranks (never first-touched:
    their values are garbage, so such a build is timed, never verified)."""
    return ["#ifdef HT_INJECT", "#include <smpi/smpi.h>",
            "static const double ht_compute_s[] = { HT_COMPUTE_S };",
            f"_Static_assert(sizeof ht_compute_s / sizeof ht_compute_s[0] == {sites},",
            f'               "HT_COMPUTE_S needs {sites} numbers: the seconds of each call site");',
            "#define HT_COMPUTE(k) SMPI_SAMPLE_DELAY(ht_compute_s[k])",
            "#define HT_ALLOC(count) \\",
            "    ((double *)SMPI_SHARED_MALLOC((size_t)(count) * sizeof(double)))",
            "#else", "#define HT_COMPUTE(k)", "#define HT_ALLOC(count) ht_alloc(count)", "#endif"]


def exchange_functions(neighbour: bool) -> list[str]:
    return [ALLGATHER, NEIGHBOUR] if neighbour else [ALLGATHER]


def thread_block() -> list[str]:
    """The calling thread's share of this rank's block."""
    return ["        long lo, hi;",
            "        ht_block(ctx->hi - ctx->lo, omp_get_thread_num(), omp_get_num_threads(), "
            "&lo, &hi);",
            "        lo += ctx->lo;", "        hi += ctx->lo;"]


def communication(op: str, args: tuple, buffers: dict, indent: str) -> list[str]:
    """One %COM of an MPI skeleton: the rank's threads meet, its main thread communicates (MPI is
    initialised with MPI_THREAD_FUNNELED), the threads meet again."""
    if op == "omp_barrier":
        return [f"{indent}#pragma omp barrier"]
    if op == "mpi_barrier":
        call = "MPI_Barrier(MPI_COMM_WORLD);"
    else:
        buffer = args[0]
        if buffer not in buffers:
            raise GenerationError(f"%COM {op} {buffer}: no kernel of the skeleton uses {buffer}")
        function = "ht_allgather" if op == "mpi_allgather" else "ht_neighbour_exchange"
        call = f"{function}(ctx, {buffer}, {buffers[buffer]});"
    return [f"{indent}#pragma omp barrier", f"{indent}#pragma omp master",
            f"{indent}{call}", f"{indent}#pragma omp barrier"]


def create(s: int, neighbour: bool) -> list[str]:
    """ht_create's MPI part: the rank's block, every block for the allgather, the halo types."""
    out = ["    ctx->halo[0] = ctx->halo[1] = MPI_DATATYPE_NULL;",
           "    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);",
           "    MPI_Comm_size(MPI_COMM_WORLD, &ctx->ranks);",
           "    if (n < ctx->ranks) { ht_destroy(ctx); return NULL; }",
           "    ht_block(n, ctx->rank, ctx->ranks, &ctx->lo, &ctx->hi);",
           "    ctx->counts = malloc(ctx->ranks * sizeof(int));",
           "    ctx->displs = malloc(ctx->ranks * sizeof(int));",
           "    if (!ctx->counts || !ctx->displs) { ht_destroy(ctx); return NULL; }",
           "    for (int r = 0; r < ctx->ranks; ++r) {",
           "        long lo, hi;",
           "        ht_block(n, r, ctx->ranks, &lo, &hi);",
           "        ctx->counts[r] = (int)(hi - lo);",
           "        ctx->displs[r] = (int)lo;",
           "    }"]
    if neighbour:
        out += ["    if (HT_HALO > n / ctx->ranks) { ht_destroy(ctx); return NULL; }",
                "    MPI_Type_vector(1, (int)HT_HALO, (int)n, MPI_DOUBLE, &ctx->halo[0]);",
                f"    MPI_Type_vector({s}, (int)HT_HALO, (int)n, MPI_DOUBLE, &ctx->halo[1]);",
                "    MPI_Type_commit(&ctx->halo[0]);", "    MPI_Type_commit(&ctx->halo[1]);"]
    return out


def destroy(neighbour: bool) -> list[str]:
    out = ["    free(ctx->counts);", "    free(ctx->displs);"]
    if neighbour:
        out += ["    for (int k = 0; k < 2; ++k)",
                "        if (ctx->halo[k] != MPI_DATATYPE_NULL) MPI_Type_free(&ctx->halo[k]);"]
    return out
