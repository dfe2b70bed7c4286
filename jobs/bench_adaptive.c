/* The adaptive tuned library against itself, for jobs/bench_adaptive.py. Built per library:
 *   gcc -O2 -fopenmp -DLIB=NAME -DLIB_HEADER='"NAME.h"' -I DIR bench_adaptive.c DIR/libNAME.a -lm
 * run N STEPS T MODE: STEPS steps at n = N on T threads, the whole run timed; MODE adaptive (the
 *   rule's candidates timed first) or fixed (with HYBRIDTUNE_VARIANT set: that candidate alone).
 *   Prints: seconds, the variant that ran last, candidates.
 * retime N T ROUNDS STEPS ID...: the candidates named, each in a context of its own (with
 *   HYBRIDTUNE_VARIANT), timed in ROUNDS interleaved rounds of a fresh random order, STEPS steps
 *   a turn of which the first is not counted. Prints per candidate: ID and its per-step median of
 *   each round. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include LIB_HEADER

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define API(f) CAT(LIB, f)
typedef API(ctx) ctx_t;

static int compare(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int count)
{
    qsort(v, (size_t)count, sizeof *v, compare);
    return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

int main(int argc, char **argv)
{
    if (argc >= 6 && strcmp(argv[1], "run") == 0) {
        long n = atol(argv[2]);
        int steps = atoi(argv[3]), threads = atoi(argv[4]);
        double h = API(stable_step)(n);
        ctx_t *c = API(create_options)(n, threads, strcmp(argv[5], "adaptive") == 0 ? 1 : 0);
        if (!c) return 1;
        API(initial_values)(c);
        double start = omp_get_wtime();
        for (int k = 0; k < steps; ++k) API(step)(c, k * h, h);
        double seconds = omp_get_wtime() - start;
        printf("%.9f %s %d\n", seconds, API(chosen_variant)(c), API(chosen_candidates)(c));
        API(destroy)(c);
        return 0;
    }
    if (argc >= 7 && strcmp(argv[1], "retime") == 0) {
        long n = atol(argv[2]);
        int threads = atoi(argv[3]), rounds = atoi(argv[4]), steps = atoi(argv[5]);
        int count = argc - 6;
        ctx_t **c = calloc((size_t)count, sizeof *c);
        double *times = malloc((size_t)steps * sizeof *times);
        double *medians = malloc((size_t)(count * rounds) * sizeof *medians);
        int *order = malloc((size_t)count * sizeof *order);
        double h = API(stable_step)(n);
        for (int k = 0; k < count; ++k) {
            setenv("HYBRIDTUNE_VARIANT", argv[6 + k], 1);
            if (!(c[k] = API(create_options)(n, threads, 0))) return 1;
            API(initial_values)(c[k]);
        }
        unsigned long long random = 12345;
        for (int r = 0; r < rounds; ++r) {
            for (int k = 0; k < count; ++k) order[k] = k;
            for (int k = count - 1; k > 0; --k) {
                random = random * 6364136223846793005ULL + 1442695040888963407ULL;
                int j = (int)((random >> 11) % (unsigned long long)(k + 1)), swap = order[k];
                order[k] = order[j];
                order[j] = swap;
            }
            for (int i = 0; i < count; ++i) {
                int k = order[i];
                for (int s = 0; s < steps; ++s) {
                    double start = omp_get_wtime();
                    API(step)(c[k], s * h, h);
                    times[s] = omp_get_wtime() - start;
                }
                medians[k * rounds + r] = median(times + 1, steps - 1);
            }
        }
        for (int k = 0; k < count; ++k) {
            printf("%s", argv[6 + k]);
            for (int r = 0; r < rounds; ++r) printf(" %.9e", medians[k * rounds + r]);
            printf("\n");
            API(destroy)(c[k]);
        }
        return 0;
    }
    fprintf(stderr, "usage: %s run N STEPS T adaptive|fixed | retime N T ROUNDS STEPS ID...\n",
            argv[0]);
    return 2;
}
