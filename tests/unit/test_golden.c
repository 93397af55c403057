/* qsf's own golden slot files (tests/golden/README.md): each is read with
 * exactly the documented results, and qsf's writers produce the same bytes
 * for the same input. Needs nothing outside the tree. */
#include "testutil.h"

#include "sfref.h"
#include "sftest.h"

#include "sf/sidefile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int slot_dir(void) {
    int fd = open(st_slot, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    return fd;
}

/* Runs a documented check (sfref.h) on the golden file `name`. */
static void check_golden(const char *name, void (*check)(const uint8_t *, size_t)) {
    size_t n;
    uint8_t *img = st_golden(name, &n);
    check(img, n);
    free(img);
}

/* Fails unless the written bytes are exactly the golden file `name`. */
static void expect_golden(uint8_t *got, size_t n, const char *name) {
    size_t wn;
    uint8_t *want = st_golden(name, &wn);
    sr_expect_same(got, n, want, wn);
}

/* The golden variant differs from the golden original in exactly one byte. */
static void expect_one_byte_apart(const char *original, const char *variant, size_t at, uint8_t was,
                                  uint8_t is) {
    size_t n, vn;
    uint8_t *a = st_golden(original, &n), *b = st_golden(variant, &vn);
    assert_int_equal(n, vn);
    assert_int_equal(a[at], was);
    assert_int_equal(b[at], is);
    a[at] = is;
    assert_memory_equal(a, b, n);
    free(a);
    free(b);
}

/* ---- segment ---- */

static void two_frame_segment_reads_as_documented(void **state) {
    (void) state;
    check_golden("qsf-two-frame.sfa.hex", sr_expect_two_frame_segment);
}

static void torn_segment_reads_as_documented(void **state) {
    (void) state;
    expect_one_byte_apart("qsf-two-frame.sfa.hex", "qsf-two-frame-torn-tail.sfa.hex", 44, 'w', 'v');
    check_golden("qsf-two-frame-torn-tail.sfa.hex", sr_expect_two_frame_torn);
}

static void segment_writer_writes_the_golden_bytes(void **state) {
    (void) state;
    size_t n;
    uint8_t *got = sr_write_two_frame_segment(&n);
    expect_golden(got, n, "qsf-two-frame.sfa.hex");
}

/* ---- .symbol-dict ---- */

static void symbol_dicts_read_as_documented(void **state) {
    (void) state;
    check_golden("qsf-two-chunk.symbol-dict.hex", sr_expect_two_chunk_dict);
    expect_one_byte_apart("qsf-two-chunk.symbol-dict.hex",
                          "qsf-two-chunk-torn-tail.symbol-dict.hex", 21, 't', 'u');
    check_golden("qsf-two-chunk-torn-tail.symbol-dict.hex", sr_expect_two_chunk_torn);
}

static void symbol_dict_writer_writes_the_golden_bytes(void **state) {
    (void) state;
    size_t n;
    uint8_t *got = sr_write_two_chunk_dict(&n);
    expect_golden(got, n, "qsf-two-chunk.symbol-dict.hex");
}

/* ---- dual-slot records ---- */

/* An 8192-byte file with the golden records at their offsets (gen & 1) * 4096. */
static void place_records(const char *as, const char *gen1, const char *gen2) {
    uint8_t img[QSF_DUAL_FILE_SIZE] = {0};
    size_t n;
    uint8_t *rec = st_golden(gen1, &n);
    assert_int_equal(n, QSF_DUAL_RECORD_SIZE);
    memcpy(img + QSF_DUAL_SLOT_SIZE, rec, n);
    free(rec);
    if (gen2) {
        rec = st_golden(gen2, &n);
        assert_int_equal(n, QSF_DUAL_RECORD_SIZE);
        memcpy(img, rec, n);
        free(rec);
    }
    tu_write_file(st_path(st_slot, as), img, sizeof img);
}

/* Fails unless the slot's 8192-byte file holds the golden record(s) at their
 * offsets and zeros everywhere else. */
static void expect_records(const char *as, const char *gen1, const char *gen2) {
    size_t n;
    uint8_t *got = tu_read_file(st_path(st_slot, as), &n);
    assert_int_equal(n, QSF_DUAL_FILE_SIZE);
    place_records("expected", gen1, gen2);
    size_t wn;
    uint8_t *want = tu_read_file(st_path(st_slot, "expected"), &wn);
    assert_memory_equal(got, want, n);
    free(got);
    free(want);
    unlink(st_path(st_slot, "expected"));
}

static void records_decode_as_documented(void **state) {
    (void) state;
    size_t n;
    int64_t g, a, b;
    uint8_t *rec = st_golden("qsf-ack-watermark-gen1.hex", &n);
    assert_int_equal(qsf_akw_decode(rec, &g, &a), 0);
    assert_int_equal(g, 1);
    assert_int_equal(a, 41);
    free(rec);
    rec = st_golden("qsf-ack-watermark-gen2.hex", &n);
    assert_int_equal(qsf_akw_decode(rec, &g, &a), 0);
    assert_int_equal(g, 2);
    assert_int_equal(a, -1);
    free(rec);
    rec = st_golden("qsf-manifest-gen1.hex", &n);
    assert_int_equal(qsf_sfm_decode(rec, &g, &a, &b), 0);
    assert_int_equal(g, 1);
    assert_int_equal(a, 0);
    assert_int_equal(b, 0);
    free(rec);
    rec = st_golden("qsf-manifest-gen2.hex", &n);
    assert_int_equal(qsf_sfm_decode(rec, &g, &a, &b), 0);
    assert_int_equal(g, 2);
    assert_int_equal(a, 0);
    assert_int_equal(b, 5);
    free(rec);
}

