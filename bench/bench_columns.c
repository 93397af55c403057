/* The client's CPU per row through the column chunk API against the row API
 * on the same data, and against a floor measured in the same run
 * (docs/BENCHMARKS.md, "columns").
 *
 * Schemas (bench/schemas.h): narrow (symbol, long, double, varchar, ts), wide
 * (20 mixed columns + ts) and symbols (narrow with 100,000 distinct symbols).
 * The column buffers of one chunk (rows_per_chunk rows, in Arrow's layout:
 * symbols as plain strings with offsets) are built before the clock starts,
 * as a program holding columnar data has them; every chunk flush sends them.
 * The row API sends the very same rows (row i is the chunk's row i modulo
 * rows_per_chunk) through qsf_table / qsf_symbol / qsf_col_* / qsf_at_*, with
 * auto-flush every 10,000 rows, as bench_rows does.
 *
 * Each case runs into a qwp-sink process of its own (none of the server's CPU
 * is counted) and stops the clock when the last frame is acknowledged. The
 * sink runs with --ack-only: it counts each frame's rows from its header and
 * table block without decoding it, since its decoder, not the client, capped
 * the chunk path's rate (QSF_BENCH_SINK_DECODE=1: decode as usual). Reported: rows/s (wall) and the
 * process's CPU per row of both paths, the chunk path's CPU per row by thread, and the floor: what
 * moving the chunk path's encoded bytes costs without qsf, on this machine,
 * now: a memcpy into fresh file pages (SF; memory mode: into a reused
 * buffer), CRC32C over them, and a loopback TCP send to a reading process.
 * The narrow-shaped schemas also run an Arrow case: the same column buffers
 * handed as an Arrow record batch (qsf_chunk_arrow_batch) for each chunk,
 * reported as arrow_cpu_ns_per_row and arrow_vs_typed (wide has a geohash
 * column, which Arrow has no type for: null there).
 * One JSON object per case and round on stdout, a human line on stderr.
 *
 * Usage: bench_columns [rounds [scale [schema [mode [path]]]]] (path: rows,
 * columns or arrow alone, for a profiler; the ratios are then meaningless);
 * the sink binary is found beside this one (../tools/qwp-sink/qwp-sink) or
 * named by QSF_BENCH_SINK. Each round runs per case the row API, then the
 * typed chunk calls and the Arrow batch (odd rounds in that order, even rounds
 * Arrow first), then the floor. */
#include "chunk/chunk_enc.h"
#include "crc32c.h"
#include "floors.h"
#include "procstat.h"
#include "qsf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH_ROWS    10000
#define SEGMENT_BYTES ((size_t) 4 << 20) /* sf_max_segment_bytes' default */

static char syms[100000][12];
static uint8_t sym_len[100000];
static uint64_t chunk_rows; /* rows of the chunk; the row API's row i is row i % chunk_rows */
static bool ack_only;       /* the sink acknowledges without decoding */

static qsf_errinfo row_err;
#define ROW_FN(name)         name##_api
#define ROW_H                qsf_sender *
#define ROW_CALL(h, fn, ...) (qsf_##fn((h), __VA_ARGS__, &row_err) != QSF_OK)
#include "schemas.h"

static void die(const char *what, const char *why) {
    fprintf(stderr, "bench_columns: %s: %s\n", what, why);
    exit(1);
}

/* ---- the columns ---- */

/* Strings in Arrow's layout (32-bit offsets). */
typedef struct strs {
    int32_t *offs;
    char *data;
} strs;

static void strs_fill(strs *s, uint64_t n, const char *(*get)(uint64_t, uint8_t *) ) {
    s->offs = malloc((n + 1) * 4);
    s->data = malloc(n * 17 + 1);
    if (!s->offs || !s->data)
        die("columns", "out of memory");
    int32_t at = 0;
    s->offs[0] = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint8_t len;
        const char *v = get(i, &len);
        memcpy(s->data + at, v, len);
        at += len;
        s->offs[i + 1] = at;
    }
}

