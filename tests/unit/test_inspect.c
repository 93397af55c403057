/* Read-only slot inspection: the verdict an open would reach, the problems it
 * would repair and the notes, with every file left exactly as it was. */
#include "testutil.h"

#include "sftest.h"

#include "os/os.h"
#include "sfops/inspect.h"
#include "sf/symdict.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEG 4096
#define F   QSF_SFA_FLAG_MANIFEST_REQUIRED

static bool has_line(char lines[][200], uint32_t n, const char *needle) {
    for (uint32_t i = 0; i < n; i++)
        if (strstr(lines[i], needle))
            return true;
    return false;
}

static void inspect_ok(qsf_slot_inspection *in) {
    qsf_errinfo e;
    int rc = qsf_slot_inspect(st_slot, in, &e);
    if (rc != QSF_OK)
        fail_msg("inspect failed: %s", e.msg);
}

static void clean_manifest_slot(void **state) {
    (void) state;
    const char *a[] = {"f0", "f1"}, *b[] = {"f2"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 2, a);
    st_segment_str(st_slot, "sf-0000000000000002.sfa", SEG, F, 2, 1, b);
    st_manifest(st_slot, 2, 0, 2);
    st_watermark(st_slot, 3, 0);
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_symdict d;
    assert_int_equal(qsf_symdict_create(&d, dfd, st_slot, NULL), QSF_OK);
    qsf_symdict_destroy(&d);
    close(dfd);
    qsf_slot_inspection in;
    inspect_ok(&in);
    assert_int_equal(in.verdict, QSF_OK);
    assert_int_equal(in.nproblems, 0);
    assert_int_equal(in.live, 2);
    assert_int_equal(in.frames, 3);
    assert_int_equal(in.first_fsn, 0);
    assert_int_equal(in.last_fsn, 2);
    assert_int_equal(in.acked_fsn, 0);
    assert_int_equal(in.commit_boundary_fsn, 2);
    assert_true(in.manifest_valid);
    assert_int_equal(in.active_base, 2);
    assert_true(in.watermark_valid);
    assert_int_equal(in.watermark_generation, 3);
    assert_true(in.dict_usable);
    assert_true(in.files[1].info.active);
    assert_false(st_exists(st_path(st_slot, ".lock"))); /* never locks */
    qsf_slot_inspection_free(&in);
}

static void gap_is_the_verdict(void **state) {
    (void) state;
    const char *a[] = {"a"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", QSF_SFA_MIN_SEGMENT, 0, 0, 1, a); /* full */
    st_segment_str(st_slot, "sf-0000000000000002.sfa", SEG, 0, 4, 1, a);
    qsf_slot_inspection in;
    inspect_ok(&in);
    assert_int_equal(in.verdict, QSF_E_CORRUPT);
    assert_non_null(strstr(in.verdict_msg, "expected 1 but got 4"));
    assert_int_equal(in.nfiles, 2);
    assert_int_equal(in.live, 0);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST)));
    qsf_slot_inspection_free(&in);
}

static void repairs_are_listed_not_made(void **state) {
    (void) state;
    const char *a[] = {"one", "two"};
    uint64_t end = st_segment_str(st_slot, "sf-initial.sfa", SEG, 0, 0, 2, a);
    st_patch(st_path(st_slot, "sf-initial.sfa"), end + 10, "zz", 2);
    st_segment_str(st_slot, "sf-0000000000000000.sfa", SEG, 0, 0, 0, a); /* clean spare */
    uint8_t damaged[24] = {0}; /* neither 8192 bytes nor the Java client's 16 */
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), damaged, sizeof damaged);
    size_t n;
    uint8_t *before = tu_read_file(st_path(st_slot, "sf-initial.sfa"), &n);
    qsf_slot_inspection in;
    inspect_ok(&in);
    assert_int_equal(in.verdict, QSF_OK);
    assert_true(has_line(in.problems, in.nproblems, "torn tail"));
    assert_true(has_line(in.problems, in.nproblems, "24 bytes, neither 8192 nor 16"));
    assert_true(has_line(in.notes, in.nnotes, "migrates"));
    assert_true(has_line(in.notes, in.nnotes, "clean spare"));
    assert_int_equal(in.torn_bytes, SEG - end);
    qsf_slot_inspection_free(&in);
    /* nothing changed */
    size_t n2;
    uint8_t *after = tu_read_file(st_path(st_slot, "sf-initial.sfa"), &n2);
    assert_int_equal(n, n2);
    assert_memory_equal(before, after, n);
    free(before);
    free(after);
    assert_true(st_exists(st_path(st_slot, "sf-0000000000000000.sfa")));
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_WATERMARK)), 24);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST)));
}

static void unsupported_and_unreplayable(void **state) {
    (void) state;
    st_unreplayable_segment("sf-0000000000000001.sfa", SEG);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_inspection in;
    inspect_ok(&in);
    assert_int_equal(in.verdict, QSF_OK);
    assert_true(in.unreplayable);
    assert_true(has_line(in.problems, in.nproblems, "redefines symbol id 0"));
    qsf_slot_inspection_free(&in);
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), QSF_SFA_AT_VERSION, "\x03", 1);
    inspect_ok(&in);
    assert_int_equal(in.verdict, QSF_E_UNSUPPORTED);
    assert_non_null(strstr(in.verdict_msg, "unsupported version 3"));
    qsf_slot_inspection_free(&in);
    qsf_errinfo e;
    assert_int_equal(qsf_slot_inspect(st_path(st_root, "nope"), &in, &e), QSF_E_IO);
}

/* Everything an open would repair or give up is a problem line (so `qsf slot
 * verify` exits non-zero), and nothing is changed. */
