/* hybridtune C runtime: the interface every generated variant exports, and the helpers it uses. */
#ifndef HT_RUNTIME_H
#define HT_RUNTIME_H

#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#endif

/* Every generated variant library exports these symbols. */
typedef struct ht_ctx ht_ctx;
ht_ctx *ht_create(long n);                 /* buffers allocated and first touched in parallel */
void ht_destroy(ht_ctx *ctx);
double *ht_state(ht_ctx *ctx);             /* the state vector y, n doubles */
void ht_initial_values(ht_ctx *ctx);       /* y = the IVP's initial values */
void ht_step(ht_ctx *ctx, double t, double h);   /* one PIRK step, one OpenMP parallel region */
const char *ht_variant_id(void);

/* The static block partition of components 0..n-1 over the threads: thread tid owns [lo, hi). */
static inline void ht_block(long n, int tid, int nthreads, long *lo, long *hi) {
    long base = n / nthreads, extra = n % nthreads;
    *lo = tid * base + (tid < extra ? tid : extra);
    *hi = *lo + base + (tid < extra ? 1 : 0);
}

static inline long ht_max(long a, long b) { return a > b ? a : b; }
static inline long ht_min(long a, long b) { return a < b ? a : b; }

/* 64-byte aligned allocation; the caller first-touches it with the partition of the time step. */
static inline double *ht_alloc(long count) {
    void *p = NULL;
    size_t bytes = (size_t)(count > 0 ? count : 1) * sizeof(double);
    bytes = (bytes + 63) / 64 * 64;
    if (posix_memalign(&p, 64, bytes) != 0) return NULL;
    return (double *)p;
}

#endif
