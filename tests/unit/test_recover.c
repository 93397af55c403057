/* Recovery (docs/FORMAT.md §6): every outcome of docs/FORMAT.md §6.20, manifest and legacy chains,
 * leftovers, residue zeroing, watermark seeding, the aborted deferred tail and
 * the dictionary rebuild, plus the fresh-start layout of docs/FORMAT.md §6.21; docs/DURABILITY.md
 * §4. */
#include "testutil.h"

#include "sftest.h"

#include "bytes.h"
#include "os/os.h"
#include "sf/recover.h"
#include "sf/symdict.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEG 4096
#define F   QSF_SFA_FLAG_MANIFEST_REQUIRED

static uint8_t hdr_flags(const char *name) {
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, name), &n);
    uint8_t f = img[5];
    free(img);
    return f;
}

static void expect_manifest(int64_t g, int64_t head, int64_t active) {
    st_expect_manifest(g, head, active);
}

/* QWP payloads built into static storage so several can be alive at once. */
static const uint8_t *qwp(uint8_t flags, uint32_t start, int n, const char *const *strs,
                          uint32_t *len) {
    static uint8_t bufs[16][256];
    static int next;
    uint8_t *b = bufs[next++ % 16];
    *len = (uint32_t) st_qwp(b, flags, start, n, strs);
    return b;
}

static void dict_file(int n, const char *const *strs) {
    tu_write_symdict(st_slot, n, strs);
}

static void expect_dict(const qsf_symdict *d, int n, const char *const *want) {
    assert_int_equal(qsf_symdict_size(d), n);
    for (int i = 0; i < n; i++)
        assert_string_equal(qsf_symdict_entry(d, (uint32_t) i, NULL), want[i]);
}

/* ---- fresh start ---- */

/* sf_ack_watermark_form=dual: a fresh slot's watermark is the 8192-byte
 * form, and so is one made again for a slot that lost its file. */
static void fresh_slot_in_the_dual_form(void **state) {
    (void) state;
    qsf_slot_recovered r;
    qsf_errinfo e;
    assert_int_equal(
        qsf_slot_open_formed(st_sfdir, "default", QSF_DUR_MEMORY, SEG, QSF_WM_DUAL, false, &r, &e),
        QSF_OK);
    assert_true(r.fresh);
    assert_false(r.watermark.compact);
    qsf_slot_release(&r);
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_WATERMARK)), QSF_DUAL_FILE_SIZE);
    assert_int_equal(unlink(st_path(st_slot, QSF_NAME_WATERMARK)), 0);
    assert_int_equal(
        qsf_slot_open_formed(st_sfdir, "default", QSF_DUR_MEMORY, SEG, QSF_WM_DUAL, false, &r, &e),
        QSF_OK);
    qsf_slot_release(&r);
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_WATERMARK)), QSF_DUAL_FILE_SIZE);
    /* the default makes the missing file again in the Java client's form */
    assert_int_equal(unlink(st_path(st_slot, QSF_NAME_WATERMARK)), 0);
    st_open_ok(st_sfdir, &r);
    qsf_slot_release(&r);
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_WATERMARK)), QSF_AKW_COMPACT_SIZE);
}

static void fresh_slot_layout(void **state) {
    (void) state;
    rmdir(st_slot);
    rmdir(st_sfdir);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_false(r.data_loss);
    assert_int_equal(r.segment_count, 1);
    assert_string_equal(r.segments[0].name, QSF_NAME_INITIAL);
    assert_true(r.segments[0].active);
    assert_int_equal(r.segments[0].last_good, QSF_SFA_HEADER_SIZE);
    assert_int_equal(r.segments[0].file_size, SEG);
    assert_int_equal(r.published_fsn, -1);
    assert_int_equal(r.acked_fsn, -1);
    assert_int_equal(r.next_generation, 1);
    assert_int_equal(r.manifest.generation, 1);
    assert_true(r.watermark.fd >= 0);
    assert_false(r.symdict.self_sufficient);
    qsf_slot_release(&r);
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_INITIAL)), SEG);
    assert_int_equal(hdr_flags(QSF_NAME_INITIAL), F);
    /* the default form: the Java client's 16 bytes, no value yet */
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_WATERMARK)), QSF_AKW_COMPACT_SIZE);
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_SYMDICT)), 8);
    expect_manifest(1, 0, 0);
    /* reopening recovers the empty slot instead of starting over */
    st_open_ok(st_sfdir, &r);
    assert_false(r.fresh);
    assert_int_equal(r.segment_count, 1);
    assert_string_equal(r.segments[0].name, QSF_NAME_INITIAL);
    assert_int_equal(r.published_fsn, -1);
    assert_int_equal(r.acked_fsn, -1);
    assert_int_equal(r.commit_boundary_fsn, -1);
    qsf_slot_release(&r);
}

