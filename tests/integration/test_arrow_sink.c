/* Arrow import against the typed column calls, end to end: one random table
 * of every Arrow type qsf takes (random nulls, a slice at an offset, symbols
 * plain and dictionary-encoded) is published three times through an SF
 * sender: with the typed qsf_chunk_* calls, as one record batch through
 * qsf_chunk_arrow_batch, and as a stream of sliced record batches through
 * qsf_send_arrow_stream. qwp-sink must hold the same rows, cell by cell and
 * type by type, in all three tables, and the values the generator made. */
#include "itest.h"

#include "arrow_fixture.h"
#include "qwp/types.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N    1000
#define OFF  3
#define ROWS (N - OFF)

static uint64_t rng = 0x2605;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The generated table: column buffers in Arrow's layout. */
enum { NCOLS = 34 };
static const char *const names[NCOLS] = {
    "b",   "i8",  "i16", "i32",  "i64", "u8",    "u16",    "u32",    "u64",   "f32",  "f64", "d32",
    "d64", "tss", "tsm", "tsu",  "tsn", "dec64", "dec128", "dec256", "uid",   "l256", "ch",  "ip",
    "v",   "lv",  "bin", "lbin", "sym", "dsym",  "lst",    "h16",    "dec32", "vu"};
static uint8_t valid[NCOLS][N / 8 + 1];
static uint8_t bits[N / 8 + 1];
static int8_t i8v[N];
static int16_t i16v[N];
static int32_t i32v[N], d32v[N];
static int64_t i64v[N], tsv[N], dec64v[N];
static uint8_t u8v[N];
static uint16_t u16v[N], chv[N];
static uint32_t u32v[N], ipv[N];
static uint64_t u64v[N];
static float f32v[N];
static double f64v[N];
static uint8_t b16[N * 16], b32[N * 32];
static int32_t o32[N + 1], dict_codes16[N];
static int64_t o64[N + 1];
static char text[N * 12];
static int32_t lo[N + 1];
/* the converted formats: float16, decimal32, utf8_view (and what they become) */
static uint16_t h16v[N];
static float h16f[N];
static int32_t d32x[N];
static int64_t d32w[N];
static uint8_t views[N * 16];
static char text2[N * 24];
static int32_t o2[N + 1];
static int64_t text2_size[1];
static double elems[N * 4];
static int64_t ts_designated[N];
static const int32_t doffs[6] = {0, 3, 6, 11, 11, 15};
static const char ddata[] = "abcdefgh\xc3\xa9ijklm";

