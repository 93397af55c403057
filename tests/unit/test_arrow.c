/* Arrow C Data Interface import (lib/chunk/arrow_*.c): every Arrow type qsf
 * takes becomes exactly the column the matching typed call makes (offsets,
 * nulls and slices included), and every malformed or unsupported input is
 * refused with a message naming the column, the format and the row, the chunk
 * left as it was. */
#include "testutil.h"

#include "arrow_fixture.h"
#include "chunk/chunk_int.h"

#include <stdio.h>
#include <string.h>

typedef struct fx {
    qsf_chunk *arrow, *typed;
    qsf_errinfo err;
} fx;

static int setup(void **state) {
    static fx f;
    memset(&f, 0, sizeof f);
    assert_int_equal(qsf_chunk_new("t", 1, &f.arrow, &f.err), QSF_OK);
    assert_int_equal(qsf_chunk_new("t", 1, &f.typed, &f.err), QSF_OK);
    *state = &f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    qsf_chunk_free(f->arrow);
    qsf_chunk_free(f->typed);
    return 0;
}

#define OK(x)                                                                                      \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ != QSF_OK)                                                                         \
            fail_msg("%s: %s", #x, f->err.msg);                                                    \
    } while (0)

/* The call fails with `code`, its message holds every text given, and the
 * chunk keeps its columns and row count. */
#define REFUSED(x, code, ...)                                                                      \
    do {                                                                                           \
        uint32_t n_ = f->arrow->ncols;                                                             \
        size_t r_ = qsf_chunk_rows(f->arrow);                                                      \
        int rc_ = (x);                                                                             \
        if (rc_ != (code))                                                                         \
            fail_msg("%s: %s, not %s (%s)", #x, qsf_err_name(rc_), qsf_err_name(code),             \
                     f->err.msg);                                                                  \
        const char *want_[] = {__VA_ARGS__};                                                       \
        for (size_t i_ = 0; i_ < sizeof want_ / sizeof *want_; i_++)                               \
            if (!strstr(f->err.msg, want_[i_]))                                                    \
                fail_msg("\"%s\" not in \"%s\"", want_[i_], f->err.msg);                           \
        assert_int_equal(f->arrow->ncols, n_);                                                     \
        assert_int_equal(qsf_chunk_rows(f->arrow), r_);                                            \
    } while (0)

/* Column i of both chunks reads the same bytes the same way. */
static void same_column(const qsf_chunk_col *a, const qsf_chunk_col *t) {
    assert_int_equal(a->name_len, t->name_len);
    assert_memory_equal(a->name, t->name, a->name_len);
    assert_int_equal(a->type, t->type);
    assert_int_equal(a->src, t->src);
    assert_int_equal(a->src_width, t->src_width);
    assert_int_equal(a->scale, t->scale);
    assert_int_equal(a->rank, t->rank);
    assert_int_equal(a->mult, t->mult);
    assert_ptr_equal(a->values, t->values);
    assert_ptr_equal(a->offs, t->offs);
    assert_ptr_equal(a->dict, t->dict);
    assert_int_equal(a->dict_len, t->dict_len);
    assert_ptr_equal(a->validity, t->validity);
    assert_int_equal(a->off, t->off);
    assert_int_equal(a->nulls, t->nulls);
    assert_int_equal(a->elems, t->elems);
    for (int d = 0; d < a->rank; d++)
        assert_int_equal(a->shape[d], t->shape[d]);
}

static void same_chunks(fx *f) {
    assert_int_equal(f->arrow->ncols, f->typed->ncols);
    assert_int_equal(f->arrow->rows, f->typed->rows);
    for (uint32_t i = 0; i < f->arrow->ncols; i++)
        same_column(&f->arrow->cols[i], &f->typed->cols[i]);
    assert_int_equal(f->arrow->has_ts, f->typed->has_ts);
    if (f->arrow->has_ts) {
        assert_ptr_equal(f->arrow->ts, f->typed->ts);
        assert_int_equal(f->arrow->ts_off, f->typed->ts_off);
        assert_int_equal(f->arrow->ts_mult, f->typed->ts_mult);
        assert_int_equal(f->arrow->ts_nanos, f->typed->ts_nanos);
    }
}

/* 10 rows; the arrays below are read at offset 2 for 6 rows, rows 1 and 4 of
 * them (bits 3 and 6) null. */
#define N   10
#define OFF 2
#define LEN 6
static const uint8_t valid[2] = {0xB7, 0x03}; /* 1011 0111, 11: bits 3 and 6 clear */
#define NULLS 2

static const int8_t i8v[N] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
static const int16_t i16v[N] = {1, -2, 3, 4, 5, 6, 7, 8, 9, 10};
static const int32_t i32v[N] = {1, 2, -3, 4, 5, 6, 7, 8, 9, 10};
static const int64_t i64v[N] = {1, 2, 3, -4, 5, 6, 7, 8, 9, 10};
static const uint64_t u64v[N] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
static const float f32v[N] = {1.5f, 2, 3, 4, 5, 6, 7, 8, 9, 10};
static const double f64v[N] = {1.5, 2, 3, 4, 5, 6, 7, 8, 9, 10};
static const uint8_t bytes32[N * 32] = {1, 2, 3};