/* ---- chains ---- */

static void recovers_manifest_chain(void **state) {
    (void) state;
    const char *a[] = {"f0", "f1", "f2"}, *b[] = {"f3", "f4"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 3, a);
    uint64_t end = st_segment_str(st_slot, st_gen(2), SEG, F, 3, 2, b);
    st_manifest(st_slot, 2, 0, 3);
    st_watermark(st_slot, 5, 1);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.fresh);
    assert_int_equal(r.segment_count, 2);
    assert_string_equal(r.segments[0].name, st_gen(1));
    assert_false(r.segments[0].active);
    assert_int_equal(r.segments[0].generation, 1);
    assert_string_equal(r.segments[1].name, st_gen(2));
    assert_true(r.segments[1].active);
    assert_int_equal(r.active_index, 1);
    assert_int_equal(r.segments[1].last_good, end);
    assert_int_equal(r.segments[1].frame_count, 2);
    assert_int_equal(r.published_fsn, 4);
    assert_int_equal(r.acked_fsn, 1);
    assert_int_equal(r.commit_boundary_fsn, 4); /* opaque payloads commit */
    assert_int_equal(r.next_generation, 3);
    assert_int_equal(r.watermark.generation, 5);
    assert_int_equal(r.report.segments, 2);
    assert_int_equal(r.report.frames, 5);
    assert_int_equal(r.report.bytes, 5 * (8 + 2));
    assert_int_equal(r.report.torn_bytes, 0);
    qsf_slot_release(&r);
}

static void gap_in_legacy_slot_names_both_fsns(void **state) {
    (void) state;
    const char *a[] = {"a", "b", "c"}, *b[] = {"f"};
    /* a full segment: the missing FSNs 3..4 cannot have been in it (with room
     * for them, a host crash lost them there, see test_recover_salvage.c) */
    st_segment_str(st_slot, QSF_NAME_INITIAL, QSF_SFA_HEADER_SIZE + 3 * 9, 0, 0, 3, a);
    st_segment_str(st_slot, st_gen(1), SEG, 0, 5, 1, b);
    const char *msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "FSN gap in recovered segments: expected 3 but got 5"));
    /* untouched: no migration, no stamp */
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST)));
    assert_int_equal(hdr_flags(QSF_NAME_INITIAL), 0);
    assert_int_equal(hdr_flags(st_gen(1)), 0);
}

static void gap_in_manifest_slot(void **state) {
    (void) state;
    const char *a[] = {"a", "b"}, *b[] = {"f"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 2, a);
    st_segment_str(st_slot, st_gen(3), SEG, F, 4, 1, b);
    st_manifest(st_slot, 3, 0, 4);
    /* gen 2 (FSN 2..3) removed by hand from a full gen 1: no room to fill */
    st_segment_str(st_slot, st_gen(1), QSF_SFA_HEADER_SIZE + 2 * 9, F, 0, 2, a);
    const char *msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "expected 2 but got 4"));
    assert_non_null(strstr(msg, "do not fit as placeholders"));
    assert_true(st_exists(st_path(st_slot, st_gen(1))));
}

static void manifest_references_missing_data(void **state) {
    (void) state;
    st_manifest(st_slot, 4, 0, 10);
    const char *msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "manifest references durable data"));
    /* active segment missing while older data is present */
    const char *a[] = {"a", "b"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 2, a);
    st_manifest(st_slot, 4, 0, 7);
    msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "activeBase 7 names no segment"));
    /* head does not match the first segment */
    st_manifest(st_slot, 4, 1, 1);
    st_segment_str(st_slot, st_gen(1), SEG, F, 3, 2, a);
    st_segment_str(st_slot, st_gen(2), SEG, F, 1, 0, a);
    msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "lies above"));
}

static void flagged_segment_without_manifest(void **state) {
    (void) state;
    const char *a[] = {"a"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 1, a);
    const char *msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "MANIFEST_REQUIRED"));
    assert_non_null(strstr(msg, st_gen(1)));
}

static void collapsed_manifest_starts_empty(void **state) {
    (void) state;
    st_manifest(st_slot, 9, 5, 5);
    st_watermark(st_slot, 3, 9);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_false(r.watermark.present);
    qsf_slot_release(&r);
    expect_manifest(1, 0, 0);
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, QSF_NAME_WATERMARK), &n);
    int64_t g, f;
    assert_int_equal(qsf_akw_read_image(img, n, &g, &f), -1); /* stale watermark removed */
    free(img);
}