static void set_valid(uint8_t *v, int i, bool on) {
    if (on)
        v[i >> 3] |= (uint8_t) (1u << (i & 7));
    else
        v[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

/* The half of a small integer k (|k| < 2048: exact), and k as a float. */
static uint16_t half_of(int k) {
    uint16_t sign = k < 0 ? 0x8000 : 0;
    unsigned m = (unsigned) (k < 0 ? -k : k);
    if (m == 0)
        return sign;
    int e = 31 - __builtin_clz(m);
    return (uint16_t) (sign | (unsigned) (e + 15) << 10 | ((m << (10 - e)) & 0x3ff));
}

/* Row i of vu is rows i and i + 1 of the text: up to 22 bytes, so both inline
 * views (up to 12) and views into text2 occur. */
static void generate_converted(void) {
    int32_t at = 0;
    for (int i = 0; i < N; i++) {
        int k = (int) (next() % 4000) - 2000;
        h16v[i] = half_of(k);
        h16f[i] = (float) k;
        d32x[i] = (int32_t) next();
        d32w[i] = d32x[i];
        int32_t end = o32[i + 2 <= N ? i + 2 : N], len = end - o32[i];
        memcpy(text2 + at, text + o32[i], (size_t) len);
        o2[i] = at;
        uint8_t *v = views + 16 * i;
        memset(v, 0, 16);
        memcpy(v, &len, 4);
        if (len <= 12) {
            memcpy(v + 4, text2 + at, (size_t) len);
        } else {
            int32_t zero = 0;
            memcpy(v + 4, text2 + at, 4);
            memcpy(v + 8, &zero, 4);
            memcpy(v + 12, &at, 4);
        }
        at += len;
    }
    o2[N] = at;
    text2_size[0] = at;
}

static void generate(void) {
    for (int c = 0; c < NCOLS; c++)
        for (int i = 0; i < N; i++)
            set_valid(valid[c], i, next() % 10 != 0);
    int32_t to = 0, lto = 0;
    for (int i = 0; i < N; i++) {
        uint64_t r = next();
        set_valid(bits, i, r & 1);
        i8v[i] = (int8_t) r;
        i16v[i] = (int16_t) (r >> 8);
        i32v[i] = (int32_t) (r >> 16) | 1;
        i64v[i] = (int64_t) (r >> 1) - (int64_t) (r >> 2);
        u8v[i] = (uint8_t) (r >> 3);
        u16v[i] = (uint16_t) (r >> 5);
        chv[i] = (uint16_t) (0x41 + r % 2000);
        u32v[i] = (uint32_t) (r >> 7);
        ipv[i] = (uint32_t) (r >> 9) | 1;
        u64v[i] = r >> 1;
        f32v[i] = (float) (int32_t) r / 7.0f;
        f64v[i] = (double) (int64_t) r / 3.0;
        d32v[i] = (int32_t) (r % 40000);
        tsv[i] = (int64_t) (r % 2000000000);
        dec64v[i] = (int64_t) (r >> 4) - (int64_t) (r >> 5);
        for (int k = 0; k < 16; k++)
            b16[i * 16 + k] = (uint8_t) next();
        for (int k = 0; k < 32; k++)
            b32[i * 32 + k] = (uint8_t) next();
        /* texts of 0..11 bytes, a two-byte character in the longer ones */
        int len = (int) (next() % 12);
        for (int k = 0; k < len; k++)
            text[to + k] = (char) ('a' + next() % 26);
        if (len >= 3)
            memcpy(text + to + 1, "\xc3\xa9", 2);
        o32[i] = to;
        o64[i] = to;
        to += len;
        dict_codes16[i] = (int32_t) (next() % 5);
        lo[i] = lto;
        lto += (int32_t) (next() % 4);
        ts_designated[i] = 1700000000000000000ll + i * 1000 + (int64_t) (next() % 1000);
    }
    o32[N] = to;
    generate_converted();
    o64[N] = to;
    lo[N] = lto;
    for (int i = 0; i < N * 4; i++)
        elems[i] = (double) (int64_t) next() / 11.0;
    /* a list row reaching past N * 4 elements cannot happen: 3 per row at most */
}

/* int16 codes for the dictionary column */
static int16_t codes16[N];

#define T(call, c, ...)                                                                            \
    do {                                                                                           \
        if (call(k, names[c], strlen(names[c]), __VA_ARGS__, valid[c], OFF, ROWS, &e) != QSF_OK)   \
            fail_msg("%s: %s", names[c], e.msg);                                                   \
    } while (0)

static void typed_chunk(qsf_chunk *k) {
    qsf_errinfo e;
    T(qsf_chunk_bool, 0, bits);
    T(qsf_chunk_i8, 1, i8v);
    T(qsf_chunk_i16, 2, i16v);
    T(qsf_chunk_i32, 3, i32v);
    T(qsf_chunk_i64, 4, i64v);
    T(qsf_chunk_u8, 5, u8v);
    T(qsf_chunk_u16, 6, u16v);
    T(qsf_chunk_u32, 7, u32v);
    T(qsf_chunk_u64, 8, u64v);
    T(qsf_chunk_f32, 9, f32v);
    T(qsf_chunk_f64, 10, f64v);
    T(qsf_chunk_date_days, 11, d32v);
    T(qsf_chunk_date_millis, 12, tsv);
    T(qsf_chunk_timestamp, 13, tsv, QSF_UNIT_SECONDS);
    T(qsf_chunk_timestamp, 14, tsv, QSF_UNIT_MILLIS);
    T(qsf_chunk_timestamp, 15, tsv, QSF_UNIT_MICROS);
    T(qsf_chunk_timestamp, 16, tsv, QSF_UNIT_NANOS);
    T(qsf_chunk_decimal64, 17, dec64v, 2);
    T(qsf_chunk_decimal128, 18, b16, 3);
    T(qsf_chunk_decimal256, 19, b32, 4);
    T(qsf_chunk_uuid, 20, b16);
    T(qsf_chunk_long256, 21, b32);
    T(qsf_chunk_char, 22, chv);
    T(qsf_chunk_ipv4, 23, ipv);
    T(qsf_chunk_varchar, 24, o32, text);
    T(qsf_chunk_varchar64, 25, o64, text);
    T(qsf_chunk_binary, 26, o32, text);
    T(qsf_chunk_binary64, 27, o64, text);
    T(qsf_chunk_symbol, 28, o32, text);
    T(qsf_chunk_symbol_dict, 29, codes16, 2, doffs, ddata, 5);
    T(qsf_chunk_f64_list, 30, lo, elems);
    T(qsf_chunk_f32, 31, h16f);
    T(qsf_chunk_decimal64, 32, d32w, 3);
    T(qsf_chunk_varchar, 33, o2, text2);
    if (qsf_chunk_at(k, ts_designated, QSF_UNIT_NANOS, OFF, ROWS, &e) != QSF_OK)
        fail_msg("at: %s", e.msg);
}

/* The same table as one record batch: a struct of NCOLS + 1 children. */
typedef struct batch {
    af_col top, cols[NCOLS + 1], dict, item;
    char meta_uuid[64], meta_l256[64], meta_ch[64], meta_ip[64], meta_sym[64];
} batch;

static void arrow_batch(batch *b) {
    static const char *const fmts[NCOLS] = {"b",
                                            "c",
                                            "s",
                                            "i",
                                            "l",
                                            "C",
                                            "S",
                                            "I",
                                            "L",
                                            "f",
                                            "g",
                                            "tdD",
                                            "tdm",
                                            "tss:",
                                            "tsm:UTC",
                                            "tsu:",
                                            "tsn:Europe/Paris",
                                            "d:18,2,64",
                                            "d:38,3",
                                            "d:76,4,256",
                                            "w:16",
                                            "w:32",
                                            "S",
                                            "I",
                                            "u",
                                            "U",
                                            "z",
                                            "Z",
                                            "u",
                                            "s",
                                            "+l",
                                            "e",
                                            "d:9,3,32",
                                            "vu"};
    static const void *data[NCOLS] = {bits, i8v,  i16v,    i32v, i64v, u8v,  u16v, u32v, u64v,
                                      f32v, f64v, d32v,    tsv,  tsv,  tsv,  tsv,  tsv,  dec64v,
                                      b16,  b32,  b16,     b32,  chv,  ipv,  o32,  o64,  o32,
                                      o64,  o32,  codes16, lo,   h16v, d32x, views};
    memset(b, 0, sizeof *b);
    af_init(&b->top, "+s", NULL, ROWS, 0, 0, 1, NULL, NULL, NULL);
    for (int c = 0; c < NCOLS; c++) {
        bool var = fmts[c][0] == 'u' || fmts[c][0] == 'U' || fmts[c][0] == 'z' || fmts[c][0] == 'Z';
        af_init(&b->cols[c], fmts[c], names[c], N, 0, -1, var ? 3 : 2, valid[c], data[c],
                var ? text : NULL);
        /* the children are whole; the slice is the batch's own offset below */
        af_child(&b->top, &b->cols[c]);
    }
    b->cols[20].s.metadata = af_meta(b->meta_uuid, "ARROW:extension:name", "arrow.uuid");
    b->cols[21].s.metadata = af_meta(b->meta_l256, "questdb.type", "long256");
    b->cols[22].s.metadata = af_meta(b->meta_ch, "questdb.type", "char");
    b->cols[23].s.metadata = af_meta(b->meta_ip, "questdb.type", "ipv4");
    b->cols[28].s.metadata = af_meta(b->meta_sym, "questdb.type", "symbol");
    af_init(&b->dict, "u", NULL, 5, 0, 0, 3, NULL, doffs, ddata);
    af_dict(&b->cols[29], &b->dict);
    af_init(&b->item, "g", "item", N * 4, 0, 0, 2, NULL, elems, NULL);
    af_child(&b->cols[30], &b->item);
    b->cols[33].a.n_buffers = 4; /* validity, views, one data buffer, its size */
    b->cols[33].bufs[2] = text2;
    b->cols[33].bufs[3] = text2_size;
    af_init(&b->cols[NCOLS], "tsn:UTC", "ts", N, 0, 0, 2, NULL, ts_designated, NULL);
    af_child(&b->top, &b->cols[NCOLS]);
    b->top.a.offset = OFF;
}

/* A stream yielding the batch in three slices (the struct's offset moves). */
typedef struct stream_state {
    batch *b;
    int next;
    int released;      /* batches the consumer released */
    bool fail_schema;  /* get_schema fails */
    int fail_next;     /* get_next fails when asked for this batch (-1: never) */
    int bad;           /* this batch claims more rows than its columns hold (-1: none) */
    qsf_sender *close; /* when set: get_next and each batch's release call qsf_close on it */
    int next_close_rc, release_close_rc; /* what those calls returned */
} stream_state;

static int st_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
    stream_state *s = st->private_data;
    if (s->fail_schema)
        return 71;
    *out = s->b->top.s;
    return 0;
}

static void st_release_batch(struct ArrowArray *a) {
    stream_state *s = a->private_data;
    if (s->close)
        s->release_close_rc = qsf_close(s->close, NULL);
    s->released++;
    a->release = NULL;
}

static int st_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
    stream_state *s = st->private_data;
    static const int64_t cut[4] = {0, 400, 700, ROWS};
    if (s->close)
        s->next_close_rc = qsf_close(s->close, NULL);
    if (s->next == s->fail_next)
        return 5;
    if (s->next == 3) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    *out = s->b->top.a;
    out->offset = OFF + cut[s->next];
    out->length = cut[s->next + 1] - cut[s->next];
    if (s->next == s->bad)
        out->length = N;
    out->release = st_release_batch;
    out->private_data = s;
    s->next++;
    return 0;
}

