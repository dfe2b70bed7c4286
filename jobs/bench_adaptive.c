/* The adaptive tuned library against itself, for jobs/bench_adaptive.py. Built per library:
 *   gcc -O2 -fopenmp -DLIB=NAME -DLIB_HEADER='"NAME.h"' -I DIR bench_adaptive.c DIR/libNAME.a -lm
 * compare N STEPS T CHUNK ORDER ID...: an adaptive context and one fixed context per candidate
 *   named (HYBRIDTUNE_VARIANT), all made at the start (the adaptive one first where ORDER is
 *   adaptive-first, else last: the contexts made first run slower here), and stepped through the same STEPS steps at
 *   n = N on T threads in turns of CHUNK steps, who goes first alternating; once the adaptive one
 *   has settled only the fixed context of the variant it kept goes on. Prints: the adaptive
 *   context's seconds, the kept variant's fixed context's seconds, the kept variant, candidates.
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
    if (argc >= 8 && strcmp(argv[1], "compare") == 0) {
        long n = atol(argv[2]);
        int steps = atoi(argv[3]), threads = atoi(argv[4]), chunk = atoi(argv[5]);
        int adaptive_first = strcmp(argv[6], "adaptive-first") == 0, count = argc - 7;
        char **ids = argv + 7;                   /* the candidates */
        double h = API(stable_step)(n), adaptive = 0.0, *fixed = calloc((size_t)count, sizeof *fixed);
        ctx_t *a = adaptive_first ? API(create_options)(n, threads, 1) : NULL;
        ctx_t **f = calloc((size_t)count, sizeof *f);
        if (!fixed || !f) return 1;
        for (int k = 0; k < count; ++k) {        /* every candidate fixed, made beside it */
            setenv("HYBRIDTUNE_VARIANT", ids[k], 1);
            if (!(f[k] = API(create_options)(n, threads, 0))) return 1;
            API(initial_values)(f[k]);
        }
        unsetenv("HYBRIDTUNE_VARIANT");
        if (!a) a = API(create_options)(n, threads, 1);
        if (!a) return 1;
        API(initial_values)(a);
        int kept = -1;
        for (int done = 0, turn = 0; done < steps; done += chunk, ++turn) {
            int last = done + chunk < steps ? done + chunk : steps;
            for (int side = 0; side < 2; ++side) {     /* who goes first alternates by turn */
                int adaptive_now = (side == 0) == (turn % 2 == 0);
                for (int k = 0; k < count; ++k) {
                    if (adaptive_now ? k > 0 : (kept >= 0 && k != kept)) continue;
                    double start = omp_get_wtime();
                    for (int s = done; s < last; ++s)
                        API(step)(adaptive_now ? a : f[k], s * h, h);
                    double took = omp_get_wtime() - start;
                    if (adaptive_now) adaptive += took;
                    else fixed[k] += took;
                }
            }
            if (kept < 0 && !API(chosen_adapting)(a)) {
                for (int k = 0; k < count; ++k)
                    if (strcmp(ids[k], API(chosen_variant)(a)) == 0) kept = k;
                for (int k = 0; k < count; ++k)
                    if (k != kept) { API(destroy)(f[k]); f[k] = NULL; }
            }
        }
        if (kept < 0) return 1;
        printf("%.9f %.9f %s %d\n", adaptive, fixed[kept], API(chosen_variant)(a),
               API(chosen_candidates)(a));
        API(destroy)(a);
        API(destroy)(f[kept]);
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
    fprintf(stderr, "usage: %s compare N STEPS T CHUNK adaptive-first|fixed-first ID... | retime N T ROUNDS STEPS ID...\n",
            argv[0]);
    return 2;
}
