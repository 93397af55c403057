/* Planned rotation (lib/sf/rotation_plan.c): the spare thread writes and syncs the
 * spare's header ahead of need with the FSN the active segment is expected to
 * end at, and the producer switches at that FSN. Checked through the slot's
 * files: which baseSeq each segment got and how many frames it holds. */
#include "ring_testutil.h"

#include "bytes.h"
#include "sf/segfmt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>

#define SEG   4096
#define FRAME 200 /* 208 bytes with the frame header: 19 fit in a segment */

static qsf_ring_opts opts(void) {
    qsf_ring_opts o = {0};
    o.sf_dir = rt_dir;
    o.sender_id = "t";
    o.segment_bytes = SEG;
    o.total_bytes = 1 << 20;
    o.durability = QSF_DUR_MEMORY;
    o.sync_interval_ms = 1000;
    o.append_deadline_ms = 10000;
    return o;
}

static void append_sized(qsf_ring *r, int64_t from, int n, size_t len) {
    uint8_t buf[1024];
    for (int64_t f = from; f < from + n; f++) {
        memset(buf, (int) (f & 0xff), len);
        memcpy(buf, &f, sizeof f);
        int64_t got;
        qsf_errinfo e;
        if (qsf_ring_append(r, buf, len, &got, &e) != QSF_OK)
            fail_msg("append %" PRId64 ": %s", f, e.msg);
        assert_int_equal(got, f);
    }
}

/* Frames in the slot's segment whose header says baseSeq == base (read from
 * the file, as recovery would: the page cache holds what the mapping wrote),
 * or -1 if no segment has that baseSeq. A spare may carry the same
 * provisional baseSeq as a segment with frames; the most frames win. */
static int frames_in_segment(int64_t base) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/t", rt_dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!qsf_seg_name_is_candidate(de->d_name))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        uint8_t seg[SEG];
        int fd = open(p, O_RDONLY);
        ssize_t got = fd >= 0 ? pread(fd, seg, sizeof seg, 0) : -1;
        if (fd >= 0)
            close(fd);
        /* A spare the spare thread is creating right now (empty until it is
         * preallocated) or a segment it has just trimmed: not one to count. */
        qsf_sfa_header h;
        if (got != (ssize_t) sizeof seg)
            continue;
        (void) qsf_sfa_header_decode(seg, &h); /* the stored baseSeq, whatever the verdict */
        if (h.base_seq != base)
            continue;
        int frames = 0;
        for (size_t off = QSF_SFA_HEADER_SIZE; off + QSF_SFA_FRAME_OVERHEAD <= SEG; frames++) {
            uint32_t len = qsf_sfa_frame_len(seg + off);
            if (len == 0 || off + QSF_SFA_FRAME_OVERHEAD + len > SEG)
                break;
            off += QSF_SFA_FRAME_OVERHEAD + len;
        }
        if (frames > found)
            found = frames;
    }
    closedir(d);
    return found;
}

/* Each frame carries its FSN in its first 8 bytes. */
static void check_fsn_inside(int64_t fsn, const uint8_t *p, uint32_t len) {
    int64_t inside;
    assert_true(len >= sizeof inside);
    memcpy(&inside, p, sizeof inside);
    assert_int_equal(inside, fsn);
}

static void read_in_order(qsf_ring *r, int64_t from, int64_t to) {
    assert_int_equal(rt_read_all(r, from, check_fsn_inside), to + 1 - from);
}

/* Uniform frames: after the first rotation (19 frames of 208 bytes) the spare
 * is planned for FSN 19 + 18 (the guess keeps 1/32 of the room as slack), its
 * header reaches the file before the producer gets there, and the producer
 * switches at FSN 37 although a 19th frame would still fit. */
static void uniform_frames_rotate_at_the_planned_fsn(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    qsf_ring *r = rt_open(&o);
    append_sized(r, 0, 20, FRAME); /* 19 in sf-initial.sfa, FSN 19 starts the next */
    assert_int_equal(frames_in_segment(0), 19);
    RT_WAIT_UNTIL(qsf_ring_planned_fsn(r) == 37);
    assert_int_equal(frames_in_segment(37), 0); /* the planned spare, header on file */

    append_sized(r, 20, 18, FRAME);              /* FSNs 20..37 */
    assert_int_equal(frames_in_segment(19), 18); /* room for one more, left unused */
    assert_int_equal(frames_in_segment(37), 1);
    /* the plan for 37 is used up; the spare thread may already have planned
     * the next spare (FSN 55), at any moment from the rotation on */
    int64_t next = qsf_ring_planned_fsn(r);
    if (next != -1 && next <= 37)
        fail_msg("the plan for FSN 37 was not used up: planned FSN %" PRId64, next);
    read_in_order(r, 0, 37);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);

    qsf_recovery_report rep;
    r = NULL;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, NULL), QSF_OK);
    assert_int_equal(rep.published_fsn, 37);
    read_in_order(r, 0, 37);
    append_sized(r, 38, 40, FRAME);
    read_in_order(r, 0, 77);
    qsf_ring_acknowledge(r, 77);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* Frames that grow after the plan fill the segment before the planned FSN:
 * rotation rewrites and syncs the spare's header as usual, and nothing is
 * lost or reordered, also across a reopen. */
