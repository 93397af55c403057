/* The cross-client store-and-forward fixtures of ../shared/interop: every file
 * read exactly as its README states, the same bytes written by qsf for the same
 * input, and qsf's own golden files (tests/golden) identical to them. A
 * checkout without ../shared skips the whole program (TAP "1..0 # SKIP"):
 * tests/unit/test_golden.c checks the same format from the tree alone. */
#include "testutil.h"

#include "sfref.h"
#include "sftest.h"

#include "sf/segfmt.h"
#include "sf/sidefile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint8_t *fixture(const char *name, size_t *len) {
    return tu_read_hex_file(st_fixture_path(name), len);
}

/* Runs a documented check (sfref.h) on the fixture `name`. */
static void check_fixture(const char *name, void (*check)(const uint8_t *, size_t)) {
    size_t n;
    uint8_t *img = fixture(name, &n);
    check(img, n);
    free(img);
}

/* Fails unless the written bytes are exactly the fixture `name`. */
static void expect_fixture(uint8_t *got, size_t n, const char *name) {
    size_t wn;
    uint8_t *want = fixture(name, &wn);
    sr_expect_same(got, n, want, wn);
}

static void java_two_frame_segment(void **state) {
    (void) state;
    check_fixture("java-two-frame.sfa.hex", sr_expect_two_frame_segment);
}

static void java_two_frame_torn_tail(void **state) {
    (void) state;
    check_fixture("java-two-frame-torn-tail.sfa.hex", sr_expect_two_frame_torn);
}

static void qsf_writes_the_same_segment(void **state) {
    (void) state;
    size_t n;
    uint8_t *want = fixture("java-two-frame.sfa.hex", &n);
    assert_int_equal(n, 64);
    uint8_t img[64] = {0}; /* through the codec */
    qsf_sfa_header_encode(img, 0, 42, SR_CREATED_MICROS);
    qsf_sfa_frame_encode(img + QSF_SFA_HEADER_SIZE, "one", 3);
    qsf_sfa_frame_encode(img + 35, "two-two", 7);
    assert_memory_equal(img, want, 64);
    free(want);
    uint8_t *got = sr_write_two_frame_segment(&n); /* through the runtime's writer */
    expect_fixture(got, n, "java-two-frame.sfa.hex");
    /* the other vectors of docs/FORMAT.md §2.7 */
    uint8_t h[QSF_SFA_HEADER_SIZE], v[QSF_SFA_HEADER_SIZE];
    qsf_sfa_header_encode(h, QSF_SFA_FLAG_MANIFEST_REQUIRED, 0, 0);
    tu_hex("53 46 30 31 01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00", v, sizeof v);
    assert_memory_equal(h, v, sizeof v);
    uint8_t msg[14], frame[22], wantf[22];
    tu_hex("51 57 50 31 01 09 00 00 02 00 00 00 00 00", msg, 14);
    qsf_sfa_frame_encode(frame, msg, 14);
    tu_hex("D8 59 D7 17 0E 00 00 00 51 57 50 31 01 09 00 00 02 00 00 00 00 00", wantf, 22);
    assert_memory_equal(frame, wantf, 22);
}

static void java_symbol_dicts(void **state) {
    (void) state;
    check_fixture("java-two-chunk.symbol-dict.hex", sr_expect_two_chunk_dict);
    check_fixture("java-two-chunk-torn-tail.symbol-dict.hex", sr_expect_two_chunk_torn);
}

static void qsf_writes_the_same_symbol_dict(void **state) {
    (void) state;
    size_t n;
    uint8_t *got = sr_write_two_chunk_dict(&n);
    expect_fixture(got, n, "java-two-chunk.symbol-dict.hex");
}

/* qsf's golden files of the same inputs are these very bytes, so where
 * ../shared is missing test_golden.c checks the format the Java client writes. */
static void golden_files_are_the_java_fixtures(void **state) {
    (void) state;
    static const char *const names[] = ST_FIXTURES;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char golden[200];
        snprintf(golden, sizeof golden, "qsf-%s", names[i] + strlen("java-"));
        size_t n, gn;
        uint8_t *java = fixture(names[i], &n), *ours = st_golden(golden, &gn);
        if (n != gn || memcmp(java, ours, n) != 0)
            fail_msg("tests/golden/%s differs from %s", golden, st_fixture_path(names[i]));
        free(java);
        free(ours);
    }
}

/* The Java client's 16-byte .ack-watermark as ../shared/interop/README.md
 * states it for FSN 19 is qsf's golden file, qsf reads it as FSN 19
 * (tests/unit/test_legacy_slot.c recovers a slot with it), and a watermark
 * qsf creates in its default form holds these very bytes once FSN 19 is
 * written: the file the Java client reads. */
static void java_16_byte_watermark_is_the_golden_file(void **state) {
    (void) state;
    size_t n, gn;
    char *readme = (char *) tu_read_file(st_fixture_path("README.md"), &n);
    const char *at = strstr(readme, "FSN 19 reads `");
    assert_non_null(at);
    at += strlen("FSN 19 reads `");
    char hex[128];
    snprintf(hex, sizeof hex, "%.*s", (int) strcspn(at, "`"), at);
    uint8_t want[16];
    assert_int_equal(tu_hex(hex, want, sizeof want), 16);
    uint8_t *ours = st_golden("java-ack-watermark-fsn19.hex", &gn);
    assert_int_equal(gn, sizeof want);
    assert_memory_equal(ours, want, sizeof want);
    free(ours);
    int64_t g, fsn;
    assert_int_equal(qsf_akw_read_image(want, sizeof want, &g, &fsn), 0);
    assert_int_equal(fsn, 19);
    free(readme);
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    qsf_watermark wm;
    assert_int_equal(qsf_watermark_create(dfd, st_slot, QSF_WM_JAVA16, &wm, NULL), QSF_OK);
    assert_int_equal(qsf_watermark_write(&wm, 19, NULL), QSF_OK);
    qsf_watermark_close(&wm);
    close(dfd);
    uint8_t *file = tu_read_file(st_path(st_slot, QSF_NAME_WATERMARK), &n);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(file, want, sizeof want);
    free(file);
}

int main(void) {
    char why[1500];
    if (!st_fixtures_present(why, sizeof why)) {
        printf("1..0 # SKIP %s\n", why);
        return 0;
    }
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(java_two_frame_segment),
        T(java_two_frame_torn_tail),
        T(qsf_writes_the_same_segment),
        T(java_symbol_dicts),
        T(qsf_writes_the_same_symbol_dict),
        T(golden_files_are_the_java_fixtures),
        T(java_16_byte_watermark_is_the_golden_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
