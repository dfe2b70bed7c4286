/* Bandwidth of kerncraft's five benchmark kernels at given footprints, counted as likwid-bench does.
 *   ht_probe_bench -k load|copy|update|triad|daxpy [-n SAMPLES] [-m MIN_S] FOOTPRINT_BYTES ...
 * Kernels (arrays of doubles; streams as in kerncraft's machine files):
 *   load    t += a[i]               1 array,  8 bytes counted per element (1 read stream)
 *   copy    a[i] = b[i]             2 arrays, 16 bytes (1 read, 1 write stream)
 *   update  a[i] = s*a[i]           1 array,  16 bytes (1 read, 1 write stream, the same array)
 *   triad   a[i] = b[i] + c[i]*d[i] 4 arrays, 32 bytes (3 read, 1 write stream)
 *   daxpy   a[i] = a[i] + s*b[i]    2 arrays, 24 bytes (2 read, 1 write stream, a read and written)
 * Bytes counted are read-stream plus write-stream bytes, without write-allocate, as likwid-bench
 * counts them and as kerncraft expects them (it adds write-allocate traffic itself). The footprint is
 * the bytes of all arrays together (n = footprint / (8 * arrays), whole 64-byte lines per array, at
 * least one line per thread). Arrays are 64-byte aligned and first touched with the kernel's static
 * schedule. A sample is one parallel region of K sweeps, each thread sweeping its own block with no
 * barrier in between; K is calibrated so a sample takes >= MIN_S (default 0.02 s). Scalars change
 * sign or scale between sweeps so in-place kernels neither overflow nor reach denormals.
 * Prints JSON on stdout:
 *   {"threads": p, "kernel": "triad", "formula": ..., "bytes_per_element": 32, "arrays": 4,
 *    "points": [{"footprint_bytes": requested, "actual_bytes": used, "elements": n, "sweeps": K,
 *                "bandwidth_Bps": median, "samples_Bps": [...]}, ...], "checksum": x}
 * Errors go to stderr, exit status 2 (usage) or 4 (resources). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ht_runtime.h"
#include "ht_bench.h"
#include "ht_timing.h"

enum kernel { LOAD, COPY, UPDATE, TRIAD, DAXPY, KERNELS };
static const char *const NAME[KERNELS] = {"load", "copy", "update", "triad", "daxpy"};
static const char *const FORMULA[KERNELS] = {"t += a[i]", "a[i] = b[i]", "a[i] = s*a[i]",
                                             "a[i] = b[i] + c[i]*d[i]", "a[i] = a[i] + s*b[i]"};
static const int ARRAYS[KERNELS] = {1, 2, 1, 4, 2};
static const int COUNTED_BYTES[KERNELS] = {8, 16, 16, 32, 24};

#define MAX_SWEEPS (1L << 40)
#define MAX_POINTS 256
/* Independent partial sums for the load kernel, enough to hide the add latency behind the loads. */
#if defined(__AVX512F__)
#define LOAD_LANES 64
#else
#define LOAD_LANES 32
#endif

static volatile double sink;

static long long parse_ll(const char *text, const char *what, long long lo, long long hi) {
    return ht_parse_ll("ht_probe_bench", text, what, lo, hi);
}

/* Adds a[lo..hi) into the partial sums, which stay with the thread across sweeps. */
static void accumulate(double *restrict part, const double *restrict a, long lo, long hi) {
    long i = lo;
    for (; i + LOAD_LANES <= hi; i += LOAD_LANES) {
#pragma omp simd
        for (int j = 0; j < LOAD_LANES; ++j) part[j] += a[i + j];
    }
    for (; i < hi; ++i) part[0] += a[i];
}

