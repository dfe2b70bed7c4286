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

#ifndef HT_CFLAGS              /* the flags the library was built with (its Makefile passes them) */
#define HT_CFLAGS ""
#endif
#ifndef __VERSION__
#define __VERSION__ ""
#endif
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

/* A growing text. */
typedef struct { char *s; size_t length, size; int failed; } ht_text;

static void ht_add(ht_text *text, const char *part, size_t length)
{
    if (text->failed) return;
    if (text->length + length + 1 > text->size) {
        size_t size = 2 * (text->length + length + 1) + 64;
        char *grown = realloc(text->s, size);
        if (!grown) { text->failed = 1; return; }
        text->s = grown;
        text->size = size;
    }
    memcpy(text->s + text->length, part, length);
    text->length += length;
    text->s[text->length] = '\0';
}

static void ht_adds(ht_text *text, const char *part) { ht_add(text, part, strlen(part)); }

/* text as a JSON string the way Python's json.dumps writes it (ASCII, \uXXXX beyond) */
static void ht_add_json(ht_text *out, const char *text)
{
    char code[32];
    ht_adds(out, "\"");
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        unsigned long point = *c++;
        int more = 0;
        if (point >= 0xf0) { more = 3; point &= 0x07; }
        else if (point >= 0xe0) { more = 2; point &= 0x0f; }
        else if (point >= 0xc0) { more = 1; point &= 0x1f; }
        else if (point >= 0x80) point = 0xfffd;
        for (; more > 0 && (*c & 0xc0) == 0x80; --more) point = (point << 6) | (*c++ & 0x3f);
        if (more > 0) point = 0xfffd;
        if (point == '"') ht_adds(out, "\\\"");
        else if (point == '\\') ht_adds(out, "\\\\");
        else if (point == '\n') ht_adds(out, "\\n");
        else if (point == '\r') ht_adds(out, "\\r");
        else if (point == '\t') ht_adds(out, "\\t");
        else if (point == '\b') ht_adds(out, "\\b");
        else if (point == '\f') ht_adds(out, "\\f");
        else if (point < 0x20 || (point > 0x7f && point < 0x10000)) {
            snprintf(code, sizeof code, "\\u%04lx", point);
            ht_adds(out, code);
        } else if (point >= 0x10000) {
            point -= 0x10000;
            snprintf(code, sizeof code, "\\u%04lx\\u%04lx", 0xd800 + (point >> 10),
                     0xdc00 + (point & 0x3ff));
            ht_adds(out, code);
        } else {
            char one = (char)point;
            ht_add(out, &one, 1);
        }
    }
    ht_adds(out, "\"");
}

/* SHA-256 (FIPS 180-4) of length bytes, as 64 hex digits */
static void ht_sha256(const unsigned char *data, size_t length, char hex[65])
{
    static const unsigned int k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2};
    unsigned int h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f,
                         0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t total = ((length + 8) / 64 + 1) * 64;
    unsigned char block[64];
    for (size_t at = 0; at < total; at += 64) {
        for (size_t i = 0; i < 64; ++i) {
            size_t byte = at + i;
            block[i] = byte < length ? data[byte] : byte == length ? 0x80 : 0;
            if (byte >= total - 8)
                block[i] = (unsigned char)(((unsigned long long)length * 8) >> (8 * (total - 1 - byte)));
        }
        unsigned int w[64], v[8];
        for (int i = 0; i < 16; ++i)
            w[i] = (unsigned int)block[4 * i] << 24 | (unsigned int)block[4 * i + 1] << 16
                   | (unsigned int)block[4 * i + 2] << 8 | block[4 * i + 3];
#define HT_ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
        for (int i = 16; i < 64; ++i)
            w[i] = w[i - 16] + (HT_ROTR(w[i - 15], 7) ^ HT_ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3))
                   + w[i - 7] + (HT_ROTR(w[i - 2], 17) ^ HT_ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10));
        memcpy(v, h, sizeof v);
        for (int i = 0; i < 64; ++i) {
            unsigned int t1 = v[7] + (HT_ROTR(v[4], 6) ^ HT_ROTR(v[4], 11) ^ HT_ROTR(v[4], 25))
                              + ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[i] + w[i];
            unsigned int t2 = (HT_ROTR(v[0], 2) ^ HT_ROTR(v[0], 13) ^ HT_ROTR(v[0], 22))
                              + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
            memmove(v + 1, v, 7 * sizeof v[0]);
            v[4] += t1;
            v[0] = t1 + t2;
        }