static void corrupt_files_without_valid_segment(void **state) {
    (void) state;
    tu_write_file(st_path(st_slot, "x.sfa"), "garbage-garbage-garbage-garbage", 31);
    st_manifest(st_slot, 2, 0, 0);
    st_open_fail(st_sfdir, QSF_E_CORRUPT); /* manifest present: something was lost */
    assert_true(st_exists(st_path(st_slot, "x.sfa")));
    unlink(st_path(st_slot, QSF_NAME_MANIFEST));
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r); /* no manifest: quarantine and start empty */
    assert_true(r.fresh);
    assert_int_equal(r.report.quarantined_files, 1);
    qsf_slot_release(&r);
    assert_true(st_exists(st_path(st_slot, "x.sfa.corrupt")));
}

static void watermark_above_published_is_ignored(void **state) {
    (void) state;
    const char *a[] = {"a", "b"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 10, 2, a);
    st_manifest(st_slot, 1, 10, 10);
    st_watermark(st_slot, 2, 50);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.report.watermark_ignored);
    assert_int_equal(r.acked_fsn, 9);
    assert_int_equal(r.published_fsn, 11);
    qsf_slot_release(&r);
    /* a watermark inside the range is used; one below lowestBase is raised */
    st_watermark(st_slot, 2, 10);
    st_open_ok(st_sfdir, &r);
    assert_false(r.report.watermark_ignored);
    assert_int_equal(r.acked_fsn, 10);
    qsf_slot_release(&r);
    st_watermark(st_slot, 2, 3);
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.acked_fsn, 9);
    qsf_slot_release(&r);
}

static void torn_tail_reported_and_residue_zeroed(void **state) {
    (void) state;
    const char *a[] = {"one", "two", "three"};
    uint64_t end = st_segment_str(st_slot, st_gen(1), SEG, F, 0, 3, a);
    st_manifest(st_slot, 1, 0, 0);
    /* break frame 1's payload: frame 2 stays valid beyond the tear */
    uint64_t f1 = QSF_SFA_HEADER_SIZE + QSF_SFA_FRAME_OVERHEAD + 3;
    st_patch(st_path(st_slot, st_gen(1)), f1 + QSF_SFA_FRAME_AT_PAYLOAD, "X", 1);
    st_patch(st_path(st_slot, st_gen(1)), 3000, "\x07", 1);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.segments[0].frame_count, 1);
    assert_int_equal(r.segments[0].last_good, f1);
    assert_int_equal(r.report.torn_bytes, SEG - f1);
    assert_int_equal(r.published_fsn, 0);
    qsf_slot_release(&r);
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, st_gen(1)), &n);
    for (size_t i = f1; i < n; i++)
        assert_int_equal(img[i], 0);
    free(img);
    (void) end;
    st_open_ok(st_sfdir, &r); /* the old frame 2 never comes back */
    assert_int_equal(r.segments[0].frame_count, 1);
    assert_int_equal(r.report.torn_bytes, 0);
    qsf_slot_release(&r);
}

static void corrupt_file_quarantined_after_chain_validates(void **state) {
    (void) state;
    const char *a[] = {"a"};
    /* full: FSN 1..4 cannot be filled */
    st_segment_str(st_slot, st_gen(1), QSF_SFA_MIN_SEGMENT, F, 0, 1, a);
    st_segment_str(st_slot, st_gen(3), SEG, F, 5, 1, a);
    st_manifest(st_slot, 1, 0, 5);
    tu_write_file(st_path(st_slot, "junk.sfa"), "not a segment at all, no magic", 30);
    st_open_fail(st_sfdir, QSF_E_CORRUPT); /* gap: nothing is quarantined */
    assert_true(st_exists(st_path(st_slot, "junk.sfa")));
    unlink(st_path(st_slot, st_gen(3)));
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.report.quarantined_files, 1);
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, "junk.sfa")));
    assert_true(st_exists(st_path(st_slot, "junk.sfa.corrupt")));
}

static void leftovers_below_head_are_deleted(void **state) {
    (void) state;
    const char *a[] = {"a", "b", "c"}, *b[] = {"d", "e"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 3, a);
    st_segment_str(st_slot, st_gen(2), SEG, F, 3, 2, b);
    st_manifest(st_slot, 3, 3, 3);
    st_watermark(st_slot, 1, 2); /* trim persisted the watermark before moving the head */
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.report.manifest_repaired);
    assert_int_equal(r.segment_count, 1);
    assert_string_equal(r.segments[0].name, st_gen(2));
    assert_int_equal(r.acked_fsn, 2);
    assert_int_equal(r.next_generation, 3);
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, st_gen(1))));
}

/* Trim persists the watermark (record + sync) before it moves headBase, so a
 * segment below headBase holding a frame above the watermark proves the
 * manifest wrong: the data are kept and the head is lowered to them. */
