/* Measures the cost of one `#pragma omp barrier` for a thread count.
 *   ht_barrier_bench [-r REPS] [-t TARGET_S] [-b BARRIERS] [THREADS]
 * THREADS defaults to OMP_NUM_THREADS (omp_get_max_threads). Inside one parallel region the threads
 * warm up (>= 50 ms of barriers, which also calibrates), then time REPS (default 15) repetitions of a
 * loop of B barriers, B chosen so one repetition takes about TARGET_S (default 0.03 s) unless -b fixes
 * it; a run takes about 0.05 + REPS * TARGET_S seconds. Thread 0 takes the time stamps.
 * Prints JSON on stdout: {"threads": p, "barriers_per_sample": B, "samples_s": [...], "median_s": m}
 * with seconds per barrier. Errors go to stderr with exit status 2 (usage) or 4 (resources). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ht_timing.h"

#define WARMUP_S 0.05
#define MIN_BARRIERS 16L
#define MAX_BARRIERS (1L << 26)

static long parse_long(const char *text, const char *what, long lo, long hi) {
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > hi) {
        fprintf(stderr, "ht_barrier_bench: %s must be an integer in [%ld, %ld], got '%s'\n", what, lo,
                hi, text);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    int reps = 15;
    long fixed = 0;
    double target = 0.03;
    int opt;
    while ((opt = getopt(argc, argv, "r:t:b:")) != -1) {
        switch (opt) {
        case 'r': reps = (int)parse_long(optarg, "REPS", 1, 10000); break;
        case 'b': fixed = parse_long(optarg, "BARRIERS", 1, MAX_BARRIERS); break;
        case 't': {
            char *end = NULL;
            target = strtod(optarg, &end);
            if (!*optarg || *end || !(target > 0.0 && target <= 10.0)) {
                fprintf(stderr, "ht_barrier_bench: TARGET_S must be in (0, 10], got '%s'\n", optarg);
                return 2;
            }
            break;
        }
        default:
            fprintf(stderr, "usage: ht_barrier_bench [-r REPS] [-t TARGET_S] [-b BARRIERS] [THREADS]\n");
            return 2;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "usage: ht_barrier_bench [-r REPS] [-t TARGET_S] [-b BARRIERS] [THREADS]\n");
        return 2;
    }
    int requested = argc - optind == 1 ? (int)parse_long(argv[optind], "THREADS", 1, 4096)
                                       : omp_get_max_threads();
    omp_set_dynamic(0);
    omp_set_num_threads(requested);

    double *samples = malloc((size_t)reps * sizeof *samples);
    if (!samples) { fprintf(stderr, "ht_barrier_bench: out of memory\n"); return 4; }

    int threads = 0;
    long batch = 256, barriers = fixed;
    int warm = 0;
    double t0 = 0.0, warm_start = 0.0;
#pragma omp parallel shared(threads, batch, barriers, warm, t0, warm_start, samples)
    {
#pragma omp master
        {
            threads = omp_get_num_threads();
            warm_start = now();
        }
        /* Warm-up and calibration: batches grow until one takes >= 10 ms and 50 ms have passed. */
        for (;;) {
#pragma omp barrier
#pragma omp master
            t0 = now();
            long count = batch;
            for (long i = 0; i < count; ++i) {
#pragma omp barrier
            }
#pragma omp master
            {
                double t1 = now(), dt = t1 - t0;
                if (dt >= 0.01 && t1 - warm_start >= WARMUP_S) {
                    if (!fixed) {
                        double b = ceil((double)count * target / dt);
                        barriers = b < MIN_BARRIERS ? MIN_BARRIERS
                                 : b > MAX_BARRIERS ? MAX_BARRIERS : (long)b;
                    }
                    warm = 1;
                } else if (dt < 0.01) {
                    double grow = dt > 0.0 ? 0.012 / dt : 64.0;
                    grow = grow < 2.0 ? 2.0 : grow > 64.0 ? 64.0 : grow;
                    double next = ceil((double)count * grow);
                    batch = next > MAX_BARRIERS ? MAX_BARRIERS : (long)next;
                }
            }
#pragma omp barrier
            if (warm) break;
        }
        long count = barriers;
        for (int r = 0; r < reps; ++r) {
#pragma omp barrier
#pragma omp master
            t0 = now();
            for (long i = 0; i < count; ++i) {
#pragma omp barrier
            }
#pragma omp master
            samples[r] = (now() - t0) / (double)count;
        }
    }

    printf("{\"threads\": %d, \"barriers_per_sample\": %ld, \"samples_s\": [", threads, barriers);
    for (int r = 0; r < reps; ++r) printf("%s%.6e", r ? ", " : "", samples[r]);
    printf("], \"median_s\": %.6e}\n", median(samples, reps));
    free(samples);
    return 0;
}