#undef HT_ROTR
        for (int i = 0; i < 8; ++i) h[i] += v[i];
    }
    for (int i = 0; i < 8; ++i) snprintf(hex + 8 * i, 9, "%08x", h[i]);
}

static void ht_trim(char *text)
{
    char *start = text;
    while (*start == ' ' || *start == '\t' || *start == '\n' || *start == '\r') ++start;
    memmove(text, start, strlen(start) + 1);
    size_t end = strlen(text);
    while (end && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\n'
                   || text[end - 1] == '\r'))
        text[--end] = '\0';
}

static int ht_compare_text(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The host's hardware as hybridtune identifies it (measure/provenance.py): the first processor's
 * model name, vendor and flags in /proc/cpuinfo and cpu0's caches, their digest the hardware id
 * (24 hex digits); facts: the same as a JSON object (caches with their index names). */
static void ht_hardware(ht_text *facts, char id[25])
{
    static const char *const keys[] = {"model name", "vendor_id", "flags"};
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
            if (!values[k] && strcmp(line, keys[k]) == 0 && (values[k] = strdup(colon + 1)))
                ht_trim(values[k]);
    }
    free(line);
    if (info) fclose(info);
    const char *model = values[0] ? values[0] : "unknown", *vendor = values[1] ? values[1] : "";
    /* the flags sorted, as Python sorts them, and their digest */
    char *flags = strdup(values[2] ? values[2] : ""), *words[4096];
    int count = 0;
    for (char *word = flags ? strtok(flags, " \t") : NULL; word && count < 4096;
         word = strtok(NULL, " \t"))
        words[count++] = word;
    qsort(words, (size_t)count, sizeof words[0], ht_compare_text);
    ht_text sorted = {0};
    for (int k = 0; k < count; ++k) {
        if (k) ht_adds(&sorted, " ");
        ht_adds(&sorted, words[k]);
    }
    char flags_hex[65];
    ht_sha256((const unsigned char *)(sorted.s ? sorted.s : ""), sorted.length, flags_hex);
    flags_hex[16] = '\0';
    free(sorted.s);
    free(flags);
    /* cpu0's caches in the order of their index names */
    char *names[64], cache[64][3][64];
    int caches = 0;
    for (int index = 0; index < 64; ++index) {
        static const char *const files[] = {"level", "type", "size"};
        char path[128];
        int found = 1;
        for (int f = 0; f < 3 && found; ++f) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index,
                     files[f]);
            FILE *in = fopen(path, "r");
            found = in && fgets(cache[caches][f], sizeof cache[caches][f], in) != NULL;
            if (in) fclose(in);
            if (found) ht_trim(cache[caches][f]);
        }
        if (!found) continue;
        names[caches] = malloc(16);
        if (names[caches]) snprintf(names[caches], 16, "index%d", index);
        if (names[caches]) ++caches;
    }
    int order[64];
    for (int k = 0; k < caches; ++k) order[k] = k;
    for (int k = 1; k < caches; ++k)           /* by name, as Python sorts the index folders */
        for (int j = k; j > 0 && strcmp(names[order[j - 1]], names[order[j]]) > 0; --j) {
            int swap = order[j];
            order[j] = order[j - 1];
            order[j - 1] = swap;
        }
    /* the identity as Python's json.dumps(..., sort_keys=True) writes it */
    ht_text identity = {0};
    ht_adds(&identity, "{\"caches\": [");
    ht_adds(facts, "{\"model\": ");
    ht_add_json(facts, model);
    ht_adds(facts, ", \"vendor\": ");
    ht_add_json(facts, vendor);
    ht_adds(facts, ", \"flags\": ");
    ht_add_json(facts, values[2] ? values[2] : "");
    ht_adds(facts, ", \"caches\": [");
    for (int k = 0; k < caches; ++k) {
        ht_adds(&identity, k ? ", [" : "[");
        ht_adds(facts, k ? ", [" : "[");
        ht_add_json(facts, names[order[k]]);
        for (int f = 0; f < 3; ++f) {
            ht_add_json(&identity, cache[order[k]][f]);
            ht_adds(&identity, f < 2 ? ", " : "]");
            ht_adds(facts, ", ");
            ht_add_json(facts, cache[order[k]][f]);
        }
        ht_adds(facts, "]");
    }
    for (int k = 0; k < caches; ++k) free(names[k]);
    ht_adds(facts, "]}");
    ht_adds(&identity, "], \"flags_sha256\": ");
    ht_add_json(&identity, flags_hex);
    ht_adds(&identity, ", \"model\": ");
    ht_add_json(&identity, model);
    ht_adds(&identity, ", \"vendor\": ");
    ht_add_json(&identity, vendor);
    ht_adds(&identity, "}");
    char hex[65];
    ht_sha256((const unsigned char *)(identity.s ? identity.s : ""), identity.length, hex);
    snprintf(id, 25, "%.24s", identity.failed ? "" : hex);
    free(identity.s);
    for (int k = 0; k < 3; ++k) free(values[k]);
}

