/* The byte vectors of docs/PROTOCOL.md §13, produced through the row API and the
 * encoder, and read back by the decoder. */
#include "testutil.h"

#include "qwp_fixture.h"
#include "qwp/batch.h"
#include "qwpdec/decoder.h"
#include "qwp/encoder.h"

#include <string.h>

#define OK(x) assert_int_equal((x), QSF_OK)

static void encode(fx *f, bool gorilla) {
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.gorilla = gorilla;
    OK(qsf_qwp_encode(f->e, f->b, &o, NULL, qc_emit, &f->cap, NULL, &f->err));
    assert_int_equal(f->cap.n, 1);
}

static void expect_hex(const uint8_t *got, size_t len, const char *hex) {
    uint8_t want[512];
    size_t n = tu_hex(hex, want, sizeof want);
    assert_int_equal(len, n);
    assert_memory_equal(got, want, n);
}

/* A: the block bytes are the documented ones; qsf adds flag 0x08 and the empty delta
 * section 00 00 (it always sends 0x08), so the payload is 2 bytes longer. */
static void vector_a_sensors(void **state) {
    fx *f = *state;
    OK(qsf_qwp_batch_table(f->b, "sensors", 7, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "id", 2, 1, NULL));
    OK(qsf_qwp_batch_col_f64(f->b, "value", 5, 1.3, NULL));
    OK(qsf_qwp_batch_at_micros(f->b, 10000000000, NULL));
    OK(qsf_qwp_batch_table(f->b, "sensors", 7, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "id", 2, 2, NULL));
    OK(qsf_qwp_batch_col_f64(f->b, "value", 5, 2.2, NULL));
    OK(qsf_qwp_batch_at_micros(f->b, 400000, NULL));
    encode(f, false);
    const char *block = "07 73 65 6E 73 6F 72 73 02 03"
                        "02 69 64 05  05 76 61 6C 75 65 07  00 0A"
                        "00 01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00"
                        "00 CD CC CC CC CC CC F4 3F 9A 99 99 99 99 99 01 40"
                        "00 00 E4 0B 54 02 00 00 00 80 1A 06 00 00 00 00 00";
    expect_hex(f->cap.f[0].p, 14, "51 57 50 31 01 08 01 00 4C 00 00 00 00 00");
    expect_hex(f->cap.f[0].p + 14, f->cap.f[0].len - 14, block);

    /* the documented 86-byte message (flags 0) decodes to the same rows */
    uint8_t doc[86];
    char hex[400] = "51 57 50 31 01 00 01 00 4A 00 00 00 ";
    strcat(hex, block);
    assert_int_equal(tu_hex(hex, doc, sizeof doc), 86);
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    qsf_qwp_decode_result res;
    assert_int_equal(qsf_qwp_decode(m, NULL, doc, 86, NULL, &res), QSF_QWP_STATUS_OK);
    const qsf_qwp_dtable *t = qsf_qwp_msg_table(m, 0);
    assert_int_equal(t->row_count, 2);
    assert_int_equal(qsf_qwp_dcol_i64(&t->cols[0], 1), 2);
    assert_true(qsf_qwp_dcol_f64(&t->cols[1], 0) == 1.3);
    assert_int_equal(qsf_qwp_dcol_i64(&t->cols[2], 0), 10000000000);
    qsf_qwp_msg_free(m);
}

static void vector_b_delta_bitmap_gorilla(void **state) {
    fx *f = *state;
    const char *syms[] = {"a", NULL, "b", "a"};
    const int64_t ts[] = {1000, 2000, 3000, 4010};
    for (int i = 0; i < 4; i++) {
        OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
        if (syms[i])
            OK(qsf_qwp_batch_symbol(f->b, "sym", 3, syms[i], 1, NULL));
        OK(qsf_qwp_batch_at_micros(f->b, ts[i], NULL));
    }
    encode(f, true);
    expect_hex(f->cap.f[0].p, f->cap.f[0].len,
               "51 57 50 31 01 0C 01 00 2A 00 00 00"
               "00 02 01 61 01 62"
               "01 74 04 02 03 73 79 6D 09 00 0A"
               "01 02 00 01 00"
               "00 01 E8 03 00 00 00 00 00 00 D0 07 00 00 00 00 00 00 52 00");
    assert_true(f->cap.f[0].last);
    assert_int_equal(qsf_symtab_published(f->st), 2);
}

static void vector_c_gorilla_columns(void **state) {
    fx *f = *state;
    const int64_t a[] = {1000, 2000, 3000, 4010, 5000}, b[] = {0, 10, 20, 94};
    for (int i = 0; i < 5; i++) {
        OK(qsf_qwp_batch_table(f->b, "a", 1, NULL));
        OK(qsf_qwp_batch_col_ts_micros(f->b, "ts", 2, a[i], NULL));
        OK(qsf_qwp_batch_at_now(f->b, NULL));
    }
    for (int i = 0; i < 4; i++) {
        OK(qsf_qwp_batch_table(f->b, "b", 1, NULL));
        OK(qsf_qwp_batch_col_ts_nanos(f->b, "ts", 2, b[i], NULL));
        OK(qsf_qwp_batch_at_now(f->b, NULL));
    }
    encode(f, true);
    /* header 12, delta 2, then "a" 5 rows 1 col "ts" TIMESTAMP, null flag */
    const uint8_t *p = f->cap.f[0].p + 12 + 2;
    expect_hex(p, 8, "01 61 05 01 02 74 73 0A");
    expect_hex(p + 9, 20, "01 E8 03 00 00 00 00 00 00 D0 07 00 00 00 00 00 00 52 C4 06");
    p += 9 + 20;
    expect_hex(p, 8, "01 62 04 01 02 74 73 10");
    expect_hex(p + 9, 19, "01 00 00 00 00 00 00 00 00 0A 00 00 00 00 00 00 00 06 04");
    assert_int_equal(p + 9 + 19 - f->cap.f[0].p, f->cap.f[0].len);
}

