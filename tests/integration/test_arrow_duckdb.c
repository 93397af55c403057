/* DuckDB as an Arrow producer qsf did not write: a query over range(N) with
 * every column type DuckDB has and QuestDB can hold (nulls in each) is read
 * twice through DuckDB's C API. The first time the test reads DuckDB's Arrow
 * arrays itself and writes down, row by row, the text qwp-sink must show for
 * each cell; the second time the batches go through qsf_send_arrow_stream
 * (SF mode) into qwp-sink, which must hold exactly those cells. DuckDB types
 * QuestDB has no column for come back refused, named. Skipped, with the
 * reason printed (TAP "1..0 # SKIP"), where libduckdb.so is absent
 * (scripts/fetch-duckdb.sh). */
#include "itest.h"

#include "duckdb_dl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 5000

/* Every column DuckDB exports in a format qsf takes; the designated
 * timestamp "at" is never null. */
static const char QUERY[] =
    "SELECT i AS k,"
    " CASE WHEN i % 7 = 1 THEN NULL ELSE i % 3 = 0 END AS b,"
    " CASE WHEN i % 11 = 2 THEN NULL ELSE (i % 250 - 125)::TINYINT END AS i8,"
    " CASE WHEN i % 13 = 3 THEN NULL ELSE (i * 7 % 60000 - 30000)::SMALLINT END AS i16,"
    " CASE WHEN i % 5 = 4 THEN NULL ELSE (i * 100003 - 250000000)::INTEGER END AS i32,"
    " CASE WHEN i % 17 = 5 THEN NULL ELSE (i * 1000000007 - 9)::BIGINT END AS i64,"
    " CASE WHEN i % 19 = 6 THEN NULL ELSE (i % 256)::UTINYINT END AS u8,"
    " CASE WHEN i % 23 = 7 THEN NULL ELSE (i * 13 % 65536)::USMALLINT END AS u16,"
    " CASE WHEN i % 29 = 8 THEN NULL ELSE (i * 858993)::UINTEGER END AS u32,"
    " CASE WHEN i % 31 = 9 THEN NULL ELSE (i * 1844674407370955)::UBIGINT END AS u64,"
    " CASE WHEN i % 37 = 10 THEN NULL ELSE (i / 7.0)::FLOAT END AS f32,"
    " CASE WHEN i % 41 = 11 THEN NULL ELSE (i / 3.0 - 100)::DOUBLE END AS f64,"
    " CASE WHEN i % 43 = 12 THEN NULL ELSE DATE '1969-06-01' + (i * 3)::INTEGER END AS dt,"
    " CASE WHEN i % 47 = 13 THEN NULL ELSE TIMESTAMP '2024-02-29 12:00:00'"
    "   + INTERVAL (i * 997) MILLISECOND END AS ts,"
    " CASE WHEN i % 53 = 14 THEN NULL ELSE (TIMESTAMP '2001-01-01'"
    "   + INTERVAL (i) MINUTE)::TIMESTAMPTZ END AS tz,"
    " CASE WHEN i % 59 = 15 THEN NULL ELSE (TIMESTAMP '2024-01-01'"
    "   + INTERVAL (i * 3) MICROSECOND)::TIMESTAMP_NS END AS tns,"
    " CASE WHEN i % 61 = 16 THEN NULL ELSE (TIMESTAMP '2024-01-01'"
    "   + INTERVAL (i) SECOND)::TIMESTAMP_MS END AS tms,"
    " CASE WHEN i % 67 = 17 THEN NULL ELSE (TIMESTAMP '2024-01-01'"
    "   + INTERVAL (i) HOUR)::TIMESTAMP_S END AS tsec,"
    " CASE WHEN i % 71 = 18 THEN NULL ELSE (i * 123456789 - 7)::HUGEINT END AS h,"
    " CASE WHEN i % 73 = 19 THEN NULL ELSE (i * 1.25 - 3000)::DECIMAL(10,2) END AS d10,"
    " CASE WHEN i % 79 = 20 THEN NULL ELSE (i * 3.14159 - 1)::DECIMAL(30,5) END AS d30,"
    " CASE WHEN i % 83 = 21 THEN NULL ELSE repeat(chr((97 + i % 26)::INTEGER), (i % 9)::INTEGER) "
    "|| '\xc3\xa9'"
    "   || i END AS v,"
    " CASE WHEN i % 89 = 22 THEN NULL ELSE ('b' || i)::BLOB END AS bl,"
    " CASE WHEN i % 97 = 23 THEN NULL ELSE md5(i::VARCHAR)::UUID END AS u,"
    " CASE WHEN i % 101 = 24 THEN NULL ELSE (['sad', 'ok', 'happy'])[i % 3 + 1]::mood END AS m,"
    " CASE WHEN i % 103 = 25 THEN NULL ELSE list_transform(range(i % 4), x -> x / 2 + i)"
    "   ::DOUBLE[] END AS l,"
    " (CASE WHEN i % 107 = 26 THEN NULL ELSE [i * 1.0, -i, i / 8] END)::DOUBLE[3] AS a,"
    " (TIMESTAMP '2024-03-01' + INTERVAL (i) SECOND)::TIMESTAMP_NS AS at"
    " FROM range(" /* N */ "5000) t(i) ORDER BY i";