static void manifest_head_beyond_unacked_data_is_lowered(void **state) {
    (void) state;
    const char *a[] = {"a", "b", "c"}, *b[] = {"d", "e"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 3, a);
    st_segment_str(st_slot, st_gen(2), SEG, F, 3, 2, b);
    st_manifest(st_slot, 3, 3, 3);
    st_watermark(st_slot, 2, 1); /* FSN 2 was never acknowledged */
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.report.manifest_repaired);
    assert_int_equal(r.segment_count, 2);
    assert_string_equal(r.segments[0].name, st_gen(1));
    assert_int_equal(r.acked_fsn, 1);
    assert_int_equal(r.published_fsn, 4);
    qsf_slot_release(&r);
    assert_true(st_exists(st_path(st_slot, st_gen(1))));
    expect_manifest(4, 0, 3);
    /* a straddling segment: the same, whatever the watermark */
    st_manifest(st_slot, 3, 2, 3);
    st_watermark(st_slot, 2, 2);
    st_open_ok(st_sfdir, &r);
    assert_true(r.report.manifest_repaired);
    assert_int_equal(r.segment_count, 2);
    assert_int_equal(r.acked_fsn, 2);
    qsf_slot_release(&r);
    expect_manifest(4, 0, 3);
}

/* activeBase below a data segment that continues the chain: the manifest
 * missed a rotation, the data decide. One that does not continue it fails. */
static void manifest_active_behind_the_data(void **state) {
    (void) state;
    const char *a[] = {"a", "b"}, *b[] = {"c"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 2, a);
    st_segment_str(st_slot, st_gen(2), SEG, F, 2, 1, b);
    st_manifest(st_slot, 3, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.report.manifest_repaired);
    assert_int_equal(r.segment_count, 2);
    assert_int_equal(r.published_fsn, 2);
    qsf_slot_release(&r);
    expect_manifest(4, 0, 2);
    st_segment_str(st_slot, st_gen(3), SEG, F, 7, 1, b); /* FSN 3..6 nowhere */
    st_manifest(st_slot, 3, 0, 2);
    const char *msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "lies above manifest activeBase 2"));
}

static void empty_active_at_chain_end_and_spares(void **state) {
    (void) state;
    const char *a[] = {"a", "b"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 2, a);
    st_segment_str(st_slot, st_gen(2), SEG, F, 2, 0, a); /* committed rotation, no frame yet */
    st_segment_str(st_slot, st_gen(3), SEG, F, 2, 0, a); /* clean spare */
    st_segment_str(st_slot, st_gen(4), SEG, F, 9, 0, a); /* torn spare */
    st_patch(st_path(st_slot, st_gen(4)), 100, "\x01", 1);
    st_manifest(st_slot, 2, 0, 2);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.segment_count, 2);
    assert_string_equal(r.segments[1].name, st_gen(2));
    assert_true(r.segments[1].active);
    assert_int_equal(r.published_fsn, 1);
    assert_int_equal(r.report.quarantined_files, 1);
    assert_int_equal(r.next_generation, 5);
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, st_gen(3))));
    assert_true(st_exists(st_path(st_slot, "sf-0000000000000004.sfa.corrupt")));
}

static void legacy_slot_is_migrated(void **state) {
    (void) state;
    const char *a[] = {"a", "b"}, *b[] = {"c"};
    st_segment_str(st_slot, QSF_NAME_INITIAL, SEG, 0, 0, 2, a);
    st_segment_str(st_slot, st_gen(1), SEG, 0, 2, 1, b);
    st_segment_str(st_slot, st_gen(2), SEG, 0, 3, 0, b); /* clean spare */
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.segment_count, 2);
    assert_string_equal(r.segments[0].name, QSF_NAME_INITIAL);
    assert_string_equal(r.segments[1].name, st_gen(1));
    assert_int_equal(r.segments[1].flags, F);
    assert_int_equal(r.published_fsn, 2);
    assert_int_equal(r.next_generation, 3);
    qsf_slot_release(&r);
    expect_manifest(1, 0, 2);
    assert_int_equal(hdr_flags(QSF_NAME_INITIAL), F);
    assert_int_equal(hdr_flags(st_gen(1)), F);
    assert_false(st_exists(st_path(st_slot, st_gen(2))));
    st_open_ok(st_sfdir, &r); /* now a manifest st_slot */
    assert_int_equal(r.published_fsn, 2);
    qsf_slot_release(&r);
}

static void legacy_refuses_when_head_could_be_lost(void **state) {
    (void) state;
    const char *a[] = {"a"};
    st_segment_str(st_slot, st_gen(2), SEG, 0, 5, 1, a);
    st_segment_str(st_slot, st_gen(1), SEG, 0, 0, 0, a);
    st_patch(st_path(st_slot, st_gen(1)), 200, "\x09", 1); /* torn, no valid frame, base below */
    const char *msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "missing head"));
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST)));
}