static const char *st_error(struct ArrowArrayStream *st) {
    stream_state *s = st->private_data;
    return s->fail_schema || s->next == s->fail_next ? "the producer says no" : NULL;
}

static void st_release(struct ArrowArrayStream *st) {
    st->release = NULL;
}

static void same_rows(qsink *sink, const char *a, const char *b) {
    assert_int_equal(qsink_rows(sink, a), ROWS);
    assert_int_equal(qsink_rows(sink, b), ROWS);
    char va[1024], vb[1024];
    for (int c = 0; c <= NCOLS; c++) {
        const char *col = c < NCOLS ? names[c] : "timestamp";
        assert_int_equal(qsink_column_type(sink, a, col), qsink_column_type(sink, b, col));
        for (int64_t r = 0; r < ROWS; r++) {
            assert_int_equal(qsink_cell(sink, a, r, col, va, sizeof va), 0);
            assert_int_equal(qsink_cell(sink, b, r, col, vb, sizeof vb), 0);
            if (strcmp(va, vb) != 0)
                fail_msg("%s row %" PRId64 " column %s: \"%s\" vs %s \"%s\"", a, r, col, va, b, vb);
        }
    }
}

/* A few cells against the generator, so that equal tables are also right. */
static void spot_check(qsink *sink, const char *t) {
    char v[256], want[256];
    for (int64_t r = 0; r < ROWS; r += 97) {
        int i = (int) r + OFF;
        bool ok = (valid[4][i >> 3] >> (i & 7)) & 1;
        snprintf(want, sizeof want, "%" PRId64, i64v[i]);
        assert_int_equal(qsink_cell(sink, t, r, "i64", v, sizeof v), 0);
        assert_string_equal(v, ok ? want : "null");
        ok = (valid[24][i >> 3] >> (i & 7)) & 1;
        snprintf(want, sizeof want, "%.*s", o32[i + 1] - o32[i], text + o32[i]);
        assert_int_equal(qsink_cell(sink, t, r, "v", v, sizeof v), 0);
        assert_string_equal(v, ok ? want : "null");
        ok = (valid[29][i >> 3] >> (i & 7)) & 1;
        int k = codes16[i];
        snprintf(want, sizeof want, "%.*s", doffs[k + 1] - doffs[k], ddata + doffs[k]);
        assert_int_equal(qsink_cell(sink, t, r, "dsym", v, sizeof v), 0);
        assert_string_equal(v, ok ? want : "null");
        snprintf(want, sizeof want, "%" PRId64, ts_designated[i]);
        assert_int_equal(qsink_cell(sink, t, r, "timestamp", v, sizeof v), 0);
        assert_string_equal(v, want);
    }
}

