/* The chunk's typed column calls: what each accepts, and every refusal with a
 * message naming the column and the row, the chunk left as it was. */
#include "testutil.h"

#include "chunk/chunk_int.h"

#include <stdio.h>
#include <string.h>

typedef struct fx {
    qsf_chunk *c;
    qsf_errinfo err;
} fx;

static int setup(void **state) {
    static fx f;
    memset(&f, 0, sizeof f);
    assert_int_equal(qsf_chunk_new("t", 1, &f.c, &f.err), QSF_OK);
    *state = &f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    qsf_chunk_free(f->c);
    return 0;
}

#define OK(x) assert_int_equal((x), QSF_OK)
/* The call fails with `code`, its message holds every text given, and the
 * chunk keeps its columns and row count. */
#define REFUSED(f, x, code, ...)                                                                   \
    do {                                                                                           \
        uint32_t n_ = (f)->c->ncols;                                                               \
        size_t r_ = qsf_chunk_rows((f)->c);                                                        \
        assert_int_equal((x), (code));                                                             \
        const char *want_[] = {__VA_ARGS__};                                                       \
        for (size_t i_ = 0; i_ < sizeof want_ / sizeof *want_; i_++)                               \
            if (!strstr((f)->err.msg, want_[i_]))                                                  \
                fail_msg("\"%s\" not in \"%s\"", want_[i_], (f)->err.msg);                         \
        assert_int_equal((f)->c->ncols, n_);                                                       \
        assert_int_equal(qsf_chunk_rows((f)->c), r_);                                              \
    } while (0)

static void new_and_names(void **state) {
    fx *f = *state;
    qsf_chunk *c = NULL;
    assert_int_equal(qsf_chunk_new("a/b", 3, &c, &f->err), QSF_E_VALUE);
    assert_null(c);
    assert_int_equal(qsf_chunk_new(NULL, 2, &c, &f->err), QSF_E_INVAL);
    assert_int_equal(qsf_chunk_new("t", 1, NULL, &f->err), QSF_E_INVAL);
    int64_t v[2] = {1, 2};
    REFUSED(f, qsf_chunk_i64(f->c, "a.b", 3, v, NULL, 0, 2, &f->err), QSF_E_VALUE, "a.b");
    OK(qsf_chunk_i64(f->c, "Price", 5, v, NULL, 0, 2, &f->err));
    REFUSED(f, qsf_chunk_i64(f->c, "price", 5, v, NULL, 0, 2, &f->err), QSF_E_VALUE,
            "column \"price\"", "named twice", "Price");
    REFUSED(f, qsf_chunk_i64(NULL, "x", 1, v, NULL, 0, 2, &f->err), QSF_E_INVAL, "NULL");
    assert_int_equal(qsf_chunk_rows(NULL), 0);
    qsf_chunk_free(NULL);
    qsf_chunk_clear(NULL);
}

static void row_counts_agree(void **state) {
    fx *f = *state;
    int64_t v[4] = {1, 2, 3, 4};
    assert_int_equal(qsf_chunk_rows(f->c), 0);
    OK(qsf_chunk_i64(f->c, "a", 1, v, NULL, 1, 3, &f->err));
    assert_int_equal(qsf_chunk_rows(f->c), 3);
    REFUSED(f, qsf_chunk_i64(f->c, "b", 1, v, NULL, 0, 4, &f->err), QSF_E_VALUE, "column \"b\"",
            "4 rows", "column \"a\" has 3");
    REFUSED(f, qsf_chunk_at(f->c, v, QSF_UNIT_MICROS, 0, 2, &f->err), QSF_E_VALUE,
            "designated timestamp", "2 rows");
    OK(qsf_chunk_at(f->c, v, QSF_UNIT_MICROS, 0, 3, &f->err));
    qsf_chunk_clear(f->c);
    assert_int_equal(qsf_chunk_rows(f->c), 0);
    assert_int_equal(f->c->ncols, 0);
    assert_false(f->c->has_ts);
    /* the designated timestamp first fixes the count too */
    OK(qsf_chunk_at(f->c, v, QSF_UNIT_MILLIS, 0, 2, &f->err));
    REFUSED(f, qsf_chunk_i64(f->c, "b", 1, v, NULL, 0, 4, &f->err), QSF_E_VALUE,
            "the designated timestamp has 2");
    /* ... and may be replaced while no column is there */
    OK(qsf_chunk_at(f->c, v, QSF_UNIT_MILLIS, 0, 4, &f->err));
    OK(qsf_chunk_i64(f->c, "b", 1, v, NULL, 0, 4, &f->err));
    OK(qsf_chunk_at_now(f->c, &f->err));
    assert_false(f->c->has_ts);
    assert_int_equal(qsf_chunk_rows(f->c), 4);
}

