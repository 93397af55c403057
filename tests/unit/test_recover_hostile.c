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

#include <errno.h>
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
    uint8_t env[QSF_SFA_FRAME_OVERHEAD];
    qsf_put_u32(env + QSF_SFA_FRAME_AT_CRC, 0x12345678);
    qsf_put_u32(env + QSF_SFA_FRAME_AT_LEN, 0x7FFFFFF0u); /* 2 GiB claimed in a 4 KiB file */
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), end, env, sizeof env);
    st_manifest(st_slot, 1, 0, 0);
    /* bounded memory: recovery must not try to allocate what the length claims.
     * AddressSanitizer reserves terabytes of address space, so the cap is only
     * applied in ordinary builds. */
    struct rlimit old;
    getrlimit(RLIMIT_AS, &old);
#ifndef __SANITIZE_ADDRESS__
    struct rlimit lim = {.rlim_cur = 1u << 30, .rlim_max = old.rlim_max};
    setrlimit(RLIMIT_AS, &lim);
#endif
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    setrlimit(RLIMIT_AS, &old);
    assert_int_equal(r.segments[0].frame_count, 1);
    assert_int_equal(r.segments[0].last_good, end);
    assert_int_equal(r.report.torn_bytes, SEG - end);
    qsf_slot_release(&r);
    qsf_put_u32(env + QSF_SFA_FRAME_AT_LEN, 0x80000003u); /* top bit set: invalid */
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), end, env, sizeof env);
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
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), QSF_SFA_AT_VERSION, "\x02", 1);
    size_t n0, n1;
    uint8_t *before0 = tu_read_file(st_path(st_slot, "sf-initial.sfa"), &n0);
    uint8_t *before1 = tu_read_file(st_path(st_slot, "sf-0000000000000001.sfa"), &n1);
    const char *msg = st_open_fail(st_sfdir, QSF_E_UNSUPPORTED);
    assert_non_null(strstr(msg, "sf-0000000000000001.sfa has unsupported version 2"));
    expect_file(st_path(st_slot, "sf-initial.sfa"), before0, n0);
    expect_file(st_path(st_slot, "sf-0000000000000001.sfa"), before1, n1);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST))); /* no migration */
    /* version 1 again, an unknown flag */
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), QSF_SFA_AT_VERSION, "\x01\x02", 2);
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
    uint8_t *zero = calloc(1, 8192); /* the largest file written below */
    tu_write_file(st_path(st_slot, "sf-0000000000000003.sfa"), zero, SEG);
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), zero, 8192);
    tu_write_file(st_path(st_slot, QSF_NAME_SYMDICT), zero, 100);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_int_equal(r.report.quarantined_files, 0); /* it holds no data: removed */
    assert_int_equal(r.report.debris_removed, 1);
    assert_false(st_exists(st_path(st_slot, "sf-0000000000000003.sfa")));
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

/* A second corrupt sf-initial.sfa (recreated by every fresh start) must not
 * replace the first one's quarantined copy: .corrupt files are evidence and
 * may hold frames an operator can still salvage. */
static void quarantine_never_replaces_an_earlier_one(void **state) {
    (void) state;
    tu_write_file(st_path(st_slot, "sf-initial.sfa.corrupt"), "first", 5);
    tu_write_file(st_path(st_slot, "sf-initial.sfa"), "second", 6);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_int_equal(r.report.quarantined_files, 1);
    qsf_slot_release(&r);
    expect_file(st_path(st_slot, "sf-initial.sfa.corrupt"), (const uint8_t *) "first", 5);
    expect_file(st_path(st_slot, "sf-initial.sfa.corrupt-2"), (const uint8_t *) "second", 6);
    /* manifest debris is set aside the same way */
    unlink(st_path(st_slot, "sf-initial.sfa"));
    tu_write_file(st_path(st_slot, QSF_NAME_MANIFEST ".corrupt"), "old", 3);
    tu_write_file(st_path(st_slot, QSF_NAME_MANIFEST), "new!", 4);
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    qsf_slot_release(&r);
    expect_file(st_path(st_slot, QSF_NAME_MANIFEST ".corrupt"), (const uint8_t *) "old", 3);
    expect_file(st_path(st_slot, QSF_NAME_MANIFEST ".corrupt-2"), (const uint8_t *) "new!", 4);
}

/* A FIFO where a regular file is expected must be refused, not opened: a
 * blocking open of a FIFO waits forever for a writer, hanging the open. */