static void arrow_and_typed_calls_agree(void **state) {
    (void) state;
    generate();
    for (int i = 0; i < N; i++)
        codes16[i] = (int16_t) dict_codes16[i];
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=arrow;", it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    qsf_errinfo e;
    qsf_chunk *k;
    assert_int_equal(qsf_chunk_new("typed", 5, &k, &e), QSF_OK);
    typed_chunk(k);
    if (qsf_flush_chunk(s, k, NULL, &e) != QSF_OK)
        fail_msg("flush typed: %s", e.msg);
    qsf_chunk_free(k);

    static batch b;
    arrow_batch(&b);
    assert_int_equal(qsf_chunk_new("arrow", 5, &k, &e), QSF_OK);
    if (qsf_chunk_arrow_batch(k, &b.top.s, &b.top.a, "ts", &e) != QSF_OK)
        fail_msg("arrow batch: %s", e.msg);
    if (qsf_flush_chunk(s, k, NULL, &e) != QSF_OK)
        fail_msg("flush arrow: %s", e.msg);
    qsf_chunk_free(k);

    stream_state ss = {&b, 0, 0, false, -1, -1, NULL, 0, 0};
    struct ArrowArrayStream st = {st_schema, st_next, st_error, st_release, &ss};
    uint64_t rows = 0;
    if (qsf_send_arrow_stream(s, "stream", 6, &st, "ts", &rows, &e) != QSF_OK)
        fail_msg("stream: %s", e.msg);
    assert_int_equal(rows, ROWS);
    assert_int_equal(ss.released, 3); /* every batch released, the stream not */
    assert_non_null(st.release);

    int64_t fsn = qsf_published_fsn(s);
    it_wait_acked(s, fsn);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    same_rows(sink, "typed", "arrow");
    same_rows(sink, "typed", "stream");
    spot_check(sink, "arrow");
    qsink_stop(sink);
}

