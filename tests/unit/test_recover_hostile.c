/* Hostile slot files: truncated headers, huge lengths, negative baseSeq,
 * overlaps, unknown versions and flags, symlinks, zero-filled files and
 * malformed dictionary sections. Each gets a clear error or a safe recovery;
 * nothing crashes, nothing is followed, operational errors touch no file. */
#include "testutil.h"

#include "sftest.h"

#include "bytes.h"
#include "sf/recover.h"
#include "sf/segfmt.h"
#include "sf/symdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEG 4096
#define F   QSF_SFA_FLAG_MANIFEST_REQUIRED

static void expect_file(const char *path, const uint8_t *want, size_t n) {
    size_t got;
    uint8_t *img = tu_read_file(path, &got);
    assert_int_equal(got, n);
    assert_memory_equal(img, want, n);
    free(img);
}

static void truncated_header(void **state) {
    (void) state;
    tu_write_file(st_path(st_slot, "sf-initial.sfa"), "SF01\x01\x00", 6);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r); /* no manifest: quarantined, fresh st_slot */
    assert_true(r.fresh);
    assert_int_equal(r.report.quarantined_files, 1);
    qsf_slot_release(&r);
    assert_int_equal(st_size(st_path(st_slot, "sf-initial.sfa.corrupt")), 6);
    assert_int_equal(st_size(st_path(st_slot, "sf-initial.sfa")), SEG);
}

static void huge_and_negative_frame_lengths(void **state) {
    (void) state;
    const char *a[] = {"ok"};
    uint64_t end = st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, a);
    uint8_t env[8];
    qsf_put_u32(env, 0x12345678);
    qsf_put_u32(env + 4, 0x7FFFFFF0u); /* 2 GiB claimed in a 4 KiB file */
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), end, env, 8);
    st_manifest(st_slot, 1, 0, 0);
    /* bounded memory: recovery must not try to allocate what the length claims */
    struct rlimit old, lim = {.rlim_cur = 1u << 30, .rlim_max = 0};
    getrlimit(RLIMIT_AS, &old);
    lim.rlim_max = old.rlim_max;
    setrlimit(RLIMIT_AS, &lim);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    setrlimit(RLIMIT_AS, &old);
    assert_int_equal(r.segments[0].frame_count, 1);
    assert_int_equal(r.segments[0].last_good, end);
    assert_int_equal(r.report.torn_bytes, SEG - end);
    qsf_slot_release(&r);
    qsf_put_u32(env + 4, 0x80000003u); /* top bit set: invalid */
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), end, env, 8);
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.segments[0].frame_count, 1);
    qsf_slot_release(&r);
}

static void negative_base_seq_is_corrupt(void **state) {
    (void) state;
    const char *a[] = {"x"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, 0, -5, 1, a);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_int_equal(r.report.quarantined_files, 1);
    qsf_slot_release(&r);
    assert_true(st_exists(st_path(st_slot, "sf-0000000000000001.sfa.corrupt")));
}

static void overlapping_segments_fail(void **state) {
    (void) state;
    const char *a[] = {"x", "y"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 2, a);
    st_segment_str(st_slot, "sf-0000000000000002.sfa", SEG, F, 1, 2, a);
    st_manifest(st_slot, 1, 0, 1);
    const char *msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "expected 2 but got 1"));
}

static void unknown_version_or_flags_leave_files_untouched(void **state) {
    (void) state;
    const char *a[] = {"x"};
    st_segment_str(st_slot, "sf-initial.sfa", SEG, 0, 0, 1, a);
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, 0, 1, 1, a);
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), 4, "\x02", 1); /* version 2 */
    size_t n0, n1;
    uint8_t *before0 = tu_read_file(st_path(st_slot, "sf-initial.sfa"), &n0);
    uint8_t *before1 = tu_read_file(st_path(st_slot, "sf-0000000000000001.sfa"), &n1);
    const char *msg = st_open_fail(st_sfdir, QSF_E_UNSUPPORTED);
    assert_non_null(strstr(msg, "sf-0000000000000001.sfa has unsupported version 2"));
    expect_file(st_path(st_slot, "sf-initial.sfa"), before0, n0);
    expect_file(st_path(st_slot, "sf-0000000000000001.sfa"), before1, n1);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST)));            /* no migration */
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), 4, "\x01\x02", 2); /* unknown flag */
    free(before1);
    before1 = tu_read_file(st_path(st_slot, "sf-0000000000000001.sfa"), &n1);
    msg = st_open_fail(st_sfdir, QSF_E_UNSUPPORTED);
    assert_non_null(strstr(msg, "flags 0x02"));
    expect_file(st_path(st_slot, "sf-0000000000000001.sfa"), before1, n1);
    free(before0);
    free(before1);
}

