/* Communication microbenchmarks between the ranks of an MPI job, over message sizes.
 *   mpiexec -n P ht_comm_bench [-k KIND] [-r REPS] [-t TARGET_S] [-m MESSAGES] BYTES [BYTES ...]
 * KIND (default pingpong):
 *   pingpong   ranks 0 and 1: MPI_Send, then MPI_Recv of the echo; a call is one way (half a trip)
 *   allgather  every rank's BYTES to every rank, as the variants gather a row: MPI_Allgatherv in
 *              place (MPI_IN_PLACE, a block of BYTES per rank)
 *   neighbour  every rank sends BYTES to and receives BYTES from each neighbour on the ring of ranks
 *              (MPI_Isend, MPI_Irecv, MPI_Waitall), as a neighbour exchange of the variants does
 *   barrier    MPI_Barrier (BYTES must be 0)
 *   prtt       LogGP's parametrised round trips between ranks 0 and 1: PRTT(n, d, s) sends n
 *              messages of s bytes with a busy delay d before every message but the first, and
 *              rank 1 answers the last with one message of s bytes. Per size three points:
 *              PRTT(1, 0, s), PRTT(M, 0, s) and PRTT(M, d, s) with d = PRTT(1, 0, s); M = MESSAGES
 *              (default 16)
 * For each size (in the order given) the ranks warm up, agree on a call count C that makes one
 * repetition take about TARGET_S (default 0.01 s), then time REPS (default 15) repetitions of C
 * calls, each starting at a barrier; a repetition's time is the slowest rank's. Rank 0 prints JSON
 * on stdout: {"kind": K, "ranks": p, "library": "...", "points": [{"bytes": n, "calls": C,
 * "samples_s": [...], "median_s": m}, ...]} in seconds per call; for prtt each point holds
 * "prtt_1", "prtt_n0" and "prtt_nd", each {"samples_s", "median_s"}, besides "messages" and
 * "delay_s". Errors go to stderr with exit status 2 (usage) or 4 (resources). */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ht_timing.h"

#define WARMUP_CALLS 20
#define MAX_CALLS (1L << 22)
#define MAX_BYTES (1L << 28)

enum kind { PINGPONG, ALLGATHER, NEIGHBOUR, BARRIER, PRTT };
static const char *KINDS[] = {"pingpong", "allgather", "neighbour", "barrier", "prtt"};

struct setup {
    enum kind kind;
    int rank, ranks, messages;
    char *send, *receive;     /* receive holds ranks x the largest size (allgather), 2x otherwise */
    int *counts, *displs;     /* the allgather's blocks, one per rank */
};

static long parse_long(const char *text, const char *what, long lo, long hi) {
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > hi) {
        fprintf(stderr, "ht_comm_bench: %s must be an integer in [%ld, %ld], got '%s'\n", what,
                lo, hi, text);
        exit(2);
    }
    return v;
}

static void spin(double seconds) {
    double until = MPI_Wtime() + seconds;
    while (MPI_Wtime() < until) {}
}

