/* CRC-32C check vector and the vectors of docs/FORMAT.md. */
#include "testutil.h"

#include "crc32c.h"

#include <stdlib.h>
#include <string.h>

static void check_value(void **state) {
    (void) state;
    assert_int_equal(qsf_crc32c("123456789", 9), 0xE3069283u);
}

static void four_zero_bytes_are_not_zero(void **state) {
    (void) state;
    uint8_t z[4] = {0};
    assert_int_equal(qsf_crc32c(z, 4), 0x48674BC7u);
}

static void frame_vector_from_java_segment(void **state) {
    (void) state;
    /* len 3 || "one" -> 0x49CB0EA6 (docs/FORMAT.md §2.7) */
    uint8_t b[] = {3, 0, 0, 0, 'o', 'n', 'e'};
    assert_int_equal(qsf_crc32c(b, sizeof b), 0x49CB0EA6u);
}

static void streaming_equals_one_shot(void **state) {
    (void) state;
    uint8_t buf[4096];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t) (i * 131 + 7);
    uint32_t whole = qsf_crc32c(buf, sizeof buf);
    for (size_t cut = 0; cut <= sizeof buf; cut += 257) {
        uint32_t s = qsf_crc32c_begin();
        s = qsf_crc32c_update(s, buf, cut);
        s = qsf_crc32c_update(s, buf + cut, sizeof buf - cut);
        assert_int_equal(qsf_crc32c_end(s), whole);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_value),
        cmocka_unit_test(four_zero_bytes_are_not_zero),
        cmocka_unit_test(frame_vector_from_java_segment),
        cmocka_unit_test(streaming_equals_one_shot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
