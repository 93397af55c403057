/* qsf_flush_chunk against qwp-sink: values and NULLs arrive exactly; a chunk
 * splits over many frames committed as one; transaction=on composes; rows of
 * the row API and chunks interleave in order; QSF_E_FULL and QSF_E_TOO_LARGE
 * publish nothing; and random tables of every kind through the row API and
 * as chunks give the same rows at the sink. */
#include "itest.h"

#include "chunk_table.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CT_DEFINE_FEED(feed_row, qsf_sender, qsf_)

static qsf_sender *sender_on(qsink *sink, const char *extra) {
    char conf[1024];
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
}

static int64_t must_flush_chunk(qsf_sender *s, qsf_chunk *c) {
    qsf_errinfo e;
    int64_t fsn = -1;
    int rc = qsf_flush_chunk(s, c, &fsn, &e);
    if (rc != QSF_OK)
        fail_msg("qsf_flush_chunk: %s %s", qsf_err_name(rc), e.msg);
    return fsn;
}

static void cell(qsink *sink, const char *table, int64_t row, const char *col, char *out,
                 size_t cap) {
    if (qsink_cell(sink, table, row, col, out, cap) != 0)
        fail_msg("no cell %s.%s of row %" PRId64, table, col, row);
}

static void expect(qsink *sink, const char *table, int64_t row, const char *col, const char *want) {
    char got[256];
    cell(sink, table, row, col, got, sizeof got);
    if (strcmp(got, want) != 0)
        fail_msg("%s.%s row %" PRId64 ": \"%s\", expected \"%s\"", table, col, row, got, want);
}

/* ---- exact values ---- */

static void values_and_nulls_arrive_exactly(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sender_on(sink, "");
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    int64_t k[4] = {0, 1, 2, 3}, at[4] = {1700000000, 1700000001, 1700000002, 1700000003};
    double d[5] = {99, 1.5, -2.25, 0, 1e300}; /* Arrow offset 1 */
    uint8_t dvalid = 0x16;                    /* bits 1..4: 1 1 0 1 -> row 2 NULL */
    const char txt[] = "h\xc3\xa9llo"
                       "xxxworld";
    int32_t toffs[5] = {0, 6, 9, 9, 14}; /* row 1 NULL with bytes of its own */
    uint8_t tvalid = 0xd;
    const char syms[] = "redgreen";
    int32_t doffs[3] = {0, 3, 8};
    int16_t codes[4] = {1, 1, 0, 99}; /* row 3 NULL, its code out of range */
    uint8_t svalid = 0x7;
    uint8_t bools = 0x5, bvalid = 0x7; /* row 3 NULL: false */
    assert_int_equal(qsf_chunk_i64(c, "k", 1, k, NULL, 0, 4, &e), QSF_OK);
    assert_int_equal(qsf_chunk_f64(c, "d", 1, d, &dvalid, 1, 4, &e), QSF_OK);
    assert_int_equal(qsf_chunk_varchar(c, "v", 1, toffs, txt, &tvalid, 0, 4, &e), QSF_OK);
    assert_int_equal(qsf_chunk_symbol_dict(c, "s", 1, codes, 2, doffs, syms, 2, &svalid, 0, 4, &e),
                     QSF_OK);
    assert_int_equal(qsf_chunk_bool(c, "b", 1, &bools, &bvalid, 0, 4, &e), QSF_OK);
    assert_int_equal(qsf_chunk_at(c, at, QSF_UNIT_SECONDS, 0, 4, &e), QSF_OK);
    it_wait_acked(s, must_flush_chunk(s, c));
    it_assert_rows(sink, "t", 4, false);
    static const char *const want[4][6] = {
        {"0", "1.5", "h\xc3\xa9llo", "green", "1", "1700000000000000"},
        {"1", "-2.25", "null", "green", "0", "1700000001000000"},
        {"2", "null", "", "red", "1", "1700000002000000"},
        {"3", "1e+300", "world", "null", "0", "1700000003000000"},
    };
    static const char *const cols[6] = {"k", "d", "v", "s", "b", "timestamp"};
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 6; i++)
            if (!(i == 1 && r == 3)) /* 1e300's digits are the sink's to choose */
                expect(sink, "t", r, cols[i], want[r][i]);
    qsf_chunk_free(c);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* ---- one chunk, many frames, one commit; transaction=on ---- */

#define BIG 20000

/* A chunk of `n` rows of the standard shape (k, sym, v, timestamp), k from k0. */
typedef struct std_chunk {
    int64_t k[BIG], ts[BIG];
    double v[BIG];
    char syms[BIG * 8];
    int32_t offs[BIG + 1];
} std_chunk;