#define COL(fmt, name, data)                                                                       \
    af_init(&a, fmt, name, LEN, OFF, NULLS, 2, valid, data, NULL);                                 \
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err))
#define TYPED(call, name, ...)                                                                     \
    OK(call(f->typed, name, strlen(name), __VA_ARGS__, valid, OFF, LEN, &f->err))

static void fixed_width(void **state) {
    fx *f = *state;
    af_col a;
    COL("c", "i8", i8v);
    TYPED(qsf_chunk_i8, "i8", i8v);
    COL("s", "i16", i16v);
    TYPED(qsf_chunk_i16, "i16", i16v);
    COL("i", "i32", i32v);
    TYPED(qsf_chunk_i32, "i32", i32v);
    COL("l", "i64", i64v);
    TYPED(qsf_chunk_i64, "i64", i64v);
    COL("C", "u8", i8v);
    TYPED(qsf_chunk_u8, "u8", (const uint8_t *) i8v);
    COL("S", "u16", i16v);
    TYPED(qsf_chunk_u16, "u16", (const uint16_t *) i16v);
    COL("I", "u32", i32v);
    TYPED(qsf_chunk_u32, "u32", (const uint32_t *) i32v);
    COL("L", "u64", u64v);
    TYPED(qsf_chunk_u64, "u64", u64v);
    COL("f", "f32", f32v);
    TYPED(qsf_chunk_f32, "f32", f32v);
    COL("g", "f64", f64v);
    TYPED(qsf_chunk_f64, "f64", f64v);
    COL("b", "bool", i8v);
    TYPED(qsf_chunk_bool, "bool", (const uint8_t *) i8v);
    same_chunks(f);
    assert_int_equal(qsf_chunk_rows(f->arrow), LEN);
    assert_int_equal(f->arrow->cols[0].nulls, NULLS);
}

static void temporal_and_decimal(void **state) {
    fx *f = *state;
    af_col a;
    COL("tdD", "d32", i32v);
    TYPED(qsf_chunk_date_days, "d32", i32v);
    COL("tdm", "d64", i64v);
    TYPED(qsf_chunk_date_millis, "d64", i64v);
    COL("tss:", "ts_s", i64v);
    TYPED(qsf_chunk_timestamp, "ts_s", i64v, QSF_UNIT_SECONDS);
    COL("tsm:UTC", "ts_ms", i64v);
    TYPED(qsf_chunk_timestamp, "ts_ms", i64v, QSF_UNIT_MILLIS);
    COL("tsu:", "ts_us", i64v);
    TYPED(qsf_chunk_timestamp, "ts_us", i64v, QSF_UNIT_MICROS);
    COL("tsn:Europe/Paris", "ts_ns", i64v);
    TYPED(qsf_chunk_timestamp, "ts_ns", i64v, QSF_UNIT_NANOS);
    COL("d:18,3,64", "dec64", i64v);
    TYPED(qsf_chunk_decimal64, "dec64", i64v, 3);
    COL("d:30,4", "dec128", bytes32);
    TYPED(qsf_chunk_decimal128, "dec128", bytes32, 4);
    COL("d:60,9,256", "dec256", bytes32);
    TYPED(qsf_chunk_decimal256, "dec256", bytes32, 9);
    same_chunks(f);
}

/* UUID, LONG256, CHAR, IPv4 and SYMBOL need asking: by metadata, by the
 * arrow.uuid extension, or by qsf_chunk_arrow_type (which wins). */
