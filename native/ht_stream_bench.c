/* Streaming bandwidth against footprint, for the load+store sweeps a PIRK step is made of.
 *   ht_stream_bench [-k triad|copy|sum] [-n SAMPLES] [-m MIN_S] [-t THREADS] [FOOTPRINT_BYTES ...]
 * Kernels (all arrays of doubles, one sweep = one pass over every element):
 *   triad  a[i] = b[i] + s*c[i]   3 arrays, 32 bytes/element: 16 read + 8 written + 8 write-allocate
 *   copy   a[i] = b[i]            2 arrays, 24 bytes/element:  8 read + 8 written + 8 write-allocate
 *   sum    t += b[i]              1 array,   8 bytes/element:  8 read
 * The footprint is the bytes of all arrays together (n = footprint / (8 * arrays), rounded down to
 * whole 64-byte lines per array, at least one line per thread); without footprints the series is
 * 16 KiB, 32 KiB, ..., 1 GiB. Arrays are 64-byte aligned and first touched in parallel with the
 * kernel's static schedule. Each sample is one parallel region running K sweeps (`omp for
 * schedule(static) nowait`, so a thread always sweeps the same block and no barrier is timed), K
 * calibrated so a sample takes >= MIN_S (default 0.02 s); the bandwidth is bytes counted per
 * element * n * K / seconds, reported per sample and as the median of SAMPLES (default 7).
 * Prints JSON on stdout:
 *   {"threads": p, "kernel": "triad", "formula": ..., "traffic": ..., "bytes_per_element": 32,
 *    "points": [{"footprint_bytes": requested, "actual_bytes": used, "elements": n, "sweeps": K,
 *                "bandwidth_Bps": median, "samples_Bps": [...]}, ...], "checksum": x}
 * The checksum (of results read back after the sweeps, also stored to a volatile) keeps the
 * compiler from dropping the work. Errors go to stderr, exit status 2 (usage) or 4 (resources). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ht_runtime.h"
#include "ht_bench.h"
#include "ht_timing.h"

enum kernel { TRIAD, COPY, SUM };
static const char *const KERNEL_NAME[] = {"triad", "copy", "sum"};
static const char *const KERNEL_FORMULA[] = {"a[i] = b[i] + s*c[i]", "a[i] = b[i]", "t += b[i]"};
static const char *const KERNEL_TRAFFIC[] = {
    "reads + writes + write-allocate for stores: 16 read + 8 written + 8 write-allocate bytes/element",
    "reads + writes + write-allocate for stores: 8 read + 8 written + 8 write-allocate bytes/element",
    "reads only: 8 read bytes/element"};
static const int KERNEL_ARRAYS[] = {3, 2, 1};
static const int KERNEL_BYTES[] = {32, 24, 8};

#define MAX_SWEEPS (1L << 40)
#define MAX_POINTS 4096

static volatile double sink;

static long long parse_ll(const char *text, const char *what, long long lo, long long hi) {
    return ht_parse_ll("ht_stream_bench", text, what, lo, hi);
}

/* K sweeps of the kernel in one parallel region; returns the seconds thread 0 saw between the
 * barrier before the first sweep and the barrier after the last. */
