/* The response parser (lib/qwp/response.h) at the largest values the wire can
 * carry: 65,535 tables, a 65,535-byte name, message lengths at and past 1024,
 * counts that cannot fit the bytes, the extreme sequences. */
#include "testutil.h"

#include "bytes.h"
#include "qwp/response.h"

#include <stdlib.h>
#include <string.h>

/* status, [i64 seq], u16 count, then `n` entries of a name of `name_len`
 * bytes ('a') each; `count` is what the header claims. */
static uint8_t *build(uint8_t status, uint16_t count, size_t n, size_t name_len, size_t *len) {
    size_t head = status == 0x02 ? 3 : 11;
    *len = head + n * (2 + name_len + 8);
    uint8_t *b = malloc(*len);
    assert_non_null(b);
    b[0] = status;
    if (status != 0x02)
        qsf_put_i64(b + 1, 7);
    qsf_put_u16(b + head - 2, count);
    uint8_t *p = b + head;
    for (size_t i = 0; i < n; i++) {
        qsf_put_u16(p, (uint16_t) name_len);
        memset(p + 2, 'a', name_len);
        qsf_put_i64(p + 2 + name_len, (int64_t) i);
        p += 2 + name_len + 8;
    }
    return b;
}

static void count_tables(const qsf_response *r, size_t want) {
    size_t pos = 0, n = 0;
    qsf_resp_table t;
    while (qsf_response_table(r, &pos, &t))
        n++;
    assert_int_equal(n, want);
    assert_int_equal(pos, r->tables_len);
}

static void sixty_five_thousand_tables(void **state) {
    (void) state;
    const uint8_t statuses[] = {0x00, 0x02};
    for (int i = 0; i < 2; i++) {
        size_t len;
        uint8_t *b = build(statuses[i], 65535, 65535, 1, &len);
        qsf_response r;
        char why[160];
        assert_int_equal(qsf_response_parse(b, len, &r, why, sizeof why), 0);
        assert_int_equal(r.table_count, 65535);
        count_tables(&r, 65535);
        /* one entry short: the count no longer fits the bytes */
        assert_int_equal(qsf_response_parse(b, len - 11, &r, why, sizeof why), -1);
        assert_non_null(strstr(why, "cannot fit"));
        free(b);
    }
}

/* A count of 65,535 in a response without entries is refused before a single
 * entry is read. */
static void a_count_that_cannot_fit(void **state) {
    (void) state;
    const uint8_t statuses[] = {0x00, 0x02};
    for (int i = 0; i < 2; i++) {
        size_t len;
        uint8_t *b = build(statuses[i], 65535, 0, 1, &len);
        qsf_response r;
        char why[160];
        assert_int_equal(qsf_response_parse(b, len, &r, why, sizeof why), -1);
        assert_non_null(strstr(why, "table count 65535 cannot fit in 0 bytes"));
        free(b);
    }
}

static void a_name_of_65535_bytes(void **state) {
    (void) state;
    size_t len;
    uint8_t *b = build(0x00, 1, 1, 65535, &len);
    qsf_response r;
    char why[160];
    assert_int_equal(qsf_response_parse(b, len, &r, why, sizeof why), 0);
    size_t pos = 0;
    qsf_resp_table t;
    assert_true(qsf_response_table(&r, &pos, &t));
    assert_int_equal(t.name_len, 65535);
    assert_int_equal(qsf_response_parse(b, len - 1, &r, why, sizeof why), -1);
    free(b);
}

static void error_text_lengths(void **state) {
    (void) state;
    static uint8_t b[11 + 65535];
    memset(b, 'e', sizeof b);
    b[0] = 0x09;
    qsf_put_i64(b + 1, 3);
    qsf_response r;
    char why[160];
    qsf_put_u16(b + 9, 1024);
    assert_int_equal(qsf_response_parse(b, 11 + 1024, &r, why, sizeof why), 0);
    assert_int_equal(r.msg_len, 1024);
    const uint16_t too_long[] = {1025, 65535};
    for (int i = 0; i < 2; i++) {
        qsf_put_u16(b + 9, too_long[i]);
        assert_int_equal(qsf_response_parse(b, 11u + too_long[i], &r, why, sizeof why), -1);
        assert_non_null(strstr(why, "exceeds 1024"));
    }
    qsf_put_u16(b + 9, 1024);
    assert_int_equal(qsf_response_parse(b, 11 + 1023, &r, why, sizeof why), -1);
}

static void extreme_sequences_parse(void **state) {
    (void) state;
    const int64_t seqs[] = {INT64_MAX, INT64_MIN, -1};
    for (int i = 0; i < 3; i++) {
        uint8_t b[11] = {0};
        qsf_put_i64(b + 1, seqs[i]);
        qsf_response r;
        assert_int_equal(qsf_response_parse(b, sizeof b, &r, NULL, 0), 0);
        assert_true(r.sequence == seqs[i]); /* judged by the I/O thread (docs/ERRORS.md) */
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sixty_five_thousand_tables), cmocka_unit_test(a_count_that_cannot_fit),
        cmocka_unit_test(a_name_of_65535_bytes),      cmocka_unit_test(error_text_lengths),
        cmocka_unit_test(extreme_sequences_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