typedef struct duck {
    duck_api api;
    void *db, *conn;
} duck;

/* Opens an in-memory database with the ENUM the query uses (main checked
 * that the library loads). */
static void duck_start(duck *d) {
    char why[1100];
    if (duck_load(&d->api, why, sizeof why) != 0)
        fail_msg("%s", why);
    assert_int_equal(d->api.open(NULL, &d->db), 0);
    assert_int_equal(d->api.connect(d->db, &d->conn), 0);
    void *res;
    int rc = d->api.query_arrow(d->conn, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')", &res);
    if (rc != 0)
        fail_msg("duckdb: %s", d->api.query_arrow_error(res));
    d->api.destroy_arrow(&res);
}

static void duck_stop(duck *d) {
    d->api.disconnect(&d->conn);
    d->api.close(&d->db);
    dlclose(d->api.lib);
}

static void *duck_query(duck *d, const char *sql) {
    void *res;
    if (d->api.query_arrow(d->conn, sql, &res) != 0)
        fail_msg("duckdb: %s", d->api.query_arrow_error(res));
    return res;
}

/* ---- the cells qwp-sink must show, read from DuckDB's arrays by hand ---- */

static bool bit(const void *bits, int64_t i) {
    return (((const uint8_t *) bits)[i >> 3] >> (i & 7)) & 1;
}

static void hex(char *out, size_t cap, const uint8_t *p, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 3 <= cap; i++)
        o += (size_t) snprintf(out + o, cap - o, "%02x", p[i]);
    out[o] = '\0';
}

/* A DOUBLE array as qwp-sink shows it: its wire bytes (docs/PROTOCOL.md §5.11)
 * in hex. */
static void array_text(char *out, size_t cap, const double *v, int32_t n) {
    uint8_t w[1 + 4 + 8 * 16];
    w[0] = 1;
    memcpy(w + 1, &n, 4);
    memcpy(w + 5, v, 8 * (size_t) n);
    hex(out, cap, w, 5 + 8 * (size_t) n);
}

static int64_t to_micros(char unit, int64_t v) {
    return unit == 's' ? v * 1000000 : unit == 'm' ? v * 1000 : v;
}

static void fixed_text(const char *f, const struct ArrowArray *a, int64_t i, char *out,
                       size_t cap) {
    const void *d = a->buffers[1];
    if (strcmp(f, "b") == 0)
        snprintf(out, cap, "%d", bit(d, i));
    else if (strcmp(f, "c") == 0)
        snprintf(out, cap, "%d", ((const int8_t *) d)[i]);
    else if (strcmp(f, "s") == 0)
        snprintf(out, cap, "%d", ((const int16_t *) d)[i]);
    else if (strcmp(f, "i") == 0)
        snprintf(out, cap, "%d", ((const int32_t *) d)[i]);
    else if (strcmp(f, "l") == 0)
        snprintf(out, cap, "%" PRId64, ((const int64_t *) d)[i]);
    else if (strcmp(f, "C") == 0)
        snprintf(out, cap, "%u", ((const uint8_t *) d)[i]);
    else if (strcmp(f, "S") == 0)
        snprintf(out, cap, "%u", ((const uint16_t *) d)[i]);
    else if (strcmp(f, "I") == 0)
        snprintf(out, cap, "%u", ((const uint32_t *) d)[i]);
    else if (strcmp(f, "L") == 0)
        snprintf(out, cap, "%" PRIu64, ((const uint64_t *) d)[i]);
    else if (strcmp(f, "f") == 0)
        snprintf(out, cap, "%.17g", (double) ((const float *) d)[i]);
    else if (strcmp(f, "g") == 0)
        snprintf(out, cap, "%.17g", ((const double *) d)[i]);
    else if (strcmp(f, "tdD") == 0)
        snprintf(out, cap, "%" PRId64, (int64_t) ((const int32_t *) d)[i] * 86400000);
    else if (strncmp(f, "ts", 2) == 0)
        snprintf(out, cap, "%" PRId64, to_micros(f[2], ((const int64_t *) d)[i]));
    else if (strncmp(f, "d:", 2) == 0 && strstr(f, ",256") == NULL && strstr(f, ",64") == NULL)
        hex(out, cap, (const uint8_t *) d + 16 * i, 16);
    else
        fail_msg("the test reads no DuckDB format \"%s\"", f);
}