/* The generated table as a record batch, and an SF sender to a new sink. */
static qsf_sender *stream_sender(batch *b, qsink **sink) {
    generate();
    *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=arrow;", it_dir);
    arrow_batch(b);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(*sink), extra));
}

/* A stream that fails: at its schema, at a batch qsf refuses, at get_next.
 * The batches published before stay published and are counted; every batch
 * taken is released, the stream never. */
static void stream_failures(void **state) {
    (void) state;
    static batch b;
    qsink *sink;
    qsf_sender *s = stream_sender(&b, &sink);
    qsf_errinfo e;
    uint64_t rows = 99;

    stream_state ss = {&b, 0, 0, true, -1, -1, NULL, 0, 0};
    struct ArrowArrayStream st = {st_schema, st_next, st_error, st_release, &ss};
    assert_int_equal(qsf_send_arrow_stream(s, "s0", 2, &st, "ts", &rows, &e), QSF_E_VALUE);
    assert_non_null(strstr(e.msg, "get_schema"));
    assert_non_null(strstr(e.msg, "the producer says no"));
    assert_int_equal(rows, 0);
    assert_int_equal(ss.next, 0);

    ss = (stream_state){&b, 0, 0, false, -1, 1, NULL, 0, 0};
    assert_int_equal(qsf_send_arrow_stream(s, "s1", 2, &st, "ts", &rows, &e), QSF_E_VALUE);
    assert_non_null(strstr(e.msg, "batch 1"));
    assert_non_null(strstr(e.msg, "does not hold"));
    assert_int_equal(rows, 400);
    assert_int_equal(ss.released, 2); /* the published one and the refused one */
    assert_int_equal(ss.next, 2);     /* nothing taken after the refusal */

    ss = (stream_state){&b, 0, 0, false, 2, -1, NULL, 0, 0};
    assert_int_equal(qsf_send_arrow_stream(s, "s2", 2, &st, "ts", &rows, &e), QSF_E_VALUE);
    assert_non_null(strstr(e.msg, "get_next"));
    assert_non_null(strstr(e.msg, "after 2 batches"));
    assert_non_null(strstr(e.msg, "the producer says no"));
    assert_int_equal(rows, 700);
    assert_int_equal(ss.released, 2);
    assert_non_null(st.release); /* never released by qsf */

    assert_int_equal(qsf_send_arrow_stream(s, "s3", 2, NULL, "ts", &rows, &e), QSF_E_INVAL);
    it_wait_acked(s, qsf_published_fsn(s));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    assert_int_equal(qsink_rows(sink, "s0"), 0);
    assert_int_equal(qsink_rows(sink, "s1"), 400);
    assert_int_equal(qsink_rows(sink, "s2"), 700);
    qsink_stop(sink);
}

/* qsf_send_arrow_stream_typed: the stream's utf8 "v" goes in as SYMBOL (its
 * name given in another case) and uint16 "u16" as CHAR; the same stream
 * sent plain has them as VARCHAR and INT, and the text of every "v" cell is
 * the same both ways. A name that is no field of the schema, or an unknown
 * type, is refused before any batch is taken. */
