/* Response parser: the docs/PROTOCOL.md §13.4 vectors and malformed inputs (docs/PROTOCOL.md §6.6).
 */
#include "testutil.h"

#include "qwp/response.h"

#include <string.h>

static qsf_response parse_hex_ok(const char *hex) {
    uint8_t b[256];
    size_t n = tu_hex(hex, b, sizeof b);
    static uint8_t keep[256];
    memcpy(keep, b, n);
    qsf_response r;
    char why[128];
    assert_int_equal(qsf_response_parse(keep, n, &r, why, sizeof why), 0);
    return r;
}

static int parse_hex_fails(const char *hex, char *why, size_t cap) {
    uint8_t b[256];
    size_t n = tu_hex(hex, b, sizeof b);
    qsf_response r;
    return qsf_response_parse(b, n, &r, why, cap);
}

static void ok_vector(void **state) {
    (void) state;
    qsf_response r = parse_hex_ok("00 07 00 00 00 00 00 00 00 01 00 07 00 73 65 6E 73 6F 72 73 "
                                  "2A 00 00 00 00 00 00 00");
    assert_int_equal(r.kind, QSF_RESP_OK);
    assert_true(r.sequence == 7);
    assert_int_equal(r.table_count, 1);
    size_t pos = 0;
    qsf_resp_table t;
    assert_true(qsf_response_table(&r, &pos, &t));
    assert_int_equal(t.name_len, 7);
    assert_memory_equal(t.name, "sensors", 7);
    assert_true(t.seq_txn == 42);
    assert_false(qsf_response_table(&r, &pos, &t));
}

static void error_vector(void **state) {
    (void) state;
    qsf_response r = parse_hex_ok("05 03 00 00 00 00 00 00 00 03 00 62 61 64");
    assert_int_equal(r.kind, QSF_RESP_ERROR);
    assert_int_equal(r.status, 5);
    assert_true(r.sequence == 3);
    assert_int_equal(r.msg_len, 3);
    assert_memory_equal(r.msg, "bad", 3);
}

static void durable_vector(void **state) {
    (void) state;
    qsf_response r = parse_hex_ok("02 01 00 07 00 73 65 6E 73 6F 72 73 28 00 00 00 00 00 00 00");
    assert_int_equal(r.kind, QSF_RESP_DURABLE);
    size_t pos = 0;
    qsf_resp_table t;
    assert_true(qsf_response_table(&r, &pos, &t));
    assert_memory_equal(t.name, "sensors", 7);
    assert_true(t.seq_txn == 40);
}

static void ok_without_tables_and_ignored_statuses(void **state) {
    (void) state;
    qsf_response r = parse_hex_ok("00 FF FF FF FF FF FF FF 7F 00 00");
    assert_int_equal(r.kind, QSF_RESP_OK);
    assert_true(r.sequence == INT64_MAX);
    assert_int_equal(r.table_count, 0);
    assert_int_equal(parse_hex_ok("01 02 03").kind, QSF_RESP_IGNORED);
    assert_int_equal(parse_hex_ok("0E 00 00").kind, QSF_RESP_IGNORED);
    /* unknown statuses use the error layout (fail open) */
    r = parse_hex_ok("7F 01 00 00 00 00 00 00 00 00 00");
    assert_int_equal(r.kind, QSF_RESP_ERROR);
    assert_int_equal(r.status, 0x7F);
}

static void malformed_inputs_are_rejected_with_a_reason(void **state) {
    (void) state;
    char why[128];
    const char *bad[] = {
        "",                                                                  /* empty */
        "00 07 00 00 00 00 00 00",                                           /* OK truncated */
        "00 07 00 00 00 00 00 00 00 00 00 FF",                               /* trailing byte */
        "00 07 00 00 00 00 00 00 00 01 00",                                  /* missing table */
        "00 07 00 00 00 00 00 00 00 01 00 00 00 2A 00 00 00 00 00 00 00",    /* empty name */
        "00 07 00 00 00 00 00 00 00 01 00 05 00 61 62",                      /* name past end */
        "00 07 00 00 00 00 00 00 00 01 00 01 00 FF 2A 00 00 00 00 00 00 00", /* bad UTF-8 */
        "05 03 00 00 00 00 00 00 00 04 00 62 61 64",                         /* msgLen too long */
        "05 03 00 00 00 00 00 00 00 02 00 62 61 64",                         /* msgLen too short */
        "05 03 00 00 00 00 00 00 00 01 04",                                  /* msgLen 1025 */
        "02 01",                                                             /* durable truncated */
        "02 00 00 00",                                                       /* durable trailing */
        "09 01 00 00",                                                       /* error truncated */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = 0;
        assert_int_equal(parse_hex_fails(bad[i], why, sizeof why), -1);
        assert_true(strlen(why) > 0);
    }
}

static void long_message_is_accepted_up_to_the_limit(void **state) {
    (void) state;
    static uint8_t b[11 + 1025];
    memset(b, 'x', sizeof b);
    b[0] = 0x09;
    memset(b + 1, 0, 8);
    b[9] = 0x00; /* 1024 = 0x0400 */
    b[10] = 0x04;
    qsf_response r;
    assert_int_equal(qsf_response_parse(b, 11 + 1024, &r, NULL, 0), 0);
    assert_int_equal(r.msg_len, 1024);
    b[9] = 0x01; /* 1025 */
    assert_int_equal(qsf_response_parse(b, 11 + 1025, &r, NULL, 0), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ok_vector),
        cmocka_unit_test(error_vector),
        cmocka_unit_test(durable_vector),
        cmocka_unit_test(ok_without_tables_and_ignored_statuses),
        cmocka_unit_test(malformed_inputs_are_rejected_with_a_reason),
        cmocka_unit_test(long_message_is_accepted_up_to_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