static void std_fill(std_chunk *b, qsf_chunk *c, int64_t k0, size_t n) {
    qsf_errinfo e;
    size_t at = 0;
    b->offs[0] = 0;
    for (size_t i = 0; i < n; i++) {
        b->k[i] = k0 + (int64_t) i;
        b->ts[i] = 1700000000000000ll + k0 + (int64_t) i;
        b->v[i] = (double) i / 4;
        at += (size_t) sprintf(b->syms + at, "s%d", (int) ((k0 + (int64_t) i) % 7));
        b->offs[i + 1] = (int32_t) at;
    }
    qsf_chunk_clear(c);
    assert_int_equal(qsf_chunk_i64(c, "k", 1, b->k, NULL, 0, n, &e), QSF_OK);
    assert_int_equal(qsf_chunk_symbol(c, "sym", 3, b->offs, b->syms, NULL, 0, n, &e), QSF_OK);
    assert_int_equal(qsf_chunk_f64(c, "v", 1, b->v, NULL, 0, n, &e), QSF_OK);
    assert_int_equal(qsf_chunk_at(c, b->ts, QSF_UNIT_MICROS, 0, n, &e), QSF_OK);
}

static void splits_commit_once(void **state) {
    (void) state;
    qsink_opts o = {.max_batch = 16384};
    qsink *sink = it_sink(&o);
    qsf_sender *s = sender_on(sink, "");
    std_chunk *b = malloc(sizeof *b);
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    std_fill(b, c, 0, BIG);
    qsink_stats before, after;
    qsink_get_stats(sink, &before);
    it_wait_acked(s, must_flush_chunk(s, c));
    qsink_get_stats(sink, &after);
    assert_true(after.frames - before.frames > 20); /* ~400 KB in frames of < 16 KB */
    assert_int_equal(qsink_commits(sink, "t"), 1);
    it_assert_rows(sink, "t", BIG, false);
    free(b);
    qsf_chunk_free(c);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* Rows of the standard shape through the row API, keys [from, to). */
static void add_rows(qsf_sender *s, int64_t from, int64_t to) {
    qsf_errinfo e;
    for (int64_t i = from; i < to; i++) {
        char sym[8];
        int n = snprintf(sym, sizeof sym, "s%d", (int) (i % 7));
        assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "k", 1, i, &e), QSF_OK);
        assert_int_equal(qsf_symbol(s, "sym", 3, sym, (size_t) n, &e), QSF_OK);
        assert_int_equal(qsf_col_f64(s, "v", 1, (double) (i - from) / 4, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1700000000000000ll + i, &e), QSF_OK);
    }
}

/* The sink's benchmark mode (--ack-only) counts the rows of every frame
 * without decoding them, of the row API's frames and of chunks alike. */