static void fifo_named_like_a_segment_is_refused(void **state) {
    (void) state;
    assert_int_equal(mkfifo(st_path(st_slot, "sf-0000000000000001.sfa"), 0600), 0);
    alarm(10); /* a hang fails the test instead of the whole suite */
    const char *msg = st_open_fail(st_sfdir, QSF_E_IO);
    assert_non_null(strstr(msg, "sf-0000000000000001.sfa: not a regular file"));
    /* the same for the pid file read on lock contention (holder diagnostics) */
    unlink(st_path(st_slot, "sf-0000000000000001.sfa"));
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    unlink(st_path(st_slot, QSF_NAME_LOCK_PID));
    assert_int_equal(mkfifo(st_path(st_slot, QSF_NAME_LOCK_PID), 0600), 0);
    msg = st_open_fail(st_sfdir, QSF_E_LOCKED);
    assert_non_null(strstr(msg, "holder=pid=unknown"));
    qsf_slot_release(&r);
    alarm(0);
}

/* A baseSeq so large that baseSeq + frameCount overflows int64 cannot be a real
 * FSN: it is corrupt like a negative one, never wrapped into a bogus
 * publishedFsn (signed overflow is undefined behaviour besides). */
static void base_seq_near_int64_max_is_corrupt(void **state) {
    (void) state;
    const char *a[] = {"x", "y", "z"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, 0, INT64_MAX - 1, 3, a);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    assert_int_equal(r.report.quarantined_files, 1);
    assert_true(r.published_fsn >= r.acked_fsn);
    qsf_slot_release(&r);
    assert_true(st_exists(st_path(st_slot, "sf-0000000000000001.sfa.corrupt")));
    /* the largest base whose every frame slot still has an FSN is accepted */
    unlink(st_path(st_slot, "sf-initial.sfa"));
    unlink(st_path(st_slot, QSF_NAME_MANIFEST));
    int64_t top = INT64_MAX - (SEG - QSF_SFA_HEADER_SIZE) / QSF_SFA_FRAME_OVERHEAD;
    st_segment_str(st_slot, "sf-0000000000000002.sfa", SEG, 0, top, 3, a);
    st_open_ok(st_sfdir, &r);
    assert_false(r.fresh);
    assert_int_equal(r.published_fsn, top + 2);
    qsf_slot_release(&r);
}

/* A section start so large that start + count wraps 64 bits is as malformed as
 * any start past the 2,000,000-id limit: logged and left to the server, not
 * read as "needs ids nobody has" (which quarantines the whole slot). */
static void delta_start_that_wraps_is_malformed(void **state) {
    (void) state;
    uint8_t p[2][64];
    const uint8_t *pp[2] = {p[0], p[1]};
    uint32_t l[2];
    const uint8_t body[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, /* 2^64-1 */
                            0x02, 0x01, 'a',  0x01, 'b'};
    const uint8_t far[] = {0x80, 0x8D, 0xB7, 0x01, 0x01, 0x01, 'a'}; /* start 3,000,000 */
    st_qwp(p[0], 0x08, 0, 0, NULL);
    memcpy(p[1], p[0], 12);
    memcpy(p[0] + 12, body, sizeof body);
    memcpy(p[1] + 12, far, sizeof far);
    l[0] = 12 + sizeof body;
    l[1] = 12 + sizeof far;
    qsf_put_u32(p[0] + 8, sizeof body);
    qsf_put_u32(p[1] + 8, sizeof far);
    st_segment(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 2, pp, l);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.data_loss); /* both frames alike: malformed, the server judges */
    assert_int_equal(r.segments[0].frame_count, 2);
    assert_int_equal(qsf_symdict_size(&r.symdict), 0);
    qsf_slot_release(&r);
}

/* ---- hard links: a name in the slot must not be another file's ---- */

/* A file outside the slot, hard-linked under a name qsf writes, must never be
 * written through: the open fails naming the file and its link count. */
static void expect_hard_link_refused(const char *dir, const char *name) {
    const char *outside = st_path(st_root, "precious");
    tu_write_file(outside, "keep me", 7);
    unlink(st_path(dir, name)); /* made by an earlier open */
    if (link(outside, st_path(dir, name)) != 0)
        fail_msg("link %s: %s", name, strerror(errno));
    const char *msg = st_open_fail(st_sfdir, QSF_E_IO);
    if (!strstr(msg, name) || !strstr(msg, "2 hard links"))
        fail_msg("%s: unexpected message: %s", name, msg);
    expect_file(outside, (const uint8_t *) "keep me", 7);
    unlink(st_path(dir, name));
    unlink(outside);
}