static void sealed_residue_is_zeroed_and_proven(void **state) {
    (void) state;
    const char *a[] = {"a", "b"}, *b[] = {"c"};
    uint64_t end = st_segment_str(st_slot, st_gen(1), SEG, F, 0, 2, a);
    st_segment_str(st_slot, st_gen(2), SEG, F, 2, 1, b);
    st_patch(st_path(st_slot, st_gen(1)), end + 5, "junk", 4);
    st_manifest(st_slot, 2, 0, 2);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.published_fsn, 2);
    assert_int_equal(r.segments[0].frame_count, 2);
    qsf_slot_release(&r);
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, st_gen(1)), &n);
    for (size_t i = end; i < n; i++)
        assert_int_equal(img[i], 0);
    free(img);
}

/* ---- frame analysis ---- */

static void aborted_deferred_tail_sets_commit_boundary(void **state) {
    (void) state;
    const uint8_t *p[4];
    uint32_t l[4];
    p[0] = qwp(0x08, 0, 0, NULL, &l[0]);
    p[1] = qwp(0x08, 0, 0, NULL, &l[1]);
    p[2] = qwp(0x09, 0, 0, NULL, &l[2]);
    p[3] = qwp(0x09, 0, 0, NULL, &l[3]);
    st_segment(st_slot, st_gen(1), SEG, F, 0, 4, p, l);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    /* FSN 2..3 belong to a flush whose process died: cut (test_recover_cut.c) */
    assert_int_equal(r.published_fsn, 1);
    assert_int_equal(r.commit_boundary_fsn, 1);
    assert_int_equal(r.report.commit_boundary_fsn, 1);
    assert_int_equal(r.report.aborted_frames_cut, 2);
    qsf_slot_release(&r);
    /* every recovered frame deferred: the whole range is the aborted tail */
    st_segment(st_slot, st_gen(1), SEG, F, 7, 2, p + 2, l + 2);
    st_manifest(st_slot, 2, 7, 7);
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.published_fsn, 6);
    assert_int_equal(r.commit_boundary_fsn, 6);
    assert_int_equal(r.report.aborted_frames_cut, 2);
    qsf_slot_release(&r);
}

static void dictionary_rebuilt_across_segments_oldest_trimmed(void **state) {
    (void) state;
    const char *ab[] = {"a", "b"}, *c[] = {"c"}, *d[] = {"d"}, *bcde[] = {"b", "c", "d", "e"};
    dict_file(2, ab); /* c, d, e never reached the file (host crash in memory mode) */
    const uint8_t *p[3];
    uint32_t l[3];
    p[0] = qwp(0x08, 2, 1, c, &l[0]);
    st_segment(st_slot, st_gen(4), SEG, F, 5, 1, p, l);
    p[1] = qwp(0x0C, 3, 1, d, &l[1]);
    p[2] = qwp(0x08, 1, 4, bcde, &l[2]);
    st_segment(st_slot, st_gen(5), SEG, F, 6, 2, p + 1, l + 1);
    st_manifest(st_slot, 7, 5, 6);
    st_watermark(st_slot, 7, 4);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.data_loss);
    const char *all[] = {"a", "b", "c", "d", "e"};
    expect_dict(&r.symdict, 5, all);
    qsf_slot_release(&r);
    /* the learned entries were appended as one chunk */
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_symdict sd;
    assert_int_equal(qsf_symdict_open(&sd, dfd, st_slot, NULL), QSF_OK);
    assert_int_equal(sd.chunks, 2);
    expect_dict(&sd, 5, all);
    qsf_symdict_destroy(&sd);
    close(dfd);
}

static void missing_ids_below_acked_are_harmless(void **state) {
    (void) state;
    const char *a[] = {"a"}, *x[] = {"x"}, *b[] = {"b"};
    dict_file(1, a);
    const uint8_t *p[2];
    uint32_t l[2];
    p[0] = qwp(0x08, 3, 1, x, &l[0]); /* needs ids 1..2: never replayed (acked) */
    p[1] = qwp(0x08, 1, 1, b, &l[1]);
    st_segment(st_slot, st_gen(1), SEG, F, 0, 2, p, l);
    st_manifest(st_slot, 1, 0, 0);
    st_watermark(st_slot, 1, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.data_loss);
    const char *ab[] = {"a", "b"};
    expect_dict(&r.symdict, 2, ab);
    qsf_slot_release(&r);
}

static void gap_in_aborted_tail_is_harmless(void **state) {
    (void) state;
    const char *x[] = {"x"};
    dict_file(0, NULL);
    const uint8_t *p[2];
    uint32_t l[2];
    p[0] = qwp(0x08, 0, 0, NULL, &l[0]);
    p[1] = qwp(0x09, 4, 1, x, &l[1]); /* deferred, never committed, never sent */
    st_segment(st_slot, st_gen(1), SEG, F, 0, 2, p, l);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.data_loss);
    assert_int_equal(r.commit_boundary_fsn, 0);
    qsf_slot_release(&r);
}

