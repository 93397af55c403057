/* Server-side validation of the decoder: every rejection returns the status a
 * server sends (PARSE_ERROR or DICTIONARY_GAP) with a message that names the
 * problem, and a failed frame leaves the connection dictionary untouched. */
#include "testutil.h"

#include "qwpdec/decoder.h"

#include <stdlib.h>
#include <string.h>

typedef struct fx {
    qsf_qwp_msg *m;
    qsf_qwp_dict *d;
    qsf_qwp_decode_result res;
    qsf_qwp_decode_opts opts;
    uint8_t buf[4096];
    size_t len;
} fx;

static int setup(void **state) {
    fx *f = calloc(1, sizeof *f);
    f->m = qsf_qwp_msg_new();
    f->d = qsf_qwp_dict_new();
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    qsf_qwp_msg_free(f->m);
    qsf_qwp_dict_free(f->d);
    free(f);
    return 0;
}

/* Builds a message: header with the given flags and table count, payload from hex;
 * payload_length is computed. */
static int decode(fx *f, uint8_t flags, uint16_t tables, const char *payload_hex) {
    size_t n = tu_hex(payload_hex, f->buf + 12, sizeof f->buf - 12);
    memcpy(f->buf, "QWP1", 4);
    f->buf[4] = 1;
    f->buf[5] = flags;
    f->buf[6] = (uint8_t) tables;
    f->buf[7] = (uint8_t) (tables >> 8);
    for (int i = 0; i < 4; i++)
        f->buf[8 + i] = (uint8_t) (n >> (8 * i));
    f->len = 12 + n;
    return qsf_qwp_decode(f->m, f->d, f->buf, f->len, &f->opts, &f->res);
}

static int redecode(fx *f) {
    return qsf_qwp_decode(f->m, f->d, f->buf, f->len, &f->opts, &f->res);
}

#define PARSE(x, text)                                                                             \
    do {                                                                                           \
        assert_int_equal((x), QSF_QWP_STATUS_PARSE_ERROR);                                         \
        if (!strstr(f->res.message, (text)))                                                       \
            fail_msg("message \"%s\" lacks \"%s\"", f->res.message, (text));                       \
    } while (0)
#define GOOD(x)                                                                                    \
    do {                                                                                           \
        if ((x) != 0)                                                                              \
            fail_msg("rejected: %s", f->res.message);                                              \
    } while (0)

/* table "t", 1 row, one column "c" of type TT, then data */
#define T1(tt) "01 74 01 01 01 63 " tt " "

static void header_checks(void **state) {
    fx *f = *state;
    PARSE(qsf_qwp_decode(f->m, f->d, (const uint8_t *) "QWP1", 4, NULL, &f->res), "shorter");
    GOOD(decode(f, 0x08, 0, "00 00"));
    f->buf[0] = 'X';
    PARSE(redecode(f), "bad magic");
    f->buf[0] = 'Q';
    f->buf[4] = 2;
    PARSE(redecode(f), "message version 2 does not match negotiated version 1");
    f->opts.version = 2;
    GOOD(redecode(f));
    f->opts.version = 0;
    PARSE(decode(f, 0x0A, 0, "00 00"), "durable ACK poll was not negotiated");
    PARSE(decode(f, 0x18, 0, "00 00"), "reserved flag bits");
    PARSE(decode(f, 0x88, 0, "00 00"), "reserved flag bits");
    decode(f, 0x08, 0, "00 00");
    f->buf[8] = 3; /* payload_length 3, 2 bytes received */
    PARSE(redecode(f), "payload_length 3 does not match the 2 bytes");
    f->buf[8] = 1; /* trailing byte after the payload */
    PARSE(redecode(f), "payload_length 1 does not match");
    f->buf[8] = 0;
    f->buf[10] = 0x00;
    f->buf[11] = 0x02; /* 32 MiB */
    PARSE(redecode(f), "exceeds 16 MiB");
    PARSE(decode(f, 0x08, 0, "00 00 00"), "1 trailing bytes after the last table block");
    PARSE(decode(f, 0x08, 1, "00 00"), "table_count 1 is more than the payload can hold");
    PARSE(decode(f, 0x08, 0, "FF FF FF FF FF FF FF FF FF 7F 00"), "overlong varint");
}