static void larger_frames_fall_back_to_an_ordinary_rotation(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    qsf_ring *r = rt_open(&o);
    append_sized(r, 0, 20, FRAME);
    RT_WAIT_UNTIL(qsf_ring_planned_fsn(r) == 37);

    append_sized(r, 20, 12, 3 * FRAME); /* 6 fit after FSN 19: the segment fills at 26 */
    assert_int_equal(frames_in_segment(19), 7);
    assert_int_equal(frames_in_segment(37), -1); /* rebased to 26 */
    assert_true(frames_in_segment(26) >= 1);
    read_in_order(r, 0, 31);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);

    r = NULL;
    assert_int_equal(qsf_ring_open(&o, &r, NULL, NULL), QSF_OK);
    read_in_order(r, 0, 31);
    qsf_ring_acknowledge(r, 31);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* ---- failures and the cases a plan does not fit ---- */

static _Atomic int manifest_fsync_failures;

/* Fails the first fsync of sf-manifest.bin, as a disk with a write error would. */
static int manifest_fsync_fails_once(int fd) {
    if (tu_fd_path_ends_with(fd, QSF_NAME_MANIFEST) &&
        atomic_fetch_add(&manifest_fsync_failures, 1) == 0) {
        errno = EIO;
        return -1;
    }
    return fsync(fd);
}

/* The manifest's record naming the planned spare is written but its fsync
 * fails: the manifest may already say the spare is active, so the frame goes
 * into the spare once a retry succeeds, never into the old segment (which
 * would leave a slot that cannot be reopened: an FSN gap). */
static void failed_manifest_sync_keeps_the_frame_out_of_the_old_segment(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    qsf_ring *r = rt_open(&o);
    append_sized(r, 0, 20, FRAME);
    RT_WAIT_UNTIL(qsf_ring_planned_fsn(r) == 37);
    atomic_store(&manifest_fsync_failures, 0);
    QSF_OS->fsync = manifest_fsync_fails_once;
    append_sized(r, 20, 18, FRAME); /* FSN 37: the rotation is retried */
    qsf_os_reset();
    assert_true(atomic_load(&manifest_fsync_failures) >= 2);
    assert_int_equal(frames_in_segment(19), 18);
    assert_int_equal(frames_in_segment(37), 1);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK); /* not drained: kept */

    qsf_recovery_report rep;
    r = NULL;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, NULL), QSF_OK);
    assert_int_equal(rep.published_fsn, 37);
    read_in_order(r, 0, 37);
    qsf_ring_acknowledge(r, 37);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

static pthread_t producer_thread;
static _Atomic int spare_thread_syncing;

/* The spare thread's segment syncs take 100 ms (the producer's do not). */
static int slow_spare_thread_segment_fdatasync(int fd) {
    if (tu_fd_path_ends_with(fd, ".sfa") && !pthread_equal(pthread_self(), producer_thread)) {
        atomic_store(&spare_thread_syncing, 1);
        usleep(100000);
    }
    return fdatasync(fd);
}

/* sf_append_deadline_millis=0 fails at once when the ring is full. A producer
 * that reaches the end of its segment while the spare thread is syncing the
 * spare's planned header is not facing a full ring: it waits for that sync,
 * which replaces the one its rotation would otherwise run. */
static void zero_deadline_waits_for_the_planned_header_sync(void **state) {
    (void) state;
    producer_thread = pthread_self();
    qsf_ring_opts o = opts();
    o.append_deadline_ms = 0;
    qsf_ring *r = rt_open(&o);
    append_sized(r, 0, 19, FRAME);                     /* sf-initial.sfa is full */
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) >= 2 * SEG); /* and a spare exists */
    atomic_store(&spare_thread_syncing, 0);
    QSF_OS->fdatasync = slow_spare_thread_segment_fdatasync;
    append_sized(r, 19, 1, FRAME); /* rotates; the spare thread then plans the next spare */
    RT_WAIT_UNTIL(atomic_load(&spare_thread_syncing));
    append_sized(r, 20, 19, FRAME); /* through the end of the segment: FSN 38 rotates */
    qsf_os_reset();
    read_in_order(r, 0, 38);
    qsf_ring_acknowledge(r, 38);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* With periodic durability the rotation waits for the segment's checkpoint
 * anyway: nothing is planned. */
static void periodic_durability_plans_nothing(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    o.durability = QSF_DUR_PERIODIC;
    o.sync_interval_ms = 5;
    qsf_ring *r = rt_open(&o);
    for (int k = 0; k < 4; k++) {
        append_sized(r, k * 20, 20, FRAME);
        usleep(20000);
        assert_int_equal(qsf_ring_planned_fsn(r), -1);
    }
    read_in_order(r, 0, 79);
    qsf_ring_acknowledge(r, 79);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* Frames much smaller than planned reach the planned FSN with most of the
 * segment empty: the plan is dropped and the segment fills up as usual. */
static void smaller_frames_drop_the_plan(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    qsf_ring *r = rt_open(&o);
    append_sized(r, 0, 20, FRAME);
    RT_WAIT_UNTIL(qsf_ring_planned_fsn(r) == 37);
    append_sized(r, 20, 30, 8); /* FSNs 20..49, 16 bytes each */
    assert_int_equal(qsf_ring_planned_fsn(r), -1);
    assert_int_equal(frames_in_segment(19), 31);
    assert_int_equal(frames_in_segment(37), 0); /* the spare, still empty */
    read_in_order(r, 0, 49);
    qsf_ring_acknowledge(r, 49);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(uniform_frames_rotate_at_the_planned_fsn, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(larger_frames_fall_back_to_an_ordinary_rotation, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(failed_manifest_sync_keeps_the_frame_out_of_the_old_segment,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(zero_deadline_waits_for_the_planned_header_sync, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(periodic_durability_plans_nothing, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(smaller_frames_drop_the_plan, rt_setup, rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