static void hard_links_are_refused(void **state) {
    (void) state;
    const char *a[] = {"x"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, a);
    st_manifest(st_slot, 1, 0, 0);
    expect_hard_link_refused(st_slot, QSF_NAME_SYMDICT);
    expect_hard_link_refused(st_slot, QSF_NAME_LOCK_PID);
    expect_hard_link_refused(st_slot, QSF_NAME_LOCK);
    expect_hard_link_refused(st_slot, QSF_NAME_WATERMARK);
    char locks[800];
    snprintf(locks, sizeof locks, "%s/.slot-locks", st_sfdir);
    mkdir(locks, 0700);
    expect_hard_link_refused(locks, "default.lock.pid");
    expect_hard_link_refused(locks, "default.lock");
    /* a segment linked elsewhere is refused too, and not stamped or zeroed */
    const char *outside = st_path(st_root, "seg-copy");
    assert_int_equal(link(st_path(st_slot, "sf-0000000000000001.sfa"), outside), 0);
    const char *msg = st_open_fail(st_sfdir, QSF_E_IO);
    assert_non_null(strstr(msg, "sf-0000000000000001.sfa"));
    assert_non_null(strstr(msg, "2 hard links"));
    unlink(outside);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.published_fsn, 0);
    qsf_slot_release(&r);
}

/* ---- debris that must not grow ---- */

/* A never-synced spare comes back after a host crash as an empty or all-zero
 * file: it holds no data and is removed, never renamed .corrupt. */
static void empty_and_zero_segments_are_removed(void **state) {
    (void) state;
    const char *a[] = {"x"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, a);
    st_manifest(st_slot, 1, 0, 0);
    tu_write_file(st_path(st_slot, "sf-0000000000000002.sfa"), "", 0);
    uint8_t *zero = calloc(1, SEG);
    tu_write_file(st_path(st_slot, "sf-0000000000000003.sfa"), zero, SEG);
    free(zero);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.report.debris_removed, 2);
    assert_int_equal(r.report.quarantined_files, 0);
    assert_int_equal(r.next_generation, 4); /* names stay unique */
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, "sf-0000000000000002.sfa")));
    assert_false(st_exists(st_path(st_slot, "sf-0000000000000003.sfa")));
    assert_int_equal(st_count_names(st_slot, "sf-", ".corrupt"), 0);
}

/* No sequence of crashes can make an open fail for lack of names: with every
 * .corrupt name of a file taken, the oldest quarantined files go (logged) and
 * at most 8 are kept. */
static void quarantine_is_capped(void **state) {
    (void) state;
    const char *a[] = {"x"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, a);
    st_manifest(st_slot, 1, 0, 0);
    tu_write_file(st_path(st_slot, "sf-0000000000000009.sfa.corrupt"), "old", 3);
    for (int i = 2; i <= 64; i++) {
        char n[64];
        snprintf(n, sizeof n, "sf-0000000000000009.sfa.corrupt-%d", i);
        tu_write_file(st_path(st_slot, n), "old", 3);
    }
    tu_write_file(st_path(st_slot, "sf-0000000000000009.sfa"), "garbage!", 8);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.report.quarantined_files, 1);
    assert_true(r.report.debris_removed >= 56);
    qsf_slot_release(&r);
    assert_int_equal(st_count_names(st_slot, "sf-", ".corrupt"), 8);
    assert_false(st_exists(st_path(st_slot, "sf-0000000000000009.sfa")));
    /* the newest one is the file just set aside */
    bool found = false;
    for (int i = 1; i <= 64 && !found; i++) {
        char n[64];
        if (i == 1)
            snprintf(n, sizeof n, "sf-0000000000000009.sfa.corrupt");
        else
            snprintf(n, sizeof n, "sf-0000000000000009.sfa.corrupt-%d", i);
        if (st_exists(st_path(st_slot, n)) && st_size(st_path(st_slot, n)) == 8)
            found = true;
    }
    assert_true(found);
}

/* A rewrite interrupted before its rename leaves a temporary file: removed. */
static void stale_rewrite_file_is_removed(void **state) {
    (void) state;
    const char *a[] = {"x"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, a);
    st_manifest(st_slot, 1, 0, 0);
    st_segment_str(st_slot, "sf-0000000000000001.sfa.tmp", SEG, F, 0, 1, a);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.report.debris_removed, 1);
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, "sf-0000000000000001.sfa.tmp")));
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(truncated_header),
        T(fifo_named_like_a_segment_is_refused),
        T(quarantine_never_replaces_an_earlier_one),
        T(huge_and_negative_frame_lengths),
        T(negative_base_seq_is_corrupt),
        T(base_seq_near_int64_max_is_corrupt),
        T(overlapping_segments_fail),
        T(unknown_version_or_flags_leave_files_untouched),
        T(symlinked_segment_is_refused),
        T(symlinked_dictionary_is_not_followed),
        T(symlinked_slot_directory_is_refused),
        T(directory_named_like_a_segment),
        T(zero_filled_files),
        T(malformed_delta_sections),
        T(delta_start_that_wraps_is_malformed),
        T(hard_links_are_refused),
        T(empty_and_zero_segments_are_removed),
        T(quarantine_is_capped),
        T(stale_rewrite_file_is_removed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