static void watermark_reads_and_writes_the_golden_records(void **state) {
    (void) state;
    int dfd = slot_dir();
    qsf_watermark wm;
    place_records(QSF_NAME_WATERMARK, "qsf-ack-watermark-gen1.hex", NULL);
    assert_int_equal(qsf_watermark_open(dfd, st_slot, QSF_WM_DUAL, &wm, NULL), QSF_OK);
    assert_true(wm.present);
    assert_int_equal(wm.generation, 1);
    assert_int_equal(wm.fsn, 41);
    qsf_watermark_close(&wm);
    place_records(QSF_NAME_WATERMARK, "qsf-ack-watermark-gen1.hex", "qsf-ack-watermark-gen2.hex");
    assert_int_equal(qsf_watermark_open(dfd, st_slot, QSF_WM_DUAL, &wm, NULL), QSF_OK);
    assert_int_equal(wm.generation, 2);
    assert_int_equal(wm.fsn, -1);
    qsf_watermark_close(&wm);
    unlink(st_path(st_slot, QSF_NAME_WATERMARK));
    assert_int_equal(qsf_watermark_create(dfd, st_slot, QSF_WM_DUAL, &wm, NULL), QSF_OK);
    assert_int_equal(qsf_watermark_write(&wm, 41, NULL), QSF_OK);
    expect_records(QSF_NAME_WATERMARK, "qsf-ack-watermark-gen1.hex", NULL);
    assert_int_equal(qsf_watermark_write(&wm, -1, NULL), QSF_OK);
    qsf_watermark_close(&wm);
    expect_records(QSF_NAME_WATERMARK, "qsf-ack-watermark-gen1.hex", "qsf-ack-watermark-gen2.hex");
    close(dfd);
}

/* A watermark created in the default form and written with FSN 19 is the
 * golden 16-byte file of the Java client. */
static void java_form_watermark_writes_the_golden_bytes(void **state) {
    (void) state;
    int dfd = slot_dir();
    qsf_watermark wm;
    assert_int_equal(qsf_watermark_create(dfd, st_slot, QSF_WM_JAVA16, &wm, NULL), QSF_OK);
    assert_int_equal(qsf_watermark_write(&wm, 19, NULL), QSF_OK);
    qsf_watermark_close(&wm);
    size_t n, gn;
    uint8_t *got = tu_read_file(st_path(st_slot, QSF_NAME_WATERMARK), &n);
    uint8_t *want = st_golden("java-ack-watermark-fsn19.hex", &gn);
    assert_int_equal(n, gn);
    assert_memory_equal(got, want, gn);
    free(got);
    free(want);
    close(dfd);
}

static void manifest_reads_and_writes_the_golden_records(void **state) {
    (void) state;
    int dfd = slot_dir();
    qsf_manifest m;
    place_records(QSF_NAME_MANIFEST, "qsf-manifest-gen1.hex", NULL);
    assert_int_equal(qsf_manifest_open(dfd, st_slot, &m, NULL), QSF_OK);
    assert_int_equal(m.generation, 1);
    assert_int_equal(m.head_base, 0);
    assert_int_equal(m.active_base, 0);
    qsf_manifest_close(&m);
    place_records(QSF_NAME_MANIFEST, "qsf-manifest-gen1.hex", "qsf-manifest-gen2.hex");
    assert_int_equal(qsf_manifest_open(dfd, st_slot, &m, NULL), QSF_OK);
    assert_int_equal(m.generation, 2);
    assert_int_equal(m.head_base, 0);
    assert_int_equal(m.active_base, 5);
    qsf_manifest_close(&m);
    unlink(st_path(st_slot, QSF_NAME_MANIFEST));
    assert_int_equal(qsf_manifest_create(dfd, st_slot, 0, 0, &m, NULL), QSF_OK);
    expect_records(QSF_NAME_MANIFEST, "qsf-manifest-gen1.hex", NULL);
    bool written = false;
    assert_int_equal(qsf_manifest_write(&m, 0, 5, &written, NULL), QSF_OK);
    assert_true(written);
    qsf_manifest_close(&m);
    expect_records(QSF_NAME_MANIFEST, "qsf-manifest-gen1.hex", "qsf-manifest-gen2.hex");
    close(dfd);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(two_frame_segment_reads_as_documented),
        T(torn_segment_reads_as_documented),
        T(segment_writer_writes_the_golden_bytes),
        T(symbol_dicts_read_as_documented),
        T(symbol_dict_writer_writes_the_golden_bytes),
        T(records_decode_as_documented),
        T(watermark_reads_and_writes_the_golden_records),
        T(java_form_watermark_writes_the_golden_bytes),
        T(manifest_reads_and_writes_the_golden_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