static void salvage_cut_debris_and_manifest_are_listed(void **state) {
    (void) state;
    const char *a[] = {"x", "y"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 2, a); /* below the head */
    st_segment_flushes("sf-0000000000000002.sfa", SEG, 2, "CCCCCCDD", 3);
    st_manifest(st_slot, 3, 2, 2);
    st_watermark(st_slot, 1, 0); /* FSN 1 never acknowledged: the manifest is wrong */
    /* FSN 4: the third frame, 48 bytes each */
    st_patch(st_path(st_slot, "sf-0000000000000002.sfa"), QSF_SFA_HEADER_SIZE + 2 * 48 + 30, "!",
             1);
    tu_write_file(st_path(st_slot, "sf-0000000000000003.sfa"), "", 0);
    st_snap before;
    st_snap_take(&before);
    qsf_slot_inspection in;
    inspect_ok(&in);
    assert_int_equal(in.verdict, QSF_OK);
    assert_true(in.manifest_mismatch);
    assert_true(has_line(in.problems, in.nproblems, "would be lowered to 0"));
    assert_int_equal(in.losses, 1);
    assert_true(has_line(in.problems, in.nproblems, "CRC mismatch"));
    assert_int_equal(in.rewrites, 1);
    assert_int_equal(in.retired_spans, 1);
    assert_true(has_line(in.problems, in.nproblems, "FSN 4..5"));
    assert_int_equal(in.aborted_frames, 2);
    /* an aborted transaction alone is no problem: a note says what the open cuts */
    assert_true(has_line(in.notes, in.nnotes, "interrupted flush of 2 frames (FSN 8..9"));
    assert_false(has_line(in.problems, in.nproblems, "interrupted flush"));
    assert_int_equal(in.debris, 1);
    assert_true(has_line(in.problems, in.nproblems, "nothing but zeros"));
    assert_int_equal(in.commit_boundary_fsn, 7);
    qsf_slot_inspection_free(&in);
    st_snap_expect_same(&before);
    st_snap_free(&before);
    /* what the open then does matches */
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.n_losses, 1);
    assert_int_equal(r.n_retired, 1);
    assert_int_equal(r.retired[0].from, 4);
    assert_int_equal(r.retired[0].to, 5);
    assert_int_equal(r.report.aborted_frames_cut, 2);
    assert_int_equal(r.report.debris_removed, 1);
    assert_true(r.report.manifest_repaired);
    qsf_slot_release(&r);
    inspect_ok(&in); /* now only the retired flush is left to say */
    assert_int_equal(in.nproblems, 1);
    assert_int_equal(in.retired_spans, 1);
    qsf_slot_inspection_free(&in);
}

/* ---- the work is bounded by what is stored ---- */

static uint64_t bytes_read;
static ssize_t counting_pread(int fd, void *buf, size_t n, off_t off) {
    ssize_t got = pread(fd, buf, n, off);
    if (got > 0)
        bytes_read += (uint64_t) got;
    return got;
}

/* A segment whose file is 8 GiB of which a few bytes are written (sparse, or
 * preallocated and never filled): inspecting it (as `qsf slot list` does for
 * every slot) reads what is stored, not 8 GiB of zeros; and a torn byte far
 * into the hole is still found. */
static void sparse_segment_is_not_read_in_full(void **state) {
    (void) state;
    const char *a[] = {"f0", "f1"};
    const char *seg = st_path(st_slot, "sf-0000000000000001.sfa");
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 2, a);
    st_manifest(st_slot, 1, 0, 0);
    if (truncate(seg, (off_t) 8 << 30) != 0)
        skip(); /* the file system cannot hold a file that large, even sparse */
    qsf_os_table.pread = counting_pread;
    qsf_slot_inspection in;
    inspect_ok(&in);
    assert_int_equal(in.verdict, QSF_OK);
    assert_int_equal(in.frames, 2);
    assert_int_equal(in.nproblems, 0);
    assert_true(bytes_read < (16u << 20));
    qsf_slot_inspection_free(&in);
    st_patch(seg, ((uint64_t) 6 << 30) + 5, "x", 1);
    bytes_read = 0;
    inspect_ok(&in);
    assert_int_equal(in.torn_bytes, ((uint64_t) 8 << 30) - in.files[0].info.last_good);
    assert_true(has_line(in.problems, in.nproblems, "torn tail"));
    assert_true(bytes_read < (16u << 20));
    qsf_slot_inspection_free(&in);
}

/* The Java client's 16-byte watermark is a value, not a problem: inspect
 * seeds the acked FSN from it, as an open would. */
static void java_watermark_seeds_acked(void **state) {
    (void) state;
    const char *a[] = {"one", "two", "three"};
    st_segment_str(st_slot, "sf-initial.sfa", SEG, 0, 0, 3, a);
    const uint8_t java[16] = {0x41, 0x4B, 0x57, 0x31, 0, 0, 0, 0, 1};
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), java, sizeof java);
    qsf_slot_inspection in;
    inspect_ok(&in);
    assert_true(in.watermark_valid);
    assert_int_equal(in.watermark_size, 16);
    assert_int_equal(in.watermark_fsn, 1);
    assert_int_equal(in.acked_fsn, 1);
    assert_false(has_line(in.problems, in.nproblems, "ack-watermark"));
    qsf_slot_inspection_free(&in);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(clean_manifest_slot),
        T(gap_is_the_verdict),
        T(repairs_are_listed_not_made),
        T(unsupported_and_unreplayable),
        T(salvage_cut_debris_and_manifest_are_listed),
        T(sparse_segment_is_not_read_in_full),
        T(java_watermark_seeds_acked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