/* What a production run timed of one variant, as one line appended to the file $HYBRIDTUNE_REPORT
 * names. Never fails the run: where the file cannot be written the library says so once on
 * stderr and goes on. */
typedef struct {
    const char *library, *variant, *method, *ivp, *tuned_hardware_id, *code_sha256;
    long n;
    int ranks, threads, kept, candidates;
} ht_report_about;

static void ht_report(const ht_report_about *about, const ht_times *times)
{
    static int complained = 0;
    static ht_text facts = {0};       /* the host's hardware: read once per process */
    static char id[25] = "";
    const char *path = getenv("HYBRIDTUNE_REPORT");
    if (!path || !*path || times->count == 0) return;
    ht_summary sum = ht_summarise(times);
    if (sum.kept == 0) return;
    char node[256] = "", number[512];
    const char *slurm = getenv("SLURMD_NODENAME");
    if (slurm && *slurm) snprintf(node, sizeof node, "%s", slurm);
    else if (gethostname(node, sizeof node - 1) != 0) node[0] = '\0';
    node[sizeof node - 1] = '\0';
    ht_text line = {0};
    if (!id[0] && !facts.s) ht_hardware(&facts, id);
    const char *texts[][2] = {{"library", about->library}, {"variant", about->variant},
                              {"method", about->method}, {"ivp", about->ivp},
                              {"hardware_id", id}, {"tuned_hardware_id", about->tuned_hardware_id},
                              {"code_sha256", about->code_sha256}, {"compiler", __VERSION__},
                              {"compiler_flags", HT_CFLAGS}, {"node", node}};
    ht_adds(&line, "{\"format\": \"" HT_REPORT_FORMAT "\"");
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; ++k) {
        snprintf(number, sizeof number, ", \"%s\": ", texts[k][0]);
        ht_adds(&line, number);
        ht_add_json(&line, texts[k][1]);
    }
    snprintf(number, sizeof number, ", \"n\": %ld, \"ranks\": %d, \"threads\": %d, \"steps\": %ld, "
             "\"sampled\": %ld, \"median_s\": %.9e, \"ci_low_s\": %.9e, \"ci_high_s\": %.9e, "
             "\"p10_s\": %.9e, \"p90_s\": %.9e, \"kept\": %s, \"candidates\": %d, \"written\": %lld, "
             "\"host\": ", about->n, about->ranks, about->threads, times->count, sum.kept,
             sum.median, sum.low, sum.high, sum.p10, sum.p90, about->kept ? "true" : "false",
             about->candidates, (long long)time(NULL));
    ht_adds(&line, number);
    ht_add(&line, facts.s ? facts.s : "{}", facts.s ? facts.length : 2);
    ht_adds(&line, "}\n");
    FILE *out = line.failed ? NULL : fopen(path, "a");
    int written = out && fwrite(line.s, 1, line.length, out) == line.length;
    if (out && fclose(out) != 0) written = 0;
    if (!written && !complained++)
        fprintf(stderr, "%s: cannot append to HYBRIDTUNE_REPORT=%s (%s): what this run timed is "
                "not reported\n", about->library, path, line.failed ? "out of memory"
                : strerror(errno));
    free(line.s);
}

#endif
