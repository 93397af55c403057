/* .ack-watermark (AKW1) and sf-manifest.bin (SFM1): the byte vectors of
 * docs/FORMAT.md §3, dual-slot selection, the Java client's 16-byte form, corrupt manifest,
 * clamping. */
#include "testutil.h"

#include "sftest.h"

#include "os/os.h"
#include "sf/sidefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[512];

static int setup(void **state) {
    (void) state;
    tu_mkdtemp(dir, sizeof dir);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    tu_rmtree(dir);
    return 0;
}

static int dirfd_of(void) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    return fd;
}

static void expect_record(const uint8_t *got, const char *hex) {
    uint8_t want[64];
    assert_int_equal(tu_hex(hex, want, sizeof want), 64);
    assert_memory_equal(got, want, 64);
}

#define AKW_G1 "41 4B 57 31 01 00 00 00 01 00 00 00 00 00 00 00 29 00 00 00 00 00 00 00"
#define AKW_G2 "41 4B 57 31 01 00 00 00 02 00 00 00 00 00 00 00 FF FF FF FF FF FF FF FF"
#define SFM_G1                                                                                     \
    "53 46 4D 31 01 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "   \
    "00 00"
#define SFM_G2                                                                                     \
    "53 46 4D 31 01 00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 05 00 00 00 00 00 "   \
    "00 00"
#define Z36                                                                                        \
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "   \
    "00 00 00 00 00 00"
#define Z28 "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"

static void akw_vectors(void **state) {
    (void) state;
    uint8_t rec[64];
    qsf_akw_encode(rec, 1, 41);
    expect_record(rec, AKW_G1 Z36 "FB ED A3 DE");
    qsf_akw_encode(rec, 2, -1);
    expect_record(rec, AKW_G2 Z36 "0D 79 92 58");
    int64_t g, f;
    assert_int_equal(qsf_akw_decode(rec, &g, &f), 0);
    assert_int_equal(g, 2);
    assert_int_equal(f, -1);
}

static void sfm_vectors(void **state) {
    (void) state;
    uint8_t rec[64];
    qsf_sfm_encode(rec, 1, 0, 0);
    expect_record(rec, SFM_G1 Z28 "30 27 A8 CB");
    qsf_sfm_encode(rec, 2, 0, 5);
    expect_record(rec, SFM_G2 Z28 "73 19 09 DE");
}

static void decode_rejects_bad_records(void **state) {
    (void) state;
    uint8_t rec[64];
    int64_t g, a, b;
    qsf_akw_encode(rec, 1, 41);
    rec[20] ^= 1; /* payload changed under the CRC */
    assert_int_equal(qsf_akw_decode(rec, &g, &a), -1);
    qsf_akw_encode(rec, 0, 41); /* generation must be > 0 */
    assert_int_equal(qsf_akw_decode(rec, &g, &a), -1);
    qsf_akw_encode(rec, 1, -2); /* fsn below -1 */
    assert_int_equal(qsf_akw_decode(rec, &g, &a), -1);
    qsf_sfm_encode(rec, 1, 5, 4); /* activeBase below headBase */
    assert_int_equal(qsf_sfm_decode(rec, &g, &a, &b), -1);
    qsf_sfm_encode(rec, 1, -1, 4);
    assert_int_equal(qsf_sfm_decode(rec, &g, &a, &b), -1);
    qsf_akw_encode(rec, 3, 7); /* an AKW1 record is not a manifest */
    assert_int_equal(qsf_sfm_decode(rec, &g, &a, &b), -1);
}