static void dictionary_rules(void **state) {
    fx *f = *state;
    assert_int_equal(decode(f, 0x08, 0, "01 01 01 61"), QSF_QWP_STATUS_DICTIONARY_GAP);
    assert_non_null(strstr(f->res.message, "delta_start 1 is beyond the dictionary size 0"));
    GOOD(decode(f, 0x08, 0, "00 02 01 61 01 62"));
    assert_int_equal(qsf_qwp_dict_size(f->d), 2);
    GOOD(decode(f, 0x08, 0, "01 02 01 62 01 63")); /* overlap with the same string, append */
    assert_int_equal(qsf_qwp_dict_size(f->d), 3);
    GOOD(decode(f, 0x08, 0, "00 01 01 7A")); /* redefinition */
    const char *s;
    size_t len;
    assert_true(qsf_qwp_dict_get(f->d, 0, &s, &len));
    assert_memory_equal(s, "z", 1);
    f->opts.max_symbols = 4;
    PARSE(decode(f, 0x08, 0, "03 02 01 61 01 62"), "would hold 5 entries, more than 4");
    f->opts.max_symbols = 0;
    PARSE(decode(f, 0x08, 0, "03 09 01 61"), "delta_count 9 is larger than the remaining");
    PARSE(decode(f, 0x08, 0, "03 01 05 61"), "symbol dictionary entry truncated");
    PARSE(decode(f, 0x08, 0, "03 01 01 FF"), "not valid UTF-8");
    GOOD(decode(f, 0x00, 0, "")); /* no delta section without the flag */
    qsf_qwp_decode_result res;
    assert_int_equal(qsf_qwp_decode(f->m, NULL, f->buf, 0, NULL, &res), 5);
}

/* A frame that fails after its delta section leaves the dictionary as it was:
 * new entries dropped, redefined entries restored. */
static void failed_frame_rolls_back(void **state) {
    fx *f = *state;
    GOOD(decode(f, 0x08, 0, "00 02 01 61 01 62"));
    PARSE(decode(f, 0x08, 1, "01 03 01 58 01 63 01 64" T1("09") "00 07"),
          "symbol id 7 out of range (dictionary size 4)");
    assert_int_equal(qsf_qwp_dict_size(f->d), 2);
    const char *s;
    size_t len;
    assert_true(qsf_qwp_dict_get(f->d, 1, &s, &len));
    assert_memory_equal(s, "b", 1);
    /* the next frame sees the old dictionary: id 2 is out of range */
    PARSE(decode(f, 0x08, 1, "02 00" T1("09") "00 02"), "symbol id 2 out of range");
    GOOD(decode(f, 0x08, 1, "02 00" T1("09") "00 01"));
    const qsf_qwp_dtable *t = qsf_qwp_msg_table(f->m, 0);
    const uint8_t *p;
    qsf_qwp_dcol_bytes(&t->cols[0], 0, &p, &len);
    assert_memory_equal(p, "b", 1);
}

static void table_and_column_limits(void **state) {
    fx *f = *state;
    PARSE(decode(f, 0x08, 1, "00 00 00 01 00 00 00"), "table name length 0 outside 1..127");
    char hex[2000] = "00 00 80 01";
    for (int i = 0; i < 128; i++)
        strcat(hex, " 61");
    strcat(hex, " 00 00");
    PARSE(decode(f, 0x08, 1, hex), "table name length 128");
    f->opts.max_rows = 2;
    PARSE(decode(f, 0x08, 1, "00 00 01 74 03 00"), "row_count 3 exceeds the limit of 2");
    f->opts.max_rows = 0;
    PARSE(decode(f, 0x08, 1, "00 00 01 74 00 81 10"), "column_count 2049 exceeds 2048");
    PARSE(decode(f, 0x08, 1, "00 00" T1("08") "00 00"), "invalid column type code: 0x8");
    PARSE(decode(f, 0x08, 1, "00 00" T1("19") "00 00"), "invalid column type code: 0x19");
    PARSE(decode(f, 0x08, 1, "00 00 01 74 01 01 00 05 00 00"), "empty name but type LONG");
    PARSE(decode(f, 0x08, 1, "00 00 01 74 00 02 01 61 05 01 41 05"), "duplicate column name");
    PARSE(decode(f, 0x08, 1, "00 00 01 74 00 01 01 80 05"), "column name is not valid UTF-8");
    GOOD(decode(f, 0x08, 1, "00 00 01 74 00 00")); /* empty block parses */
    PARSE(decode(f, 0x08, 1, "00 00" T1("05") "00 01 00 00"), "values truncated");
}