static void stream_asks_types(void **state) {
    (void) state;
    static batch b;
    qsink *sink;
    qsf_sender *s = stream_sender(&b, &sink);
    qsf_errinfo e;
    uint64_t rows = 0;
    stream_state ss = {&b, 0, 0, false, -1, -1, NULL, 0, 0};
    struct ArrowArrayStream st = {st_schema, st_next, st_error, st_release, &ss};
    if (qsf_send_arrow_stream(s, "plain", 5, &st, "ts", &rows, &e) != QSF_OK)
        fail_msg("plain stream: %s", e.msg);
    const qsf_arrow_col_type types[] = {{"V", QSF_TYPE_SYMBOL}, {"u16", QSF_TYPE_CHAR}};
    ss = (stream_state){&b, 0, 0, false, -1, -1, NULL, 0, 0};
    if (qsf_send_arrow_stream_typed(s, "typed", 5, &st, "ts", types, 2, &rows, &e) != QSF_OK)
        fail_msg("typed stream: %s", e.msg);
    assert_int_equal(rows, ROWS);
    assert_int_equal(ss.released, 3);

    const qsf_arrow_col_type typo[] = {{"u16", QSF_TYPE_CHAR}, {"venue", QSF_TYPE_SYMBOL}};
    ss = (stream_state){&b, 0, 0, false, -1, -1, NULL, 0, 0};
    assert_int_equal(qsf_send_arrow_stream_typed(s, "t2", 2, &st, "ts", typo, 2, &rows, &e),
                     QSF_E_VALUE);
    if (!strstr(e.msg, "types[1] names column \"venue\", which is not a field"))
        fail_msg("unexpected message: %s", e.msg);
    const qsf_arrow_col_type unknown[] = {{"v", 99}};
    assert_int_equal(qsf_send_arrow_stream_typed(s, "t2", 2, &st, "ts", unknown, 1, &rows, &e),
                     QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "unknown QuestDB type 99"));
    assert_int_equal(qsf_send_arrow_stream_typed(s, "t2", 2, &st, "ts", NULL, 1, &rows, &e),
                     QSF_E_INVAL);
    assert_int_equal(ss.next, 0); /* nothing taken from the stream */
    assert_int_equal(rows, 0);

    it_wait_acked(s, qsf_published_fsn(s));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    assert_int_equal(qsink_column_type(sink, "plain", "v"), QSF_QWP_VARCHAR);
    assert_int_equal(qsink_column_type(sink, "plain", "u16"), QSF_QWP_INT);
    assert_int_equal(qsink_column_type(sink, "typed", "v"), QSF_QWP_SYMBOL);
    assert_int_equal(qsink_column_type(sink, "typed", "u16"), QSF_QWP_CHAR);
    assert_int_equal(qsink_rows(sink, "typed"), ROWS);
    assert_int_equal(qsink_rows(sink, "t2"), 0);
    for (int64_t r = 0; r < ROWS; r++) {
        char want[256], got[256];
        assert_int_equal(qsink_cell(sink, "plain", r, "v", want, sizeof want), 0);
        assert_int_equal(qsink_cell(sink, "typed", r, "v", got, sizeof got), 0);
        assert_string_equal(got, want);
    }
    qsink_stop(sink);
}

/* The stream's callbacks run inside qsf_send_arrow_stream, on the caller's
 * thread: qsf_close of the sender it publishes into, from get_next or from a
 * batch's release, is refused with QSF_E_STATE; the stream goes on and every
 * row arrives. */
static void close_from_stream_callbacks(void **state) {
    (void) state;
    static batch b;
    qsink *sink;
    qsf_sender *s = stream_sender(&b, &sink);
    stream_state ss = {&b, 0, 0, false, -1, -1, s, 0, 0};
    struct ArrowArrayStream st = {st_schema, st_next, st_error, st_release, &ss};
    uint64_t rows = 0;
    qsf_errinfo e;
    if (qsf_send_arrow_stream(s, "cb", 2, &st, "ts", &rows, &e) != QSF_OK)
        fail_msg("stream: %s", e.msg);
    assert_int_equal(ss.next_close_rc, QSF_E_STATE);
    assert_int_equal(ss.release_close_rc, QSF_E_STATE);
    assert_int_equal(rows, ROWS);
    it_wait_acked(s, qsf_published_fsn(s));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    assert_int_equal(qsink_rows(sink, "cb"), ROWS);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(arrow_and_typed_calls_agree, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(stream_failures, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(stream_asks_types, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(close_from_stream_callbacks, it_setup_dir, it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
