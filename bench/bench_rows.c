/* The client's CPU per row through the public row API (docs/BENCHMARKS.md,
 * section "rows").
 *
 * For each schema of bench/schemas.h (narrow, wide, symbols) the benchmark
 * first measures the floor: the same rows built and encoded with the codec
 * alone (lib/qwp, what bench_encode measures), on this thread, 10,000 rows per
 * encode. Then, for memory and SF mode, it sends the same rows through
 * qsf_table, qsf_symbol, qsf_col_* and qsf_at_* (auto-flush every 10,000 rows, the
 * default auto_flush_interval left on) into a qwp-sink running as a separate
 * process, so that none of the server's CPU is counted, and stops the clock
 * when the last frame is acknowledged.
 *
 * Reported per case: rows/s (wall), the process's CPU per row (getrusage), the
 * CPU per row of each thread (producer = this thread, qsf-io, qsf-mgr,
 * qsf-spare, the rest), and the ratios against the floor: row_vs_encode (producer thread) and
 * cpu_vs_encode (whole process). One JSON object per case on stdout, a human
 * line on stderr.
 *
 * Usage: bench_rows [scale [schema [mode]]]; the sink binary is found beside
 * this one (../tools/qwp-sink/qwp-sink) or named by QSF_BENCH_SINK. */
#include "floors.h"
#include "procstat.h"
#include "qsf.h"
#include "qwp/batch.h"
#include "qwp/encoder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH_ROWS 10000
/* sf_max_segment_bytes' default: the size of the floor's fresh files. */
#define SEGMENT_BYTES ((size_t) 4 << 20)

static char syms[100000][12];
static uint8_t sym_len[100000];

#define ROW_FN(name)         name##_floor
#define ROW_H                qsf_qwp_batch *
#define ROW_CALL(h, fn, ...) (qsf_qwp_batch_##fn((h), __VA_ARGS__, NULL) != 0)
#include "schemas.h"
#undef ROW_FN
#undef ROW_H
#undef ROW_CALL

static qsf_errinfo row_err;
#define ROW_FN(name)         name##_api
#define ROW_H                qsf_sender *
#define ROW_CALL(h, fn, ...) (qsf_##fn((h), __VA_ARGS__, &row_err) != QSF_OK)
#include "schemas.h"

typedef int (*floor_fn)(qsf_qwp_batch *, uint64_t, uint32_t);
typedef int (*api_fn)(qsf_sender *, uint64_t, uint32_t);

typedef struct schema {
    const char *name;
    floor_fn floor;
    api_fn api;
    uint32_t nsyms;
    double rows; /* at scale 1 */
} schema;

static const schema SCHEMAS[] = {
    {"narrow", narrow_floor, narrow_api, 100, 4e6},
    {"wide", wide_floor, wide_api, 100, 1e6},
    {"symbols", narrow_floor, narrow_api, 100000, 2e6},
};

static void die(const char *what, const char *why) {
    fprintf(stderr, "bench_rows: %s: %s\n", what, why);
    exit(1);
}

/* ---- the floor: build + encode only ---- */

static int count_frame(void *user, const uint8_t *frame, size_t len, bool is_last,
                       qsf_errinfo *err) {
    (void) frame, (void) is_last, (void) err;
    *(uint64_t *) user += len;
    return 0;
}

/* The floor's timed part, and below the row API's: functions of their own,
 * never inlined, so that scripts/bench-rows-ir can count the instructions of
 * each alone (callgrind --toggle-collect). */
static __attribute__((noinline)) int encode_timed(const schema *sc, qsf_qwp_batch *b,
                                                  qsf_qwp_encoder *e, const qsf_qwp_enc_opts *o,
                                                  uint64_t rows, uint64_t *bytes) {
    int bad = 0;
    for (uint64_t i = 0; i < rows; i++) {
        bad |= sc->floor(b, i, sc->nsyms);
        if (qsf_qwp_batch_rows(b) == BATCH_ROWS) {
            bad |= qsf_qwp_encode(e, b, o, NULL, count_frame, bytes, NULL, NULL);
            qsf_qwp_batch_reset(b); /* as the sender does after a flush: buffers reused */
        }
    }
    return bad | qsf_qwp_encode(e, b, o, NULL, count_frame, bytes, NULL, NULL);
}

