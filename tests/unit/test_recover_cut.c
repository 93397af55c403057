/* An interrupted flush (frames after the last committing frame, above the
 * acknowledged watermark) is cut at recovery, durably, before the ring is
 * handed over: so frames appended later can never commit it (docs/FORMAT.md,
 * "Cutting an interrupted flush"). Across segments the manifest's activeBase
 * moves back. */
#include "testutil.h"

#include "sftest.h"

#include "os/os.h"
#include "sf/recover.h"
#include "sf/ring.h"
#include "sf/segfmt.h"
#include "sf/sidefile.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEG 4096
#define F   QSF_SFA_FLAG_MANIFEST_REQUIRED

/* Segment `name` at `base` with frames of kinds ('C' commit, 'D' defer), each
 * of table "t" with 5 rows. */
static void seg(const char *name, int64_t base, const char *kinds) {
    st_segment_flushes(name, SEG, base, kinds, 5);
}

static int valid_frames(const char *name) {
    st_frames f;
    st_read_frames(st_path(st_slot, name), &f);
    st_expect_clean_after(st_path(st_slot, name), &f);
    int n = f.n;
    st_frames_free(&f);
    return n;
}

static void expect_manifest(int64_t head, int64_t active) {
    st_expect_manifest(0, head, active);
}

static void interrupted_flush_in_one_segment_is_cut(void **state) {
    (void) state;
    seg(st_gen(1), 0, "CCDD");
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.published_fsn, 1);
    assert_int_equal(r.commit_boundary_fsn, 1);
    assert_int_equal(r.report.aborted_frames_cut, 2);
    assert_int_equal(r.report.aborted_from_fsn, 2);
    assert_int_equal(r.report.aborted_to_fsn, 3);
    assert_int_equal(r.report.aborted_rows_cut, 10);
    assert_int_equal(r.segments[0].frame_count, 2);
    assert_int_equal(r.n_losses, 0);
    qsf_slot_release(&r);
    assert_int_equal(valid_frames(st_gen(1)), 2);
    st_open_ok(st_sfdir, &r); /* nothing left to cut */
    assert_int_equal(r.report.aborted_frames_cut, 0);
    assert_int_equal(r.report.aborted_from_fsn, -1);
    assert_int_equal(r.commit_boundary_fsn, r.published_fsn);
    qsf_slot_release(&r);
}

/* The observed defect: a later sender appended a committing frame after the
 * old partial flush, and the next recovery delivered the old flush with it. */
static void new_frames_never_commit_an_old_partial_flush(void **state) {
    (void) state;
    seg(st_gen(1), 0, "CDD");
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    uint64_t append = r.segments[0].last_good;
    qsf_slot_release(&r);
    /* what the next sender appends: one committing frame at the append offset */
    uint8_t p[48], fr[56];
    uint32_t l = (uint32_t) st_qwp_table(p, 0, "t", 5, 40, 'z');
    qsf_sfa_frame_encode(fr, p, l);
    st_patch(st_path(st_slot, st_gen(1)), append, fr, 8 + l);
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.published_fsn, 1); /* FSN 0 and the new frame: never FSN 1..2 */
    assert_int_equal(r.commit_boundary_fsn, 1);
    assert_int_equal(r.report.aborted_frames_cut, 0);
    qsf_slot_release(&r);
    assert_int_equal(valid_frames(st_gen(1)), 2);
}

static void acknowledged_deferred_frames_stay(void **state) {
    (void) state;
    seg(st_gen(1), 0, "CDDD");
    st_manifest(st_slot, 1, 0, 0);
    st_watermark(st_slot, 1, 2); /* the server force-committed and acknowledged FSN 1..2 */
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.report.aborted_frames_cut, 1);
    assert_int_equal(r.report.aborted_from_fsn, 3);
    assert_int_equal(r.published_fsn, 2);
    assert_int_equal(r.commit_boundary_fsn, 2);
    qsf_slot_release(&r);
}

/* The interrupted flush starts in the sealed segment: the active segment's
 * frames are zeroed, then activeBase moves back, then the sealed tail is cut. */
static void interrupted_flush_across_segments_moves_active_back(void **state) {
    (void) state;
    seg(st_gen(1), 0, "CCD");
    seg(st_gen(2), 3, "DD");
    seg(st_gen(3), 5, ""); /* a spare */
    st_manifest(st_slot, 2, 0, 3);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.segment_count, 1);
    assert_string_equal(r.segments[0].name, st_gen(1));
    assert_true(r.segments[0].active);
    assert_int_equal(r.published_fsn, 1);
    assert_int_equal(r.commit_boundary_fsn, 1);
    assert_int_equal(r.report.aborted_frames_cut, 3);
    assert_int_equal(r.report.aborted_from_fsn, 2);
    assert_int_equal(r.report.aborted_to_fsn, 4);
    assert_int_equal(r.report.aborted_rows_cut, 15);
    qsf_slot_release(&r);
    expect_manifest(0, 0);
    assert_int_equal(valid_frames(st_gen(1)), 2);
    assert_false(st_exists(st_path(st_slot, st_gen(2)))); /* a clean spare after the cut */
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.published_fsn, 1);
    qsf_slot_release(&r);
}