static uint32_t nsyms_now;
static const char *narrow_sym(uint64_t i, uint8_t *len) {
    uint32_t k = (uint32_t) ((i * 2654435761u) % nsyms_now);
    *len = sym_len[k];
    return syms[k];
}
static const char *wide_s1(uint64_t i, uint8_t *len) {
    *len = sym_len[i % 50];
    return syms[i % 50];
}
static const char *wide_s2(uint64_t i, uint8_t *len) {
    *len = sym_len[i % 7];
    return syms[i % 7];
}
static const char *note(uint64_t i, uint8_t *len) {
    (void) i;
    *len = 16;
    return "order-0123456789";
}
static const char *alpha(uint64_t i, uint8_t *len) {
    (void) i;
    *len = 16;
    return "alpha-beta-gamma";
}
static const char *x1(uint64_t i, uint8_t *len) {
    (void) i;
    *len = 1;
    return "x";
}

/* Every buffer any schema needs, for rows [0, n): the values schemas.h's row
 * i holds. */
typedef struct cols {
    strs sym, note, s1, s2, v1, v2;
    int64_t *qty, *ts, *l2, *t1, *dt, *px64;
    double *px, *d1, *d2;
    float *r1;
    int32_t *i1;
    int16_t *h1;
    int8_t *b1;
    uint8_t *f1, *u1;
    uint16_t *c1;
    uint32_t *ip;
    uint64_t *g;
} cols;

#define ALLOC(p, n) ((p) = malloc((size_t) (n) * sizeof *(p)))

static void cols_build(cols *c, uint64_t n, bool wide, uint32_t nsyms) {
    nsyms_now = nsyms;
    ALLOC(c->qty, n), ALLOC(c->ts, n);
    for (uint64_t i = 0; i < n; i++) {
        c->qty[i] = (int64_t) i;
        c->ts[i] = 1700000000000000 + (int64_t) i * 10;
    }
    if (!wide) {
        strs_fill(&c->sym, n, narrow_sym);
        strs_fill(&c->note, n, note);
        ALLOC(c->px, n);
        for (uint64_t i = 0; i < n; i++)
            c->px[i] = 100.0 + (double) (i & 1023) * 0.01;
        return;
    }
    strs_fill(&c->s1, n, wide_s1), strs_fill(&c->s2, n, wide_s2);
    strs_fill(&c->v1, n, alpha), strs_fill(&c->v2, n, x1);
    ALLOC(c->l2, n), ALLOC(c->t1, n), ALLOC(c->dt, n), ALLOC(c->px64, n), ALLOC(c->d1, n);
    ALLOC(c->d2, n), ALLOC(c->r1, n), ALLOC(c->i1, n), ALLOC(c->h1, n), ALLOC(c->b1, n);
    ALLOC(c->f1, n), ALLOC(c->u1, n * 16), ALLOC(c->c1, n), ALLOC(c->ip, n), ALLOC(c->g, n);
    for (uint64_t i = 0; i < n; i++) {
        c->l2[i] = (int64_t) (i * 3);
        c->i1[i] = (int32_t) i;
        c->h1[i] = (int16_t) i;
        c->b1[i] = (int8_t) i;
        c->f1[i] = i & 1;
        c->d1[i] = (double) i * 0.5;
        c->d2[i] = (double) i * 0.25;
        c->r1[i] = (float) i;
        c->t1[i] = 1700000000000000 + (int64_t) i;
        c->dt[i] = 1700000000000 + (int64_t) i;
        for (int b = 0; b < 8; b++) { /* RFC 4122 order: hi (~i) then lo (i), big-endian */
            c->u1[i * 16 + (size_t) b] = (uint8_t) (~i >> (56 - 8 * b));
            c->u1[i * 16 + 8 + (size_t) b] = (uint8_t) (i >> (56 - 8 * b));
        }
        c->c1[i] = (uint16_t) ('A' + i % 26);
        c->ip[i] = 0x0A000001u + (uint32_t) (i & 255);
        c->px64[i] = (int64_t) i * 100;
        c->g[i] = i;
    }
}

static void cols_free(cols *c) {
    strs *all[] = {&c->sym, &c->note, &c->s1, &c->s2, &c->v1, &c->v2};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]->offs), free(all[i]->data);
    void *p[] = {c->qty, c->ts, c->l2, c->t1, c->dt, c->px64, c->px, c->d1, c->d2,
                 c->r1,  c->i1, c->h1, c->b1, c->f1, c->u1,   c->c1, c->ip, c->g};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        free(p[i]);
}

#define ADD(call)                                                                                  \
    do {                                                                                           \
        if ((call) != QSF_OK)                                                                      \
            die("chunk", e.msg);                                                                   \
    } while (0)