static void expect_quarantined_and_fresh(qsf_slot_recovered *r, const char *why) {
    assert_true(r->data_loss);
    assert_non_null(strstr(r->data_loss_reason, why));
    char want[800];
    snprintf(want, sizeof want, "%s/default.unreplayable-1", st_sfdir);
    assert_string_equal(r->report.quarantined_slot, want);
    assert_true(r->fresh);
    assert_int_equal(r->published_fsn, -1);
    assert_int_equal(r->segment_count, 1);
    size_t n;
    uint8_t *txt = tu_read_file(st_path(want, ".failed"), &n);
    assert_true(n > 0 && memcmp(txt, "unreplayable", 12) == 0);
    free(txt);
    assert_true(st_exists(st_path(want, st_gen(1))));           /* nothing deleted */
    assert_true(st_exists(st_path(st_slot, QSF_NAME_INITIAL))); /* fresh st_slot */
    assert_true(st_exists(st_path(st_slot, ".lock")));
}

/* .symbol-dict = ["a"]; one replayable frame whose delta section defines `sym`
 * at id `start`; the open must set the slot aside for `why`. */
static void expect_unreplayable(uint32_t start, const char *sym, const char *why) {
    const char *a[] = {"a"}, *x[] = {sym};
    dict_file(1, a);
    const uint8_t *p[1];
    uint32_t l[1];
    p[0] = qwp(0x08, start, 1, x, &l[0]);
    st_segment(st_slot, st_gen(1), SEG, F, 0, 1, p, l);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    expect_quarantined_and_fresh(&r, why);
    qsf_slot_release(&r);
}

/* .symbol-dict = ["a"]; FSN 0 defines "b" (id 1), FSN 1 needs ids from 3
 * (id 2 was defined only by something lost), FSN 2 defines nothing new. Only
 * FSN 1 cannot be replayed: its flush is given up and reported, the slot is
 * kept, and a second open finds the empty commit in its place and reports
 * nothing.
 * (The whole slot was set aside: "frame FSN 1 needs symbol ids from 3 but
 * only 2 are known".) */
static void unknown_symbols_give_up_only_their_flush(void **state) {
    (void) state;
    const char *a[] = {"a"}, *b[] = {"b"}, *x[] = {"x"}, *ab[] = {"a", "b"};
    dict_file(1, a);
    const uint8_t *p[3];
    uint32_t l[3];
    p[0] = qwp(0x08, 1, 1, b, &l[0]);
    p[1] = qwp(0x08, 3, 1, x, &l[1]);
    p[2] = qwp(0x08, 2, 0, NULL, &l[2]);
    st_segment(st_slot, st_gen(1), SEG, F, 0, 3, p, l);
    st_manifest(st_slot, 1, 0, 0);
    for (int open = 0; open < 2; open++) {
        qsf_slot_recovered r;
        st_open_ok(st_sfdir, &r);
        assert_false(r.data_loss);
        assert_false(st_exists(st_path(st_sfdir, "default.unreplayable-1")));
        assert_int_equal(r.published_fsn, 2);
        /* FSN 1 is now the empty commit, which carries nothing (docs/FORMAT.md §6.16) */
        assert_int_equal(r.n_retired, 0);
        assert_int_equal(r.n_losses, open == 0 ? 1 : 0);
        if (open == 0) {
            const qsf_recovery_loss *loss = &r.losses[0];
            assert_int_equal(loss->from_fsn, 1);
            assert_int_equal(loss->to_fsn, 1);
            assert_int_equal(loss->frames_destroyed, 0);
            assert_int_equal(loss->frames_retired, 1);
            assert_non_null(strstr(loss->what, "needs symbol ids from 3 but only 2 are known"));
            assert_int_equal(r.report.frames_lost, 1);
            assert_string_equal(loss->copy, ""); /* nothing damaged: no copy */
        }
        expect_dict(&r.symdict, 2, ab);
        qsf_slot_release(&r);
    }
}

/* An unreplayable slot with more damaged regions than an error inbox holds
 * (16 at least): its loss is one entry covering everything it gives up, so
 * the record that it was set aside is never pushed out by the records of
 * its regions. FSN 0 defines id 0, FSN 1..40 hold 10 rows each, FSN 2, 4,
 * ..., 38 damaged, FSN 41 redefines id 0. (The losses were one per region
 * and counted only the damaged flushes: 19 entries, 38 frames.) */