static void asked_types(void **state) {
    fx *f = *state;
    af_col a;
    char m1[64], m2[64], m3[64], m4[64];
    static const uint32_t ips[N] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    static const int32_t offs[N + 1] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    af_init(&a, "w:16", "u1", LEN, OFF, NULLS, 2, valid, bytes32, NULL);
    a.s.metadata = af_meta(m1, "questdb.type", "uuid");
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_uuid, "u1", bytes32);
    af_init(&a, "w:16", "u2", LEN, OFF, NULLS, 2, valid, bytes32, NULL);
    a.s.metadata = af_meta(m2, "ARROW:extension:name", "arrow.uuid");
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_uuid, "u2", bytes32);
    OK(qsf_chunk_arrow_type(f->arrow, "L256", 4, QSF_TYPE_LONG256, &f->err));
    COL("w:32", "l256", bytes32);
    TYPED(qsf_chunk_long256, "l256", bytes32);
    af_init(&a, "S", "ch", LEN, OFF, NULLS, 2, valid, i16v, NULL);
    a.s.metadata = af_meta(m3, "questdb.type", "char");
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_char, "ch", (const uint16_t *) i16v);
    OK(qsf_chunk_arrow_type(f->arrow, "ip", 2, QSF_TYPE_IPV4, &f->err));
    COL("I", "ip", ips);
    TYPED(qsf_chunk_ipv4, "ip", ips);
    /* the table wins over metadata */
    OK(qsf_chunk_arrow_type(f->arrow, "sym", 3, QSF_TYPE_SYMBOL, &f->err));
    af_init(&a, "u", "sym", LEN, OFF, NULLS, 3, valid, offs, "abcdefghij");
    a.s.metadata = af_meta(m4, "questdb.type", "varchar");
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_symbol, "sym", offs, "abcdefghij");
    same_chunks(f);
    /* kept across qsf_chunk_clear */
    qsf_chunk_clear(f->arrow);
    af_init(&a, "u", "sym", LEN, OFF, NULLS, 3, valid, offs, "abcdefghij");
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    assert_int_equal(f->arrow->cols[0].src, CSRC_SYM32);
    assert_int_equal(qsf_chunk_arrow_type(f->arrow, "x\n", 2, 99, &f->err), QSF_E_INVAL);
    assert_non_null(strstr(f->err.msg, "type 99 for column \"x\\n\"")); /* escaped */
    assert_int_equal(qsf_chunk_arrow_type(f->arrow, "", 0, QSF_TYPE_UUID, &f->err), QSF_E_VALUE);
}

static void variable_width(void **state) {
    fx *f = *state;
    af_col a;
    static const int32_t o32[N + 1] = {0, 1, 3, 3, 6, 10, 10, 11, 12, 13, 14};
    static const int64_t o64[N + 1] = {0, 1, 3, 3, 6, 10, 10, 11, 12, 13, 14};
    static const char data[] = "abcdefgh\xc3\xa9jklmn";
    char meta[64];
    af_init(&a, "u", "v32", LEN, OFF, NULLS, 3, valid, o32, data);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_varchar, "v32", o32, data);
    af_init(&a, "U", "v64", LEN, OFF, NULLS, 3, valid, o64, data);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_varchar64, "v64", o64, data);
    af_init(&a, "z", "b32", LEN, OFF, NULLS, 3, valid, o32, data);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_binary, "b32", o32, data);
    af_init(&a, "Z", "b64", LEN, OFF, NULLS, 3, valid, o64, data);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_binary64, "b64", o64, data);
    af_init(&a, "U", "s64", LEN, OFF, NULLS, 3, valid, o64, data);
    a.s.metadata = af_meta(meta, "questdb.type", "SYMBOL");
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_symbol64, "s64", o64, data);
    /* a column name given wins over schema->name */
    af_init(&a, "u", "ignored", LEN, OFF, NULLS, 3, valid, o32, data);
    OK(qsf_chunk_arrow_column(f->arrow, "named", 5, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_varchar, "named", o32, data);
    same_chunks(f);
}

/* Dictionary arrays: codes of 8, 16 and 32 bits, signed and unsigned (DuckDB's
 * ENUMs have uint8 ones); the dictionary itself
 * sliced (its offset folded into the offsets pointer). */
static void dictionaries(void **state) {
    fx *f = *state;
    af_col a, d;
    static const int32_t doffs[6] = {0, 1, 3, 6, 6, 8};
    static const char ddata[] = "abbcccdd";
    static const int8_t c8[N] = {0, 1, 2, 0, 1, 3, 2, 1, 0, 3};
    static const int16_t c16[N] = {0, 1, 2, 0, 1, 3, 2, 1, 0, 3};
    static const int32_t c32[N] = {0, 1, 2, 0, 1, 3, 2, 1, 0, 3};
    static const void *codes[3] = {c8, c16, c32};
    static const char *fmts[6] = {"c", "s", "i", "C", "S", "I"};
    static const int widths[3] = {1, 2, 4};
    for (int k = 0; k < 6; k++) {
        char name[8];
        snprintf(name, sizeof name, "d%d", k);
        af_init(&a, fmts[k], name, LEN, OFF, NULLS, 2, valid, codes[k % 3], NULL);
        af_init(&d, "u", NULL, 4, 1, 0, 3, NULL, doffs, ddata); /* entries 1..4 */
        af_dict(&a, &d);
        OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
        TYPED(qsf_chunk_symbol_dict, name, codes[k % 3], widths[k % 3], doffs + 1, ddata, 4);
    }
    same_chunks(f);
}

/* A dictionary asked to become VARCHAR (field metadata or
 * qsf_chunk_arrow_type) is decoded: each valid row's entry, from a sliced
 * dictionary, the validity from bit 0; a null row's code is not read, a valid
 * row's code outside the dictionary is refused naming the row. */
