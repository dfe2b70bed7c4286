/* hybridtune timing helpers shared by the runner and the microbenchmarks. */
#ifndef HT_TIMING_H
#define HT_TIMING_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of count values (the input is left unchanged); NaN if memory runs out. */
static inline double median(const double *v, int count) {
    double *s = malloc((size_t)count * sizeof *s);
    if (!s) return NAN;
    memcpy(s, v, (size_t)count * sizeof *s);
    qsort(s, (size_t)count, sizeof *s, cmp_double);
    double m = count % 2 ? s[count / 2] : 0.5 * (s[count / 2 - 1] + s[count / 2]);
    free(s);
    return m;
}

#endif