static void a_slot_set_aside_reports_one_loss_for_everything(void **state) {
    (void) state;
    static uint8_t bufs[42][64];
    const uint8_t *p[42];
    uint32_t l[42];
    const char *x[] = {"x"}, *y[] = {"y"};
    l[0] = (uint32_t) st_qwp(bufs[0], 0x08, 0, 1, x);
    for (int i = 1; i <= 40; i++)
        l[i] = (uint32_t) st_qwp_table(bufs[i], 0, "t", 10, 40, (uint8_t) i);
    l[41] = (uint32_t) st_qwp(bufs[41], 0x08, 0, 1, y);
    uint64_t off = QSF_SFA_HEADER_SIZE;
    for (int i = 0; i < 42; i++) {
        p[i] = bufs[i];
        if (i > 0 && i < 40 && i % 2 == 0) /* a flipped byte: the length still chains */
            bufs[i][20] ^= 0x5A;
        off += QSF_SFA_FRAME_OVERHEAD + l[i];
    }
    st_segment(st_slot, st_gen(1), SEG, F, 0, 42, p, l);
    st_manifest(st_slot, 1, 0, 0);
    /* st_segment computed the CRCs over the flipped bytes: flip them back */
    off = QSF_SFA_HEADER_SIZE;
    for (int i = 0; i < 42; i++) {
        if (i > 0 && i < 40 && i % 2 == 0) {
            uint8_t b = bufs[i][20] ^ 0x5A;
            st_patch(st_path(st_slot, st_gen(1)), off + QSF_SFA_FRAME_OVERHEAD + 20, &b, 1);
        }
        off += QSF_SFA_FRAME_OVERHEAD + l[i];
    }
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.data_loss);
    assert_int_equal(r.n_losses, 1);
    assert_int_equal(r.report.losses, 1);
    const qsf_recovery_loss *loss = &r.losses[0];
    assert_int_equal(loss->from_fsn, 0);
    assert_int_equal(loss->to_fsn, 41);
    assert_int_equal(loss->frames_destroyed, 19);
    assert_true(loss->destroyed_exact);
    assert_int_equal(loss->frames_retired, 23);
    assert_int_equal(loss->rows, 210);
    assert_int_equal(r.report.frames_lost, 42);
    assert_non_null(strstr(loss->what, "redefines symbol id 0"));
    qsf_slot_release(&r);
}

static void unreplayable_mismatch_quarantines_slot(void **state) {
    (void) state;
    expect_unreplayable(0, "z", "redefines symbol id 0");
}

static void self_sufficient_slot_without_dictionary(void **state) {
    (void) state;
    const char *ab[] = {"a", "b"}, *abc[] = {"a", "b", "c"};
    const uint8_t *p[2];
    uint32_t l[2];
    p[0] = qwp(0x08, 0, 2, ab, &l[0]);
    p[1] = qwp(0x08, 0, 3, abc, &l[1]);
    st_segment(st_slot, st_gen(1), SEG, F, 0, 2, p, l);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.data_loss);
    assert_true(r.symdict.self_sufficient);
    assert_true(r.report.self_sufficient);
    expect_dict(&r.symdict, 3, abc);
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_SYMDICT)));
}

/* ---- durability baseline ---- */

static int datasyncs;
static int count_fdatasync(int fd) {
    datasyncs++;
    return fdatasync(fd);
}

static void append_mode_syncs_recovered_range(void **state) {
    (void) state;
    const char *a[] = {"a"};
    st_segment_str(st_slot, st_gen(1), SEG, F, 0, 1, a);
    st_segment_str(st_slot, st_gen(2), SEG, F, 1, 1, a);
    st_manifest(st_slot, 1, 0, 1);
    dict_file(1, a);
    QSF_OS->fdatasync = count_fdatasync;
    qsf_slot_recovered r;
    datasyncs = 0;
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, NULL),
                     QSF_OK);
    qsf_slot_release(&r);
    assert_int_equal(datasyncs, 0);
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_APPEND, SEG, &r, NULL),
                     QSF_OK);
    qsf_slot_release(&r);
    assert_int_equal(datasyncs, 3); /* two segments + .symbol-dict */
}

/* docs/DURABILITY.md §12 step 4 unlinks the active segment, then the spare (generation
 * order). A crash between the two leaves a collapsed manifest, no data and one
 * empty spare above activeBase: every frame was acknowledged, and the slot
 * must start empty (like the collapsed manifest of 8.5), not fail with
 * "manifest references missing data". */
static void spare_left_by_drained_close_starts_empty(void **state) {
    (void) state;
    st_segment_str(st_slot, st_gen(2), SEG, F, 8, 0, NULL); /* provisional base 8 */
    st_manifest(st_slot, 3, 5, 5);                          /* active at 5 is gone */
    st_watermark(st_slot, 4, 7);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_int_equal(r.published_fsn, -1);
    assert_int_equal(r.acked_fsn, -1);
    assert_int_equal(r.next_generation, 3); /* names stay unique */
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, st_gen(2))));
    expect_manifest(1, 0, 0);
    /* a torn spare is set aside, not deleted */
    unlink(st_path(st_slot, QSF_NAME_INITIAL));
    st_segment_str(st_slot, st_gen(2), SEG, F, 8, 0, NULL);
    st_patch(st_path(st_slot, st_gen(2)), 100, "x", 1);
    st_manifest(st_slot, 3, 5, 5);
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_int_equal(r.report.quarantined_files, 1);
    qsf_slot_release(&r);
    assert_true(st_exists(st_path(st_slot, "sf-0000000000000002.sfa.corrupt")));
    /* with headBase != activeBase the missing active held unacknowledged data */
    unlink(st_path(st_slot, QSF_NAME_INITIAL));
    st_segment_str(st_slot, st_gen(2), SEG, F, 8, 0, NULL);
    st_manifest(st_slot, 3, 4, 5);
    const char *msg = st_open_fail(st_sfdir, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "activeBase 5 names no segment"));
}

