/* Every fixed-width column type through the public row calls arrives exactly
 * (lib/sender/rows.c runs the row buffer's fast path inline for most of them):
 * extremes, a row that skips columns (the slow path, a null bitmap), a row
 * cancelled after fast-path values, a column whose type changes. Checked in
 * the values qwp-sink decoded. */
#include "itest.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 300
#define GAP  150 /* this row sets only k and the timestamp */

static int64_t i64_of(int64_t k) {
    return k == 1 ? INT64_MAX : k == 2 ? INT64_MIN + 1 : k * 1000000007ll - 5;
}
static int32_t i32_of(int64_t k) {
    return k == 1 ? INT32_MAX : k == 2 ? INT32_MIN + 1 : (int32_t) (k * 123457 - 99);
}
static int16_t i16_of(int64_t k) {
    return k == 1 ? INT16_MAX : k == 2 ? INT16_MIN : (int16_t) (k * 37 - 1000);
}
static int8_t i8_of(int64_t k) {
    return k == 1 ? INT8_MAX : k == 2 ? INT8_MIN : (int8_t) (k * 3 - 100);
}
static double f64_of(int64_t k) {
    return k == 1 ? INFINITY : k == 2 ? -0.0 : (double) k * 0.25 - 3.0;
}
static float f32_of(int64_t k) {
    return k == 1 ? -INFINITY : (float) k * 0.5f + 0.125f;
}

/* The symbol and VARCHAR of row k: a few distinct symbols, texts of every
 * length from 0 up with a two-byte character in them. */
static void sym_of(int64_t k, char *out, size_t cap) {
    snprintf(out, cap, "s%d\xc3\xa9", (int) (k % 7));
}
static void text_of(int64_t k, char *out, size_t cap) {
    size_t n = (size_t) (k % 40);
    for (size_t i = 0; i < n && i + 1 < cap; i++)
        out[i] = (char) ('a' + (k + (int64_t) i) % 26);
    out[n < cap ? n : cap - 1] = 0;
    if (n >= 4) /* a two-byte UTF-8 character inside */
        memcpy(out + 1, "\xc3\xa9", 2);
}

static void full_row(qsf_sender *s, int64_t k) {
    qsf_errinfo e;
    char sym[32], text[64];
    sym_of(k, sym, sizeof sym);
    text_of(k, text, sizeof text);
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    assert_int_equal(qsf_col_i64(s, "k", 1, k, &e), QSF_OK);
    if (k != GAP) {
        assert_int_equal(qsf_symbol(s, "s", 1, sym, strlen(sym), &e), QSF_OK);
        assert_int_equal(qsf_col_varchar(s, "v", 1, text, strlen(text), &e), QSF_OK);
        assert_int_equal(qsf_col_i8(s, "b", 1, i8_of(k), &e), QSF_OK);
        assert_int_equal(qsf_col_i16(s, "h", 1, i16_of(k), &e), QSF_OK);
        assert_int_equal(qsf_col_i32(s, "i", 1, i32_of(k), &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "l", 1, i64_of(k), &e), QSF_OK);
        assert_int_equal(qsf_col_f32(s, "f", 1, f32_of(k), &e), QSF_OK);
        assert_int_equal(qsf_col_f64(s, "d", 1, f64_of(k), &e), QSF_OK);
        assert_int_equal(qsf_col_char(s, "c", 1, (uint16_t) (0x41 + k % 1000), &e), QSF_OK);
        assert_int_equal(qsf_col_date(s, "dt", 2, 1700000000000ll + k, &e), QSF_OK);
        assert_int_equal(qsf_col_ts_micros(s, "tu", 2, 1700000000000000ll - k, &e), QSF_OK);
        assert_int_equal(qsf_col_ts_nanos(s, "tn", 2, 1700000000000000000ll + k, &e), QSF_OK);
    }
    assert_int_equal(qsf_at_micros(s, 1700000000000000ll + k, &e), QSF_OK);
}

/* The cell of column `col` in the row whose k is `k`. */
static void cell_of(qsink *sink, int64_t k, const char *col, char *out, size_t cap) {
    char v[64];
    for (int64_t r = 0; r < qsink_rows(sink, "t"); r++) {
        assert_int_equal(qsink_cell(sink, "t", r, "k", v, sizeof v), 0);
        if (strtoll(v, NULL, 10) == k) {
            assert_int_equal(qsink_cell(sink, "t", r, col, out, cap), 0);
            return;
        }
    }
    fail_msg("no row with k=%" PRId64, k);
}

