/* What the bandwidth benchmarks share: command-line numbers (a value outside its range ends the
 * program with exit status 2 and a message naming the argument), the team size, array lengths and
 * the JSON of one footprint's result. */
#ifndef HT_BENCH_H
#define HT_BENCH_H

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "ht_timing.h"

static long long ht_parse_ll(const char *program, const char *text, const char *what, long long lo,
                             long long hi) {
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s must be an integer in [%lld, %lld], got '%s'\n", program, what, lo,
                hi, text);
        exit(2);
    }
    return v;
}

/* Seconds in (0, hi]. */
static double ht_parse_seconds(const char *program, const char *text, const char *what, double hi) {
    char *end = NULL;
    double v = strtod(text, &end);
    if (!*text || *end || !(v > 0.0 && v <= hi)) {
        fprintf(stderr, "%s: %s must be in (0, %g], got '%s'\n", program, what, hi, text);
        exit(2);
    }
    return v;
}

/* The number of threads a parallel region gets. */
static int ht_team_size(void) {
    int threads = 0;
#pragma omp parallel
#pragma omp master
    threads = omp_get_num_threads();
    return threads;
}

/* Doubles per array for `footprint` bytes over `arrays` arrays: whole cache lines, at least one
 * line per thread. */
static long ht_array_length(long long footprint, int arrays, int threads) {
    const long line = 64 / sizeof(double);
    long n = (long)(footprint / (long long)(arrays * sizeof(double))) / line * line;
    return n < line * threads ? line * threads : n;
}

/* One footprint's result as a JSON object, after a comma unless it is the first. */
static void ht_print_point(int first, long long footprint, long n, int arrays, long sweeps,
                           const double *bw, int samples) {
    printf("%s{\"footprint_bytes\": %lld, \"actual_bytes\": %lld, \"elements\": %ld, "
           "\"sweeps\": %ld, \"bandwidth_Bps\": %.6e, \"samples_Bps\": [",
           first ? "" : ", ", footprint, (long long)n * arrays * (long long)sizeof(double), n,
           sweeps, median(bw, samples));
    for (int s = 0; s < samples; ++s) printf("%s%.6e", s ? ", " : "", bw[s]);
    printf("]}");
    fflush(stdout);
}

#endif