static void dictionary_as_varchar(void **state) {
    fx *f = *state;
    af_col a, d;
    static const int32_t doffs[6] = {0, 1, 3, 6, 6, 8};
    static const char ddata[] = "abbcccdd";
    /* read at OFF for LEN: codes 2 0 1 3 2 1, rows 1 and 4 null */
    static const int8_t c8[N] = {0, 1, 2, 0, 1, 3, 2, 1, 0, 3};
    static const int16_t c16[N] = {0, 1, 2, 99, 1, 3, 99, 1, 0, 3}; /* nulls out of range */
    char meta[64];
    af_init(&a, "c", "v8", LEN, OFF, NULLS, 2, valid, c8, NULL);
    a.s.metadata = af_meta(meta, "questdb.type", "varchar");
    af_init(&d, "u", NULL, 4, 1, 0, 3, NULL, doffs, ddata); /* "bb" "ccc" "" "dd" */
    af_dict(&a, &d);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    OK(qsf_chunk_arrow_type(f->arrow, "v16", 3, QSF_TYPE_VARCHAR, &f->err));
    af_init(&a, "s", "v16", LEN, OFF, NULLS, 2, valid, c16, NULL);
    af_init(&d, "u", NULL, 4, 1, 0, 3, NULL, doffs, ddata);
    af_dict(&a, &d);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    static const int64_t want_offs[LEN + 1] = {0, 0, 0, 3, 5, 5, 8};
    for (uint32_t i = 0; i < 2; i++) {
        const qsf_chunk_col *k = &f->arrow->cols[i];
        assert_int_equal(k->type, QSF_QWP_VARCHAR);
        assert_int_equal(k->src, CSRC_VAR64);
        assert_int_equal(k->off, 0);
        assert_int_equal(k->nulls, NULLS);
        assert_int_equal(k->validity[0], 0x2d); /* rows 0, 2, 3, 5 */
        assert_memory_equal(k->offs, want_offs, sizeof want_offs);
        assert_memory_equal(k->values, "cccddccc", 8);
    }
    static const int8_t out_of_range[N] = {0, 1, 2, 0, 1, 4, 2, 1, 0, 3};
    af_init(&a, "c", "bad", LEN, OFF, NULLS, 2, valid, out_of_range, NULL);
    a.s.metadata = af_meta(meta, "questdb.type", "varchar");
    af_init(&d, "u", NULL, 4, 1, 0, 3, NULL, doffs, ddata);
    af_dict(&a, &d);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "column \"bad\"", "\"c\"", "row 3", "code 4 is outside the dictionary");
}

/* list<float64> (child with its own offset) and fixed_size_list of rank 1
 * and 2 (every level with an offset) become DOUBLE arrays. */
static void double_arrays(void **state) {
    fx *f = *state;
    af_col a, e, m;
    static double el[200];
    for (int i = 0; i < 200; i++)
        el[i] = i * 0.5;
    static const int32_t loffs[N + 1] = {0, 2, 2, 5, 6, 9, 9, 12, 13, 15, 20};
    af_init(&a, "+l", "list", LEN, OFF, NULLS, 2, valid, loffs, NULL);
    af_init(&e, "g", "item", 20, 3, 0, 2, NULL, el, NULL);
    af_child(&a, &e);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    TYPED(qsf_chunk_f64_list, "list", loffs, el + 3);
    af_init(&a, "+w:3", "vec", LEN, OFF, NULLS, 1, valid, NULL, NULL);
    af_init(&e, "g", "item", 40, 5, 0, 2, NULL, el, NULL);
    af_child(&a, &e);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    static const int32_t shape1[1] = {3};
    TYPED(qsf_chunk_f64_tensor, "vec", 1, shape1, el + 5);
    /* rank 2: rows of 2 x 3; the middle level at offset 1, the leaf at 7 */
    af_init(&a, "+w:2", "mat", LEN, OFF, NULLS, 1, valid, NULL, NULL);
    af_init(&m, "+w:3", "item", 2 * N + 1, 1, 0, 1, NULL, NULL, NULL);
    af_init(&e, "g", "item", 3 * (2 * N + 2), 7, 0, 2, NULL, el, NULL);
    af_child(&m, &e);
    af_child(&a, &m);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    static const int32_t shape2[2] = {2, 3};
    TYPED(qsf_chunk_f64_tensor, "mat", 2, shape2, el + 7 + 3);
    same_chunks(f);
}

/* A record batch: the struct's offset applies to every child after its own;
 * the designated timestamp column becomes the chunk's timestamp. */
static void record_batch(void **state) {
    fx *f = *state;
    af_col b, k, s, ts;
    static const int32_t o32[N + 1] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    static const char data[] = "abcdefghij";
    af_init(&b, "+s", NULL, 5, 1, 0, 1, NULL, NULL, NULL);
    af_init(&k, "l", "k", 8, 2, 0, 2, NULL, i64v, NULL);
    af_init(&s, "u", "s", 9, 1, 0, 3, NULL, o32, data);
    af_init(&ts, "tsn:UTC", "ts", 6, 0, 0, 2, NULL, u64v, NULL);
    af_child(&b, &k);
    af_child(&b, &s);
    af_child(&b, &ts);
    OK(qsf_chunk_arrow_batch(f->arrow, &b.s, &b.a, "ts", &f->err));
    OK(qsf_chunk_i64(f->typed, "k", 1, i64v, NULL, 3, 5, &f->err));
    OK(qsf_chunk_varchar(f->typed, "s", 1, o32, data, NULL, 2, 5, &f->err));
    OK(qsf_chunk_at(f->typed, (const int64_t *) u64v, QSF_UNIT_NANOS, 1, 5, &f->err));
    same_chunks(f);
    assert_true(f->arrow->has_ts);
    /* without ts_col: no designated timestamp, ts is a column */
    qsf_chunk_clear(f->arrow);
    OK(qsf_chunk_arrow_batch(f->arrow, &b.s, &b.a, NULL, &f->err));
    assert_int_equal(f->arrow->ncols, 3);
    assert_false(f->arrow->has_ts);
}

