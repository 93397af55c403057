/* Little-endian helpers and varints (docs/PROTOCOL.md §1.1, §13.6). */
#include "testutil.h"

#include "bytes.h"

static void varint_vectors(void **state) {
    (void) state;
    uint8_t b[10];
    assert_int_equal(qsf_put_varint(b, 0), 1);
    assert_int_equal(b[0], 0);
    assert_int_equal(qsf_put_varint(b, 300), 2);
    assert_int_equal(b[0], 0xAC);
    assert_int_equal(b[1], 0x02);
    assert_int_equal(qsf_put_varint(b, 16384), 3);
    assert_memory_equal(b, "\x80\x80\x01", 3);
    assert_int_equal(qsf_varint_len(16384), 3);
    assert_int_equal(qsf_varint_len(UINT64_MAX), 10);
}

static void varint_round_trip_and_rejections(void **state) {
    (void) state;
    uint8_t b[10];
    uint64_t vals[] = {0, 1, 127, 128, 300, 1ull << 35, UINT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        size_t n = qsf_put_varint(b, vals[i]);
        uint64_t out = 0;
        assert_int_equal(qsf_get_varint(b, b + n, &out), n);
        assert_true(out == vals[i]);
        /* truncation is rejected */
        assert_int_equal(qsf_get_varint(b, b + n - 1, &out), 0);
    }
    /* 10th byte payload > 1 overflows */
    uint8_t over[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    uint64_t out;
    assert_int_equal(qsf_get_varint(over, over + 10, &out), 0);
}

static void little_endian(void **state) {
    (void) state;
    uint8_t b[8];
    qsf_put_u32(b, 0x31505751u);
    assert_memory_equal(b, "QWP1", 4);
    qsf_put_i64(b, -1);
    assert_true(qsf_get_i64(b) == -1);
    qsf_put_u16(b, 0x1234);
    assert_int_equal(qsf_get_u16(b), 0x1234);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(varint_vectors),
        cmocka_unit_test(varint_round_trip_and_rejections),
        cmocka_unit_test(little_endian),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