static void symlinked_segment_is_refused(void **state) {
    (void) state;
    const char *a[] = {"x"};
    st_segment_str(st_root, "elsewhere.sfa", SEG, 0, 0, 1, a);
    assert_int_equal(symlink(st_path(st_root, "elsewhere.sfa"), st_path(st_slot, "sf-initial.sfa")),
                     0);
    const char *msg = st_open_fail(st_sfdir, QSF_E_IO);
    assert_non_null(strstr(msg, "symbolic link"));
    struct stat st;
    assert_int_equal(lstat(st_path(st_slot, "sf-initial.sfa"), &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* not renamed, not followed */
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_root, "elsewhere.sfa"), &n);
    assert_int_equal(img[5], 0); /* target never stamped */
    free(img);
}

static void symlinked_dictionary_is_not_followed(void **state) {
    (void) state;
    uint8_t dict[] = {0x53, 0x59, 0x44, 0x31, 1,   0,    0,    0,    1,
                      4,    3,    'o',  'n',  'e', 0x89, 0x31, 0x8D, 0x70};
    tu_write_file(st_path(st_root, "dict"), dict, sizeof dict);
    assert_int_equal(symlink(st_path(st_root, "dict"), st_path(st_slot, QSF_NAME_SYMDICT)), 0);
    const char *a[] = {"x"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, a);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.symdict.self_sufficient);
    assert_int_equal(qsf_symdict_size(&r.symdict), 0); /* "one" was never read */
    qsf_slot_release(&r);
    expect_file(st_path(st_root, "dict"), dict, sizeof dict);
}

static void symlinked_slot_directory_is_refused(void **state) {
    (void) state;
    rmdir(st_slot);
    mkdir(st_path(st_root, "other"), 0700);
    assert_int_equal(symlink(st_path(st_root, "other"), st_slot), 0);
    const char *msg = st_open_fail(st_sfdir, QSF_E_IO);

    assert_non_null(strstr(msg, "symbolic link"));
    assert_false(st_exists(st_path(st_root, "other/.lock")));
}

static void directory_named_like_a_segment(void **state) {
    (void) state;
    mkdir(st_path(st_slot, "weird.sfa"), 0700);
    const char *msg = st_open_fail(st_sfdir, QSF_E_IO);
    assert_non_null(strstr(msg, "weird.sfa"));
}

static void zero_filled_files(void **state) {
    (void) state;
    uint8_t *zero = calloc(1, SEG);
    tu_write_file(st_path(st_slot, "sf-0000000000000003.sfa"), zero, SEG);
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), zero, 8192);
    tu_write_file(st_path(st_slot, QSF_NAME_SYMDICT), zero, 100);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_int_equal(r.report.quarantined_files, 1);
    assert_false(r.symdict.self_sufficient); /* fresh st_slot: a new dictionary */
    qsf_slot_release(&r);
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_SYMDICT)), 8);
    /* a zero-filled manifest is creation debris (here: no segment left either) */
    unlink(st_path(st_slot, "sf-initial.sfa"));
    tu_write_file(st_path(st_slot, QSF_NAME_MANIFEST), zero, 8192);
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    qsf_slot_release(&r);
    assert_true(st_exists(st_path(st_slot, QSF_NAME_MANIFEST ".corrupt")));
    free(zero);
}

static void malformed_delta_sections(void **state) {
    (void) state;
    uint8_t p[3][64];
    const uint8_t *pp[3] = {p[0], p[1], p[2]};
    uint32_t l[3];
    /* count far beyond the bytes present */
    l[0] = (uint32_t) st_qwp(p[0], 0x08, 0, 0, NULL);
    p[0][13] = 0xFF;
    p[0][14] = 0xFF;
    p[0][15] = 0x7F;
    l[0] = 16;
    qsf_put_u32(p[0] + 8, 4);
    /* a string length past the end of the payload */
    const char *s[] = {"abc"};
    l[1] = (uint32_t) st_qwp(p[1], 0x08, 0, 1, s);
    p[1][14] = 100;
    /* an overlong varint (11 bytes) */
    memcpy(p[2], p[1], 12);
    memset(p[2] + 12, 0xFF, 11);
    l[2] = 23;
    st_segment(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 3, pp, l);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.data_loss);
    assert_int_equal(r.segments[0].frame_count, 3);
    assert_int_equal(qsf_symdict_size(&r.symdict), 0);
    qsf_slot_release(&r);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(truncated_header),
        T(huge_and_negative_frame_lengths),
        T(negative_base_seq_is_corrupt),
        T(overlapping_segments_fail),
        T(unknown_version_or_flags_leave_files_untouched),
        T(symlinked_segment_is_refused),
        T(symlinked_dictionary_is_not_followed),
        T(symlinked_slot_directory_is_refused),
        T(directory_named_like_a_segment),
        T(zero_filled_files),
        T(malformed_delta_sections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