static void null_sections(void **state) {
    fx *f = *state;
    /* sentinel mode: INT_MIN is a value as far as the wire goes */
    GOOD(decode(f, 0x08, 1, "00 00 01 74 02 01 01 63 04 00 00 00 00 80 07 00 00 00"));
    const qsf_qwp_dcol *c = &qsf_qwp_msg_table(f->m, 0)->cols[0];
    assert_false(qsf_qwp_dcol_is_null(c, 0));
    assert_int_equal(qsf_qwp_dcol_i64(c, 1), 7);
    /* bitmap mode, 10 rows with 0, 2, 9 NULL: 7 values */
    GOOD(decode(f, 0x08, 1, "00 00 01 74 0A 01 01 63 02 01 05 02 01 03 04 05 06 07 08"));
    c = &qsf_qwp_msg_table(f->m, 0)->cols[0];
    assert_int_equal(c->value_count, 7);
    assert_true(qsf_qwp_dcol_is_null(c, 9));
    assert_int_equal(qsf_qwp_dcol_value_index(c, 9), -1);
    assert_int_equal(qsf_qwp_dcol_i64(c, (uint32_t) qsf_qwp_dcol_value_index(c, 8)), 8);
    PARSE(decode(f, 0x08, 1, "00 00 01 74 0A 01 01 63 02 01 05"), "null bitmap truncated");
}

static void timestamps_and_gorilla(void **state) {
    fx *f = *state;
    /* without FLAG_GORILLA there is no encoding byte: 01 is data, one byte too many */
    PARSE(decode(f, 0x08, 1, "00 00" T1("0A") "00 01 E8 03 00 00 00 00 00 00"), "trailing");
    GOOD(decode(f, 0x08, 1, "00 00" T1("0A") "00 E8 03 00 00 00 00 00 00"));
    PARSE(decode(f, 0x0C, 1, "00 00" T1("0A") "00 02"), "unknown timestamp encoding 0x02");
    /* DATE never has the encoding byte, even with FLAG_GORILLA */
    GOOD(decode(f, 0x0C, 1, "00 00" T1("0B") "00 E8 03 00 00 00 00 00 00"));
    /* N = 1 and N = 2 with Gorilla: accepted */
    GOOD(decode(f, 0x0C, 1, "00 00" T1("10") "00 01 E8 03 00 00 00 00 00 00"));
    assert_int_equal(qsf_qwp_dcol_i64(&qsf_qwp_msg_table(f->m, 0)->cols[0], 0), 1000);
    GOOD(decode(f, 0x0C, 1,
                "00 00 01 74 02 01 01 63 0A 00 01 E8 03 00 00 00 00 00 00 D0 07 00 00 00 00 00 "
                "00"));
    assert_int_equal(qsf_qwp_dcol_i64(&qsf_qwp_msg_table(f->m, 0)->cols[0], 1), 2000);
    /* all NULL: the encoding byte is still there */
    GOOD(decode(f, 0x0C, 1, "00 00" T1("0A") "01 01 00"));
    /* the docs/PROTOCOL.md §13.3 vector decodes to its values */
    GOOD(decode(f, 0x0C, 1,
                "00 00 01 74 05 01 01 63 0A 00 01 E8 03 00 00 00 00 00 00 D0 07 00 00 00 00 00 "
                "00 52 C4 06"));
    const qsf_qwp_dcol *c = &qsf_qwp_msg_table(f->m, 0)->cols[0];
    const int64_t want[] = {1000, 2000, 3000, 4010, 5000};
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(qsf_qwp_dcol_i64(c, i), want[i]);
    assert_true(c->gorilla);
    PARSE(decode(f, 0x0C, 1,
                 "00 00 01 74 05 01 01 63 0A 00 01 E8 03 00 00 00 00 00 00 D0 07 00 00 00 00 00 "
                 "00 52"),
          "Gorilla bit stream truncated");
}