static void narrow_chunk(qsf_chunk *k, const cols *c, uint64_t n) {
    qsf_errinfo e;
    ADD(qsf_chunk_symbol(k, "sym", 3, c->sym.offs, c->sym.data, NULL, 0, n, &e));
    ADD(qsf_chunk_i64(k, "qty", 3, c->qty, NULL, 0, n, &e));
    ADD(qsf_chunk_f64(k, "px", 2, c->px, NULL, 0, n, &e));
    ADD(qsf_chunk_varchar(k, "note", 4, c->note.offs, c->note.data, NULL, 0, n, &e));
    ADD(qsf_chunk_at(k, c->ts, QSF_UNIT_MICROS, 0, n, &e));
}

/* ---- the same narrow columns as an Arrow record batch ---- */

/* A record batch (struct array "+s") whose children point at the very
 * buffers narrow_chunk passes (no copy, null_count 0, no validity): the Arrow
 * import's cost over the typed calls is what the arrow case adds. */
typedef struct arrow_batch {
    struct ArrowSchema schema, fields[5], *field_ptrs[5];
    struct ArrowArray array, kids[5], *kid_ptrs[5];
    const void *bufs[5][3], *top_bufs[1];
} arrow_batch;

/* The batch owns nothing (its buffers are the bench's columns): the release
 * callbacks only mark the structs live, as the import requires. */
static void arrow_release_schema(struct ArrowSchema *s) {
    (void) s;
}
static void arrow_release_array(struct ArrowArray *a) {
    (void) a;
}

static void arrow_field(arrow_batch *b, int i, const char *name, const char *format, const void *b1,
                        const void *b2, uint64_t n) {
    b->fields[i] = (struct ArrowSchema){.format = format,
                                        .name = name,
                                        .flags = ARROW_FLAG_NULLABLE,
                                        .release = arrow_release_schema};
    b->bufs[i][0] = NULL;
    b->bufs[i][1] = b1;
    b->bufs[i][2] = b2;
    b->kids[i] = (struct ArrowArray){.length = (int64_t) n,
                                     .n_buffers = b2 ? 3 : 2,
                                     .buffers = b->bufs[i],
                                     .release = arrow_release_array};
    b->field_ptrs[i] = &b->fields[i];
    b->kid_ptrs[i] = &b->kids[i];
}

static void arrow_build(arrow_batch *b, const cols *c, uint64_t n) {
    arrow_field(b, 0, "sym", "u", c->sym.offs, c->sym.data, n);
    arrow_field(b, 1, "qty", "l", c->qty, NULL, n);
    arrow_field(b, 2, "px", "g", c->px, NULL, n);
    arrow_field(b, 3, "note", "u", c->note.offs, c->note.data, n);
    arrow_field(b, 4, "ts", "tsu:", c->ts, NULL, n);
    b->schema = (struct ArrowSchema){.format = "+s",
                                     .name = "",
                                     .n_children = 5,
                                     .children = b->field_ptrs,
                                     .release = arrow_release_schema};
    b->top_bufs[0] = NULL;
    b->array = (struct ArrowArray){.length = (int64_t) n,
                                   .n_buffers = 1,
                                   .n_children = 5,
                                   .buffers = b->top_bufs,
                                   .children = b->kid_ptrs,
                                   .release = arrow_release_array};
}

static void arrow_chunk(qsf_chunk *k, const arrow_batch *b) {
    qsf_errinfo e;
    ADD(qsf_chunk_arrow_batch(k, &b->schema, &b->array, "ts", &e));
}