static void pick_takes_the_higher_valid_generation(void **state) {
    (void) state;
    uint8_t img[8192] = {0};
    int64_t g, f;
    assert_int_equal(qsf_akw_pick(img, &g, &f), -1); /* all zero: absent */
    qsf_akw_encode(img + 4096, 3, 30);
    qsf_akw_encode(img, 4, 40);
    assert_int_equal(qsf_akw_pick(img, &g, &f), 0);
    assert_int_equal(g, 4);
    assert_int_equal(f, 40);
    img[10] ^= 0xFF; /* tear the newer one: the older survives */
    assert_int_equal(qsf_akw_pick(img, &g, &f), 0);
    assert_int_equal(g, 3);
    assert_int_equal(f, 30);
}

static void watermark_writes_alternate_slots(void **state) {
    (void) state;
    int dfd = dirfd_of();
    qsf_watermark wm;
    qsf_errinfo e;
    assert_int_equal(qsf_watermark_create(dfd, dir, QSF_WM_DUAL, &wm, &e), QSF_OK);
    assert_int_equal(st_size(st_path(dir, QSF_NAME_WATERMARK)), 8192);
    assert_int_equal(qsf_watermark_write(&wm, 41, &e), QSF_OK);
    assert_int_equal(qsf_watermark_write(&wm, -1, &e), QSF_OK);
    assert_int_equal(qsf_watermark_sync(&wm, &e), QSF_OK);
    qsf_watermark_close(&wm);
    size_t n;
    uint8_t *img = tu_read_file(st_path(dir, QSF_NAME_WATERMARK), &n);
    assert_int_equal(n, 8192);
    expect_record(img + 4096, AKW_G1 Z36 "FB ED A3 DE");
    expect_record(img, AKW_G2 Z36 "0D 79 92 58");
    free(img);
    assert_int_equal(qsf_watermark_open(dfd, dir, QSF_WM_DUAL, &wm, &e), QSF_OK);
    assert_true(wm.present);
    assert_int_equal(wm.generation, 2);
    assert_int_equal(wm.fsn, -1);
    /* not clamped: a value found too high must be repairable downwards */
    assert_int_equal(qsf_watermark_write(&wm, 100, &e), QSF_OK);
    assert_int_equal(qsf_watermark_write(&wm, 7, &e), QSF_OK);
    qsf_watermark_close(&wm);
    assert_int_equal(qsf_watermark_open(dfd, dir, QSF_WM_DUAL, &wm, &e), QSF_OK);
    assert_int_equal(wm.generation, 4);
    assert_int_equal(wm.fsn, 7);
    qsf_watermark_close(&wm);
    close(dfd);
}

/* Opens the watermark written as `bytes`, expecting the 16-byte form kept. */
static void open_compact(const uint8_t *bytes, bool present, int64_t fsn, qsf_watermark *wm) {
    tu_write_file(st_path(dir, QSF_NAME_WATERMARK), bytes, 16);
    int dfd = dirfd_of();
    qsf_errinfo e;
    assert_int_equal(qsf_watermark_open(dfd, dir, QSF_WM_DUAL, wm, &e), QSF_OK);
    close(dfd);
    assert_false(wm->reset);
    assert_true(wm->compact);
    assert_int_equal(wm->present, present);
    assert_int_equal(wm->fsn, fsn);
}

static void expect_file16(const uint8_t want[16]) {
    size_t n;
    uint8_t *img = tu_read_file(st_path(dir, QSF_NAME_WATERMARK), &n);
    assert_int_equal(n, 16);
    assert_memory_equal(img, want, 16);
    free(img);
}

/* The Java client's 16-byte form is read and every later write keeps it. */
static void java_16_byte_watermark_is_read_and_kept(void **state) {
    (void) state;
    uint8_t java[16] = {0x41, 0x4B, 0x57, 0x31, 0, 0, 0, 0, 99};
    qsf_watermark wm;
    qsf_errinfo e;
    open_compact(java, true, 99, &wm);
    assert_int_equal(qsf_watermark_write(&wm, 300, &e), QSF_OK);
    assert_int_equal(qsf_watermark_sync(&wm, &e), QSF_OK);
    qsf_watermark_close(&wm);
    uint8_t want[16] = {0x41, 0x4B, 0x57, 0x31, 0, 0, 0, 0, 0x2C, 0x01};
    expect_file16(want);
    uint8_t enc[16];
    qsf_akw_compact_encode(enc, 300);
    assert_memory_equal(enc, want, 16);
}