static void var_text(const char *f, const struct ArrowArray *a, int64_t i, char *out, size_t cap) {
    const int32_t *o = a->buffers[1];
    const char *d = a->buffers[2];
    if (strcmp(f, "u") == 0)
        snprintf(out, cap, "%.*s", (int) (o[i + 1] - o[i]), d + o[i]);
    else
        hex(out, cap, (const uint8_t *) d + o[i], (size_t) (o[i + 1] - o[i]));
}

static void cell_text(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t row,
                      char *out, size_t cap) {
    int64_t i = a->offset + row;
    const char *f = s->format;
    if (a->buffers[0] != NULL && !bit(a->buffers[0], i)) {
        /* QuestDB's BOOLEAN has no null: false (docs/PROTOCOL.md §5.3) */
        snprintf(out, cap, "%s", strcmp(f, "b") == 0 ? "0" : "null");
    } else if (s->dictionary != NULL) {
        int64_t k = strcmp(f, "C") == 0 ? ((const uint8_t *) a->buffers[1])[i] : -1;
        assert_true(k >= 0);
        var_text("u", a->dictionary, a->dictionary->offset + k, out, cap);
    } else if (strcmp(f, "u") == 0 || strcmp(f, "z") == 0) {
        var_text(f, a, i, out, cap);
    } else if (strcmp(f, "+l") == 0) {
        const int32_t *o = a->buffers[1];
        const double *v = (const double *) a->children[0]->buffers[1] + a->children[0]->offset;
        array_text(out, cap, v + o[i], o[i + 1] - o[i]);
    } else if (strcmp(f, "+w:3") == 0) {
        const double *v = (const double *) a->children[0]->buffers[1] + a->children[0]->offset;
        array_text(out, cap, v + 3 * i, 3);
    } else {
        fixed_text(f, a, i, out, cap);
    }
}

/* Every cell's expected text, [row][column]; *ncols gets the column count. */
typedef struct expected {
    int ncols;
    char names[40][32];
    char (*cells)[40][96];
    int64_t rows;
} expected;

static void read_expected(duck *d, expected *x) {
    void *res = duck_query(d, QUERY);
    struct ArrowSchema s;
    memset(&s, 0, sizeof s);
    void *sp = &s;
    assert_int_equal(d->api.query_arrow_schema(res, &sp), 0);
    assert_true(s.n_children <= 40);
    x->ncols = (int) s.n_children;
    for (int c = 0; c < x->ncols; c++)
        snprintf(x->names[c], sizeof x->names[c], "%s", s.children[c]->name);
    x->cells = calloc(N, sizeof *x->cells);
    assert_non_null(x->cells);
    x->rows = 0;
    for (;;) {
        struct ArrowArray b;
        memset(&b, 0, sizeof b);
        void *bp = &b;
        assert_int_equal(d->api.query_arrow_array(res, &bp), 0);
        if (b.release == NULL)
            break;
        for (int64_t r = 0; r < b.length; r++)
            for (int c = 0; c < x->ncols; c++)
                cell_text(s.children[c], b.children[c], b.offset + r, x->cells[x->rows + r][c],
                          sizeof x->cells[0][0]);
        x->rows += b.length;
        b.release(&b);
    }
    s.release(&s);
    d->api.destroy_arrow(&res);
    assert_int_equal(x->rows, N);
}

/* ---- DuckDB's result as an ArrowArrayStream for qsf_send_arrow_stream ---- */

typedef struct duck_stream {
    duck *d;
    void *res;
    int produced;
} duck_stream;

static int ds_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
    duck_stream *s = st->private_data;
    memset(out, 0, sizeof *out);
    void *p = out;
    return s->d->api.query_arrow_schema(s->res, &p) == 0 ? 0 : 5;
}