/* A batch whose third column fails adds none of its columns. */
static void batch_all_or_nothing(void **state) {
    fx *f = *state;
    af_col b, k, s, ts;
    static const int32_t o32[4] = {0, 1, 2, 3};
    static const char bad_utf8[] = "a\xff"
                                   "c";
    static const uint8_t ts_valid[1] = {0x5};
    OK(qsf_chunk_i64(f->arrow, "before", 6, i64v, NULL, 0, 3, &f->err));
    af_init(&b, "+s", NULL, 3, 0, 0, 1, NULL, NULL, NULL);
    af_init(&k, "l", "k", 3, 0, 0, 2, NULL, i64v, NULL);
    af_init(&ts, "tsu:", "ts", 3, 0, 0, 2, NULL, i64v, NULL);
    af_init(&s, "u", "s", 3, 0, 0, 3, NULL, o32, bad_utf8);
    af_child(&b, &k);
    af_child(&b, &ts);
    af_child(&b, &s);
    REFUSED(qsf_chunk_arrow_batch(f->arrow, &b.s, &b.a, "ts", &f->err), QSF_E_VALUE, "column \"s\"",
            "arrow format \"u\"", "row 1");
    assert_false(f->arrow->has_ts);
    assert_int_equal(f->arrow->ncols, 1);
    /* a null designated timestamp */
    af_init(&b, "+s", NULL, 3, 0, 0, 1, NULL, NULL, NULL);
    af_init(&ts, "tsu:", "ts", 3, 0, 1, 2, ts_valid, i64v, NULL);
    af_child(&b, &k);
    af_child(&b, &ts);
    REFUSED(qsf_chunk_arrow_batch(f->arrow, &b.s, &b.a, "ts", &f->err), QSF_E_VALUE,
            "column \"ts\"", "tsu:", "row 1", "null");
    REFUSED(qsf_chunk_arrow_batch(f->arrow, &b.s, &b.a, "nope", &f->err), QSF_E_VALUE, "\"nope\"");
    REFUSED(qsf_chunk_arrow_batch(f->arrow, &b.s, &b.a, "k", &f->err), QSF_E_UNSUPPORTED,
            "column \"k\"", "\"l\"", "designated timestamp");
    /* a child shorter than the batch */
    k.a.length = 2;
    REFUSED(qsf_chunk_arrow_batch(f->arrow, &b.s, &b.a, NULL, &f->err), QSF_E_VALUE, "column \"k\"",
            "does not hold");
    /* not a struct */
    REFUSED(qsf_chunk_arrow_batch(f->arrow, &k.s, &k.a, NULL, &f->err), QSF_E_UNSUPPORTED,
            "\"+s\"");
}

/* Formats QuestDB has no column for: refused, each with its reason. */
static void unsupported_formats(void **state) {
    fx *f = *state;
    af_col a;
    static const struct {
        const char *fmt, *why;
    } cases[] = {
        {"tts", "time"},
        {"ttn", "time"},
        {"tDs", "duration"},
        {"tiM", "interval"},
        {"+m", "map"},
        {"+ud:0,1", "union"},
        {"+us:0", "union"},
        {"+r", "run-end"},
        {"n", "null type"},
        {"+L", "large_list"},
        {"+vl", "list_view"},
        {"+s", "record batch"},
        {"d:5,-2", "negative"},
        {"w:16", "fixed_size_binary"},
        {"w:7", "fixed_size_binary"},
        {"x", "not an Arrow"},
        {"", "not an Arrow"},
        {"tsu", "temporal"},
        {"d:5", "decimal"},
        {"d:5,2,48", "bit width"},
        {"+w:", "fixed-size list"},
        {"w:0", "fixed-size binary"},
        {"+", "nested"},
        {"t", "temporal"},
        {"ll", "not an Arrow"},
        {"+ux", "nested"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        af_init(&a, cases[i].fmt, "c", 4, 0, 0, 2, NULL, i64v, NULL);
        REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_UNSUPPORTED,
                "column \"c\"", cases[i].why);
    }
    /* a list of something else than float64 */
    af_col e;
    static const int32_t lo[3] = {0, 1, 2};
    af_init(&a, "+l", "c", 2, 0, 0, 2, NULL, lo, NULL);
    af_init(&e, "l", "item", 2, 0, 0, 2, NULL, i64v, NULL);
    af_child(&a, &e);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_UNSUPPORTED,
            "float64");
    /* asked types that do not fit */
    char meta[64];
    af_init(&a, "l", "c", 2, 0, 0, 2, NULL, i64v, NULL);
    a.s.metadata = af_meta(meta, "questdb.type", "uuid");
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_UNSUPPORTED,
            "uuid", "does not apply");
    a.s.metadata = af_meta(meta, "questdb.type", "geohash");
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_UNSUPPORTED,
            "questdb.type");
}