static void vector_e_control_frames(void **state) {
    fx *f = *state;
    uint8_t out[QSF_QWP_EMPTY_COMMIT_LEN];
    assert_int_equal(qsf_qwp_empty_commit(out), 14);
    expect_hex(out, 14, "51 57 50 31 01 08 00 00 02 00 00 00 00 00");
    int is_new;
    uint32_t id;
    OK(qsf_symtab_intern(f->st, "a", 1, &id, &is_new, NULL));
    OK(qsf_symtab_intern(f->st, "b", 1, &id, &is_new, NULL));
    size_t frames;
    OK(qsf_qwp_catchup(f->e, 2, qsf_symtab_entry_cb, f->st, 0, qc_emit, &f->cap, &frames, NULL));
    assert_int_equal(frames, 1);
    expect_hex(f->cap.f[0].p, f->cap.f[0].len,
               "51 57 50 31 01 09 00 00 06 00 00 00 00 02 01 61 01 62");
    assert_true(f->cap.f[0].last);
    /* the empty catch-up vector is a valid message for the decoder */
    uint8_t empty[14];
    tu_hex("51 57 50 31 01 09 00 00 02 00 00 00 00 00", empty, 14);
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    qsf_qwp_dict *d = qsf_qwp_dict_new();
    qsf_qwp_decode_result res;
    assert_int_equal(qsf_qwp_decode(m, d, empty, 14, NULL, &res), QSF_QWP_STATUS_OK);
    assert_int_equal(qsf_qwp_decode(m, d, f->cap.f[0].p, f->cap.f[0].len, NULL, &res), 0);
    assert_int_equal(qsf_qwp_dict_size(d), 2);
    qsf_qwp_dict_free(d);
    qsf_qwp_msg_free(m);
}

/* Encodes one row of one column in table "t" (no designated timestamp) and checks
 * the column's data bytes (null flag included). */
static void one_value(fx *f, const char *data_hex) {
    encode(f, false);
    const uint8_t *p = f->cap.f[0].p + 12 + 2 + 2; /* header, delta, "t" */
    p += 2;                                        /* row_count, column_count */
    p += 1 + p[0] + 1;                             /* column def */
    expect_hex(p, f->cap.f[0].len - (size_t) (p - f->cap.f[0].p), data_hex);
    qc_clear(&f->cap);
}

static void vector_f_values(void **state) {
    fx *f = *state;
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    OK(qsf_qwp_batch_col_uuid(f->b, "u", 1, 0x8899aabbccddeeffull, 0x0011223344556677ull, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    one_value(f, "00 FF EE DD CC BB AA 99 88 77 66 55 44 33 22 11 00");
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    OK(qsf_qwp_batch_col_i32(f->b, "i", 1, -1, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    one_value(f, "00 FF FF FF FF");
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    OK(qsf_qwp_batch_col_ipv4(f->b, "ip", 2, 0xC0A8012A, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    one_value(f, "00 2A 01 A8 C0");
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    OK(qsf_qwp_batch_col_char(f->b, "c", 1, 0x4E2D, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    one_value(f, "00 2D 4E");
    uint8_t d128[16] = {0x40, 0xE2, 0x01};
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    OK(qsf_qwp_batch_col_decimal128(f->b, "d", 1, d128, 3, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    one_value(f, "00 03 40 E2 01 00 00 00 00 00 00 00 00 00 00 00 00 00");
}

static void vector_f_booleans_and_bitmap(void **state) {
    fx *f = *state;
    const bool bits[8] = {1, 0, 1, 1, 0, 0, 0, 1};
    for (int i = 0; i < 8; i++) {
        OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
        OK(qsf_qwp_batch_col_bool(f->b, "b", 1, bits[i], NULL));
        OK(qsf_qwp_batch_at_now(f->b, NULL));
    }
    one_value(f, "00 8D");
    /* 10 rows, rows 0, 2 and 9 NULL: bitmap 05 02, then the 7 values */
    for (int i = 0; i < 10; i++) {
        OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
        if (i != 0 && i != 2 && i != 9)
            OK(qsf_qwp_batch_col_i8(f->b, "x", 1, (int8_t) i, NULL));
        else
            OK(qsf_qwp_batch_col_i16(f->b, "other", 5, 0, NULL));
        OK(qsf_qwp_batch_at_now(f->b, NULL));
    }
    encode(f, false);
    const uint8_t *p = f->cap.f[0].p + 12 + 2 + 2 + 2; /* header, delta, "t", rows, cols */
    /* "other" appeared first (row 0), so it is the first column */
    expect_hex(p, 10, "05 6F 74 68 65 72 03 01 78 02");
    expect_hex(p + 10, 9, "01 FA 01 00 00 00 00 00 00");
    expect_hex(p + 19, f->cap.f[0].len - (size_t) (p + 19 - f->cap.f[0].p),
               "01 05 02 01 03 04 05 06 07 08");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(vector_a_sensors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(vector_b_delta_bitmap_gorilla, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(vector_c_gorilla_columns, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(vector_e_control_frames, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(vector_f_values, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(vector_f_booleans_and_bitmap, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
