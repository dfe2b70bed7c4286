/* Point-to-point ping-pong between ranks 0 and 1 of an MPI job, over message sizes.
 *   mpiexec -n 2 ht_pingpong_bench [-r REPS] [-t TARGET_S] BYTES [BYTES ...]
 * For each size (in the order given) the two ranks warm up, agree on a round-trip count R that
 * makes one repetition take about TARGET_S (default 0.01 s), then time REPS (default 15)
 * repetitions of R round trips (MPI_Send, then MPI_Recv of the echo). Rank 0 takes the time stamps
 * and prints JSON on stdout: {"ranks": p, "library": "...", "points": [{"bytes": n,
 * "round_trips": R, "samples_s": [...], "median_s": m}, ...]} with seconds per one-way message
 * (half a round trip). Ranks beyond 1 wait at the barrier between sizes. Errors go to stderr with
 * exit status 2 (usage) or 4 (resources). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ht_timing.h"

#define WARMUP_TRIPS 20
#define MAX_TRIPS (1L << 22)
#define MAX_BYTES (1L << 28)

static long parse_long(const char *text, const char *what, long lo, long hi) {
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > hi) {
        fprintf(stderr, "ht_pingpong_bench: %s must be an integer in [%ld, %ld], got '%s'\n", what,
                lo, hi, text);
        exit(2);
    }
    return v;
}

/* trips round trips of bytes between ranks 0 and 1; the seconds they took on this rank. */
static double trips_of(char *buffer, long bytes, long trips, int rank) {
    double start = MPI_Wtime();
    for (long i = 0; i < trips; i++) {
        if (rank == 0) {
            MPI_Send(buffer, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buffer, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buffer, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buffer, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - start;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int reps = 15;
    double target = 0.01;
    int opt;
    while ((opt = getopt(argc, argv, "r:t:")) != -1) {
        switch (opt) {
        case 'r': reps = (int)parse_long(optarg, "REPS", 1, 10000); break;
        case 't': target = atof(optarg); break;
        default:
            if (rank == 0) fprintf(stderr, "usage: ht_pingpong_bench [-r REPS] [-t TARGET_S] BYTES...\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (ranks < 2 || optind >= argc || !(target > 0 && target < 10)) {
        if (rank == 0)
            fprintf(stderr, "ht_pingpong_bench: needs at least 2 ranks (got %d), a TARGET_S in (0, 10) "
                    "and at least one BYTES\n", ranks);
        MPI_Finalize();
        return 2;
    }
    int count = argc - optind;
    long *sizes = malloc((size_t)count * sizeof *sizes);
    double *samples = malloc((size_t)reps * sizeof *samples);
    long largest = 1;
    if (!sizes || !samples) { fprintf(stderr, "ht_pingpong_bench: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 4); }
    for (int k = 0; k < count; k++) {
        sizes[k] = parse_long(argv[optind + k], "BYTES", 0, MAX_BYTES);
        if (sizes[k] > largest) largest = sizes[k];
    }
    char *buffer = malloc((size_t)largest);
    if (!buffer) { fprintf(stderr, "ht_pingpong_bench: cannot allocate %ld bytes\n", largest); MPI_Abort(MPI_COMM_WORLD, 4); }
    memset(buffer, 1, (size_t)largest);
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(library, &length);
    for (char *c = library; *c; c++)
        if (*c == '"' || *c == '\\' || *c == '\n' || *c == '\t') *c = ' ';
    if (rank == 0) printf("{\"ranks\": %d, \"library\": \"%s\", \"points\": [", ranks, library);
    for (int k = 0; k < count; k++) {
        long bytes = sizes[k];
        MPI_Barrier(MPI_COMM_WORLD);
        double warm = trips_of(buffer, bytes, WARMUP_TRIPS, rank) / WARMUP_TRIPS;
        MPI_Bcast(&warm, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        long trips = warm > 0 ? (long)(target / warm) : MAX_TRIPS;
        if (trips < 1) trips = 1;
        if (trips > MAX_TRIPS) trips = MAX_TRIPS;
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            samples[r] = trips_of(buffer, bytes, trips, rank) / (2.0 * trips);
        }
        if (rank == 0) {
            printf("%s{\"bytes\": %ld, \"round_trips\": %ld, \"samples_s\": [", k ? ", " : "", bytes, trips);
            for (int r = 0; r < reps; r++) printf("%s%.9e", r ? ", " : "", samples[r]);
            printf("], \"median_s\": %.9e}", median(samples, reps));
        }
    }
    if (rank == 0) printf("]}\n");
    free(buffer);
    free(samples);
    free(sizes);
    MPI_Finalize();
    return 0;
}