/* ---- an orphan drainer's open (qsf_slot_adopt_sized) ---- */

static int adopt(qsf_errinfo *e) {
    qsf_slot_recovered r;
    int rc = qsf_slot_adopt_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, e);
    if (rc == QSF_OK)
        qsf_slot_release(&r);
    return rc;
}

/* A corrupt slot is not repaired or moved: it gets .failed with the reason. */
static void adopting_a_corrupt_slot_marks_it_failed(void **state) {
    (void) state;
    const char *a[] = {"a", "b"}, *b[] = {"f"};
    /* full: the gap cannot be filled */
    st_segment_str(st_slot, st_gen(1), QSF_SFA_HEADER_SIZE + 2 * 9, F, 0, 2, a);
    st_segment_str(st_slot, st_gen(3), SEG, F, 4, 1, b);
    st_manifest(st_slot, 3, 0, 4);
    qsf_errinfo e;
    assert_int_equal(adopt(&e), QSF_E_CORRUPT);
    assert_non_null(strstr(e.msg, "expected 2 but got 4"));
    assert_non_null(strstr(e.msg, "marked .failed"));
    assert_true(st_exists(st_path(st_slot, QSF_NAME_FAILED)));
    assert_true(st_exists(st_path(st_slot, st_gen(1))));
    assert_true(st_exists(st_path(st_slot, st_gen(3))));
    assert_int_equal(adopt(&e), QSF_E_INVAL); /* from now on it is left alone */
    assert_non_null(strstr(e.msg, "marked .failed"));
}

/* Checked under the lock: a slot someone gave up on, or drained, since the
 * scan is left as it is; in particular no fresh slot is created. */
static void adopting_checks_failed_and_segments_under_the_lock(void **state) {
    (void) state;
    qsf_errinfo e;
    (void) mkdir(st_sfdir, 0700); /* an empty slot directory */
    (void) mkdir(st_slot, 0700);
    assert_true(st_exists(st_slot));
    assert_int_equal(adopt(&e), QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "holds no segments"));
    assert_false(st_exists(st_path(st_slot, QSF_NAME_INITIAL)));
    const char *a[] = {"a"};
    st_segment_str(st_slot, QSF_NAME_INITIAL, SEG, 0, 0, 1, a);
    FILE *f = fopen(st_path(st_slot, QSF_NAME_FAILED), "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(adopt(&e), QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "marked .failed"));
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST))); /* not migrated */
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(fresh_slot_layout),
        T(fresh_slot_in_the_dual_form),
        T(recovers_manifest_chain),
        T(gap_in_legacy_slot_names_both_fsns),
        T(gap_in_manifest_slot),
        T(manifest_references_missing_data),
        T(flagged_segment_without_manifest),
        T(collapsed_manifest_starts_empty),
        T(spare_left_by_drained_close_starts_empty),
        T(corrupt_files_without_valid_segment),
        T(watermark_above_published_is_ignored),
        T(torn_tail_reported_and_residue_zeroed),
        T(corrupt_file_quarantined_after_chain_validates),
        T(leftovers_below_head_are_deleted),
        T(manifest_head_beyond_unacked_data_is_lowered),
        T(manifest_active_behind_the_data),
        T(empty_active_at_chain_end_and_spares),
        T(legacy_slot_is_migrated),
        T(legacy_refuses_when_head_could_be_lost),
        T(sealed_residue_is_zeroed_and_proven),
        T(aborted_deferred_tail_sets_commit_boundary),
        T(dictionary_rebuilt_across_segments_oldest_trimmed),
        T(missing_ids_below_acked_are_harmless),
        T(gap_in_aborted_tail_is_harmless),
        T(unknown_symbols_give_up_only_their_flush),
        T(unreplayable_mismatch_quarantines_slot),
        T(a_slot_set_aside_reports_one_loss_for_everything),
        T(self_sufficient_slot_without_dictionary),
        T(append_mode_syncs_recovered_range),
        T(adopting_a_corrupt_slot_marks_it_failed),
        T(adopting_checks_failed_and_segments_under_the_lock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
