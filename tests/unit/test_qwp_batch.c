/* Row buffer rules: every rejection with its message, no trace of failed or
 * cancelled rows, max_buf_size, the symbol table cap, names, UTF-8. */
#include "testutil.h"

#include "qwp_fixture.h"
#include "qwp/batch.h"
#include "qwpdec/decoder.h"
#include "qwp/encoder.h"
#include "qwp/strmap.h"
#include "qwp/utf8.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define OK(x) assert_int_equal((x), QSF_OK)
#define FAILS(x, code, text)                                                                       \
    do {                                                                                           \
        assert_int_equal((x), (code));                                                             \
        assert_non_null(strstr(f->err.msg, (text)));                                               \
    } while (0)

/* Encodes the batch into one frame and decodes it. */
static const qsf_qwp_dtable *flush_decode(fx *f, qsf_qwp_msg *m, qsf_qwp_dict *d) {
    qc_clear(&f->cap);
    OK(qsf_qwp_encode(f->e, f->b, NULL, NULL, qc_emit, &f->cap, NULL, &f->err));
    assert_int_equal(f->cap.n, 1);
    qsf_qwp_decode_result res;
    d = d ? d : f->dict;
    assert_int_equal(qsf_qwp_decode(m, d, f->cap.f[0].p, f->cap.f[0].len, NULL, &res), 0);
    return qsf_qwp_msg_table(m, 0);
}

static void row_order_rules(void **state) {
    fx *f = *state;
    FAILS(qsf_qwp_batch_col_i64(f->b, "x", 1, 1, &f->err), QSF_E_STATE, "without an open row");
    FAILS(qsf_qwp_batch_at_now(f->b, &f->err), QSF_E_STATE, "no open row");
    OK(qsf_qwp_batch_table(f->b, "t", 1, &f->err));
    FAILS(qsf_qwp_batch_table(f->b, "u", 1, &f->err), QSF_E_STATE, "still open");
    FAILS(qsf_qwp_batch_at_now(f->b, &f->err), QSF_E_STATE, "row is empty");
    OK(qsf_qwp_batch_col_i64(f->b, "x", 1, 1, &f->err));
    FAILS(qsf_qwp_batch_col_i64(f->b, "x", 1, 2, &f->err), QSF_E_VALUE,
          "set twice in the same row");
    FAILS(qsf_qwp_batch_col_i64(f->b, "X", 1, 2, &f->err), QSF_E_VALUE, "set twice");
    OK(qsf_qwp_batch_at_now(f->b, &f->err));
    assert_int_equal(qsf_qwp_batch_rows(f->b), 1);
}