static void varlen_rules(void **state) {
    fx *f = *state;
    GOOD(decode(f, 0x08, 1, "00 00" T1("0F") "00 00 00 00 00 02 00 00 00 68 69"));
    const uint8_t *p;
    size_t len;
    qsf_qwp_dcol_bytes(&qsf_qwp_msg_table(f->m, 0)->cols[0], 0, &p, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(p, "hi", 2);
    PARSE(decode(f, 0x08, 1, "00 00" T1("0F") "00 01 00 00 00 02 00 00 00 68 69"),
          "offset[0] is 1, must be 0");
    PARSE(decode(f, 0x08, 1,
                 "00 00 01 74 02 01 01 63 0F 00 00 00 00 00 02 00 00 00 01 00 00 00 68 69"),
          "offset[2] = 1 decreases");
    PARSE(decode(f, 0x08, 1, "00 00" T1("0F") "00 00 00 00 00 05 00 00 00 68 69"),
          "variable-width data truncated");
    PARSE(decode(f, 0x08, 1, "00 00" T1("0F") "00 00 00 00 00 02 00 00 00 C3 28"),
          "value 0 is not valid UTF-8");
    GOOD(decode(f, 0x08, 1, "00 00" T1("17") "00 00 00 00 00 02 00 00 00 C3 28")); /* BINARY */
    GOOD(decode(f, 0x08, 1, "00 00" T1("0F") "01 01 00 00 00 00")); /* all NULL: one offset */
}

static void geohash_arrays_decimals(void **state) {
    fx *f = *state;
    GOOD(decode(f, 0x08, 1, "00 00" T1("0E") "00 0C FF 0F"));
    assert_int_equal(qsf_qwp_dcol_i64(&qsf_qwp_msg_table(f->m, 0)->cols[0], 0), 0xFFF);
    PARSE(decode(f, 0x08, 1, "00 00" T1("0E") "00 00"), "invalid GeoHash precision 0");
    PARSE(decode(f, 0x08, 1, "00 00" T1("0E") "00 3D 00 00 00 00 00 00 00 00"),
          "invalid GeoHash precision 61");
    PARSE(decode(f, 0x08, 1, "00 00" T1("0E") "01 01"), "geohash precision");
    GOOD(decode(f, 0x08, 1, "00 00" T1("11") "00 01 01 00 00 00 00 00 00 00 00 00 F0 3F"));
    GOOD(decode(f, 0x08, 1, "00 00" T1("12") "00 02 00 00 00 00 05 00 00 00")); /* empty 0x5 */
    PARSE(decode(f, 0x08, 1, "00 00" T1("11") "00 00 00 00 00 00"), "rank 0 outside 1..32");
    PARSE(decode(f, 0x08, 1, "00 00" T1("11") "00 01 FF FF FF FF"), "dimension 0 is negative");
    PARSE(decode(f, 0x08, 1, "00 00" T1("11") "00 02 00 00 01 00 00 80 00 00"),
          "element count exceeds 2^31-1");
    PARSE(decode(f, 0x08, 1, "00 00" T1("11") "00 01 02 00 00 00 00 00"), "array values truncated");
    GOOD(decode(f, 0x08, 1, "00 00" T1("13") "00 12 01 00 00 00 00 00 00 00"));
    assert_int_equal(qsf_qwp_msg_table(f->m, 0)->cols[0].scale, 18);
    PARSE(decode(f, 0x08, 1, "00 00" T1("13") "00 13 01 00 00 00 00 00 00 00"),
          "decimal scale 19 exceeds 18");
    PARSE(decode(f, 0x08, 1, "00 00" T1("15") "00 4D"), "decimal scale 77 exceeds 76");
}

static void per_column_symbol_dictionary(void **state) {
    fx *f = *state;
    /* flag 0x08 clear: dict_size, strings, then local positions */
    GOOD(decode(f, 0x00, 1, "01 74 02 01 01 63 09 00 02 01 78 01 79 01 00"));
    const qsf_qwp_dcol *c = &qsf_qwp_msg_table(f->m, 0)->cols[0];
    const uint8_t *p;
    size_t len;
    qsf_qwp_dcol_bytes(c, 0, &p, &len);
    assert_memory_equal(p, "y", 1);
    assert_int_equal(qsf_qwp_dcol_i64(c, 1), 0);
    PARSE(decode(f, 0x00, 1, "01 74 01 01 01 63 09 00 01 01 78 01"), "symbol id 1 out of range");
    PARSE(decode(f, 0x00, 1, "01 74 01 01 01 63 09 00 09 01"), "symbol dictionary size 9");
}

/* Hostile sizes never make the decoder read or allocate past the input. */
static void hostile_counts_are_bounded(void **state) {
    fx *f = *state;
    /* 1,000,000 rows of a Gorilla timestamp in a few bytes */
    PARSE(decode(f, 0x0C, 1, "00 00 01 74 C0 84 3D 01 01 63 0A 00 01 00 00 00 00 00 00 00 00"),
          "longer than the message");
    PARSE(decode(f, 0x08, 1, "00 00 01 74 C0 84 3D 01 01 63 09 00"), "symbol ids truncated");
    PARSE(decode(f, 0x08, 1, "00 00 01 74 C0 84 3D 01 01 63 01 00"), "booleans truncated");
    PARSE(decode(f, 0x08, 1, "00 00 01 74 C0 84 3D 01 01 63 11 00"), "arrays truncated");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(header_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(dictionary_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_frame_rolls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(table_and_column_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(null_sections, setup, teardown),
        cmocka_unit_test_setup_teardown(timestamps_and_gorilla, setup, teardown),
        cmocka_unit_test_setup_teardown(varlen_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(geohash_arrays_decimals, setup, teardown),
        cmocka_unit_test_setup_teardown(per_column_symbol_dictionary, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_counts_are_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