/* CPU ns per row of building and encoding `rows` rows on this thread; the
 * encoded bytes per row in *bytes_per_row. */
static double encode_ns_per_row(const schema *sc, uint64_t rows, double *bytes_per_row) {
    qsf_symtab *st;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *e;
    if (qsf_symtab_new(&st, NULL) || qsf_qwp_batch_new(st, NULL, &b, NULL) ||
        qsf_qwp_encoder_new(&e, NULL))
        die("floor", "cannot create the codec");
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    uint64_t bytes = 0;
    int bad = 0;
    for (uint64_t i = 0; i < BATCH_ROWS; i++) /* warm-up: buffers and symbols */
        bad |= sc->floor(b, i, sc->nsyms);
    bad |= qsf_qwp_encode(e, b, &o, NULL, count_frame, &bytes, NULL, NULL);
    qsf_qwp_batch_reset(b);
    bytes = 0;
    int64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    bad |= encode_timed(sc, b, e, &o, rows, &bytes);
    int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    if (bad)
        die("floor", "a codec call failed");
    *bytes_per_row = (double) bytes / (double) rows;
    qsf_qwp_encoder_free(e);
    qsf_qwp_batch_free(b);
    qsf_symtab_free(st);
    return (double) cpu / (double) rows;
}

/* ---- one case ---- */

typedef struct result {
    double rows_per_s, cpu_ns, thread_ns[T_KINDS];
} result;

static void publish(qsf_sender *s, const schema *sc, uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; i++)
        if (sc->api(s, i, sc->nsyms))
            die(qsf_err_name(row_err.code), row_err.msg);
    int64_t fsn;
    if (qsf_flush(s, &fsn, &row_err) != QSF_OK)
        die("flush", row_err.msg);
    while (qsf_acked_fsn(s) < fsn)
        nanosleep(&(struct timespec){0, 50000}, NULL);
}

static __attribute__((noinline)) void publish_timed(qsf_sender *s, const schema *sc, uint64_t from,
                                                    uint64_t to) {
    publish(s, sc, from, to);
}

static result run_case(const schema *sc, const char *sfdir, uint64_t rows) {
    sink_proc k;
    sink_start(&k);
    qsf_sender *s = sink_sender(&k, BATCH_ROWS, sfdir);
    uint64_t warm = rows / 10;
    publish(s, sc, 0, warm); /* connection up, buffers grown, symbols known */
    cpu_snap c0, c1;
    cpu_take(&c0);
    int64_t t0 = clock_ns(CLOCK_MONOTONIC);
    publish_timed(s, sc, warm, warm + rows);
    int64_t el = clock_ns(CLOCK_MONOTONIC) - t0;
    cpu_take(&c1);
    if (qsf_close(s, &row_err) != QSF_OK)
        die("qsf_close", row_err.msg);
    long long landed = sink_stop(&k);
    if (landed != (long long) (warm + rows))
        die("qwp-sink", "did not count every row");
    result r = {.rows_per_s = (double) rows * 1e9 / (double) el,
                .cpu_ns = (double) (c1.process_ns - c0.process_ns) / (double) rows};
    for (int t = 0; t < T_KINDS; t++)
        r.thread_ns[t] = (double) (c1.thread_ns[t] - c0.thread_ns[t]) / (double) rows;
    return r;
}

/* The floors of one case, measured next to it: the codec alone, and the
 * kernel's share of moving the encoded bytes (bench/floors.h). */
typedef struct floors {
    double encode_ns, bytes_per_row, tcp_ns, pages_ns;
} floors;

