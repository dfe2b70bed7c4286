/* Runs one MPI variant library on every rank of an MPI job, driven line by line over rank 0's stdin
 * with the commands of ht_runner:
 *   check T0 H STEPS   -> rank 0 writes the state after STEPS steps, every rank's block gathered
 *                         (binary, n doubles)
 *   warmup T0 H STEPS  -> runs STEPS steps, untimed
 *   rep T0 H STEPS     -> resets the state, the ranks meet, each times STEPS steps; rank 0 prints the
 *                         slowest rank's seconds per step
 *   time T0 H STEPS    -> as rep, from the state as it is (no reset: a simulated run of a large n
 *                         computes no initial values, and an injected one none at all)
 *   finite             -> rank 0 prints 1 if every rank's block is finite, else 0
 *   quit
 * Usage: mpiexec -n P ht_mpi_runner LIBRARY N. Rank 0 reads each line and broadcasts it, so every
 * rank runs the same command; the other ranks sleep while they wait for it. MPI is initialised with
 * MPI_THREAD_FUNNELED: within a variant's OpenMP region only the main thread calls MPI. A rank of
 * one OpenMP thread also runs where only MPI_THREAD_SINGLE is provided (SimGrid's SMPI). */
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ht_runtime.h"

#define LINE 256

typedef ht_ctx *(*create_fn)(long);
typedef double *(*state_fn)(ht_ctx *);
typedef void (*init_fn)(ht_ctx *);
typedef void (*step_fn)(ht_ctx *, double, double);
typedef void (*destroy_fn)(ht_ctx *);

static void *symbol(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "ht_mpi_runner: symbol %s missing: %s\n", name, dlerror());
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

/* The next command line from rank 0 on every rank. Ranks waiting for it sleep between tests
 * (mpich's blocking calls spin), so an idle runner takes no core from another's timing. A single
 * rank broadcasts nothing (SimGrid 3.32's MPI_Ibcast on one rank never completes). */
static void next_command(char *line, int rank, int ranks) {
    memset(line, 0, LINE);
    if (rank == 0 && !fgets(line, LINE, stdin)) strcpy(line, "quit\n");
    if (ranks == 1) return;
    MPI_Request request;
    MPI_Ibcast(line, LINE, MPI_CHAR, 0, MPI_COMM_WORLD, &request);
    int done = 0;
    long pause_ns = 1000;
    for (;;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done) break;
        struct timespec pause = {0, pause_ns};
        nanosleep(&pause, NULL);
        if (pause_ns < 1000000) pause_ns *= 2;
    }
}

/* A rank that cannot go on says why on stderr and, where HT_REASON_FILE names a path, in the file
 * PATH.RANK, then aborts the job. The file is what the measuring process reads: MPI_Abort races the
 * launcher's forwarding of stderr (mpiexec or srun may end the ranks and exit before the line
 * written just before it is passed on), a closed file does not. */
static void fail(int rank, int code, const char *message, long n) {
    fprintf(stderr, "ht_mpi_runner (rank %d): %s (n = %ld)\n", rank, message, n);
    const char *reason = getenv("HT_REASON_FILE");
    if (reason && *reason) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", reason, rank);
        FILE *file = fopen(path, "w");
        if (file) {
            fprintf(file, "ht_mpi_runner (rank %d): %s (n = %ld)\n", rank, message, n);
            fclose(file);
        }
    }
    MPI_Abort(MPI_COMM_WORLD, code);
}

int main(int argc, char **argv) {
    int provided, rank, ranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc != 3) {
        if (rank == 0) fprintf(stderr, "usage: mpiexec -n P ht_mpi_runner LIBRARY N\n");
        MPI_Finalize();
        return 2;
    }
    if (provided < MPI_THREAD_FUNNELED && omp_get_max_threads() > 1)
        fail(rank, 3, "MPI_THREAD_FUNNELED is not provided (needed by more than one OpenMP thread "
             "per rank)", 0);
    long n = atol(argv[2]);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) fail(rank, 3, dlerror(), n);
    create_fn create = (create_fn)symbol(lib, "ht_create");
    state_fn state = (state_fn)symbol(lib, "ht_state");
    init_fn initial = (init_fn)symbol(lib, "ht_initial_values");
    step_fn step = (step_fn)symbol(lib, "ht_step");
    destroy_fn destroy = (destroy_fn)symbol(lib, "ht_destroy");
    ht_ctx *ctx = create(n);
    if (!ctx) fail(rank, 4, "the variant cannot run here: allocation failed, fewer components than "
                   "ranks, or a halo wider than a rank's block", n);
    double *y = state(ctx);
    long lo, hi;
    ht_block(n, rank, ranks, &lo, &hi);
    int *counts = malloc(ranks * sizeof(int)), *displs = malloc(ranks * sizeof(int));
    for (int r = 0; r < ranks; ++r) {
        long a, b;
        ht_block(n, r, ranks, &a, &b);
        counts[r] = (int)(b - a);
        displs[r] = (int)a;
    }
    char line[LINE], cmd[32];
    for (;;) {
        next_command(line, rank, ranks);
        double t0 = 0.0, h = 0.0;
        long steps = 0;
        if (sscanf(line, "%31s %lf %lf %ld", cmd, &t0, &h, &steps) < 1) continue;
        if (!strcmp(cmd, "quit")) break;
        if (!strcmp(cmd, "finite")) {
            int ok = 1, all = 0;
            for (long j = lo; j < hi; ++j) if (!isfinite(y[j])) { ok = 0; break; }
            MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
            if (rank == 0) printf("%d\n", all);
        } else if (!strcmp(cmd, "check") || !strcmp(cmd, "warmup") || !strcmp(cmd, "rep")
                   || !strcmp(cmd, "time")) {
            if (!strcmp(cmd, "check") || !strcmp(cmd, "rep")) initial(ctx);
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            for (long k = 0; k < steps; ++k) step(ctx, t0 + k * h, h);
            double elapsed = MPI_Wtime() - start, slowest = 0.0;
            MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (!strcmp(cmd, "check")) {
                MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : y + lo, counts[rank], MPI_DOUBLE, y, counts,
                            displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                if (rank == 0 && fwrite(y, sizeof(double), (size_t)n, stdout) != (size_t)n)
                    fail(rank, 5, "the state could not be written", n);
            } else if (rank == 0) {
                printf("%.9e\n", steps > 0 ? slowest / steps : 0.0);
            }
        } else {
            if (rank == 0) fprintf(stderr, "ht_mpi_runner: unknown command %s\n", cmd);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (rank == 0) fflush(stdout);
    }
    destroy(ctx);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