/* Structure that contradicts itself: each refused with QSF_E_VALUE. */
static void bad_structure(void **state) {
    fx *f = *state;
    af_col a;
    static const uint8_t all_valid[2] = {0xff, 0xff};
    af_init(&a, "l", "c", LEN, OFF, 1, 2, valid, i64v, NULL); /* 2 nulls in the bitmap */
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "column \"c\"", "\"l\"", "null_count contradicts");
    af_init(&a, "l", "c", LEN, OFF, 1, 2, all_valid, i64v, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "null_count contradicts");
    af_init(&a, "l", "c", LEN, OFF, 1, 2, NULL, i64v, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "without a validity bitmap");
    af_init(&a, "l", "c", LEN, OFF, 0, 3, NULL, i64v, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "n_buffers");
    af_init(&a, "l", "c", LEN, OFF, 0, 2, NULL, NULL, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "data buffer is NULL");
    af_init(&a, "l", "c", -1, 0, 0, 2, NULL, i64v, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "negative");
    af_init(&a, "l", "c", 1, -1, 0, 2, NULL, i64v, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "negative");
    af_init(&a, "l", "c", INT64_MAX, 5, 0, 2, NULL, i64v, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "overflows");
    af_init(&a, "l", "c", 2, 0, 3, 2, NULL, i64v, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "null_count outside");
    af_col kid;
    af_init(&a, "l", "c", 2, 0, 0, 2, NULL, i64v, NULL);
    af_init(&kid, "l", "k", 2, 0, 0, 2, NULL, i64v, NULL);
    af_child(&a, &kid);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "n_children");
    /* released, NULL */
    af_init(&a, "l", "c", 2, 0, 0, 2, NULL, i64v, NULL);
    a.a.release = NULL;
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_INVAL,
            "released");
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, NULL, &a.a, &f->err), QSF_E_INVAL, "NULL");
    af_init(&a, "l", NULL, 2, 0, 0, 2, NULL, i64v, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "no column name");
}