/* What the runtime gets from qsf_ring_open: the cut and the losses in the
 * report, and a ring that goes on from the last committing frame. */
static void ring_open_reports_the_cut_and_the_losses(void **state) {
    (void) state;
    seg(st_gen(1), 0, "CCCCCC");
    seg(st_gen(2), 6, "CDD");
    st_manifest(st_slot, 2, 0, 6);
    st_patch(st_path(st_slot, st_gen(1)), QSF_SFA_HEADER_SIZE + 48 + 30, "!", 1); /* FSN 1 */
    qsf_ring_opts o = {.sf_dir = st_sfdir,
                       .sender_id = "default",
                       .segment_bytes = SEG,
                       .total_bytes = 1 << 20,
                       .durability = QSF_DUR_MEMORY};
    qsf_ring *ring;
    qsf_recovery_report rep;
    qsf_errinfo e;
    assert_int_equal(qsf_ring_open(&o, &ring, &rep, &e), QSF_OK);
    assert_int_equal(rep.published_fsn, 6);
    assert_int_equal(rep.commit_boundary_fsn, 6);
    assert_int_equal(rep.aborted_frames_cut, 2);
    assert_int_equal(rep.aborted_from_fsn, 7);
    assert_int_equal(rep.aborted_to_fsn, 8);
    assert_int_equal(rep.aborted_rows_cut, 10);
    assert_int_equal(rep.losses, 1);
    assert_int_equal(rep.frames_lost, 2); /* FSN 1 destroyed, FSN 2 given up with it */
    assert_int_equal(rep.quarantined_files, 1);
    assert_false(rep.manifest_repaired);
    assert_int_equal(qsf_ring_published_fsn(ring), 6);
    int64_t fsn;
    uint8_t p[48];
    size_t l = st_qwp_table(p, 0, "t", 5, 40, 'q');
    assert_int_equal(qsf_ring_append(ring, p, l, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, 7); /* where the cut frames were */
    assert_int_equal(qsf_ring_close(ring, &e), QSF_OK);
}

/* ---- a crash at each step of the cut leaves a valid slot ---- */

static int kill_on, hits;
static const char *kill_file;
static int kill_fdatasync(int fd) {
    int rc = fdatasync(fd);
    if (tu_fd_path_ends_with(fd, kill_file) && ++hits == kill_on)
        raise(SIGKILL);
    return rc;
}
static int kill_fsync(int fd) {
    int rc = fsync(fd);
    if (tu_fd_path_ends_with(fd, kill_file) && ++hits == kill_on)
        raise(SIGKILL);
    return rc;
}

/* Opens in a child that dies right after the n-th sync of a file named
 * `file` (n = 1: the first barrier of the cut on it). */
static void open_killed_after_sync(const char *file, bool fsync_call, int n) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        kill_file = file;
        kill_on = n;
        if (fsync_call)
            QSF_OS->fsync = kill_fsync;
        else
            QSF_OS->fdatasync = kill_fdatasync;
        qsf_slot_recovered r;
        qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, NULL);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
}

static void crash_at_each_step_of_the_cut(void **state) {
    (void) state;
    struct {
        const char *file;
        bool fsync_call;
        const char *after;
    } steps[] = {
        {"sf-0000000000000002.sfa", false, "zeroing the active segment"},
        {QSF_NAME_MANIFEST, true, "moving activeBase back"},
        {"sf-0000000000000001.sfa", false, "cutting the sealed tail"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        seg(st_gen(1), 0, "CCD");
        seg(st_gen(2), 3, "DD");
        st_manifest(st_slot, 2, 0, 3);
        open_killed_after_sync(steps[i].file, steps[i].fsync_call, 1);
        qsf_slot_recovered r;
        qsf_errinfo e;
        int rc = qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e);
        if (rc != QSF_OK)
            fail_msg("after a crash %s: open failed: %s", steps[i].after, e.msg);
        assert_int_equal(r.published_fsn, 1);
        assert_int_equal(r.commit_boundary_fsn, 1);
        assert_int_equal(r.segment_count, 1);
        qsf_slot_release(&r);
        expect_manifest(0, 0);
        assert_int_equal(valid_frames(st_gen(1)), 2);
        assert_false(st_exists(st_path(st_slot, st_gen(2))));
    }
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(interrupted_flush_in_one_segment_is_cut),
        T(new_frames_never_commit_an_old_partial_flush),
        T(acknowledged_deferred_frames_stay),
        T(interrupted_flush_across_segments_moves_active_back),
        T(ring_open_reports_the_cut_and_the_losses),
        T(crash_at_each_step_of_the_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
