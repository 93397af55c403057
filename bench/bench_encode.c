/* Row build + encode throughput on one thread (lib/qwp): rows/s, wire bytes per
 * row, and the ratio against a plain memcpy of the same encoded bytes.
 *
 *   narrow   symbol (100 distinct), long, double, varchar(16), designated ts
 *   wide     20 mixed columns
 *   symbols  like narrow, the symbol drawn from 100,000 distinct values
 *
 * One JSON object per scenario on stdout, a table on stderr. Usage:
 *   bench_encode [rows_scale [scenario]]   (scale default 1.0; scenario: one name) */
#include "qwp/batch.h"
#include "qwp/encoder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH_ROWS 10000

typedef struct sink {
    uint64_t bytes, frames;
    uint8_t *last; /* a copy of the last frame, for the memcpy baseline */
    size_t last_len;
} sink;

static int emit(void *user, const uint8_t *frame, size_t len, bool is_last, qsf_errinfo *err) {
    sink *s = user;
    (void) is_last;
    (void) err;
    s->bytes += len;
    s->frames++;
    if (!s->last) {
        s->last = malloc(len);
        memcpy(s->last, frame, len);
        s->last_len = len;
    }
    return 0;
}

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static double now_s(void) {
    return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this thread: on a shared machine, the time the work itself took. */
static double cpu_s(void) {
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static char syms[100000][12];
static uint8_t sym_len[100000];

#define ROW_FN(name)         name##_row
#define ROW_H                qsf_qwp_batch *
#define ROW_CALL(h, fn, ...) (qsf_qwp_batch_##fn((h), __VA_ARGS__, NULL) != 0)
#include "schemas.h"

typedef int (*row_fn)(qsf_qwp_batch *, uint64_t, uint32_t);

/* memcpy of `bytes` in chunks of the frame size: the floor for producing them. */
static double memcpy_seconds(const sink *s, uint64_t bytes) {
    uint8_t *dst = malloc(s->last_len);
    memset(dst, 0, s->last_len);
    double t0 = cpu_s();
    for (uint64_t done = 0; done < bytes; done += s->last_len) {
        memcpy(dst, s->last, s->last_len);
        __asm__ volatile("" : : "r"(dst) : "memory");
    }
    double t = cpu_s() - t0;
    free(dst);
    return t;
}

static void run(const char *name, row_fn fn, uint64_t rows, uint32_t nsyms) {
    qsf_symtab *st;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *e;
    qsf_symtab_new(&st, NULL);
    qsf_qwp_batch_new(st, NULL, &b, NULL);
    qsf_qwp_encoder_new(&e, NULL);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    sink s = {0};
    for (uint64_t i = 0; i < BATCH_ROWS; i++) /* warm-up: buffers and symbols */
        fn(b, i, nsyms);
    qsf_qwp_encode(e, b, &o, NULL, emit, &s, NULL, NULL);
    s = (sink){0};
    double t0 = now_s(), c0 = cpu_s();
    for (uint64_t i = 0; i < rows; i++) {
        fn(b, i, nsyms);
        if (qsf_qwp_batch_rows(b) == BATCH_ROWS)
            qsf_qwp_encode(e, b, &o, NULL, emit, &s, NULL, NULL);
    }
    qsf_qwp_encode(e, b, &o, NULL, emit, &s, NULL, NULL);
    double t = now_s() - t0, cpu = cpu_s() - c0;
    double base = memcpy_seconds(&s, s.bytes);
    double rps = (double) rows / t, cps = (double) rows / cpu,
           bpr = (double) s.bytes / (double) rows;
    printf("{\"bench\":\"encode\",\"scenario\":\"%s\",\"rows\":%llu,\"batch_rows\":%d,"
           "\"rows_per_s\":%.0f,\"rows_per_cpu_s\":%.0f,\"ns_per_row_cpu\":%.1f,"
           "\"bytes_per_row\":%.2f,\"mb_per_cpu_s\":%.1f,\"memcpy_mb_per_cpu_s\":%.1f,"
           "\"memcpy_ratio\":%.1f}\n",
           name, (unsigned long long) rows, BATCH_ROWS, rps, cps, 1e9 * cpu / (double) rows, bpr,
           (double) s.bytes / cpu / 1e6, (double) s.bytes / base / 1e6, cpu / base);
    fprintf(stderr,
            "%-8s %11.0f rows/s wall %11.0f rows/cpu-s %7.1f ns/row %7.2f B/row  "
            "encode %.0f MB/cpu-s, memcpy %.0f MB/cpu-s (x%.1f)\n",
            name, rps, cps, 1e9 * cpu / (double) rows, bpr, (double) s.bytes / cpu / 1e6,
            (double) s.bytes / base / 1e6, cpu / base);
    free(s.last);
    qsf_qwp_encoder_free(e);
    qsf_qwp_batch_free(b);
    qsf_symtab_free(st);
}

int main(int argc, char **argv) {
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    for (int i = 0; i < 100000; i++)
        sym_len[i] = (uint8_t) snprintf(syms[i], sizeof syms[i], "SYM%06d", i);
    const char *only = argc > 2 ? argv[2] : NULL;
    if (!only || !strcmp(only, "narrow"))
        run("narrow", narrow_row, (uint64_t) (20e6 * scale), 100);
    if (!only || !strcmp(only, "wide"))
        run("wide", wide_row, (uint64_t) (4e6 * scale), 100);
    if (!only || !strcmp(only, "symbols"))
        run("symbols", narrow_row, (uint64_t) (10e6 * scale), 100000);
    return 0;
}