static void expect(qsink *sink, int64_t k, const char *col, const char *want) {
    char got[64];
    cell_of(sink, k, col, got, sizeof got);
    if (strcmp(got, want) != 0)
        fail_msg("k=%" PRId64 " column %s: got %s, want %s", k, col, got, want);
}

static void expect_i(qsink *sink, int64_t k, const char *col, int64_t want) {
    char w[32];
    snprintf(w, sizeof w, "%" PRId64, want);
    expect(sink, k, col, w);
}

static void expect_f(qsink *sink, int64_t k, const char *col, double want) {
    char w[64];
    snprintf(w, sizeof w, "%.17g", want);
    expect(sink, k, col, w);
}

static void close_ok(qsf_sender *s) {
    qsf_errinfo e;
    if (qsf_close(s, &e) != QSF_OK)
        fail_msg("qsf_close: %s", e.msg);
}

static void every_type_arrives_exactly(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "auto_flush_rows=100;"));
    for (int64_t k = 0; k < ROWS; k++)
        full_row(s, k);
    close_ok(s);
    assert_int_equal(qsink_rows(sink, "t"), ROWS);
    for (int64_t k = 0; k < ROWS; k++) {
        if (k == GAP) {
            expect(sink, k, "l", "null");
            expect(sink, k, "d", "null");
            continue;
        }
        char sym[32], text[64];
        sym_of(k, sym, sizeof sym);
        text_of(k, text, sizeof text);
        expect(sink, k, "s", sym);
        expect(sink, k, "v", text);
        expect_i(sink, k, "b", i8_of(k));
        expect_i(sink, k, "h", i16_of(k));
        expect_i(sink, k, "i", i32_of(k));
        expect_i(sink, k, "l", i64_of(k));
        expect_f(sink, k, "f", (double) f32_of(k));
        expect_f(sink, k, "d", f64_of(k));
        expect_i(sink, k, "c", 0x41 + k % 1000);
        expect_i(sink, k, "dt", 1700000000000ll + k);
        expect_i(sink, k, "tu", 1700000000000000ll - k);
        expect_i(sink, k, "tn", 1700000000000000000ll + k);
    }
    qsink_stop(sink);
}

/* Values set on the fast path of a row that is then cancelled are gone; a
 * column given another type is refused and the batch keeps its rows. */
static void cancelled_and_refused_values_are_not_sent(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), NULL));
    qsf_errinfo e;
    for (int64_t k = 0; k < 10; k++)
        full_row(s, k);
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    assert_int_equal(qsf_col_i64(s, "k", 1, 999, &e), QSF_OK);
    assert_int_equal(qsf_col_i8(s, "b", 1, 1, &e), QSF_OK);
    assert_int_equal(qsf_col_i64(s, "l", 1, 5, &e), QSF_OK);
    qsf_row_cancel(s);
    full_row(s, 10);
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    assert_int_equal(qsf_col_i64(s, "k", 1, 11, &e), QSF_OK);
    assert_int_not_equal(qsf_col_f64(s, "l", 1, 1.5, &e), QSF_OK); /* "l" is a LONG */
    qsf_row_cancel(s);
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK); /* bad UTF-8: refused, nothing kept */
    assert_int_equal(qsf_col_i64(s, "k", 1, 12, &e), QSF_OK);
    assert_int_equal(qsf_symbol(s, "s", 1, "\xc3(", 2, &e), QSF_E_VALUE);
    assert_int_equal(qsf_col_varchar(s, "v", 1, "ok\xff", 3, &e), QSF_E_VALUE);
    qsf_row_cancel(s);
    assert_int_equal(qsf_buffered_rows(s), 11);
    close_ok(s);
    assert_int_equal(qsink_rows(sink, "t"), 11);
    for (int64_t k = 0; k <= 10; k++)
        expect_i(sink, k, "l", i64_of(k));
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_arrives_exactly),
        cmocka_unit_test(cancelled_and_refused_values_are_not_sent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