/* Values the typed calls refuse come back with the Arrow format named. */
static void bad_values(void **state) {
    fx *f = *state;
    af_col a, d, e;
    static const int32_t dec[4] = {0, 2, 1, 3};
    static const char data[] = "abc";
    af_init(&a, "u", "c", 3, 0, 0, 3, NULL, dec, data);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "column \"c\"", "\"u\"", "row 1", "decrease");
    static const int32_t neg[3] = {-1, 0, 1};
    af_init(&a, "u", "c", 2, 0, 0, 3, NULL, neg, data);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE, "\"u\"",
            "is negative");
    static const int32_t o[3] = {0, 1, 3};
    static const char bad[] = "a\xc3(";
    af_init(&a, "u", "c", 2, 0, 0, 3, NULL, o, bad);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "arrow format \"u\"", "column \"c\"", "row 1");
    /* dictionaries: a code out of range, a null entry, no dictionary array */
    static const int8_t codes[3] = {0, 5, 1};
    static const int32_t doffs[3] = {0, 1, 2};
    static const uint8_t dvalid[1] = {0x1};
    af_init(&a, "c", "c", 3, 0, 0, 2, NULL, codes, NULL);
    af_init(&d, "u", NULL, 2, 0, 0, 3, NULL, doffs, "ab");
    af_dict(&a, &d);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "arrow format \"c\"", "row 1", "code 5");
    static const int8_t codes2[3] = {0, 1, 1};
    af_init(&a, "c", "c", 3, 0, 0, 2, NULL, codes2, NULL);
    af_init(&d, "u", NULL, 2, 0, 1, 3, dvalid, doffs, "ab");
    af_dict(&a, &d);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE, "row 1",
            "null dictionary entry");
    a.a.dictionary = NULL;
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "disagree on a dictionary");
    af_init(&a, "l", "c", 3, 0, 0, 2, NULL, i64v, NULL);
    af_init(&d, "u", NULL, 2, 0, 0, 3, NULL, doffs, "ab");
    af_dict(&a, &d);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_UNSUPPORTED,
            "8, 16 or 32 bits");
    /* unsigned indices past the signed maximum (a dictionary of 200 entries) */
    static int32_t big_offs[201];
    static uint8_t ucodes[3] = {1, 150, 2};
    for (int i = 0; i <= 200; i++)
        big_offs[i] = i;
    static char big_data[200];
    memset(big_data, 'x', sizeof big_data);
    af_init(&a, "C", "c", 3, 0, 0, 2, NULL, ucodes, NULL);
    af_init(&d, "u", NULL, 200, 0, 0, 3, NULL, big_offs, big_data);
    af_dict(&a, &d);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE, "\"C\"",
            "row 1", "unsigned code 150");
    af_init(&a, "c", "c", 3, 0, 0, 2, NULL, codes2, NULL);
    af_init(&d, "l", NULL, 2, 0, 0, 2, NULL, i64v, NULL);
    af_dict(&a, &d);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_UNSUPPORTED,
            "utf8 values");
    /* lists: offsets past the child, a null element */
    static const int32_t lo[3] = {0, 2, 4};
    static const uint8_t evalid[1] = {0xB};
    af_init(&a, "+l", "c", 2, 0, 0, 2, NULL, lo, NULL);
    af_init(&e, "g", "item", 3, 0, 0, 2, NULL, f64v, NULL);
    af_child(&a, &e);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE, "\"+l\"",
            "past the child");
    af_init(&a, "+l", "c", 2, 0, 0, 2, NULL, lo, NULL);
    af_init(&e, "g", "item", 4, 0, 1, 2, evalid, f64v, NULL);
    af_child(&a, &e);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE,
            "null element");
    /* elements under a null row may be null (DuckDB leaves them so) */
    static const uint8_t row1_null[1] = {0x5};
    static const uint8_t row1_elems_null[2] = {0xC7, 0x01}; /* elements 3..5 (row 1) clear */
    af_init(&a, "+w:3", "under_null", 3, 0, 1, 1, row1_null, NULL, NULL);
    af_init(&e, "g", "item", 9, 0, 3, 2, row1_elems_null, f64v, NULL);
    af_child(&a, &e);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    af_init(&a, "+w:3", "c", 3, 0, 0, 1, NULL, NULL, NULL);
    af_init(&e, "g", "item", 9, 0, 3, 2, row1_elems_null, f64v, NULL);
    af_child(&a, &e);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE, "\"+w:3\"",
            "row 1", "null element");
    af_init(&a, "+w:3", "c", 2, 1, 0, 1, NULL, NULL, NULL);
    af_init(&e, "g", "item", 8, 0, 0, 2, NULL, f64v, NULL);
    af_child(&a, &e);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err), QSF_E_VALUE, "\"+w:3\"",
            "need 9");
}

/* Fixed-size lists nested deeper than a DOUBLE array's 32 dimensions. */
static void nesting_too_deep(void **state) {
    fx *f = *state;
    enum { DEPTH = 40 };
    static af_col lv[DEPTH + 1];
    static const double one[1] = {1};
    for (int i = 0; i < DEPTH; i++)
        af_init(&lv[i], "+w:1", "c", 1, 0, 0, 1, NULL, NULL, NULL);
    af_init(&lv[DEPTH], "g", "item", 1, 0, 0, 2, NULL, one, NULL);
    for (int i = DEPTH - 1; i >= 0; i--)
        af_child(&lv[i], &lv[i + 1]);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &lv[0].s, &lv[0].a, &f->err),
            QSF_E_UNSUPPORTED, "32 dimensions");
    /* 32 levels are taken */
    af_init(&lv[32], "g", "item", 1, 0, 0, 2, NULL, one, NULL);
    lv[31].s.n_children = lv[31].a.n_children = 0;
    af_child(&lv[31], &lv[32]);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &lv[0].s, &lv[0].a, &f->err));
    assert_int_equal(f->arrow->cols[0].rank, 32);
}

/* float16, decimal32 and the view formats are converted into buffers the
 * chunk keeps; the converted column starts at row 0 (validity copied). */
