/* Effective core clock from a dependent chain of 64-bit integer multiplies, on one pinned core.
 *   ht_clock_bench [-n SAMPLES] [-m MIN_S] [-c CPU]
 * Each multiply waits for the one before it; a 64-bit imul has a latency of LATENCY_CYCLES = 3
 * cycles on every current x86 core (Intel since Nehalem, AMD since Zen), so the chain runs at one
 * multiply per 3 cycles whatever the ports, and multiplies / seconds * 3 is the clock the core ran
 * at. The factor is read from argv at run time and an empty asm statement that claims to change the
 * running value follows every multiply, so the compiler can neither fold, reassociate nor vectorise
 * the chain; the loop counter and branch issue on other ports beside it. The process pins itself to
 * CPU (default: the first CPU it may use). A sample is one chain calibrated to take >= MIN_S (default
 * 0.02 s) after a warm-up of the same length, timed by the thread's CPU clock so that time spent
 * descheduled behind other processes on that CPU does not count; the clock is the median of SAMPLES
 * (default 7).
 * Prints JSON on stdout:
 *   {"cpu": c, "latency_cycles": 3, "multiplies": m, "clock_Hz": median, "samples_Hz": [...],
 *    "checksum": x}
 * Errors go to stderr, exit status 2 (usage) or 4 (pinning). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ht_bench.h"
#include "ht_timing.h"

#define LATENCY_CYCLES 3
#define UNROLL 32
#define MAX_ROUNDS (1L << 40)
#define MAX_SAMPLES 1000

#define STEP(x, m) do { (x) *= (m); __asm__ volatile("" : "+r"(x)); } while (0)
#define STEP4(x, m) do { STEP(x, m); STEP(x, m); STEP(x, m); STEP(x, m); } while (0)

static volatile uint64_t sink;

static double thread_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* rounds x UNROLL dependent multiplies; the seconds they took. */
static double chain(uint64_t factor, long rounds) {
    uint64_t x = factor ^ 0x9e3779b97f4a7c15ULL;
    const double t0 = thread_seconds();
    for (long r = 0; r < rounds; ++r) {
        STEP4(x, factor); STEP4(x, factor); STEP4(x, factor); STEP4(x, factor);
        STEP4(x, factor); STEP4(x, factor); STEP4(x, factor); STEP4(x, factor);
    }
    const double t1 = thread_seconds();
    sink = x;
    return t1 - t0;
}

static int first_allowed_cpu(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) return cpu;
    return -1;
}

int main(int argc, char **argv) {
    int samples = 7, cpu = -1;
    double min_s = 0.02;
    int opt;
    while ((opt = getopt(argc, argv, "n:m:c:")) != -1) {
        switch (opt) {
        case 'n': samples = (int)ht_parse_ll("ht_clock_bench", optarg, "SAMPLES", 1, MAX_SAMPLES); break;
        case 'm': min_s = ht_parse_seconds("ht_clock_bench", optarg, "MIN_S", 10.0); break;
        case 'c': cpu = (int)ht_parse_ll("ht_clock_bench", optarg, "CPU", 0, CPU_SETSIZE - 1); break;
        default:
            fprintf(stderr, "usage: ht_clock_bench [-n SAMPLES] [-m MIN_S] [-c CPU]\n");
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "usage: ht_clock_bench [-n SAMPLES] [-m MIN_S] [-c CPU]\n");
        return 2;
    }
    if (cpu < 0) cpu = first_allowed_cpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0) CPU_SET(cpu, &set);
    if (cpu < 0 || sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "ht_clock_bench: cannot pin to CPU %d\n", cpu);
        return 4;
    }
    /* An odd factor known only at run time: the chain never reaches zero and cannot be folded. */
    const uint64_t factor = ((uint64_t)(uintptr_t)argv | 1u) * 2654435761u | 1u;

    long rounds = 1000;
    double t = chain(factor, rounds);
    while (t < min_s && rounds < MAX_ROUNDS) {
        double grow = t > 0.0 ? 1.1 * min_s / t : 1000.0;
        grow = grow < 1.5 ? 1.5 : grow > 1000.0 ? 1000.0 : grow;
        rounds = (long)((double)rounds * grow);
        t = chain(factor, rounds);
    }
    chain(factor, rounds);
    const double multiplies = (double)rounds * UNROLL;
    double hz[MAX_SAMPLES];
    for (int s = 0; s < samples; ++s) hz[s] = multiplies * LATENCY_CYCLES / chain(factor, rounds);

    printf("{\"cpu\": %d, \"latency_cycles\": %d, \"multiplies\": %.0f, \"clock_Hz\": %.6g, "
           "\"samples_Hz\": [", cpu, LATENCY_CYCLES, multiplies, median(hz, samples));
    for (int s = 0; s < samples; ++s) printf("%s%.6g", s ? ", " : "", hz[s]);
    printf("], \"checksum\": %llu}\n", (unsigned long long)sink);
    return 0;
}
