/* Runs one variant library in its own process, driven line by line over stdin:
 *   check T0 H STEPS      -> writes the state after STEPS steps from the initial values (binary, n doubles)
 *   warmup T0 H STEPS     -> runs STEPS steps, untimed
 *   rep T0 H STEPS [LIMIT] -> resets the state to the initial values, times STEPS steps, prints seconds/step;
 *                            with LIMIT > 0 it stops once LIMIT seconds passed (the clock read
 *                            about every LIMIT/256 s), so a load that slows the steps a
 *                            thousandfold cannot stretch one repetition to minutes
 *   finite                -> prints 1 if every state component is finite (no inf, NaN), else 0
 *   quit
 * Usage: ht_runner LIBRARY N. Replies go to stdout, one line per command, flushed.
 * The runner dies with the process that started it (PR_SET_PDEATHSIG; HT_PARENT_PID closes the race
 * of a parent gone before that call), so no variant outlives a killed job. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "ht_runtime.h"
#include "ht_timing.h"

#define LIMIT_LOOKS 256   /* a repetition looks at the clock about this often per limit */

typedef ht_ctx *(*create_fn)(long);
typedef double *(*state_fn)(ht_ctx *);
typedef void (*init_fn)(ht_ctx *);
typedef void (*step_fn)(ht_ctx *, double, double);

static void *symbol(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) { fprintf(stderr, "ht_runner: symbol %s missing: %s\n", name, dlerror()); exit(3); }
    return p;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: ht_runner LIBRARY N\n"); return 2; }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const char *parent = getenv("HT_PARENT_PID");
    if (parent && atol(parent) != (long)getppid()) return 5;
    long n = atol(argv[2]);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "ht_runner: %s\n", dlerror()); return 3; }
    create_fn create = (create_fn)symbol(lib, "ht_create");
    state_fn state = (state_fn)symbol(lib, "ht_state");
    init_fn initial = (init_fn)symbol(lib, "ht_initial_values");
    step_fn step = (step_fn)symbol(lib, "ht_step");
    ht_ctx *ctx = create(n);
    if (!ctx) { fprintf(stderr, "ht_runner: allocation failed for n = %ld\n", n); return 4; }
    double *y = state(ctx);
    char line[256], cmd[32];
    while (fgets(line, sizeof line, stdin)) {
        double t0 = 0.0, h = 0.0, limit = 0.0;
        long steps = 0;
        if (sscanf(line, "%31s %lf %lf %ld %lf", cmd, &t0, &h, &steps, &limit) < 1) continue;
        if (!strcmp(cmd, "quit")) break;
        if (!strcmp(cmd, "finite")) {
            int ok = 1;
            for (long j = 0; j < n; ++j) if (!isfinite(y[j])) { ok = 0; break; }
            printf("%d\n", ok);
        } else if (!strcmp(cmd, "check") || !strcmp(cmd, "warmup") || !strcmp(cmd, "rep")) {
            if (strcmp(cmd, "warmup")) initial(ctx);
            if (strcmp(cmd, "rep")) limit = 0.0;
            long done = 0, look = 1;     /* the step count at which the clock is read next */
            double start = now();
            while (done < steps) {
                step(ctx, t0 + done * h, h);
                if (++done == look && limit > 0.0) {
                    double spent = now() - start;
                    if (spent > limit) break;
                    /* next look after about limit / LIMIT_LOOKS more seconds at the rate so far */
                    double more = done * (limit / LIMIT_LOOKS) / (spent > 0.0 ? spent : 1e-9);
                    look = done + (more < 1.0 ? 1 : more > 1e12 ? 1000000000000L : (long)more);
                }
            }
            double elapsed = now() - start;
            if (!strcmp(cmd, "check")) {
                size_t written = fwrite(y, sizeof(double), (size_t)n, stdout);
                if (written != (size_t)n) return 5;
            } else {
                printf("%.9e\n", done > 0 ? elapsed / done : 0.0);
            }
        } else {
            fprintf(stderr, "ht_runner: unknown command %s\n", cmd);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