static void wide_chunk(qsf_chunk *k, const cols *c, uint64_t n) {
    qsf_errinfo e;
    ADD(qsf_chunk_symbol(k, "s1", 2, c->s1.offs, c->s1.data, NULL, 0, n, &e));
    ADD(qsf_chunk_symbol(k, "s2", 2, c->s2.offs, c->s2.data, NULL, 0, n, &e));
    ADD(qsf_chunk_i64(k, "l1", 2, c->qty, NULL, 0, n, &e));
    ADD(qsf_chunk_i64(k, "l2", 2, c->l2, NULL, 0, n, &e));
    ADD(qsf_chunk_i32(k, "i1", 2, c->i1, NULL, 0, n, &e));
    ADD(qsf_chunk_i16(k, "h1", 2, c->h1, NULL, 0, n, &e));
    ADD(qsf_chunk_i8(k, "b1", 2, c->b1, NULL, 0, n, &e));
    ADD(qsf_chunk_bool_u8(k, "f1", 2, c->f1, NULL, 0, n, &e));
    ADD(qsf_chunk_f64(k, "d1", 2, c->d1, NULL, 0, n, &e));
    ADD(qsf_chunk_f64(k, "d2", 2, c->d2, NULL, 0, n, &e));
    ADD(qsf_chunk_f32(k, "r1", 2, c->r1, NULL, 0, n, &e));
    ADD(qsf_chunk_varchar(k, "v1", 2, c->v1.offs, c->v1.data, NULL, 0, n, &e));
    ADD(qsf_chunk_varchar(k, "v2", 2, c->v2.offs, c->v2.data, NULL, 0, n, &e));
    ADD(qsf_chunk_timestamp(k, "t1", 2, c->t1, QSF_UNIT_MICROS, NULL, 0, n, &e));
    ADD(qsf_chunk_date_millis(k, "dt", 2, c->dt, NULL, 0, n, &e));
    ADD(qsf_chunk_uuid(k, "u1", 2, c->u1, NULL, 0, n, &e));
    ADD(qsf_chunk_char(k, "c1", 2, c->c1, NULL, 0, n, &e));
    ADD(qsf_chunk_ipv4(k, "ip", 2, c->ip, NULL, 0, n, &e));
    ADD(qsf_chunk_decimal64(k, "px", 2, c->px64, 2, NULL, 0, n, &e));
    ADD(qsf_chunk_geohash(k, "g", 1, c->g, 30, NULL, 0, n, &e));
    ADD(qsf_chunk_at(k, c->ts, QSF_UNIT_MICROS, 0, n, &e));
}

typedef struct schema {
    const char *name, *table;
    int (*api)(qsf_sender *, uint64_t, uint32_t);
    void (*chunk)(qsf_chunk *, const cols *, uint64_t);
    bool wide;
    uint32_t nsyms;
    double rows, per_chunk; /* at scale 1 */
} schema;

static const schema SCHEMAS[] = {
    {"narrow", "trades", narrow_api, narrow_chunk, false, 100, 2e6, 2e5},
    {"wide", "wide", wide_api, wide_chunk, true, 100, 1e6, 1e5},
    {"symbols", "trades", narrow_api, narrow_chunk, false, 100000, 2e6, 2e5},
};

/* ---- the two paths ---- */

typedef struct result {
    double rows_per_s, cpu_ns, thread_ns[T_KINDS];
} result;

static void wait_acked(qsf_sender *s, int64_t fsn) {
    while (qsf_acked_fsn(s) < fsn)
        nanosleep(&(struct timespec){0, 50000}, NULL);
}

/* The sending loops are kept out of line so that a profiler can count them
 * alone (callgrind --toggle-collect=rows_send / chunks_send / arrow_send),
 * without the wait for the acknowledgements. */
__attribute__((noinline)) static int64_t rows_send(qsf_sender *s, const schema *sc, uint64_t from,
                                                   uint64_t to) {
    for (uint64_t i = from; i < to; i++)
        if (sc->api(s, i % chunk_rows, sc->nsyms))
            die(qsf_err_name(row_err.code), row_err.msg);
    int64_t fsn;
    if (qsf_flush(s, &fsn, &row_err) != QSF_OK)
        die("flush", row_err.msg);
    return fsn;
}

/* The inputs of one case: the row API (chunk == NULL), the typed chunk calls
 * on the column buffers, or the same buffers as an Arrow record batch. */
typedef struct feed {
    qsf_chunk *chunk;
    const cols *c;
    const arrow_batch *arrow; /* NULL: typed calls */
} feed;

/* Each flush builds its chunk from the column buffers first (the calls check
 * every value), as a program sending each batch once does. */
__attribute__((noinline)) static int64_t chunks_send(qsf_sender *s, const schema *sc, const feed *f,
                                                     uint64_t chunks) {
    int64_t fsn = -1;
    for (uint64_t i = 0; i < chunks; i++) {
        qsf_chunk_clear(f->chunk);
        sc->chunk(f->chunk, f->c, chunk_rows);
        if (qsf_flush_chunk(s, f->chunk, &fsn, &row_err) != QSF_OK)
            die("qsf_flush_chunk", row_err.msg);
    }
    return fsn;
}