static void sink_ack_only_counts_rows(void **state) {
    (void) state;
    qsink_opts o = {.max_batch = 16384, .ack_only = 1, .no_values = 1};
    qsink *sink = it_sink(&o);
    qsf_sender *s = sender_on(sink, "");
    std_chunk *b = malloc(sizeof *b);
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    add_rows(s, 0, 1000);
    std_fill(b, c, 1000, BIG);
    it_wait_acked(s, must_flush_chunk(s, c));
    assert_int_equal(qsink_rows(sink, "t"), 1000 + BIG);
    free(b);
    qsf_chunk_free(c);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* Rows, a chunk, rows, a chunk on one sender: every key once, in order; the
 * buffered rows go out with the chunk, in the same commit. */
static void rows_and_chunks_interleave_in(const char *extra, int64_t commits) {
    qsink_opts o = {.max_batch = 16384};
    qsink *sink = it_sink(&o);
    qsf_sender *s = sender_on(sink, extra);
    std_chunk *b = malloc(sizeof *b);
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    add_rows(s, 0, 3000);
    std_fill(b, c, 3000, 5000);
    must_flush_chunk(s, c);
    add_rows(s, 8000, 8100);
    std_fill(b, c, 8100, 900);
    it_wait_acked(s, must_flush_chunk(s, c));
    it_assert_rows(sink, "t", 9000, false);
    assert_int_equal(qsink_commits(sink, "t"), commits);
    free(b);
    qsf_chunk_free(c);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void rows_and_chunks_interleave(void **state) {
    (void) state;
    rows_and_chunks_interleave_in("auto_flush=off;", 2);
    char extra[700];
    snprintf(extra, sizeof extra, "auto_flush=off;sf_dir=%s;sender_id=mix;", it_dir);
    rows_and_chunks_interleave_in(extra, 2);
    /* transaction=on: auto-flushes of the rows only stage them, each chunk
     * call commits what is staged and itself */
    rows_and_chunks_interleave_in("transaction=on;auto_flush_rows=700;", 2);
}

/* ---- nothing published ---- */

/* The ring is full (nothing acknowledged): QSF_E_FULL, nothing of the chunk
 * or of the buffered rows published; once the sink is back the same call
 * delivers both. */
static void full_publishes_nothing_in(const char *more) {
    qsink *sink = it_sink(NULL);
    it_fault(sink, "stall conn=1");
    char extra[800];
    snprintf(extra, sizeof extra,
             "auto_flush=off;sf_max_segment_bytes=32k;sf_max_total_bytes=128k;"
             "sf_append_deadline_millis=300;%.600s",
             more);
    qsf_sender *s = sender_on(sink, extra);
    std_chunk *b = malloc(sizeof *b);
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    std_fill(b, c, 0, 3000); /* ~60 KB: fits */
    int64_t fsn = must_flush_chunk(s, c);
    add_rows(s, 3000, 3100);
    std_fill(b, c, 3100, 4000); /* ~80 KB: fits the ring, not while nothing is acked */
    int64_t at = -2;
    int rc = qsf_flush_chunk(s, c, &at, &e);
    if (rc != QSF_E_FULL)
        fail_msg("expected QSF_E_FULL, got %s: %s", qsf_err_name(rc), e.msg);
    assert_int_equal(at, fsn);
    assert_int_equal(qsf_published_fsn(s), fsn);
    assert_int_equal(qsf_txn_rows(s), 100); /* buffered, or staged with transaction=on */
    qsink_restart(sink);
    it_wait_acked(s, fsn);
    it_wait_acked(s, must_flush_chunk(s, c));
    it_assert_rows(sink, "t", 7100, false);
    free(b);
    qsf_chunk_free(c);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void full_publishes_nothing(void **state) {
    (void) state;
    full_publishes_nothing_in("");
    char extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=full;", it_dir);
    full_publishes_nothing_in(extra);
    full_publishes_nothing_in("transaction=on;");
}

/* A chunk the ring can never hold, and a chunk with a row no frame holds:
 * QSF_E_TOO_LARGE with the sizes, nothing published, the buffered rows kept. */
static void too_large_publishes_nothing(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char extra[700];
    snprintf(extra, sizeof extra,
             "auto_flush=off;sf_dir=%s;sender_id=big;sf_max_segment_bytes=32k;"
             "sf_max_total_bytes=128k;",
             it_dir);
    qsf_sender *s = sender_on(sink, extra);
    std_chunk *b = malloc(sizeof *b);
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    add_rows(s, 0, 10);
    std_fill(b, c, 10, BIG); /* ~400 KB */
    int rc = qsf_flush_chunk(s, c, NULL, &e);
    if (rc != QSF_E_TOO_LARGE || !strstr(e.msg, "sf_max_total_bytes"))
        fail_msg("expected QSF_E_TOO_LARGE naming the ring's size, got %s: %s", qsf_err_name(rc),
                 e.msg);
    assert_int_equal(qsf_published_fsn(s), -1);
    assert_int_equal(qsf_buffered_rows(s), 10);
    /* a row no frame holds (a segment holds < 32 KB) */
    static char wide[40000];
    memset(wide, 'w', sizeof wide);
    int32_t offs[3] = {0, 1, 40000};
    qsf_chunk_clear(c);
    assert_int_equal(qsf_chunk_varchar(c, "v", 1, offs, wide, NULL, 0, 2, &e), QSF_OK);
    rc = qsf_flush_chunk(s, c, NULL, &e);
    assert_int_equal(rc, QSF_E_TOO_LARGE);
    assert_non_null(strstr(e.msg, "row 1 needs up to"));
    assert_int_equal(qsf_published_fsn(s), -1);
    /* a row of the row API open: QSF_E_STATE */
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    assert_int_equal(qsf_flush_chunk(s, c, NULL, &e), QSF_E_STATE);
    qsf_row_cancel(s);
    /* what fits goes */
    std_fill(b, c, 10, 990);
    it_wait_acked(s, must_flush_chunk(s, c));
    it_assert_rows(sink, "t", 1000, false);
    free(b);
    qsf_chunk_free(c);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* A chunk's frames left unacknowledged in the slot are replayed by a sender
 * that reopens it, to a new server (a new dictionary), with every symbol as
 * written; the reopened sender goes on with the symbols it knows. */
static void chunk_replayed_after_a_restart(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "stall conn=1");
    char extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=dict;close_flush_timeout_millis=100;",
             it_dir);
    qsf_sender *s = sender_on(sink, extra);
    std_chunk *b = malloc(sizeof *b);
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    std_fill(b, c, 0, 3000);
    int64_t fsn = must_flush_chunk(s, c);
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* nothing acknowledged: kept */
    qsink_stop(sink);
    sink = it_sink(NULL);
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=dict;", it_dir);
    s = sender_on(sink, extra);
    assert_int_equal(qsf_published_fsn(s), fsn);
    std_fill(b, c, 3000, 100);
    it_wait_acked(s, must_flush_chunk(s, c));
    it_assert_rows(sink, "t", 3100, false);
    for (int64_t r = 0; r < 3100; r += 97) {
        char k[32], want[16];
        cell(sink, "t", r, "k", k, sizeof k);
        snprintf(want, sizeof want, "s%d", (int) (strtoll(k, NULL, 10) % 7));
        expect(sink, "t", r, "sym", want);
    }
    free(b);
    qsf_chunk_free(c);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* ---- equivalence ---- */

/* Every cell of every row of `a` and `b` is the same (BOOLEAN NULL and false
 * are one: QuestDB has no BOOLEAN NULL, and the row path leaves a boolean out
 * of a frame where no row sets it). */
static void same_rows(qsink *sink, const char *a, const char *b, const ct_table *t, uint64_t seed) {
    assert_int_equal(qsink_rows(sink, a), (int64_t) t->rows);
    assert_int_equal(qsink_rows(sink, b), (int64_t) t->rows);
    for (int i = -1; i < t->ncols; i++) {
        const char *col = i < 0 ? "timestamp" : t->cols[i].name;
        if (i < 0 && !t->ts)
            continue;
        assert_int_equal(qsink_column_type(sink, a, col), qsink_column_type(sink, b, col));
        bool boolean = i >= 0 && (t->cols[i].kind == CT_BOOL || t->cols[i].kind == CT_BOOL_U8);
        for (size_t r = 0; r < t->rows; r++) {
            char x[2048], y[2048];
            cell(sink, a, (int64_t) r, col, x, sizeof x);
            cell(sink, b, (int64_t) r, col, y, sizeof y);
            if (boolean && !strcmp(x, "null"))
                strcpy(x, "0");
            if (boolean && !strcmp(y, "null"))
                strcpy(y, "0");
            if (strcmp(x, y) != 0)
                fail_msg("seed %" PRIu64 ", column %s (kind %d), row %zu: rows \"%s\", chunk "
                         "\"%s\"",
                         seed, col, i < 0 ? -1 : t->cols[i].kind, r, x, y);
        }
    }
}

static void equivalence_in(const char *extra, long max_batch, uint64_t seed0, int tables) {
    qsink_opts o = {.max_batch = max_batch};
    qsink *sink = it_sink(&o);
    qsf_sender *s = sender_on(sink, extra);
    qsf_errinfo e;
    qsf_chunk *c = NULL;
    int64_t fsn = -1;
    ct_table *ts = calloc((size_t) tables, sizeof *ts);
    for (int i = 0; i < tables; i++) {
        uint64_t seed = seed0 + (uint64_t) i;
        ct_table *t = &ts[i];
        ct_make(t, 1 + seed * 37 % 1500, seed, (int) (seed * 13 % 70), seed % 3 == 0);
        char rt[16], ctn[16];
        snprintf(rt, sizeof rt, "r%d", i);
        snprintf(ctn, sizeof ctn, "c%d", i);
        for (size_t r = 0; r < t->rows; r++)
            if (feed_row(s, rt, t, r, &e) != QSF_OK)
                fail_msg("seed %" PRIu64 " row %zu: %s", seed, r, e.msg);
        int64_t f;
        assert_int_equal(qsf_flush(s, &f, &e), QSF_OK);
        assert_int_equal(qsf_chunk_new(ctn, strlen(ctn), &c, &e), QSF_OK);
        if (ct_to_chunk(t, c, &e) != QSF_OK)
            fail_msg("seed %" PRIu64 ": %s", seed, e.msg);
        fsn = must_flush_chunk(s, c);
        qsf_chunk_free(c);
    }
    it_wait_acked(s, fsn);
    for (int i = 0; i < tables; i++) {
        char rt[16], ctn[16];
        snprintf(rt, sizeof rt, "r%d", i);
        snprintf(ctn, sizeof ctn, "c%d", i);
        same_rows(sink, rt, ctn, &ts[i], seed0 + (uint64_t) i);
        ct_free(&ts[i]);
    }
    free(ts);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void random_tables_rows_equal_chunks(void **state) {
    (void) state;
    equivalence_in("auto_flush=off;", 0, 1, 12);
    equivalence_in("auto_flush=off;", 6000, 100, 12); /* many frames each way */
    char extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=eq;", it_dir);
    equivalence_in(extra, 9000, 200, 12);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_and_nulls_arrive_exactly),
        cmocka_unit_test(splits_commit_once),
        cmocka_unit_test(sink_ack_only_counts_rows),
        cmocka_unit_test_setup_teardown(rows_and_chunks_interleave, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(full_publishes_nothing, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(too_large_publishes_nothing, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(chunk_replayed_after_a_restart, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(random_tables_rows_equal_chunks, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
