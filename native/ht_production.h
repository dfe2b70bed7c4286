/* hybridtune's production timing, inlined into a tuned library's dispatcher: step times kept per
 * variant, their summary, and the lines appended to $HYBRIDTUNE_REPORT (format: docs/tuned-solver.md). */
#ifndef HT_PRODUCTION_H
#define HT_PRODUCTION_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HT_KEPT 4096            /* step times kept per variant: a uniform sample beyond */
#define HT_REPORT_FORMAT "hybridtune-production-1"

typedef struct {
    double s[HT_KEPT];
    long count;                 /* steps timed */
    unsigned long long seed;    /* of the sample beyond HT_KEPT */
} ht_times;

static unsigned long long ht_next_random(unsigned long long *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 11;
}

static void ht_record(ht_times *times, double seconds)
{
    long at = times->count++;
    if (at >= HT_KEPT)
        at = (long)(ht_next_random(&times->seed) % (unsigned long long)(at + 1));
    if (at < HT_KEPT) times->s[at] = seconds;
}

static int ht_compare(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* median, the 95% interval of the median (order statistics) and the 10th and 90th percentiles
 * of the kept step times; 0 where none or memory runs out */
typedef struct { double median, low, high, p10, p90; long kept; } ht_summary;

static ht_summary ht_summarise(const ht_times *times)
{
    ht_summary out = {0, 0, 0, 0, 0, 0};
    long m = times->count < HT_KEPT ? times->count : HT_KEPT;
    double *s = m > 0 ? malloc((size_t)m * sizeof *s) : NULL;
    if (!s) return out;
    memcpy(s, times->s, (size_t)m * sizeof *s);
    qsort(s, (size_t)m, sizeof *s, ht_compare);
    long half = (long)(0.98 * sqrt((double)m));
    long lo = m / 2 - half - 1, hi = m / 2 + half;
    out.median = m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
    out.low = s[lo < 0 ? 0 : lo];
    out.high = s[hi >= m ? m - 1 : hi];
    out.p10 = s[(long)(0.1 * (m - 1))];
    out.p90 = s[(long)(0.9 * (m - 1))];
    out.kept = m;
    free(s);
    return out;
}

/* text as a JSON string */
static void ht_json_text(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
        if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
        else if (*c < 0x20) fprintf(out, "\\u%04x", *c);
        else fputc(*c, out);
    }
    fputc('"', out);
}

static void ht_trim(char *text)
{
    char *start = text;
    while (*start == ' ' || *start == '\t') ++start;
    memmove(text, start, strlen(start) + 1);
    size_t end = strlen(text);
    while (end && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\n'))
        text[--end] = '\0';
}

/* The host's facts as hybridtune identifies hardware (measure/provenance.py): the first
 * processor's model name, vendor and flags in /proc/cpuinfo, and cpu0's caches. */
static void ht_json_host(FILE *out)
{
    static const char *const keys[] = {"model name", "vendor_id", "flags"};
    static const char *const names[] = {"model", "vendor", "flags"};
    char *values[3] = {NULL, NULL, NULL};
    FILE *info = fopen("/proc/cpuinfo", "r");
    char *line = NULL;
    size_t size = 0;
    while (info && getline(&line, &size, info) > 0 && line[0] != '\n') {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        *colon = '\0';
        ht_trim(line);
        for (int k = 0; k < 3; ++k)
            if (!values[k] && strcmp(line, keys[k]) == 0) {
                values[k] = strdup(colon + 1);
                if (values[k]) ht_trim(values[k]);
            }
    }
    free(line);
    if (info) fclose(info);
    fputs("{", out);
    for (int k = 0; k < 3; ++k) {
        fprintf(out, "\"%s\": ", names[k]);
        ht_json_text(out, values[k] ? values[k] : "");
        fputs(", ", out);
        free(values[k]);
    }
    fputs("\"caches\": [", out);
    int written = 0;
    for (int index = 0; index < 64; ++index) {
        char path[128], fields[3][64];
        static const char *const files[] = {"level", "type", "size"};
        int found = 1;
        for (int f = 0; f < 3 && found; ++f) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index,
                     files[f]);
            FILE *in = fopen(path, "r");
            found = in && fgets(fields[f], sizeof fields[f], in) != NULL;
            if (in) fclose(in);
            if (found) ht_trim(fields[f]);
        }
        if (!found) continue;
        fprintf(out, "%s[\"index%d\", ", written++ ? ", " : "", index);
        for (int f = 0; f < 3; ++f) {
            ht_json_text(out, fields[f]);
            fputs(f < 2 ? ", " : "]", out);
        }
    }
    fputs("]}", out);
}

/* What a production run timed of one variant, as one line appended to the file $HYBRIDTUNE_REPORT
 * names. Never fails the run: where the file cannot be written the library says so once on
 * stderr and goes on. */
typedef struct {
    const char *library, *variant, *method, *ivp, *hardware_id, *code_sha256;
    long n;
    int ranks, threads, kept, candidates;
} ht_report_about;

static void ht_report(const ht_report_about *about, const ht_times *times)
{
    static int complained = 0;
    const char *path = getenv("HYBRIDTUNE_REPORT");
    if (!path || !*path || times->count == 0) return;
    ht_summary sum = ht_summarise(times);
    if (sum.kept == 0) return;
    FILE *out = fopen(path, "a");
    if (!out) {
        if (!complained++)
            fprintf(stderr, "%s: cannot append to HYBRIDTUNE_REPORT=%s (%s): what this run timed "
                    "is not reported\n", about->library, path, strerror(errno));
        return;
    }
    char node[256] = "";
    const char *slurm = getenv("SLURMD_NODENAME");
    if (slurm && *slurm) snprintf(node, sizeof node, "%s", slurm);
    else if (gethostname(node, sizeof node - 1) != 0) node[0] = '\0';
    node[sizeof node - 1] = '\0';
    fprintf(out, "{\"format\": \"%s\", \"library\": ", HT_REPORT_FORMAT);
    ht_json_text(out, about->library);
    fputs(", \"variant\": ", out);
    ht_json_text(out, about->variant);
    fputs(", \"method\": ", out);
    ht_json_text(out, about->method);
    fputs(", \"ivp\": ", out);
    ht_json_text(out, about->ivp);
    fprintf(out, ", \"n\": %ld, \"ranks\": %d, \"threads\": %d, \"steps\": %ld, \"sampled\": %ld, "
            "\"median_s\": %.9e, \"ci_low_s\": %.9e, \"ci_high_s\": %.9e, \"p10_s\": %.9e, "
            "\"p90_s\": %.9e, \"kept\": %s, \"candidates\": %d, \"hardware_id\": ", about->n,
            about->ranks, about->threads, times->count, sum.kept, sum.median, sum.low, sum.high,
            sum.p10, sum.p90, about->kept ? "true" : "false", about->candidates);
    ht_json_text(out, about->hardware_id);
    fputs(", \"code_sha256\": ", out);
    ht_json_text(out, about->code_sha256);
    fputs(", \"node\": ", out);
    ht_json_text(out, node);
    fprintf(out, ", \"written\": %lld, \"host\": ", (long long)time(NULL));
    ht_json_host(out);
    fputs("}\n", out);
    if (fclose(out) != 0 && !complained++)
        fprintf(stderr, "%s: writing HYBRIDTUNE_REPORT=%s failed (%s): what this run timed is not "
                "reported\n", about->library, path, strerror(errno));
}

#endif