/* The same with each chunk built by qsf_chunk_arrow_batch. */
__attribute__((noinline)) static int64_t arrow_send(qsf_sender *s, const feed *f, uint64_t chunks) {
    int64_t fsn = -1;
    for (uint64_t i = 0; i < chunks; i++) {
        qsf_chunk_clear(f->chunk);
        arrow_chunk(f->chunk, f->arrow);
        if (qsf_flush_chunk(s, f->chunk, &fsn, &row_err) != QSF_OK)
            die("qsf_flush_chunk (arrow)", row_err.msg);
    }
    return fsn;
}

static void publish(qsf_sender *s, const schema *sc, const feed *f, uint64_t first,
                    uint64_t chunks) {
    int64_t fsn;
    if (f->chunk == NULL)
        fsn = rows_send(s, sc, first * chunk_rows, (first + chunks) * chunk_rows);
    else if (f->arrow != NULL)
        fsn = arrow_send(s, f, chunks);
    else
        fsn = chunks_send(s, sc, f, chunks);
    wait_acked(s, fsn);
}

/* One case: one of the three feeds, into a sink of its own. */
static result run_case(const schema *sc, const char *sfdir, uint64_t rows, const feed *f) {
    sink_proc k;
    sink_start_arg(&k, ack_only ? "--ack-only" : NULL);
    qsf_sender *s = sink_sender(&k, BATCH_ROWS, sfdir);
    uint64_t chunks = rows / chunk_rows;
    publish(s, sc, f, 0, 1); /* warm-up: connection up, buffers grown, symbols known */
    cpu_snap c0, c1;
    cpu_take(&c0);
    int64_t t0 = clock_ns(CLOCK_MONOTONIC);
    publish(s, sc, f, 1, chunks);
    int64_t el = clock_ns(CLOCK_MONOTONIC) - t0;
    cpu_take(&c1);
    if (qsf_close(s, &row_err) != QSF_OK)
        die("qsf_close", row_err.msg);
    long long landed = sink_stop(&k);
    if (landed != (long long) ((chunks + 1) * chunk_rows))
        die("qwp-sink", "did not count every row");
    double n = (double) (chunks * chunk_rows);
    result r = {.rows_per_s = n * 1e9 / (double) el,
                .cpu_ns = (double) (c1.process_ns - c0.process_ns) / n};
    for (int t = 0; t < T_KINDS; t++)
        r.thread_ns[t] = (double) (c1.thread_ns[t] - c0.thread_ns[t]) / n;
    return r;
}

/* ---- the floor ---- */

static int count_bytes(void *user, const uint8_t *frame, size_t len, bool last, qsf_errinfo *e) {
    (void) frame, (void) last, (void) e;
    *(uint64_t *) user += len;
    return QSF_OK;
}

/* The frame bytes per row of the chunk (encoded once, outside any clock). */
static double chunk_bytes_per_row(qsf_chunk *k, size_t max_frame, size_t *frame) {
    qsf_symtab *st;
    if (qsf_symtab_new(&st, NULL))
        die("floor", "no symbol table");
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = max_frame;
    uint64_t bytes = 0;
    qsf_chunk_out out = {NULL, count_bytes, NULL, &bytes};
    qsf_qwp_encode_result res;
    if (qsf_chunk_encode(k, st, &o, &out, &res, &row_err) != QSF_OK)
        die("floor", row_err.msg);
    qsf_symtab_free(st);
    *frame = (size_t) (bytes / res.frames);
    return (double) bytes / (double) chunk_rows;
}

/* CRC32C over total_bytes in frame-sized pieces, and (memory mode) a memcpy
 * of them into a reused buffer: this thread's CPU per row. */
static double crc_copy_ns(double total, size_t frame, bool copy, uint64_t rows) {
    uint8_t *src = malloc(frame), *dst = malloc(frame);
    if (!src || !dst)
        die("floor", "out of memory");
    memset(src, 0x5A, frame);
    memset(dst, 0, frame);
    uint32_t crc = 0;
    int64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (double done = 0; done < total; done += (double) frame) {
        if (copy)
            memcpy(dst, src, frame);
        crc ^= qsf_crc32c(copy ? dst : src, frame);
    }
    int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    free(src);
    free(dst);
    if (crc == 1)
        fprintf(stderr, " "); /* keeps the CRC from being optimised away */
    return (double) cpu / (double) rows;
}