static void buffers_and_offsets(void **state) {
    fx *f = *state;
    REFUSED(f, qsf_chunk_i32(f->c, "a", 1, NULL, NULL, 0, 3, &f->err), QSF_E_INVAL, "column \"a\"",
            "NULL");
    int32_t v[3] = {1, 2, 3};
    REFUSED(f, qsf_chunk_i32(f->c, "a", 1, v, NULL, SIZE_MAX - 1, 3, &f->err), QSF_E_INVAL,
            "column \"a\"", "larger than any buffer");
    OK(qsf_chunk_i32(f->c, "empty", 5, NULL, NULL, 0, 0, &f->err)); /* 0 rows need no buffer */
    assert_int_equal(qsf_chunk_rows(f->c), 0);
}

static void validity_counts_nulls(void **state) {
    fx *f = *state;
    int16_t v[20] = {0};
    uint8_t valid[3] = {0xF5, 0x0F, 0x01}; /* bits 0..19: nulls at 1, 3, 12..15, 17..19 */
    OK(qsf_chunk_i16(f->c, "s", 1, v, valid, 0, 20, &f->err));
    assert_int_equal(f->c->cols[0].nulls, 2 + 4 + 3);
    qsf_chunk_clear(f->c);
    OK(qsf_chunk_i16(f->c, "t", 1, v, valid, 1, 19, &f->err));
    assert_int_equal(f->c->cols[0].nulls, 2 + 4 + 3); /* bit 1 is row 0 */
    assert_int_equal(qsf_chunk_count_nulls(valid, 2, 18), 1 + 4 + 3);
    assert_int_equal(qsf_chunk_count_nulls(NULL, 1, 19), 0);
    uint8_t big[32];
    memset(big, 0xFF, sizeof big);
    big[9] = 0x7F; /* bit 79 */
    assert_int_equal(qsf_chunk_count_nulls(big, 3, 200), 1);
}