static int ds_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
    duck_stream *s = st->private_data;
    memset(out, 0, sizeof *out);
    void *p = out;
    if (s->d->api.query_arrow_array(s->res, &p) != 0)
        return 5;
    if (out->release != NULL)
        s->produced++;
    return 0;
}

static const char *ds_error(struct ArrowArrayStream *st) {
    duck_stream *s = st->private_data;
    return s->d->api.query_arrow_error(s->res);
}

static void ds_release(struct ArrowArrayStream *st) {
    duck_stream *s = st->private_data;
    s->d->api.destroy_arrow(&s->res);
    st->release = NULL;
}

static void duckdb_rows_arrive_as_duckdb_has_them(void **state) {
    (void) state;
    duck d;
    duck_start(&d);
    printf("# DuckDB %s\n", d.api.library_version());
    expected x;
    read_expected(&d, &x);

    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=duck;", it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    duck_stream ds = {&d, duck_query(&d, QUERY), 0};
    struct ArrowArrayStream st = {ds_schema, ds_next, ds_error, ds_release, &ds};
    qsf_errinfo e;
    uint64_t rows = 0;
    if (qsf_send_arrow_stream(s, "duck", 4, &st, "at", &rows, &e) != QSF_OK)
        fail_msg("qsf_send_arrow_stream: %s", e.msg);
    assert_int_equal(rows, N);
    assert_true(ds.produced >= 2); /* several batches */
    st.release(&st);
    it_wait_acked(s, qsf_published_fsn(s));
    assert_int_equal(qsf_close(s, &e), QSF_OK);

    assert_int_equal(qsink_rows(sink, "duck"), N);
    char v[1024];
    for (int c = 0; c < x.ncols; c++) {
        const char *col = strcmp(x.names[c], "at") == 0 ? "timestamp" : x.names[c];
        for (int64_t r = 0; r < N; r++) {
            assert_int_equal(qsink_cell(sink, "duck", r, col, v, sizeof v), 0);
            if (strcmp(v, x.cells[r][c]) != 0)
                fail_msg("row %" PRId64 " column %s: qwp-sink \"%s\", DuckDB \"%s\"", r, col, v,
                         x.cells[r][c]);
        }
    }
    free(x.cells);
    qsink_stop(sink);
    duck_stop(&d);
}

/* DuckDB types QuestDB has no column for: the batch is refused, naming the
 * column and its Arrow format, and nothing of it is added. */
static void duckdb_types_questdb_lacks_are_refused(void **state) {
    (void) state;
    duck d;
    duck_start(&d);
    static const struct {
        const char *sql, *name, *fmt;
    } cases[] = {
        {"SELECT 1 AS k, TIME '10:00:00' AS t", "\"t\"", "\"ttu\""},
        {"SELECT 1 AS k, INTERVAL 1 DAY AS iv", "\"iv\"", "\"tin\""},
        {"SELECT 1 AS k, {'x': 1} AS st", "\"st\"", "\"+s\""},
        {"SELECT 1 AS k, map([1], [2]) AS mp", "\"mp\"", "\"+m\""},
        {"SELECT 1 AS k, [1, 2] AS li", "\"li\"", "\"+l\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *res = duck_query(&d, cases[i].sql);
        struct ArrowSchema s;
        struct ArrowArray b;
        memset(&s, 0, sizeof s);
        memset(&b, 0, sizeof b);
        void *sp = &s, *bp = &b;
        assert_int_equal(d.api.query_arrow_schema(res, &sp), 0);
        assert_int_equal(d.api.query_arrow_array(res, &bp), 0);
        qsf_chunk *c;
        qsf_errinfo e;
        assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
        assert_int_equal(qsf_chunk_arrow_batch(c, &s, &b, NULL, &e), QSF_E_UNSUPPORTED);
        if (!strstr(e.msg, cases[i].name) || !strstr(e.msg, cases[i].fmt))
            fail_msg("%s: %s", cases[i].sql, e.msg);
        assert_int_equal(qsf_chunk_rows(c), 0);
        qsf_chunk_free(c);
        b.release(&b);
        s.release(&s);
        d.api.destroy_arrow(&res);
    }
    duck_stop(&d);
}

int main(void) {
    duck_api probe;
    char why[1100];
    if (duck_load(&probe, why, sizeof why) != 0) {
        printf("1..0 # SKIP %s\n", why);
        fprintf(stderr, "test_arrow_duckdb: skipped: %s\n", why);
        return 0;
    }
    dlclose(probe.lib);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(duckdb_rows_arrive_as_duckdb_has_them, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test(duckdb_types_questdb_lacks_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
