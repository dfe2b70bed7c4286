/* A user's program on a tuned library named wave (export --tuned --name wave): N components of
 * its IVP integrated for STEPS stable steps on the ranks of MPI_COMM_WORLD. The library confirms
 * its choice during the first steps where HYBRIDTUNE_ADAPT=1 and appends what it timed to
 * $HYBRIDTUNE_REPORT; rank 0 prints what ran and writes the whole final state to OUT (n doubles).
 * Build: mpicc -O2 -fopenmp -I LIB production_example.c LIB/libwave.a -lm -o production_example
 * Run:   HYBRIDTUNE_ADAPT=1 HYBRIDTUNE_REPORT=report.jsonl mpiexec -n 2 ./production_example N STEPS OUT */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "wave.h"

int main(int argc, char **argv)
{
    int provided, rank, ranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc != 4 || !wave_valid_n(atol(argv[1])) || atoi(argv[2]) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: %s N STEPS OUT, N a size the IVP takes, STEPS >= 1\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    long n = atol(argv[1]);
    int steps = atoi(argv[2]);
    double h = wave_stable_step(n);
    wave_ctx *c = wave_create(n);
    if (!c) {
        if (rank == 0) fprintf(stderr, "no variant for n = %ld on %d rank(s)\n", n, ranks);
        MPI_Finalize();
        return 1;
    }
    wave_initial_values(c);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int k = 0; k < steps; ++k)
        wave_step(c, k * h, h);
    double seconds = MPI_Wtime() - start;

    /* each rank holds the current state of its block: gather them on rank 0 */
    double *y = wave_state(c);
    long lo, hi;
    wave_chosen_block(c, &lo, &hi);
    int mine = (int)(hi - lo), at = (int)lo;
    int *counts = malloc(ranks * sizeof *counts), *displs = malloc(ranks * sizeof *displs);
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(&at, 1, MPI_INT, displs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : y + lo, mine, MPI_DOUBLE, y, counts, displs,
                MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("variant %s ranks %d threads %d measured %d candidates %d h %.17g seconds %.6f\n",
               wave_chosen_variant(c), wave_chosen_ranks(c), wave_chosen_threads(c),
               wave_chosen_measured(c), wave_chosen_candidates(c), h, seconds);
        FILE *out = fopen(argv[3], "wb");
        if (!out || fwrite(y, sizeof *y, (size_t)n, out) != (size_t)n || fclose(out) != 0) {
            fprintf(stderr, "cannot write %s\n", argv[3]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    free(counts);
    free(displs);
    wave_destroy(c);             /* appends the report, where HYBRIDTUNE_REPORT names a file */
    MPI_Finalize();
    return 0;
}