typedef struct floors {
    double bytes_per_row, pages_ns, crc_ns, tcp_ns, total;
    double pages_large_ns, pages_recycled_ns; /* beside the floor, not in it (floors.h) */
} floors;

static floors measure_floor(qsf_chunk *k, uint64_t rows, bool sf, const char *dir) {
    floors f = {0};
    size_t frame;
    f.bytes_per_row = chunk_bytes_per_row(k, sf ? SEGMENT_BYTES - 32 : 0, &frame);
    double total = f.bytes_per_row * (double) rows;
    if (sf)
        f.pages_ns = qsf_floor_pages_ns(total, frame, SEGMENT_BYTES, dir, rows);
    if (sf)
        f.pages_large_ns = qsf_floor_pages_large_ns(total, frame, SEGMENT_BYTES, dir, rows);
    if (sf)
        f.pages_recycled_ns = qsf_floor_pages_recycled_ns(total, frame, SEGMENT_BYTES, dir, rows);
    f.crc_ns = crc_copy_ns(total, frame, !sf, rows);
    f.tcp_ns = qsf_floor_tcp_ns(total, frame, rows);
    f.total = f.pages_ns + f.crc_ns + f.tcp_ns;
    return f;
}

/* The arrow case's figures, or null where the schema has no Arrow case. */
static void arrow_json(char *out, size_t cap, const result *a, const result *c) {
    if (a == NULL)
        snprintf(out, cap,
                 "\"arrow_rows_per_s\":null,\"arrow_cpu_ns_per_row\":null,"
                 "\"arrow_producer_ns_per_row\":null,\"arrow_vs_typed\":null");
    else
        snprintf(out, cap,
                 "\"arrow_rows_per_s\":%.0f,\"arrow_cpu_ns_per_row\":%.1f,"
                 "\"arrow_producer_ns_per_row\":%.1f,\"arrow_vs_typed\":%.3f",
                 a->rows_per_s, a->cpu_ns, a->thread_ns[T_PRODUCER], a->cpu_ns / c->cpu_ns);
}