/* K sweeps in one parallel region; the seconds thread 0 saw between the barriers around them. */
static double run(enum kernel kernel, double *restrict a, const double *restrict b,
                  const double *restrict c, const double *restrict d, long n, long sweeps) {
    double t0 = 0.0, t1 = 0.0, total = 0.0;
#pragma omp parallel shared(t0, t1) reduction(+ : total)
    {
        long lo, hi;
        ht_block(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        double part[LOAD_LANES] = {0.0};
#pragma omp barrier
#pragma omp master
        t0 = now();
        for (long k = 0; k < sweeps; ++k) {
            switch (kernel) {
            case LOAD:
                accumulate(part, a, lo, hi);
                break;
            case COPY:
                for (long i = lo; i < hi; ++i) a[i] = b[i];
                break;
            case UPDATE: {
                const double s = (k & 1) ? 0.5 : 2.0;
                for (long i = lo; i < hi; ++i) a[i] = s * a[i];
                break;
            }
            case TRIAD:
                for (long i = lo; i < hi; ++i) a[i] = b[i] + c[i] * d[i];
                break;
            case DAXPY: {
                const double s = (k & 1) ? -1e-3 : 1e-3;
                for (long i = lo; i < hi; ++i) a[i] = a[i] + s * b[i];
                break;
            }
            default:
                break;
            }
        }
#pragma omp barrier
#pragma omp master
        t1 = now();
        for (int j = 0; j < LOAD_LANES; ++j) total += part[j];
    }
    sink = total;
    return t1 - t0;
}

int main(int argc, char **argv) {
    int kernel = -1, samples = 7;
    double min_s = 0.02;
    int opt;
    while ((opt = getopt(argc, argv, "k:n:m:")) != -1) {
        switch (opt) {
        case 'k':
            for (int k = 0; k < KERNELS; ++k)
                if (!strcmp(optarg, NAME[k])) kernel = k;
            if (kernel < 0) {
                fprintf(stderr, "ht_probe_bench: unknown kernel '%s' (load, copy, update, triad, "
                                "daxpy)\n", optarg);
                return 2;
            }
            break;
        case 'n': samples = (int)parse_ll(optarg, "SAMPLES", 1, 1000); break;
        case 'm': min_s = ht_parse_seconds("ht_probe_bench", optarg, "MIN_S", 10.0); break;
        default:
            kernel = -2;
            break;
        }
    }
    if (kernel < 0 || optind == argc || argc - optind > MAX_POINTS) {
        fprintf(stderr, "usage: ht_probe_bench -k load|copy|update|triad|daxpy [-n SAMPLES] "
                        "[-m MIN_S] FOOTPRINT_BYTES ... (1 to %d footprints)\n", MAX_POINTS);
        return 2;
    }
    long long footprints[MAX_POINTS];
    int npoints = 0;
    for (int j = optind; j < argc; ++j)
        footprints[npoints++] = parse_ll(argv[j], "FOOTPRINT_BYTES", 1, 1LL << 46);

    omp_set_dynamic(0);
    const int threads = ht_team_size();

    const enum kernel kind = (enum kernel)kernel;
    const int arrays = ARRAYS[kind];
    double *bw = malloc((size_t)samples * sizeof *bw);
    if (!bw) { fprintf(stderr, "ht_probe_bench: out of memory\n"); return 4; }
    double checksum = 0.0;

    printf("{\"threads\": %d, \"kernel\": \"%s\", \"formula\": \"%s\", \"bytes_per_element\": %d, "
           "\"arrays\": %d, \"points\": [", threads, NAME[kind], FORMULA[kind], COUNTED_BYTES[kind],
           arrays);
    for (int p = 0; p < npoints; ++p) {
        const long n = ht_array_length(footprints[p], arrays, threads);
        double *v[4] = {NULL, NULL, NULL, NULL};
        for (int j = 0; j < arrays; ++j) {
            v[j] = ht_alloc(n);
            if (!v[j]) {
                fprintf(stderr, "ht_probe_bench: cannot allocate %d arrays of %ld doubles\n",
                        arrays, n);
                return 4;
            }
        }
#pragma omp parallel
        {
            long lo, hi;
            ht_block(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
            for (int j = 0; j < arrays; ++j)
                for (long i = lo; i < hi; ++i) v[j][i] = 1.0 + 1e-6 * (double)((i + j) & 255);
        }
        long sweeps = 2;
        double t = run(kind, v[0], v[1], v[2], v[3], n, sweeps);
        while (t < min_s && sweeps < MAX_SWEEPS) {
            double grow = t > 0.0 ? 1.1 * min_s / t : 1000.0;
            grow = grow < 1.5 ? 1.5 : grow > 1000.0 ? 1000.0 : grow;
            double next = ceil((double)sweeps * grow);
            sweeps = next > (double)MAX_SWEEPS ? MAX_SWEEPS : (long)next;
            /* An even count keeps the alternating scalars of update and daxpy balanced. */
            sweeps += sweeps & 1;
            t = run(kind, v[0], v[1], v[2], v[3], n, sweeps);
        }
        const double bytes = (double)COUNTED_BYTES[kind] * (double)n * (double)sweeps;
        for (int s = 0; s < samples; ++s) {
            t = run(kind, v[0], v[1], v[2], v[3], n, sweeps);
            bw[s] = bytes / t;
        }
        checksum += kind == LOAD ? sink : v[0][0] + v[0][n / 2] + v[0][n - 1];
        ht_print_point(p == 0, footprints[p], n, arrays, sweeps, bw, samples);
        for (int j = 0; j < arrays; ++j) free(v[j]);
    }
    sink = checksum;
    printf("], \"checksum\": %.17g}\n", checksum);
    free(bw);
    return 0;
}