static floors measure_floors(const schema *sc, uint64_t rows, bool sf, const char *dir) {
    floors f = {0};
    f.encode_ns = encode_ns_per_row(sc, rows, &f.bytes_per_row);
    double total = f.bytes_per_row * (double) rows;
    size_t frame = (size_t) (f.bytes_per_row * BATCH_ROWS); /* one auto-flush's frame */
    f.tcp_ns = qsf_floor_tcp_ns(total, frame, rows);
    if (sf)
        f.pages_ns = qsf_floor_pages_ns(total, frame, SEGMENT_BYTES, dir, rows);
    return f;
}

static void report(const schema *sc, const char *mode, uint64_t rows, const floors *f,
                   const result *r) {
    double enc = f->encode_ns, floor = f->encode_ns + f->tcp_ns + f->pages_ns;
    printf("{\"bench\":\"rows\",\"schema\":\"%s\",\"mode\":\"%s\",\"rows\":%llu,"
           "\"rows_per_s\":%.0f,\"cpu_ns_per_row\":%.1f,\"producer_ns_per_row\":%.1f,"
           "\"io_ns_per_row\":%.1f,\"manager_ns_per_row\":%.1f,\"spare_ns_per_row\":%.1f,"
           "\"other_ns_per_row\":%.1f,"
           "\"encode_ns_per_row\":%.1f,\"row_vs_encode\":%.2f,\"cpu_vs_encode\":%.2f,"
           "\"bytes_per_row\":%.1f,\"tcp_ns_per_row\":%.1f,\"pages_ns_per_row\":%.1f,"
           "\"floor_ns_per_row\":%.1f,\"cpu_vs_floor\":%.2f}\n",
           sc->name, mode, (unsigned long long) rows, r->rows_per_s, r->cpu_ns,
           r->thread_ns[T_PRODUCER], r->thread_ns[T_IO], r->thread_ns[T_MGR], r->thread_ns[T_SPARE],
           r->thread_ns[T_OTHER], enc, r->thread_ns[T_PRODUCER] / enc, r->cpu_ns / enc,
           f->bytes_per_row, f->tcp_ns, f->pages_ns, floor, r->cpu_ns / floor);
    fprintf(stderr,
            "%-8s %-6s %9.0f rows/s  cpu %6.1f ns/row (producer %6.1f io %5.1f mgr %5.1f "
            "spare %4.1f other %4.1f)  encode %6.1f  row x%.2f  cpu x%.2f  (floor %.1f = encode + "
            "tcp %.1f "
            "+ pages %.1f: cpu x%.2f)\n",
            sc->name, mode, r->rows_per_s, r->cpu_ns, r->thread_ns[T_PRODUCER], r->thread_ns[T_IO],
            r->thread_ns[T_MGR], r->thread_ns[T_SPARE], r->thread_ns[T_OTHER], enc,
            r->thread_ns[T_PRODUCER] / enc, r->cpu_ns / enc, floor, f->tcp_ns, f->pages_ns,
            r->cpu_ns / floor);
}

int main(int argc, char **argv) {
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    const char *only = argc > 2 ? argv[2] : NULL, *only_mode = argc > 3 ? argv[3] : NULL;
    for (int i = 0; i < 100000; i++)
        sym_len[i] = (uint8_t) snprintf(syms[i], sizeof syms[i], "SYM%06d", i);
    char dir[] = "/tmp/qsf-bench-rows-XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp", strerror(errno));
    for (size_t i = 0; i < sizeof SCHEMAS / sizeof SCHEMAS[0]; i++) {
        const schema *sc = &SCHEMAS[i];
        if (only && strcmp(only, sc->name))
            continue;
        uint64_t rows = (uint64_t) (sc->rows * scale);
        for (int sf = 0; sf < 2; sf++) {
            const char *mode = sf ? "sf" : "memory";
            if (only_mode && strcmp(only_mode, mode))
                continue;
            char sfdir[600];
            snprintf(sfdir, sizeof sfdir, "%s;sender_id=%s", dir, sc->name);
            floors f = measure_floors(sc, rows, sf, dir); /* next to each case */
            result r = run_case(sc, sf ? sfdir : NULL, rows);
            report(sc, mode, rows, &f, &r);
        }
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
