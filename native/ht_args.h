/* Command-line integers for the native benchmarks: a value outside its range ends the program with
 * exit status 2 and a message naming the argument. */
#ifndef HT_ARGS_H
#define HT_ARGS_H

#include <stdio.h>
#include <stdlib.h>

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

#endif