/* One PRTT(n, delay, bytes) between ranks 0 and 1; other ranks do nothing. */
static void prtt_once(const struct setup *s, long bytes, int n, double delay) {
    if (s->rank == 0) {
        for (int k = 0; k < n; k++) {
            if (k && delay > 0) spin(delay);
            MPI_Send(s->send, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        }
        MPI_Recv(s->receive, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (s->rank == 1) {
        for (int k = 0; k < n; k++)
            MPI_Recv(s->receive, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(s->send, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
}

static void call_once(const struct setup *s, long bytes, int n, double delay) {
    int left = (s->rank + s->ranks - 1) % s->ranks, right = (s->rank + 1) % s->ranks;
    MPI_Request requests[4];
    switch (s->kind) {
    case PINGPONG:
        if (s->rank == 0) {
            MPI_Send(s->send, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(s->send, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (s->rank == 1) {
            MPI_Recv(s->send, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s->send, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
        break;
    case ALLGATHER:
        for (int r = 0; r < s->ranks; r++) {
            s->counts[r] = (int)bytes;
            s->displs[r] = (int)(r * bytes);
        }
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s->receive, s->counts, s->displs,
                       MPI_BYTE, MPI_COMM_WORLD);
        break;
    case NEIGHBOUR:
        MPI_Irecv(s->receive, (int)bytes, MPI_BYTE, left, 0, MPI_COMM_WORLD, &requests[0]);
        MPI_Irecv(s->receive + bytes, (int)bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD, &requests[1]);
        MPI_Isend(s->send, (int)bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &requests[2]);
        MPI_Isend(s->send, (int)bytes, MPI_BYTE, right, 0, MPI_COMM_WORLD, &requests[3]);
        MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
        break;
    case BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case PRTT:
        prtt_once(s, bytes, n, delay);
        break;
    }
}

/* calls calls from a common start; the slowest rank's seconds per call (on every rank). */
static double per_call(const struct setup *s, long bytes, long calls, int n, double delay) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long i = 0; i < calls; i++) call_once(s, bytes, n, delay);
    double mine = MPI_Wtime() - start, slowest = 0.0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest / calls / (s->kind == PINGPONG ? 2.0 : 1.0);
}

/* Calibrate, then reps samples; prints "samples_s" and "median_s"; returns the median. */
static double series(const struct setup *s, long bytes, int n, double delay, int reps,
                     double target, double *samples, long *calls_out) {
    double warm = per_call(s, bytes, WARMUP_CALLS, n, delay);
    long calls = warm > 0 ? (long)(target / warm) : MAX_CALLS;
    if (calls < 1) calls = 1;
    if (calls > MAX_CALLS) calls = MAX_CALLS;
    for (int r = 0; r < reps; r++) samples[r] = per_call(s, bytes, calls, n, delay);
    double m = median(samples, reps);
    if (s->rank == 0) {
        printf("\"samples_s\": [");
        for (int r = 0; r < reps; r++) printf("%s%.9e", r ? ", " : "", samples[r]);
        printf("], \"median_s\": %.9e", m);
    }
    if (calls_out) *calls_out = calls;
    return m;
}

static int usage(int rank, const char *why) {
    if (rank == 0)
        fprintf(stderr, "ht_comm_bench: %s\nusage: mpiexec -n P ht_comm_bench [-k pingpong|allgather|"
                "neighbour|barrier|prtt] [-r REPS] [-t TARGET_S] [-m MESSAGES] BYTES...\n", why);
    MPI_Finalize();
    return 2;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    struct setup s = {PINGPONG, 0, 0, 16, NULL, NULL, NULL, NULL};
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.ranks);
    int reps = 15, opt, known = 0;
    double target = 0.01;
    while ((opt = getopt(argc, argv, "k:r:t:m:")) != -1) {
        switch (opt) {
        case 'k':
            for (int k = 0; k <= PRTT; k++)
                if (!strcmp(optarg, KINDS[k])) { s.kind = (enum kind)k; known = 1; }
            if (!known) return usage(s.rank, "unknown KIND");
            break;
        case 'r': reps = (int)parse_long(optarg, "REPS", 1, 10000); break;
        case 't': target = atof(optarg); break;
        case 'm': s.messages = (int)parse_long(optarg, "MESSAGES", 2, 10000); break;
        default: return usage(s.rank, "unknown option");
        }
    }
    int pairwise = s.kind == PINGPONG || s.kind == PRTT;
    if ((pairwise && s.ranks < 2) || optind >= argc || !(target > 0 && target < 10))
        return usage(s.rank, "needs at least 2 ranks for pingpong and prtt, a TARGET_S in (0, 10) "
                     "and at least one BYTES");
    int count = argc - optind;
    long *sizes = malloc((size_t)count * sizeof *sizes), largest = 1;
    double *samples = malloc((size_t)reps * sizeof *samples);
    if (!sizes || !samples) { fprintf(stderr, "ht_comm_bench: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 4); }
    for (int k = 0; k < count; k++) {
        sizes[k] = parse_long(argv[optind + k], "BYTES", 0, s.kind == BARRIER ? 0 : MAX_BYTES);
        if (sizes[k] > largest) largest = sizes[k];
    }
    if (s.kind == ALLGATHER && largest * s.ranks > INT_MAX)
        return usage(s.rank, "an allgather's BYTES x ranks must stay below 2^31");
    s.send = malloc((size_t)largest);
    s.receive = malloc((size_t)largest * (size_t)(s.ranks > 2 ? s.ranks : 2));
    s.counts = malloc((size_t)s.ranks * sizeof *s.counts);
    s.displs = malloc((size_t)s.ranks * sizeof *s.displs);
    if (!s.send || !s.receive || !s.counts || !s.displs) {
        fprintf(stderr, "ht_comm_bench: cannot allocate %ld bytes\n", largest * s.ranks);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    memset(s.send, 1, (size_t)largest);
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(library, &length);
    for (char *c = library; *c; c++)
        if (*c == '"' || *c == '\\' || *c == '\n' || *c == '\t') *c = ' ';
    if (s.rank == 0)
        printf("{\"kind\": \"%s\", \"ranks\": %d, \"library\": \"%s\", \"points\": [", KINDS[s.kind],
               s.ranks, library);
    for (int k = 0; k < count; k++) {
        long bytes = sizes[k], calls = 0;
        if (s.rank == 0) printf("%s{\"bytes\": %ld, ", k ? ", " : "", bytes);
        if (s.kind != PRTT) {
            series(&s, bytes, 1, 0.0, reps, target, samples, &calls);
            if (s.rank == 0) printf(", \"calls\": %ld}", calls);
            continue;
        }
        if (s.rank == 0) printf("\"prtt_1\": {");
        double d = series(&s, bytes, 1, 0.0, reps, target, samples, NULL);
        if (s.rank == 0) printf("}, \"prtt_n0\": {");
        series(&s, bytes, s.messages, 0.0, reps, target, samples, NULL);
        if (s.rank == 0) printf("}, \"prtt_nd\": {");
        series(&s, bytes, s.messages, d, reps, target, samples, NULL);
        if (s.rank == 0) printf("}, \"messages\": %d, \"delay_s\": %.9e}", s.messages, d);
    }
    if (s.rank == 0) printf("]}\n");
    free(s.send);
    free(s.receive);
    free(s.counts);
    free(s.displs);
    free(samples);
    free(sizes);
    MPI_Finalize();
    return 0;
}