static void conversions(void **state) {
    fx *f = *state;
    af_col a;
    /* 1.0, -2.0, 2^-24 (subnormal), +inf, 0.333251953125, a null */
    static const uint16_t halves[7] = {0, 0x3C00, 0xC000, 0x0001, 0x7C00, 0x3555, 0x1234};
    static const uint8_t hv[1] = {0x3e}; /* bits 1..5 set: rows 0..4 of the slice, row 5 null */
    af_init(&a, "e", "h", 6, 1, 1, 2, hv, halves, NULL);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    const qsf_chunk_col *k = &f->arrow->cols[0];
    const float *fv = k->values;
    assert_int_equal(k->off, 0);
    assert_int_equal(k->nulls, 1);
    assert_true(fv[0] == 1.0f && fv[1] == -2.0f && fv[2] == 1.0f / 16777216.0f);
    assert_true(fv[3] > 3.4e38f && fv[4] == 0.333251953125f);
    assert_int_equal(k->validity[0], 0x1f);

    static const int32_t d32[7] = {9, -5, 7, 123456, 0, 0, -1};
    af_init(&a, "d:9,2,32", "d", 6, 1, 0, 2, NULL, d32, NULL);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    k = &f->arrow->cols[1];
    const int64_t *dv = k->values;
    assert_int_equal(k->scale, 2);
    assert_true(dv[0] == -5 && dv[1] == 7 && dv[2] == 123456 && dv[5] == -1);
    /* the converted buffers go with qsf_chunk_clear (ASan: no leak, no reuse) */
    qsf_chunk_clear(f->arrow);

    /* views: inline ("short"), out of line in data buffer 1, a null row
     * whose view is garbage, and an empty string; read from offset 1 */
    static uint8_t views[5 * 16];
    static const char buf0[] = "xxxx", buf1[] = "..a string longer than twelve bytes";
    static const int64_t sizes[2] = {4, sizeof buf1 - 1};
    int32_t len = 5, idx = 1, off = 2, big = 33, garbage = -7;
    memcpy(views + 16, &len, 4);
    memcpy(views + 20, "short", 5);
    memcpy(views + 32, &big, 4);
    memcpy(views + 36, buf1 + 2, 4);
    memcpy(views + 40, &idx, 4);
    memcpy(views + 44, &off, 4);
    memcpy(views + 48, &garbage, 4);
    static const uint8_t vv[1] = {0x16}; /* row 2 of the slice (bit 3) null */
    af_col v;
    af_init(&v, "vu", "s", 4, 1, 1, 5, vv, views, buf0);
    v.bufs[3] = buf1;
    v.bufs[4] = sizes;
    OK(qsf_chunk_arrow_type(f->arrow, "s", 1, QSF_TYPE_SYMBOL, &f->err));
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &v.s, &v.a, &f->err));
    k = &f->arrow->cols[0];
    assert_int_equal(k->src, CSRC_SYM64);
    const int64_t *o = k->offs;
    const char *data = k->values;
    assert_true(o[0] == 0 && o[1] == 5 && o[2] == 38 && o[3] == 38 && o[4] == 38);
    assert_memory_equal(data, "short", 5);
    assert_memory_equal(data + 5, "a string longer than twelve bytes", 33);
    af_init(&v, "vz", "b", 4, 1, 1, 5, vv, views, buf0);
    v.bufs[3] = buf1;
    v.bufs[4] = sizes;
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &v.s, &v.a, &f->err));
    assert_int_equal(f->arrow->cols[1].src, CSRC_VAR64);

    /* hostile views: a buffer index, an offset past the size, a negative length */
    idx = 2;
    memcpy(views + 40, &idx, 4);
    af_init(&v, "vu", "bad", 4, 1, 1, 5, vv, views, buf0);
    v.bufs[3] = buf1;
    v.bufs[4] = sizes;
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &v.s, &v.a, &f->err), QSF_E_VALUE,
            "column \"bad\"", "\"vu\"", "row 1", "past its data buffer 2");
    idx = 1, off = 3;
    memcpy(views + 40, &idx, 4);
    memcpy(views + 44, &off, 4);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &v.s, &v.a, &f->err), QSF_E_VALUE, "row 1",
            "past its data buffer 1");
    garbage = -1;
    memcpy(views + 16, &garbage, 4);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &v.s, &v.a, &f->err), QSF_E_VALUE, "row 0",
            "negative view length");
    af_init(&v, "vu", "bad", 4, 1, 1, 2, vv, views, NULL);
    REFUSED(qsf_chunk_arrow_column(f->arrow, NULL, 0, &v.s, &v.a, &f->err), QSF_E_VALUE,
            "n_buffers");
    qsf_chunk_clear(f->arrow);
    assert_int_equal(f->arrow->ncols, 0);
}

/* Empty arrays whose producers left the buffers NULL. */
static void empty_arrays(void **state) {
    fx *f = *state;
    af_col a;
    af_init(&a, "u", "s", 0, 0, 0, 3, NULL, NULL, NULL);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    af_init(&a, "l", "l", 0, 0, 0, 2, NULL, NULL, NULL);
    OK(qsf_chunk_arrow_column(f->arrow, NULL, 0, &a.s, &a.a, &f->err));
    assert_int_equal(qsf_chunk_rows(f->arrow), 0);
    assert_int_equal(f->arrow->ncols, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fixed_width, setup, teardown),
        cmocka_unit_test_setup_teardown(temporal_and_decimal, setup, teardown),
        cmocka_unit_test_setup_teardown(asked_types, setup, teardown),
        cmocka_unit_test_setup_teardown(variable_width, setup, teardown),
        cmocka_unit_test_setup_teardown(dictionaries, setup, teardown),
        cmocka_unit_test_setup_teardown(dictionary_as_varchar, setup, teardown),
        cmocka_unit_test_setup_teardown(double_arrays, setup, teardown),
        cmocka_unit_test_setup_teardown(record_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(batch_all_or_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(unsupported_formats, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_structure, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_values, setup, teardown),
        cmocka_unit_test_setup_teardown(nesting_too_deep, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_arrays, setup, teardown),
        cmocka_unit_test_setup_teardown(conversions, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