static void type_change_names_both_types(void **state) {
    fx *f = *state;
    OK(qsf_qwp_batch_table(f->b, "trades", 6, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "px", 2, 1, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    OK(qsf_qwp_batch_table(f->b, "trades", 6, NULL));
    FAILS(qsf_qwp_batch_col_f64(f->b, "px", 2, 1.5, &f->err), QSF_E_VALUE,
          "table \"trades\", column \"px\": type changed from LONG to DOUBLE");
    /* the row stays open: the same column with the right type works */
    OK(qsf_qwp_batch_col_i64(f->b, "px", 2, 2, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    /* after a flush the type may change */
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    flush_decode(f, m, NULL);
    OK(qsf_qwp_batch_table(f->b, "trades", 6, NULL));
    OK(qsf_qwp_batch_col_f64(f->b, "px", 2, 1.5, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    const qsf_qwp_dtable *t = flush_decode(f, m, NULL);
    assert_int_equal(t->cols[0].type, QSF_QWP_DOUBLE);
    qsf_qwp_msg_free(m);
}

static void value_rules(void **state) {
    fx *f = *state;
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    FAILS(qsf_qwp_batch_col_ipv4(f->b, "ip", 2, 0, &f->err), QSF_E_VALUE, "0.0.0.0");
    FAILS(qsf_qwp_batch_col_decimal64(f->b, "d", 1, 1, 19, &f->err), QSF_E_VALUE,
          "decimal scale 19 is outside 0..18");
    FAILS(qsf_qwp_batch_col_decimal128(f->b, "d", 1, (uint8_t[16]){0}, 39, &f->err), QSF_E_VALUE,
          "outside 0..38");
    FAILS(qsf_qwp_batch_col_decimal256(f->b, "d", 1, (uint8_t[32]){0}, -1, &f->err), QSF_E_VALUE,
          "outside 0..76");
    FAILS(qsf_qwp_batch_col_geohash(f->b, "g", 1, 1, 61, &f->err), QSF_E_VALUE,
          "geohash precision 61");
    FAILS(qsf_qwp_batch_col_geohash(f->b, "g", 1, 1, 0, &f->err), QSF_E_VALUE, "precision 0");
    int32_t shape[33] = {0};
    double v[4] = {0};
    FAILS(qsf_qwp_batch_col_f64_array(f->b, "a", 1, 0, shape, v, &f->err), QSF_E_VALUE,
          "array rank 0");
    FAILS(qsf_qwp_batch_col_f64_array(f->b, "a", 1, 33, shape, v, &f->err), QSF_E_VALUE,
          "array rank 33");
    shape[0] = -1;
    FAILS(qsf_qwp_batch_col_f64_array(f->b, "a", 1, 1, shape, v, &f->err), QSF_E_VALUE,
          "negative array dimension");
    int32_t big[2] = {65536, 65536};
    FAILS(qsf_qwp_batch_col_i64_array(f->b, "a", 1, 2, big, (int64_t *) v, &f->err), QSF_E_VALUE,
          "exceeds 2^31-1");
    FAILS(qsf_qwp_batch_col_varchar(f->b, "s", 1, "ok\xff", 3, &f->err), QSF_E_VALUE,
          "not valid UTF-8 at byte 2");
    FAILS(qsf_qwp_batch_symbol(f->b, "y", 1, "\xc0\x80", 2, &f->err), QSF_E_VALUE,
          "symbol is not valid UTF-8");
    /* NaN and infinities are values */
    OK(qsf_qwp_batch_col_f64(f->b, "nan", 3, 0.0 / 0.0, NULL));
    OK(qsf_qwp_batch_col_f32(f->b, "inf", 3, 1.0f / 0.0f, NULL));
    OK(qsf_qwp_batch_col_geohash(f->b, "g", 1, 0xfff, 12, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    /* scale and precision are fixed per column within the batch */
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    FAILS(qsf_qwp_batch_col_geohash(f->b, "g", 1, 1, 13, &f->err), QSF_E_VALUE,
          "precision changed from 12 to 13");
    OK(qsf_qwp_batch_col_decimal64(f->b, "d", 1, 5, 2, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    FAILS(qsf_qwp_batch_col_decimal64(f->b, "d", 1, 5, 3, &f->err), QSF_E_VALUE,
          "scale changed from 2 to 3");
    qsf_qwp_batch_row_cancel(f->b);
    /* failed calls left no columns behind: 4 columns were set successfully */
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    const qsf_qwp_dtable *t = flush_decode(f, m, NULL);
    assert_int_equal(t->row_count, 2);
    assert_int_equal(t->col_count, 4);
    assert_true(isnan(qsf_qwp_dcol_f64(&t->cols[0], 0)));
    qsf_qwp_msg_free(m);
}

static void name_rules(void **state) {
    fx *f = *state;
    FAILS(qsf_qwp_batch_table(f->b, "", 0, &f->err), QSF_E_VALUE, "table name is empty");
    FAILS(qsf_qwp_batch_table(f->b, "a/b", 3, &f->err), QSF_E_VALUE, "forbidden character");
    FAILS(qsf_qwp_batch_table(f->b, "a..b", 4, &f->err), QSF_E_VALUE, "\"..\"");
    FAILS(qsf_qwp_batch_table(f->b, "\xe2\x82", 2, &f->err), QSF_E_VALUE, "invalid UTF-8");
    char longname[200];
    memset(longname, 'n', sizeof longname);
    FAILS(qsf_qwp_batch_table(f->b, longname, 128, &f->err), QSF_E_VALUE,
          "128 bytes, longer than max_name_len=127");
    OK(qsf_qwp_batch_table(f->b, longname, 127, NULL));
    FAILS(qsf_qwp_batch_col_i64(f->b, "a.b", 3, 1, &f->err), QSF_E_VALUE,
          "column name \"a.b\" is invalid");
    FAILS(qsf_qwp_batch_col_i64(f->b, "a-b", 3, 1, &f->err), QSF_E_VALUE, "forbidden");
    FAILS(qsf_qwp_batch_col_i64(f->b, "", 0, 1, &f->err), QSF_E_VALUE, "column name is empty");
    OK(qsf_qwp_batch_col_i64(f->b, "\xe4\xb8\xad", 3, 1, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
}

static int setup_short_names(void **state) {
    qsf_qwp_batch_opts o = {.max_name_len = 4};
    return fx_setup_with(state, &o);
}

static void max_name_len_option(void **state) {
    fx *f = *state;
    FAILS(qsf_qwp_batch_table(f->b, "abcde", 5, &f->err), QSF_E_VALUE, "max_name_len=4");
    OK(qsf_qwp_batch_table(f->b, "abcd", 4, NULL));
}

/* Tables and column names are case-insensitive, as in QuestDB: one block, one column. */
static void names_are_case_insensitive(void **state) {
    fx *f = *state;
    OK(qsf_qwp_batch_table(f->b, "Trades", 6, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "Px", 2, 1, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    OK(qsf_qwp_batch_table(f->b, "TRADES", 6, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "pX", 2, 2, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    const qsf_qwp_dtable *t = flush_decode(f, m, NULL);
    assert_int_equal(qsf_qwp_msg_table_count(m), 1);
    assert_memory_equal(t->name, "Trades", 6);
    assert_int_equal(t->col_count, 1);
    assert_int_equal(qsf_qwp_dcol_i64(&t->cols[0], 1), 2);
    qsf_qwp_msg_free(m);
}

/* A cancelled row leaves nothing: no table, no column, no symbol, no bytes. */
static void cancel_leaves_no_trace(void **state) {
    fx *f = *state;
    OK(qsf_qwp_batch_table(f->b, "keep", 4, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "a", 1, 1, NULL));
    OK(qsf_qwp_batch_at_micros(f->b, 10, NULL));
    size_t est = qsf_qwp_batch_est_bytes(f->b);
    OK(qsf_qwp_batch_table(f->b, "keep", 4, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "a", 1, 2, NULL));
    OK(qsf_qwp_batch_col_varchar(f->b, "new_col", 7, "x", 1, NULL));
    OK(qsf_qwp_batch_symbol(f->b, "s", 1, "ghost", 5, NULL));
    qsf_qwp_batch_row_cancel(f->b);
    OK(qsf_qwp_batch_table(f->b, "gone", 4, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "b", 1, 1, NULL));
    qsf_qwp_batch_row_cancel(f->b);
    qsf_qwp_batch_row_cancel(f->b); /* no row: no-op */
    assert_int_equal(qsf_symtab_size(f->st), 0);
    assert_int_equal(qsf_qwp_batch_est_bytes(f->b), est);
    assert_int_equal(qsf_qwp_batch_rows(f->b), 1);
    /* at_* discards a row larger than one frame */
    qsf_qwp_batch_set_max_row_frame(f->b, 200);
    char big[300];
    memset(big, 'x', sizeof big);
    OK(qsf_qwp_batch_table(f->b, "keep", 4, NULL));
    OK(qsf_qwp_batch_col_varchar(f->b, "v", 1, big, sizeof big, NULL));
    FAILS(qsf_qwp_batch_at_micros(f->b, 11, &f->err), QSF_E_TOO_LARGE, "row was discarded");
    assert_false(qsf_qwp_batch_row_open(f->b));
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    const qsf_qwp_dtable *t = flush_decode(f, m, NULL);
    assert_int_equal(qsf_qwp_msg_table_count(m), 1);
    assert_int_equal(t->row_count, 1);
    assert_int_equal(t->col_count, 2); /* a + designated timestamp */
    assert_int_equal(qsf_qwp_dcol_i64(&t->cols[0], 0), 1);
    qsf_qwp_msg_free(m);
}

/* The row the last at_* completed is taken back as a cancel of the open row
 * would: its columns, its new table and its symbols go, the estimate is as
 * before, and only until the next row starts (the sender's rule for a row
 * whose auto-flush failed, include/qsf.h "Rows"). */
static void the_last_row_can_be_taken_back(void **state) {
    fx *f = *state;
    assert_false(qsf_qwp_batch_drop_last_row(f->b)); /* nothing completed yet */
    OK(qsf_qwp_batch_table(f->b, "keep", 4, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "a", 1, 1, NULL));
    OK(qsf_qwp_batch_at_micros(f->b, 10, NULL));
    size_t est = qsf_qwp_batch_est_bytes(f->b);
    OK(qsf_qwp_batch_table(f->b, "gone", 4, NULL)); /* a table new to the batch */
    OK(qsf_qwp_batch_col_i64(f->b, "b", 1, 1, NULL));
    OK(qsf_qwp_batch_symbol(f->b, "s", 1, "ghost", 5, NULL));
    OK(qsf_qwp_batch_at_nanos(f->b, 11, NULL));
    assert_int_equal(qsf_qwp_batch_rows(f->b), 2);
    assert_true(qsf_qwp_batch_drop_last_row(f->b));
    assert_false(qsf_qwp_batch_drop_last_row(f->b)); /* once */
    assert_int_equal(qsf_qwp_batch_rows(f->b), 1);
    assert_int_equal(qsf_qwp_batch_est_bytes(f->b), est);
    assert_int_equal(qsf_symtab_size(f->st), 0);
    OK(qsf_qwp_batch_table(f->b, "keep", 4, NULL)); /* a row of the kept table, taken back */
    OK(qsf_qwp_batch_col_i64(f->b, "a", 1, 2, NULL));
    OK(qsf_qwp_batch_at_micros(f->b, 12, NULL));
    assert_true(qsf_qwp_batch_drop_last_row(f->b));
    assert_int_equal(qsf_qwp_batch_est_bytes(f->b), est);
    OK(qsf_qwp_batch_table(f->b, "keep", 4, NULL));
    assert_false(qsf_qwp_batch_drop_last_row(f->b)); /* a new row began */
    qsf_qwp_batch_row_cancel(f->b);
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    const qsf_qwp_dtable *t = flush_decode(f, m, NULL);
    assert_int_equal(qsf_qwp_msg_table_count(m), 1);
    assert_int_equal(t->row_count, 1);
    assert_int_equal(qsf_qwp_dcol_i64(&t->cols[0], 0), 1);
    qsf_qwp_msg_free(m);
}

static void timestamp_kind_fixed_per_table(void **state) {
    fx *f = *state;
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "a", 1, 1, NULL));
    OK(qsf_qwp_batch_at_nanos(f->b, 5, NULL));
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "a", 1, 1, NULL));
    FAILS(qsf_qwp_batch_at_micros(f->b, 5, &f->err), QSF_E_VALUE,
          "designated timestamp in microseconds, but earlier rows of this batch used nanoseconds");
    FAILS(qsf_qwp_batch_at_now(f->b, &f->err), QSF_E_VALUE, "server time");
    OK(qsf_qwp_batch_at_nanos(f->b, 6, NULL));
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    const qsf_qwp_dtable *t = flush_decode(f, m, NULL);
    assert_int_equal(t->cols[1].type, QSF_QWP_TIMESTAMP_NANOS);
    assert_int_equal(t->cols[1].name_len, 0);
    qsf_qwp_msg_free(m);
}

static int setup_small_buf(void **state) {
    qsf_qwp_batch_opts o = {.max_buf_size = 2000};
    return fx_setup_with(state, &o);
}

static void max_buf_size_refuses_and_keeps_buffer(void **state) {
    fx *f = *state;
    int rows = 0, rc = QSF_OK;
    while (rc == QSF_OK) {
        OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
        rc = qsf_qwp_batch_col_varchar(f->b, "v", 1, "0123456789012345678901234567890123456789", 40,
                                       &f->err);
        if (rc == QSF_OK)
            OK(qsf_qwp_batch_at_now(f->b, NULL)), rows++;
    }
    assert_int_equal(rc, QSF_E_TOO_LARGE);
    assert_non_null(strstr(f->err.msg, "max_buf_size=2000"));
    assert_true(qsf_qwp_batch_est_bytes(f->b) <= 2000);
    qsf_qwp_batch_row_cancel(f->b);
    assert_int_equal(qsf_qwp_batch_rows(f->b), (size_t) rows);
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    const qsf_qwp_dtable *t = flush_decode(f, m, NULL);
    assert_int_equal(t->row_count, (uint32_t) rows);
    /* the estimate is an upper bound of the real frame */
    assert_true(f->cap.f[0].len <= 2000);
    qsf_qwp_msg_free(m);
}

/* Columns are per batch: thousands of distinct names over many flushes never
 * reach the per-table column limit, and a flushed column may change its type. */
static void columns_do_not_pile_up_across_batches(void **state) {
    fx *f = *state;
    char name[16];
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(name, sizeof name, "c%d", i);
        OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
        OK(qsf_qwp_batch_col_i64(f->b, "fixed", 5, i, NULL));
        OK(qsf_qwp_batch_col_i32(f->b, name, (size_t) n, i, &f->err));
        OK(qsf_qwp_batch_at_now(f->b, NULL));
        qc_clear(&f->cap);
        OK(qsf_qwp_encode(f->e, f->b, NULL, NULL, qc_emit, &f->cap, NULL, &f->err));
    }
    /* the last frame carries exactly the two columns of its batch */
    qsf_qwp_decode_result res;
    qsf_qwp_dict *d = qsf_qwp_dict_new();
    assert_int_equal(qsf_qwp_decode(f->msg, d, f->cap.f[0].p, f->cap.f[0].len, NULL, &res), 0);
    const qsf_qwp_dtable *t = qsf_qwp_msg_table(f->msg, 0);
    assert_int_equal(t->col_count, 2);
    assert_memory_equal(t->cols[1].name, "c2999", 5);
    qsf_qwp_dict_free(d);
}

static void dict_full_keeps_known_symbols(void **state) {
    fx *f = *state;
    qsf_symtab_set_cap(f->st, 2);
    const char *v[] = {"a", "b", "c", "a"};
    int rcs[4];
    for (int i = 0; i < 4; i++) {
        OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
        rcs[i] = qsf_qwp_batch_symbol(f->b, "s", 1, v[i], 1, &f->err);
        if (rcs[i] == QSF_OK)
            OK(qsf_qwp_batch_at_now(f->b, NULL));
        else
            qsf_qwp_batch_row_cancel(f->b);
    }
    assert_int_equal(rcs[2], QSF_E_DICT_FULL);
    assert_int_equal(rcs[3], QSF_OK);
    assert_int_equal(qsf_symtab_size(f->st), 2);
    qsf_qwp_dict *d = qsf_qwp_dict_new();
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    const qsf_qwp_dtable *t = flush_decode(f, m, d);
    assert_int_equal(t->row_count, 3);
    const uint8_t *p;
    size_t len;
    qsf_qwp_dcol_bytes(&t->cols[0], 2, &p, &len);
    assert_memory_equal(p, "a", 1);
    qsf_qwp_msg_free(m);
    qsf_qwp_dict_free(d);
}

static void symtab_scales(void **state) {
    (void) state;
    qsf_symtab *st;
    OK(qsf_symtab_new(&st, NULL));
    char buf[32];
    for (uint32_t i = 0; i < 300000; i++) {
        uint32_t id;
        int is_new;
        int n = snprintf(buf, sizeof buf, "sym-%u", i);
        OK(qsf_symtab_intern(st, buf, (size_t) n, &id, &is_new, NULL));
        assert_int_equal(id, i);
        assert_true(is_new);
    }
    uint32_t id;
    assert_true(qsf_symtab_find(st, "sym-123456", 10, &id));
    assert_int_equal(id, 123456);
    const char *s;
    size_t len;
    OK(qsf_symtab_get(st, 299999, &s, &len));
    assert_memory_equal(s, "sym-299999", len);
    /* truncation never drops persisted ids */
    qsf_symtab_set_persisted(st, 10);
    qsf_symtab_truncate(st, 5);
    assert_int_equal(qsf_symtab_size(st), 10);
    assert_false(qsf_symtab_find(st, "sym-10", 6, &id));
    /* a recovered duplicate keeps the first id findable */
    OK(qsf_symtab_seed(st, "sym-3", 5, NULL));
    assert_true(qsf_symtab_find(st, "sym-3", 5, &id));
    assert_int_equal(id, 3);
    assert_int_equal(qsf_symtab_size(st), 11);
    qsf_symtab_free(st);
}

/* LIFO truncation keeps every remaining entry findable (linear-probing deletion). */
static void strmap_truncate_keeps_the_rest(void **state) {
    (void) state;
    qsf_strmap m;
    qsf_strmap_init(&m);
    char buf[32];
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = m.count; i < 5000; i++) {
            int n = snprintf(buf, sizeof buf, "k%u", i);
            assert_int_equal(qsf_strmap_add(&m, buf, (size_t) n, qsf_strmap_hash(buf, (size_t) n)),
                             i);
        }
        qsf_strmap_truncate(&m, 1234 + (uint32_t) round * 1000);
        for (uint32_t i = 0; i < 5000; i++) {
            int n = snprintf(buf, sizeof buf, "k%u", i);
            int64_t id = qsf_strmap_find(&m, buf, (size_t) n, qsf_strmap_hash(buf, (size_t) n));
            assert_int_equal(id, i < m.count ? (int64_t) i : -1);
        }
    }
    qsf_strmap_destroy(&m);
}

/* Equality and hashing read a string's tail with overlapping loads: a byte
 * differing at any position of any length up to a few words is seen, equal
 * bytes in other buffers hash alike, and keys that differ only in length,
 * in an embedded zero or in one tail byte all get ids of their own. */
static void strmap_sees_every_byte(void **state) {
    (void) state;
    char a[40], b[48];
    for (size_t len = 0; len <= sizeof a; len++) {
        for (size_t i = 0; i < len; i++)
            a[i] = (char) ('a' + (i * 7) % 26);
        memcpy(b + 3, a, len); /* another alignment */
        assert_true(qsf_bytes_eq(a, b + 3, len));
        assert_int_equal(qsf_strmap_hash(a, len), qsf_strmap_hash(b + 3, len));
        for (size_t i = 0; i < len; i++) {
            b[3 + i] ^= 0x20;
            assert_false(qsf_bytes_eq(a, b + 3, len));
            b[3 + i] ^= 0x20;
        }
    }
    qsf_strmap m;
    qsf_strmap_init(&m);
    char k[24];
    /* a first key, so that the empty key's id is not 0 */
    assert_int_equal(qsf_strmap_add(&m, "e", 1, qsf_strmap_hash("e", 1)), 0);
    uint32_t n = 1;
    for (size_t len = 0; len <= sizeof k; len++)
        for (size_t i = 0; i <= len; i++) { /* one 'x' at i, or (i == len) none */
            memset(k, 0, sizeof k);
            if (i < len)
                k[i] = 'x';
            assert_int_equal(qsf_strmap_find(&m, k, len, qsf_strmap_hash(k, len)), -1);
            assert_int_equal(qsf_strmap_add(&m, k, len, qsf_strmap_hash(k, len)), n++);
        }
    n = 1;
    for (size_t len = 0; len <= sizeof k; len++)
        for (size_t i = 0; i <= len; i++) {
            memset(k, 0, sizeof k);
            if (i < len)
                k[i] = 'x';
            assert_int_equal(qsf_strmap_find(&m, k, len, qsf_strmap_hash(k, len)), n++);
        }
    qsf_strmap_destroy(&m);
}

static void utf8_validation(void **state) {
    (void) state;
    assert_true(qsf_utf8_valid("plain ascii text, long enough for words", 39));
    assert_true(qsf_utf8_valid("\xf0\x9f\x98\x80\xe4\xb8\xad\xc3\xa9", 9));
    assert_false(qsf_utf8_valid("\xed\xa0\x80", 3));      /* surrogate */
    assert_false(qsf_utf8_valid("\xc1\xbf", 2));          /* overlong */
    assert_false(qsf_utf8_valid("\xf4\x90\x80\x80", 4));  /* > U+10FFFF */
    assert_false(qsf_utf8_valid("abcdefgh\xe4\xb8", 10)); /* truncated */
    assert_int_equal(qsf_utf8_error_offset("abcdefghij\x80", 11), 10);
}

/* A bad byte, or a valid multi-byte character, at every position of long ASCII
 * text: the 32-byte and 8-byte ASCII skips must never step over either. */
static void utf8_long_text_every_position(void **state) {
    (void) state;
    char t[100];
    for (size_t at = 0; at < 97; at++) {
        memset(t, 'a', sizeof t);
        t[at] = (char) 0x80;
        assert_int_equal(qsf_utf8_error_offset(t, sizeof t), at);
        memcpy(t + at, "\xe4\xb8\xad", 3); /* U+4E2D */
        assert_int_equal(qsf_utf8_error_offset(t, sizeof t), sizeof t);
        t[at + 2] = 'a'; /* truncated sequence */
        assert_int_equal(qsf_utf8_error_offset(t, sizeof t), at);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(row_order_rules, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(type_change_names_both_types, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(value_rules, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(name_rules, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(max_name_len_option, setup_short_names, fx_teardown),
        cmocka_unit_test_setup_teardown(names_are_case_insensitive, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(cancel_leaves_no_trace, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(the_last_row_can_be_taken_back, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(timestamp_kind_fixed_per_table, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(max_buf_size_refuses_and_keeps_buffer, setup_small_buf,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(columns_do_not_pile_up_across_batches, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(dict_full_keeps_known_symbols, fx_setup, fx_teardown),
        cmocka_unit_test(symtab_scales),
        cmocka_unit_test(strmap_truncate_keeps_the_rest),
        cmocka_unit_test(strmap_sees_every_byte),
        cmocka_unit_test(utf8_validation),
        cmocka_unit_test(utf8_long_text_every_position),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
