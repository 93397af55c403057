/* Client frame header and word-wise masking against RFC 6455 and a byte-wise
 * reference. */
#include "testutil.h"

#include "io/wsmask.h"

#include <stdlib.h>
#include <string.h>

static void header_lengths(void **state) {
    (void) state;
    uint8_t buf[32];
    const uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
    assert_int_equal(qsf_ws_put_header(buf + 32, 5, key), 6);
    assert_memory_equal(buf + 26, "\x82\x85\x37\xfa\x21\x3d", 6);
    assert_int_equal(qsf_ws_put_header(buf + 32, 125, key), 6);
    assert_int_equal(buf[27], 0x80 | 125);
    assert_int_equal(qsf_ws_put_header(buf + 32, 126, key), 8);
    assert_memory_equal(buf + 24, "\x82\xfe\x00\x7e", 4);
    assert_int_equal(qsf_ws_put_header(buf + 32, 65536, key), 14);
    assert_memory_equal(buf + 18, "\x82\xff\x00\x00\x00\x00\x00\x01\x00\x00", 10);
    assert_memory_equal(buf + 28, key, 4);
}

static void rfc6455_hello(void **state) {
    (void) state;
    uint8_t p[5] = {'H', 'e', 'l', 'l', 'o'};
    const uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};
    qsf_ws_mask(p, 5, key);
    assert_memory_equal(p, "\x7f\x9f\x4d\x51\x58", 5);
}

static void matches_bytewise_reference_at_every_length(void **state) {
    (void) state;
    const uint8_t key[4] = {0x01, 0x80, 0xfe, 0x33};
    uint8_t a[300], b[300];
    for (size_t n = 0; n < sizeof a; n++) {
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = (uint8_t) (i * 31 + n);
        qsf_ws_mask(a, n, key);
        for (size_t i = 0; i < n; i++)
            b[i] ^= key[i % 4];
        assert_memory_equal(a, b, n);
    }
}

/* The fused copy gives the in-place result at every length and start offset and
 * leaves its source (a stored frame) untouched. */
static void mask_copy_matches_in_place(void **state) {
    (void) state;
    const uint8_t key[4] = {0x5a, 0x01, 0xc3, 0x7e};
    uint8_t src[300], ref[300], dst[300];
    for (size_t off = 0; off < 8; off++) {
        for (size_t n = 0; n + off < sizeof src; n++) {
            for (size_t i = 0; i < sizeof src; i++)
                src[i] = ref[i] = (uint8_t) (i * 7 + n);
            memset(dst, 0xEE, sizeof dst);
            qsf_ws_mask(ref + off, n, key);
            qsf_ws_mask_copy(dst + off, src + off, n, key);
            assert_memory_equal(dst + off, ref + off, n);
            if (off + n < sizeof dst)
                assert_int_equal(dst[off + n], 0xEE); /* nothing past the end */
            for (size_t i = 0; i < sizeof src; i++)
                assert_int_equal(src[i], (uint8_t) (i * 7 + n));
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_lengths),
        cmocka_unit_test(rfc6455_hello),
        cmocka_unit_test(matches_bytewise_reference_at_every_length),
        cmocka_unit_test(mask_copy_matches_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