static void report(const schema *sc, const char *mode, int round, uint64_t rows, const result *c,
                   const result *r, const result *a, const floors *f) {
    char arrow[320];
    arrow_json(arrow, sizeof arrow, a, c);
    printf("{\"bench\":\"columns\",\"schema\":\"%s\",\"mode\":\"%s\",\"sink\":\"%s\","
           "\"round\":%d,\"rows\":%llu,"
           "\"rows_per_chunk\":%llu,\"rows_per_s\":%.0f,\"cpu_ns_per_row\":%.1f,"
           "\"producer_ns_per_row\":%.1f,\"io_ns_per_row\":%.1f,\"manager_ns_per_row\":%.1f,"
           "\"spare_ns_per_row\":%.1f,\"other_ns_per_row\":%.1f,"
           "\"row_api_rows_per_s\":%.0f,\"row_api_cpu_ns_per_row\":%.1f,"
           "\"bytes_per_row\":%.1f,\"pages_ns_per_row\":%.1f,\"pages_large_ns_per_row\":%.1f,"
           "\"pages_recycled_ns_per_row\":%.1f,\"crc_ns_per_row\":%.1f,"
           "\"tcp_ns_per_row\":%.1f,\"floor_ns_per_row\":%.1f,\"cpu_vs_row_api\":%.3f,"
           "\"cpu_vs_floor\":%.2f,\"rows_per_s_vs_row_api\":%.2f,%s}\n",
           sc->name, mode, ack_only ? "ack-only" : "decode", round, (unsigned long long) rows,
           (unsigned long long) chunk_rows, c->rows_per_s, c->cpu_ns, c->thread_ns[T_PRODUCER],
           c->thread_ns[T_IO], c->thread_ns[T_MGR], c->thread_ns[T_SPARE], c->thread_ns[T_OTHER],
           r->rows_per_s, r->cpu_ns, f->bytes_per_row, f->pages_ns, f->pages_large_ns,
           f->pages_recycled_ns, f->crc_ns, f->tcp_ns, f->total, c->cpu_ns / r->cpu_ns,
           c->cpu_ns / f->total, c->rows_per_s / r->rows_per_s, arrow);
    fflush(stdout);
    fprintf(stderr,
            "%-8s %-6s r%d columns %9.0f rows/s cpu %6.1f ns/row (producer %6.1f io %5.1f) | "
            "rows %9.0f rows/s cpu %6.1f | floor %5.1f (pages %.1f crc %.1f tcp %.1f) | "
            "cpu x%.3f of rows, x%.2f of floor, rate x%.2f | arrow cpu %6.1f x%.3f of typed\n",
            sc->name, mode, round, c->rows_per_s, c->cpu_ns, c->thread_ns[T_PRODUCER],
            c->thread_ns[T_IO], r->rows_per_s, r->cpu_ns, f->total, f->pages_ns, f->crc_ns,
            f->tcp_ns, c->cpu_ns / r->cpu_ns, c->cpu_ns / f->total, c->rows_per_s / r->rows_per_s,
            a ? a->cpu_ns : 0.0, a ? a->cpu_ns / c->cpu_ns : 0.0);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    double scale = argc > 2 ? atof(argv[2]) : 1.0;
    const char *only = argc > 3 ? argv[3] : NULL, *only_mode = argc > 4 ? argv[4] : NULL;
    const char *only_path = argc > 5 ? argv[5] : NULL; /* rows, columns or arrow (profiling) */
    ack_only = !getenv("QSF_BENCH_SINK_DECODE");
    for (int i = 0; i < 100000; i++)
        sym_len[i] = (uint8_t) snprintf(syms[i], sizeof syms[i], "SYM%06d", i);
    char dir[] = "/tmp/qsf-bench-columns-XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp", strerror(errno));
    for (int round = 1; round <= rounds; round++)
        for (size_t i = 0; i < sizeof SCHEMAS / sizeof SCHEMAS[0]; i++) {
            const schema *sc = &SCHEMAS[i];
            if (only && strcmp(only, sc->name))
                continue;
            chunk_rows = (uint64_t) (sc->per_chunk * scale);
            uint64_t rows = (uint64_t) (sc->rows * scale) / chunk_rows * chunk_rows;
            cols c = {0};
            cols_build(&c, chunk_rows, sc->wide, sc->nsyms);
            qsf_chunk *k;
            if (qsf_chunk_new(sc->table, strlen(sc->table), &k, &row_err) != QSF_OK)
                die("qsf_chunk_new", row_err.msg);
            sc->chunk(k, &c, chunk_rows);
            arrow_batch ab = {0};
            /* utf8 is VARCHAR by default: "sym" is asked to be a SYMBOL once
             * (kept across qsf_chunk_clear), as a program would */
            if (!sc->wide) {
                arrow_build(&ab, &c, chunk_rows);
                if (qsf_chunk_arrow_type(k, "sym", 3, QSF_TYPE_SYMBOL, &row_err) != QSF_OK)
                    die("qsf_chunk_arrow_type", row_err.msg);
            }
            feed rows_f = {NULL, &c, NULL}, typed_f = {k, &c, NULL}, arrow_f = {k, &c, &ab};
            for (int sf = 0; sf < 2; sf++) {
                const char *mode = sf ? "sf" : "memory";
                if (only_mode && strcmp(only_mode, mode))
                    continue;
                char sfdir[600];
                snprintf(sfdir, sizeof sfdir, "%s;sender_id=%s", dir, sc->name);
                result r = {0}, ch = {0}, a = {0};
                const char *d = sf ? sfdir : NULL;
                if (!only_path || !strcmp(only_path, "rows"))
                    r = run_case(sc, d, rows, &rows_f);
                bool want_typed = !only_path || !strcmp(only_path, "columns");
                bool want_arrow = !sc->wide && (!only_path || !strcmp(only_path, "arrow"));
                if (want_arrow && round % 2 == 0) /* even rounds: Arrow before typed */
                    a = run_case(sc, d, rows, &arrow_f);
                if (want_typed)
                    ch = run_case(sc, d, rows, &typed_f);
                if (want_arrow && round % 2 == 1)
                    a = run_case(sc, d, rows, &arrow_f);
                floors f = measure_floor(k, rows, sf, dir);
                report(sc, mode, round, rows, &ch, &r, sc->wide ? NULL : &a, &f);
            }
            qsf_chunk_free(k);
            cols_free(&c);
        }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