static double run(enum kernel kernel, double *restrict a, const double *restrict b,
                  const double *restrict c, long n, long sweeps) {
    double t0 = 0.0, t1 = 0.0, total = 0.0;
#pragma omp parallel shared(t0, t1) reduction(+ : total)
    {
#pragma omp barrier
#pragma omp master
        t0 = now();
        for (long k = 0; k < sweeps; ++k) {
            if (kernel == TRIAD) {
                const double s = 0.5 + 1e-9 * (double)(k & 1023);
#pragma omp for schedule(static) nowait
                for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
            } else if (kernel == COPY) {
#pragma omp for schedule(static) nowait
                for (long i = 0; i < n; ++i) a[i] = b[i];
            } else {
                /* The block schedule(static) gives each thread (ht_block), as an explicit loop
                 * because a worksharing reduction cannot target this thread's private sum;
                 * simd lets the compiler reassociate the additions into vector accumulators. */
                long lo, hi;
                ht_block(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
                double part = 0.0;
#pragma omp simd reduction(+ : part)
                for (long i = lo; i < hi; ++i) part += b[i];
                total += part;
            }
        }
#pragma omp barrier
#pragma omp master
        t1 = now();
    }
    sink = total;
    return t1 - t0;
}

int main(int argc, char **argv) {
    enum kernel kernel = TRIAD;
    int samples = 7, requested = 0;
    double min_s = 0.02;
    int opt;
    while ((opt = getopt(argc, argv, "k:n:m:t:")) != -1) {
        switch (opt) {
        case 'k':
            if (!strcmp(optarg, "triad")) kernel = TRIAD;
            else if (!strcmp(optarg, "copy")) kernel = COPY;
            else if (!strcmp(optarg, "sum")) kernel = SUM;
            else {
                fprintf(stderr, "ht_stream_bench: unknown kernel '%s' (triad, copy, sum)\n", optarg);
                return 2;
            }
            break;
        case 'n': samples = (int)parse_ll(optarg, "SAMPLES", 1, 1000); break;
        case 't': requested = (int)parse_ll(optarg, "THREADS", 1, 4096); break;
        case 'm': min_s = ht_parse_seconds("ht_stream_bench", optarg, "MIN_S", 10.0); break;
        default:
            fprintf(stderr, "usage: ht_stream_bench [-k triad|copy|sum] [-n SAMPLES] [-m MIN_S] "
                            "[-t THREADS] [FOOTPRINT_BYTES ...]\n");
            return 2;
        }
    }
    long long footprints[MAX_POINTS];
    int npoints = 0;
    if (optind == argc) {
        for (long long f = 16LL << 10; f <= 1LL << 30; f *= 2) footprints[npoints++] = f;
    } else {
        if (argc - optind > MAX_POINTS) {
            fprintf(stderr, "ht_stream_bench: at most %d footprints\n", MAX_POINTS);
            return 2;
        }
        for (int j = optind; j < argc; ++j)
            footprints[npoints++] = parse_ll(argv[j], "FOOTPRINT_BYTES", 1, 1LL << 46);
    }
    omp_set_dynamic(0);
    if (requested) omp_set_num_threads(requested);
    const int threads = ht_team_size();

    const int arrays = KERNEL_ARRAYS[kernel];
    double *bw = malloc((size_t)samples * sizeof *bw);
    if (!bw) { fprintf(stderr, "ht_stream_bench: out of memory\n"); return 4; }
    double checksum = 0.0;

    printf("{\"threads\": %d, \"kernel\": \"%s\", \"formula\": \"%s\", \"traffic\": \"%s\", "
           "\"bytes_per_element\": %d, \"points\": [",
           threads, KERNEL_NAME[kernel], KERNEL_FORMULA[kernel], KERNEL_TRAFFIC[kernel],
           KERNEL_BYTES[kernel]);
    for (int p = 0; p < npoints; ++p) {
        const long n = ht_array_length(footprints[p], arrays, threads);
        double *a = kernel == SUM ? NULL : ht_alloc(n);
        double *b = ht_alloc(n);
        double *c = kernel == TRIAD ? ht_alloc(n) : NULL;
        if ((kernel != SUM && !a) || !b || (kernel == TRIAD && !c)) {
            fprintf(stderr, "ht_stream_bench: cannot allocate %d arrays of %ld doubles\n", arrays, n);
            return 4;
        }
        /* First touch with the kernel's schedule: each thread's pages are where it sweeps them. */
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i) {
            if (a) a[i] = 0.0;
            b[i] = 1.0 + 1e-6 * (double)(i & 255);
            if (c) c[i] = 2.0;
        }
        /* Warm-up and calibration: grow K until one sample takes >= MIN_S. */
        long sweeps = 1;
        double t = run(kernel, a, b, c, n, sweeps);
        while (t < min_s && sweeps < MAX_SWEEPS) {
            double grow = t > 0.0 ? 1.1 * min_s / t : 1000.0;
            grow = grow < 1.5 ? 1.5 : grow > 1000.0 ? 1000.0 : grow;
            double next = ceil((double)sweeps * grow);
            sweeps = next > (double)MAX_SWEEPS ? MAX_SWEEPS : (long)next;
            t = run(kernel, a, b, c, n, sweeps);
        }
        const double bytes = (double)KERNEL_BYTES[kernel] * (double)n * (double)sweeps;
        for (int s = 0; s < samples; ++s) {
            t = run(kernel, a, b, c, n, sweeps);
            bw[s] = bytes / t;
        }
        checksum += kernel == SUM ? sink : a[0] + a[n / 2] + a[n - 1];
        ht_print_point(p == 0, footprints[p], n, arrays, sweeps, bw, samples);
        free(a);
        free(b);
        free(c);
    }
    sink = checksum;
    printf("], \"checksum\": %.17g}\n", checksum);
    free(bw);
    return 0;
}