/* Created by Java but never written (no magic), or damaged (reserved bytes
 * set, fsn below -1): no value, still the 16-byte form; the first write gives
 * it one. */
static void java_16_byte_watermark_without_value(void **state) {
    (void) state;
    uint8_t zero[16] = {0};
    uint8_t reserved[16] = {0x41, 0x4B, 0x57, 0x31, 1, 0, 0, 0, 5};
    uint8_t below[16] = {0x41, 0x4B, 0x57, 0x31, 0,    0,    0,    0,
                         0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    qsf_watermark wm;
    open_compact(reserved, false, -1, &wm);
    qsf_watermark_close(&wm);
    open_compact(below, false, -1, &wm);
    qsf_watermark_close(&wm);
    open_compact(zero, false, -1, &wm);
    assert_int_equal(qsf_watermark_write(&wm, -1, NULL), QSF_OK);
    qsf_watermark_close(&wm);
    uint8_t want[16] = {0x41, 0x4B, 0x57, 0x31, 0,    0,    0,    0,
                        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    expect_file16(want);
    int64_t g, f;
    assert_int_equal(qsf_akw_read_image(want, 16, &g, &f), 0);
    assert_int_equal(f, -1);
    assert_int_equal(qsf_akw_read_image(want, 17, &g, &f), -1);
}

/* A watermark qsf creates in the default form is the Java client's 16 bytes:
 * zero until the first write gives it the magic and a value. */
static void created_watermark_is_the_java_form(void **state) {
    (void) state;
    int dfd = dirfd_of();
    qsf_watermark wm;
    qsf_errinfo e;
    assert_int_equal(qsf_watermark_create(dfd, dir, QSF_WM_JAVA16, &wm, &e), QSF_OK);
    assert_true(wm.compact);
    assert_false(wm.present);
    uint8_t zero[16] = {0};
    expect_file16(zero);
    assert_int_equal(qsf_watermark_write(&wm, 300, &e), QSF_OK);
    assert_int_equal(qsf_watermark_sync(&wm, &e), QSF_OK);
    qsf_watermark_close(&wm);
    uint8_t want[16] = {0x41, 0x4B, 0x57, 0x31, 0, 0, 0, 0, 0x2C, 0x01};
    expect_file16(want);
    /* a file that has a form keeps it, whatever form a new one would get */
    open_compact(want, true, 300, &wm);
    qsf_watermark_close(&wm);
    st_watermark(dir, 3, 30);
    assert_int_equal(qsf_watermark_open(dfd, dir, QSF_WM_JAVA16, &wm, &e), QSF_OK);
    assert_false(wm.compact);
    assert_int_equal(wm.fsn, 30);
    assert_int_equal(qsf_watermark_write(&wm, 31, &e), QSF_OK);
    qsf_watermark_close(&wm);
    assert_int_equal(st_size(st_path(dir, QSF_NAME_WATERMARK)), 8192);
    close(dfd);
}

/* Opens a planted 24-byte watermark (neither known size) with `form`: it is
 * reset, holds no value, and is kept in that form. */
static void open_other_sized(int form, qsf_watermark *wm) {
    uint8_t odd[24] = {0x41, 0x4B, 0x57, 0x31, 0, 0, 0, 0, 99};
    tu_write_file(st_path(dir, QSF_NAME_WATERMARK), odd, sizeof odd);
    int dfd = dirfd_of();
    assert_int_equal(qsf_watermark_open(dfd, dir, form, wm, NULL), QSF_OK);
    close(dfd);
    assert_true(wm->reset);
    assert_int_equal(wm->compact, form == QSF_WM_JAVA16);
    assert_false(wm->present);
    assert_int_equal(wm->fsn, -1);
}

/* Damaged in the default form: reset to the Java client's 16 zero bytes, kept
 * in that form by the next write. */
static void other_sized_watermark_is_reset_to_the_java_form(void **state) {
    (void) state;
    qsf_watermark wm;
    open_other_sized(QSF_WM_JAVA16, &wm);
    uint8_t zero[16] = {0};
    expect_file16(zero);
    assert_int_equal(qsf_watermark_write(&wm, 7, NULL), QSF_OK);
    qsf_watermark_close(&wm);
    uint8_t want[16] = {0x41, 0x4B, 0x57, 0x31, 0, 0, 0, 0, 7};
    expect_file16(want);
}

/* Neither 8192 nor 16 bytes, in the dual form: reset to 8192 zero bytes,
 * never trusted. */
static void other_sized_watermark_is_reset(void **state) {
    (void) state;
    qsf_watermark wm;
    open_other_sized(QSF_WM_DUAL, &wm);
    qsf_watermark_close(&wm);
    size_t n;
    uint8_t *img = tu_read_file(st_path(dir, QSF_NAME_WATERMARK), &n);
    assert_int_equal(n, 8192);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(img[i], 0);
    free(img);
}

static void missing_files_are_absent(void **state) {
    (void) state;
    int dfd = dirfd_of();
    qsf_watermark wm;
    qsf_manifest m;
    qsf_errinfo e;
    assert_int_equal(qsf_watermark_open(dfd, dir, QSF_WM_DUAL, &wm, &e), QSF_OK);
    assert_int_equal(wm.fd, -1);
    assert_false(wm.present);
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    assert_int_equal(m.fd, -1);
    assert_int_equal(qsf_watermark_write(&wm, 1, &e), QSF_E_INVAL);
    close(dfd);
}

static void manifest_create_and_forward_only_updates(void **state) {
    (void) state;
    int dfd = dirfd_of();
    qsf_manifest m;
    qsf_errinfo e;
    bool written;
    assert_int_equal(qsf_manifest_create(dfd, dir, 0, 0, &m, &e), QSF_OK);
    assert_int_equal(qsf_manifest_create(dfd, dir, 0, 0, &m, &e) == QSF_OK, 0); /* O_EXCL */
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    assert_int_equal(qsf_manifest_write(&m, 0, 5, &written, &e), QSF_OK);
    assert_true(written);
    assert_int_equal(qsf_manifest_write(&m, 0, 3, &written, &e), QSF_OK); /* backwards: clamped */
    assert_false(written);
    assert_int_equal(m.active_base, 5);
    assert_int_equal(m.generation, 2);
    assert_int_equal(qsf_manifest_sync(&m, &e), QSF_OK);
    qsf_manifest_close(&m);
    size_t n;
    uint8_t *img = tu_read_file(st_path(dir, QSF_NAME_MANIFEST), &n);
    expect_record(img + 4096, SFM_G1 Z28 "30 27 A8 CB");
    expect_record(img, SFM_G2 Z28 "73 19 09 DE");
    free(img);
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    /* head past active drags active along */
    assert_int_equal(qsf_manifest_write(&m, 9, 0, &written, &e), QSF_OK);
    assert_int_equal(m.head_base, 9);
    assert_int_equal(m.active_base, 9);
    qsf_manifest_close(&m);
    close(dfd);
}

static int fsyncs;
static int count_fsync(int fd) {
    fsyncs++;
    return fsync(fd);
}

/* Recovery's correction moves either bound in either direction (the data on
 * disk prove it), and makes it durable before returning. */
static void manifest_correction_moves_back_and_syncs(void **state) {
    (void) state;
    int dfd = dirfd_of();
    qsf_manifest m;
    qsf_errinfo e;
    assert_int_equal(qsf_manifest_create(dfd, dir, 4, 9, &m, &e), QSF_OK);
    QSF_OS->fsync = count_fsync;
    fsyncs = 0;
    assert_int_equal(qsf_manifest_correct(&m, 2, 6, &e), QSF_OK);
    assert_int_equal(fsyncs, 1);
    assert_int_equal(m.head_base, 2);
    assert_int_equal(m.active_base, 6);
    assert_int_equal(m.generation, 2);
    assert_int_equal(qsf_manifest_correct(&m, 2, 6, &e), QSF_OK); /* unchanged: nothing */
    assert_int_equal(m.generation, 2);
    assert_int_equal(qsf_manifest_correct(&m, 7, 6, &e), QSF_E_INVAL);
    assert_int_equal(m.head_base, 2);
    qsf_os_reset();
    qsf_manifest_close(&m);
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    assert_int_equal(m.head_base, 2);
    assert_int_equal(m.active_base, 6);
    qsf_manifest_close(&m);
    close(dfd);
}

static int fail_next_fsync(int fd) {
    (void) fd;
    qsf_os_reset(); /* once */
    errno = EIO;
    return -1;
}

/* After a failed sync the kernel may have marked the page clean: the next
 * write must write the record again, in its own slot (the other holds the
 * newest record known on disk), and sync it before anything newer goes over
 * that other slot. */
static void manifest_write_after_a_failed_sync_rewrites_the_record(void **state) {
    (void) state;
    int dfd = dirfd_of();
    qsf_manifest m;
    qsf_errinfo e;
    bool written;
    assert_int_equal(qsf_manifest_create(dfd, dir, 0, 0, &m, &e), QSF_OK);
    assert_int_equal(qsf_manifest_write(&m, 0, 5, &written, &e), QSF_OK);
    QSF_OS->fsync = fail_next_fsync;
    assert_int_equal(qsf_manifest_sync(&m, &e), QSF_E_DURABILITY);
    assert_int_equal(qsf_manifest_write(&m, 0, 5, &written, &e), QSF_OK);
    assert_true(written);
    assert_int_equal(m.generation, 2); /* the same record, again */
    assert_int_equal(qsf_manifest_write(&m, 0, 5, &written, &e), QSF_OK);
    assert_false(written); /* synced: nothing to do again */
    assert_int_equal(qsf_manifest_write(&m, 0, 7, &written, &e), QSF_OK);
    assert_int_equal(m.generation, 3);
    assert_int_equal(qsf_manifest_sync(&m, &e), QSF_OK);
    qsf_manifest_close(&m);
    size_t n;
    uint8_t *img = tu_read_file(st_path(dir, QSF_NAME_MANIFEST), &n);
    uint8_t want[64];
    qsf_sfm_encode(want, 2, 0, 5); /* generation 2 stays in its slot */
    assert_memory_equal(img, want, sizeof want);
    free(img);
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    assert_int_equal(m.generation, 3);
    assert_int_equal(m.active_base, 7);
    qsf_manifest_close(&m);
    close(dfd);
}

static void manifest_debris_is_set_aside(void **state) {
    (void) state;
    uint8_t junk[100] = {1, 2, 3};
    tu_write_file(st_path(dir, QSF_NAME_MANIFEST), junk, sizeof junk);
    int dfd = dirfd_of();
    qsf_manifest m;
    qsf_errinfo e;
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    assert_int_equal(m.fd, -1);
    assert_true(m.renamed_corrupt);
    assert_false(st_exists(st_path(dir, QSF_NAME_MANIFEST)));
    assert_int_equal(st_size(st_path(dir, QSF_NAME_MANIFEST ".corrupt")), 100);
    /* right size, no valid record: also debris */
    uint8_t zero[8192] = {0};
    tu_write_file(st_path(dir, QSF_NAME_MANIFEST), zero, sizeof zero);
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    assert_true(m.renamed_corrupt);
    /* the earlier debris is kept; the new one takes the next free name */
    assert_int_equal(st_size(st_path(dir, QSF_NAME_MANIFEST ".corrupt")), 100);
    assert_int_equal(st_size(st_path(dir, QSF_NAME_MANIFEST ".corrupt-2")), 8192);
    close(dfd);
}

static void symlinked_watermark_is_refused(void **state) {
    (void) state;
    st_watermark(dir, 1, 5);
    assert_int_equal(rename(st_path(dir, QSF_NAME_WATERMARK), st_path(dir, "real")), 0);
    assert_int_equal(symlink("real", st_path(dir, QSF_NAME_WATERMARK)), 0);
    int dfd = dirfd_of();
    qsf_watermark wm;
    qsf_errinfo e;
    assert_int_equal(qsf_watermark_open(dfd, dir, QSF_WM_DUAL, &wm, &e), QSF_E_IO);
    assert_non_null(strstr(e.msg, "symbolic link"));
    close(dfd);
}

/* A record with generation INT64_MAX (valid CRC, e.g. planted) cannot be
 * followed by generation + 1: the next write would overflow, land as an invalid
 * record and be silently lost behind the old one. Open renumbers it (same
 * values) so that later writes win. */
static void generation_at_int64_max_is_renumbered(void **state) {
    (void) state;
    st_watermark(dir, INT64_MAX, 5);
    st_manifest(dir, INT64_MAX, 0, 3);
    int dfd = dirfd_of();
    qsf_watermark wm;
    qsf_manifest m;
    qsf_errinfo e;
    assert_int_equal(qsf_watermark_open(dfd, dir, QSF_WM_DUAL, &wm, &e), QSF_OK);
    assert_true(wm.present);
    assert_int_equal(wm.fsn, 5);
    assert_int_equal(qsf_watermark_write(&wm, 7, &e), QSF_OK);
    qsf_watermark_close(&wm);
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    assert_int_equal(m.active_base, 3);
    assert_int_equal(qsf_manifest_write(&m, 0, 9, NULL, &e), QSF_OK);
    qsf_manifest_close(&m);
    assert_int_equal(qsf_watermark_open(dfd, dir, QSF_WM_DUAL, &wm, &e), QSF_OK);
    assert_int_equal(wm.fsn, 7);
    assert_true(wm.generation < INT64_MAX);
    qsf_watermark_close(&wm);
    assert_int_equal(qsf_manifest_open(dfd, dir, &m, &e), QSF_OK);
    assert_int_equal(m.active_base, 9);
    assert_true(m.generation < INT64_MAX);
    qsf_manifest_close(&m);
    close(dfd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(manifest_correction_moves_back_and_syncs, setup, teardown),
        cmocka_unit_test(akw_vectors),
        cmocka_unit_test(sfm_vectors),
        cmocka_unit_test(decode_rejects_bad_records),
        cmocka_unit_test(pick_takes_the_higher_valid_generation),
        cmocka_unit_test_setup_teardown(watermark_writes_alternate_slots, setup, teardown),
        cmocka_unit_test_setup_teardown(java_16_byte_watermark_is_read_and_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(java_16_byte_watermark_without_value, setup, teardown),
        cmocka_unit_test_setup_teardown(other_sized_watermark_is_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(created_watermark_is_the_java_form, setup, teardown),
        cmocka_unit_test_setup_teardown(other_sized_watermark_is_reset_to_the_java_form, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(missing_files_are_absent, setup, teardown),
        cmocka_unit_test_setup_teardown(manifest_create_and_forward_only_updates, setup, teardown),
        cmocka_unit_test_setup_teardown(manifest_debris_is_set_aside, setup, teardown),
        cmocka_unit_test_setup_teardown(manifest_write_after_a_failed_sync_rewrites_the_record,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(generation_at_int64_max_is_renumbered, setup, teardown),
        cmocka_unit_test_setup_teardown(symlinked_watermark_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