static void unsigned_and_special_values(void **state) {
    fx *f = *state;
    uint64_t u[3] = {1, (uint64_t) INT64_MAX + 1, 3};
    REFUSED(f, qsf_chunk_u64(f->c, "u", 1, u, NULL, 0, 3, &f->err), QSF_E_VALUE, "column \"u\"",
            "row 1", "9223372036854775808");
    uint8_t skip_row1 = 0x5; /* row 1 null: its value is not looked at */
    OK(qsf_chunk_u64(f->c, "u", 1, u, &skip_row1, 0, 3, &f->err));
    uint32_t ip[3] = {0x7F000001, 0x0A000001, 0};
    REFUSED(f, qsf_chunk_ipv4(f->c, "ip", 2, ip, NULL, 0, 3, &f->err), QSF_E_VALUE, "column \"ip\"",
            "row 2", "0.0.0.0");
    uint64_t g[3] = {1, 2, 3};
    REFUSED(f, qsf_chunk_geohash(f->c, "g", 1, g, 61, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"g\"", "61 is outside 1..60");
    int64_t d[3] = {1, 2, 3};
    REFUSED(f, qsf_chunk_decimal64(f->c, "d", 1, d, 19, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"d\"", "scale 19", "0..18");
    uint8_t d128[48] = {0};
    REFUSED(f, qsf_chunk_decimal128(f->c, "d", 1, d128, -1, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "scale -1", "0..38");
    OK(qsf_chunk_decimal128(f->c, "d", 1, d128, 38, NULL, 0, 3, &f->err));
}

static void timestamps(void **state) {
    fx *f = *state;
    int64_t s[3] = {1, INT64_MAX / 1000000 + 1, 3};
    REFUSED(f, qsf_chunk_timestamp(f->c, "ts", 2, s, QSF_UNIT_SECONDS, NULL, 0, 3, &f->err),
            QSF_E_VALUE, "column \"ts\"", "row 1", "overflows");
    REFUSED(f, qsf_chunk_timestamp(f->c, "ts", 2, s, 9, NULL, 0, 3, &f->err), QSF_E_INVAL,
            "unit 9");
    OK(qsf_chunk_timestamp(f->c, "ts", 2, s, QSF_UNIT_MILLIS, NULL, 0, 3, &f->err));
    assert_int_equal(f->c->cols[0].type, QSF_QWP_TIMESTAMP);
    OK(qsf_chunk_timestamp(f->c, "tn", 2, s, QSF_UNIT_NANOS, NULL, 0, 3, &f->err));
    assert_int_equal(f->c->cols[1].type, QSF_QWP_TIMESTAMP_NANOS);
    int64_t at[3] = {5, -1, 7};
    REFUSED(f, qsf_chunk_at(f->c, at, QSF_UNIT_MICROS, 0, 3, &f->err), QSF_E_VALUE,
            "designated timestamp", "row 1", "negative");
    int64_t big[3] = {5, INT64_MAX / 1000 + 1, 7};
    REFUSED(f, qsf_chunk_at(f->c, big, QSF_UNIT_MILLIS, 0, 3, &f->err), QSF_E_VALUE,
            "designated timestamp", "row 1", "too large");
    REFUSED(f, qsf_chunk_at(f->c, at, 7, 0, 3, &f->err), QSF_E_INVAL, "unit 7");
    assert_false(f->c->has_ts);
    OK(qsf_chunk_at(f->c, big, QSF_UNIT_NANOS, 0, 3, &f->err));
    assert_true(f->c->ts_nanos);
}

static void var_width(void **state) {
    fx *f = *state;
    const char data[] = "abcd\xff"
                        "ef";
    int32_t offs[4] = {0, 2, 4, 7};
    REFUSED(f, qsf_chunk_varchar(f->c, "v", 1, offs, data, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"v\"", "row 2", "not valid UTF-8 at byte 0");
    uint8_t valid = 0x3; /* row 2 null: not checked */
    OK(qsf_chunk_varchar(f->c, "v", 1, offs, data, &valid, 0, 3, &f->err));
    OK(qsf_chunk_binary(f->c, "b", 1, offs, data, NULL, 0, 3, &f->err)); /* bytes are bytes */
    REFUSED(f, qsf_chunk_symbol(f->c, "s", 1, offs, data, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"s\"", "row 2", "symbol is not valid UTF-8");
    int32_t down[4] = {0, 3, 2, 4};
    REFUSED(f, qsf_chunk_varchar(f->c, "w", 1, down, data, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"w\"", "row 1", "offsets decrease");
    qsf_chunk_clear(f->c);
    int32_t wrap[3] = {0, INT32_MAX, INT32_MIN}; /* a span of 1 in unsigned 32 bits */
    REFUSED(f, qsf_chunk_binary(f->c, "w", 1, wrap, data, NULL, 0, 2, &f->err), QSF_E_VALUE,
            "column \"w\"", "row 1", "offsets decrease");
    OK(qsf_chunk_varchar(f->c, "v", 1, offs, data, &valid, 0, 3, &f->err));
    int32_t neg[4] = {-1, 0, 1, 2};
    REFUSED(f, qsf_chunk_varchar(f->c, "w", 1, neg, data, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"w\"", "negative");
    REFUSED(f, qsf_chunk_varchar(f->c, "w", 1, offs, NULL, NULL, 0, 3, &f->err), QSF_E_INVAL,
            "column \"w\"", "data is NULL");
    REFUSED(f, qsf_chunk_varchar(f->c, "w", 1, NULL, data, NULL, 0, 3, &f->err), QSF_E_INVAL,
            "column \"w\"");
    /* Arrow's offset: rows start at offsets[offset] */
    int64_t offs64[5] = {0, 2, 4, 5, 7};
    REFUSED(f, qsf_chunk_varchar64(f->c, "w", 1, offs64, data, NULL, 1, 3, &f->err), QSF_E_VALUE,
            "column \"w\"", "row 1"); /* row 1 of that view is byte 4, 0xff */
    OK(qsf_chunk_binary64(f->c, "w", 1, offs64, data, NULL, 1, 3, &f->err));
    int64_t big[4] = {0, 0, (int64_t) (1u << 20) + 1, (int64_t) (1u << 20) + 1};
    REFUSED(f, qsf_chunk_symbol64(f->c, "s", 1, big, data, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"s\"", "row 1", "more than the 1048576 allowed");
    REFUSED(f, qsf_chunk_symbol(f->c, "empty", 5, NULL, NULL, NULL, 0, 0, &f->err), QSF_E_VALUE,
            "0 rows");
}

static void dictionary_codes(void **state) {
    fx *f = *state;
    const char dict[] = "redgreen";
    int32_t doffs[3] = {0, 3, 8};
    int8_t codes[4] = {0, 1, 2, 1};
    REFUSED(f, qsf_chunk_symbol_dict(f->c, "s", 1, codes, 1, doffs, dict, 2, NULL, 0, 4, &f->err),
            QSF_E_VALUE, "column \"s\"", "row 2", "code 2 is outside the dictionary (2 entries)");
    uint8_t valid = 0xB; /* row 2 null */
    OK(qsf_chunk_symbol_dict(f->c, "s", 1, codes, 1, doffs, dict, 2, &valid, 0, 4, &f->err));
    int16_t neg[4] = {0, -1, 1, 0};
    REFUSED(f, qsf_chunk_symbol_dict(f->c, "n", 1, neg, 2, doffs, dict, 2, NULL, 0, 4, &f->err),
            QSF_E_VALUE, "row 1", "code -1");
    int32_t c32[4] = {0, 1, 1, 0};
    REFUSED(f, qsf_chunk_symbol_dict(f->c, "n", 1, c32, 3, doffs, dict, 2, NULL, 0, 4, &f->err),
            QSF_E_INVAL, "code_bytes 3");
    const char bad[] = "re\xc0"
                       "green";
    REFUSED(f, qsf_chunk_symbol_dict(f->c, "n", 1, c32, 4, doffs, bad, 2, NULL, 0, 4, &f->err),
            QSF_E_VALUE, "column \"n\"", "dictionary entry 0", "UTF-8");
    int32_t ddown[3] = {0, 5, 3};
    REFUSED(f, qsf_chunk_symbol_dict(f->c, "n", 1, c32, 4, ddown, dict, 2, NULL, 0, 4, &f->err),
            QSF_E_VALUE, "dictionary entry 1", "offsets decrease");
    OK(qsf_chunk_symbol_dict(f->c, "n", 1, c32, 4, doffs, dict, 2, NULL, 0, 4, &f->err));
}

static void arrays(void **state) {
    fx *f = *state;
    double v[6] = {1, 2, 3, 4, 5, 6};
    int32_t loffs[4] = {0, 2, 2, 6};
    OK(qsf_chunk_f64_list(f->c, "l", 1, loffs, v, NULL, 0, 3, &f->err));
    int32_t ldown[4] = {0, 2, 1, 6};
    REFUSED(f, qsf_chunk_f64_list(f->c, "m", 1, ldown, v, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"m\"", "row 1", "offsets decrease");
    REFUSED(f, qsf_chunk_f64_list(f->c, "m", 1, loffs, NULL, NULL, 0, 3, &f->err), QSF_E_INVAL,
            "values are NULL");
    int32_t shape[2] = {1, 2};
    OK(qsf_chunk_f64_tensor(f->c, "t", 1, 2, shape, v, NULL, 0, 3, &f->err));
    REFUSED(f, qsf_chunk_f64_tensor(f->c, "u", 1, 33, shape, v, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "column \"u\"", "rank 33");
    int32_t negshape[2] = {1, -2};
    REFUSED(f, qsf_chunk_f64_tensor(f->c, "u", 1, 2, negshape, v, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "dimension 1 is negative");
    int32_t huge[2] = {65536, 65536};
    REFUSED(f, qsf_chunk_f64_tensor(f->c, "u", 1, 2, huge, v, NULL, 0, 3, &f->err), QSF_E_VALUE,
            "exceeds 2^31-1");
    REFUSED(f, qsf_chunk_f64_tensor(f->c, "u", 1, 2, NULL, v, NULL, 0, 3, &f->err), QSF_E_INVAL,
            "shape is NULL");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_and_names, setup, teardown),
        cmocka_unit_test_setup_teardown(row_counts_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(buffers_and_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(validity_counts_nulls, setup, teardown),
        cmocka_unit_test_setup_teardown(unsigned_and_special_values, setup, teardown),
        cmocka_unit_test_setup_teardown(timestamps, setup, teardown),
        cmocka_unit_test_setup_teardown(var_width, setup, teardown),
        cmocka_unit_test_setup_teardown(dictionary_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(arrays, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
