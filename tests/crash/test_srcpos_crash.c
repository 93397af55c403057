/* Source positions across crashes (docs/DURABILITY.md §9a). A child publishes
 * flushes of 1-4 frames; four in five carry the position "f<k>s<pid>x" (k
 * numbers the flush), the name of the table of each of their frames too. It
 * is SIGKILLed at a numbered fault point (11: the position written, before
 * the committing frame; 2: a frame written whole; 12: the barrier done, the
 * flush not yet published) or at a random moment, five times on the same slot. After each
 * kill the parent opens the slot and checks the pair: the frame at the
 * position's FSN belongs to the flush the position names, and no flush after
 * it up to the last FSN recovery kept carried a position. Host loss (append
 * mode): the slot is replaced by what was synced, and the same must hold.
 * Host loss with write-back (memory and periodic mode): each unsynced page
 * kept or lost at random; the position may be older, never of a flush whose
 * frames did not survive. QSF_TEST_ONLY=<case> runs one case. */
#include "testutil.h"

#include "shadow.h"
#include "sftest.h"

#include "os/os.h"
#include "sf/ring.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FLUSHES 120
#define SEG     4096

static char dir[256], slot[512], shadow[512];

static int setup(void **state) {
    (void) state;
    tu_mkdtemp(dir, sizeof dir);
    snprintf(slot, sizeof slot, "%s/p", dir);
    snprintf(shadow, sizeof shadow, "%s/shadow", dir);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    tu_rmtree(dir);
    return 0;
}

static qsf_ring_opts opts(int durability) {
    qsf_ring_opts o = {0};
    o.sf_dir = dir;
    o.sender_id = "p";
    o.segment_bytes = SEG;
    o.total_bytes = 64 << 20; /* nothing is acknowledged: sessions pile up */
    o.durability = durability;
    o.sync_interval_ms = 2;
    o.append_deadline_ms = 5000;
    return o;
}

/* ---- the child ---- */

/* One flush of `frames` frames of table `name`, with a position if pos; with
 * !commits its last frame defers too, so recovery cuts the whole flush. */
static void flush_of(qsf_ring *r, const char *name, int frames, const char *pos, bool commits) {
    uint8_t m[128];
    if (qsf_ring_txn_begin(r, NULL) != QSF_OK)
        _exit(3);
    if (pos && qsf_ring_srcpos_stage(r, pos, strlen(pos), NULL) != QSF_OK) /* as the sender */
        _exit(5);
    for (int i = 0; i < frames; i++) {
        uint8_t flags = i == frames - 1 && commits ? 0x00 : 0x01;
        size_t n = st_qwp_table(m, flags, name, 1, 60, pos ? 'P' : 'N');
        if (qsf_ring_txn_append(r, m, n, NULL, NULL) != QSF_OK)
            _exit(4);
    }
    if (qsf_ring_txn_commit(r, NULL) != QSF_OK)
        _exit(6);
}

/* One flush of 1-4 frames; four in five carry their position. The name
 * (table and position) holds the child's pid, so that a position left by a
 * flush that was cut never matches the frames of a later session that reuse
 * its FSNs; the filler says whether the flush carried it. */
static void child_flush(qsf_ring *r, int64_t k) {
    char name[48];
    snprintf(name, sizeof name, "f%" PRId64 "s%dx", k, (int) getpid());
    int64_t salt = k + getpid();
    flush_of(r, name, 1 + (int) (salt % 4), salt % 5 != 4 ? name : NULL, true);
}

/* Flush numbers go on from the position found at open, so a position and
 * the frames it names always agree, however many sessions came before. */
static int64_t next_flush(qsf_ring *r) {
    char buf[64] = {0};
    size_t len = 0;
    int64_t fsn;
    if (qsf_ring_source_position(r, false, buf, sizeof buf - 1, &len, &fsn, NULL) != QSF_OK)
        _exit(7);
    return len ? strtoll(buf + 1, NULL, 10) + 1 : 0;
}

static void child_run(int durability, bool host_loss, int point, uint64_t nth) {
    if (host_loss) {
        shadow_init(slot, shadow);
        QSF_OS->fsync = shadow_fsync;
        QSF_OS->fdatasync = shadow_fdatasync;
        QSF_OS->renameat = shadow_renameat;
    }
    qsf_ring_opts o = opts(durability);
    qsf_ring *r;
    if (qsf_ring_open(&o, &r, NULL, NULL) != QSF_OK)
        _exit(2);
    if (point)
        qsf_fault_arm_here(point, nth, QSF_FA_KILL);
    int64_t k0 = next_flush(r);
    for (int64_t k = k0; k < k0 + FLUSHES; k++)
        child_flush(r, k);
    _exit(0); /* not reached when a fault point kills it; a random kill may come later */
}

static void run_child(int durability, bool host_loss, int point, uint64_t nth, unsigned kill_us) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_run(durability, host_loss, point, nth);
    if (kill_us) {
        usleep(kill_us); /* a random moment: the check does not depend on it */
        kill(pid, SIGKILL);
    }
    int status;
    waitpid(pid, &status, 0);
    if (point && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
        fail_msg("the child did not reach fault point %d (hit %" PRIu64 "): status %d", point, nth,
                 status);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        fail_msg("child failed with status %d", WEXITSTATUS(status));
}

/* ---- the parent ---- */

static bool frame_names(const uint8_t *p, uint32_t len, const char *name) {
    size_t n = strlen(name);
    for (uint32_t i = 0; i + n <= len; i++)
        if (memcmp(p + i, name, n) == 0)
            return true;
    return false;
}

/* The frames after the position's FSN up to publishedFsn are all of flushes
 * that carried no position (filler 'N'). */
static void check_none_after(qsf_ring *r, int64_t from, int64_t pub, const char *what) {
    if (from > pub)
        return;
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, from), 0);
    const uint8_t *p;
    uint32_t n;
    int64_t f;
    while (qsf_ring_cursor_next(r, &c, &p, &n, &f) == 1 && f <= pub)
        if (p[n - 1] != 'N')
            fail_msg("%s: the frame at FSN %" PRId64 " is of a later flush with a position", what,
                     f);
    qsf_ring_cursor_release(r, &c);
}

/* strict: no later surviving flush carried a position (every crash but a
 * host loss in memory or periodic mode, docs/DURABILITY.md §9a). */
static void check_pair_in(int durability, bool strict, const char *what) {
    qsf_ring_opts o = opts(durability);
    qsf_ring *r;
    qsf_errinfo e;
    if (qsf_ring_open(&o, &r, NULL, &e) != QSF_OK)
        fail_msg("%s: open failed: %s", what, e.msg);
    int64_t pub = qsf_ring_published_fsn(r), fsn;
    char pos[64] = {0};
    size_t len;
    assert_int_equal(qsf_ring_source_position(r, false, pos, sizeof pos - 1, &len, &fsn, NULL), 0);
    if (fsn > pub)
        fail_msg("%s: the position %s is at FSN %" PRId64 ", beyond the last flush kept (%" PRId64
                 ")",
                 what, pos, fsn, pub);
    if (len > 0) {
        qsf_ring_cursor c = {0};
        assert_int_equal(qsf_ring_cursor_seek(r, &c, fsn), 0);
        const uint8_t *p;
        uint32_t n;
        int64_t f;
        assert_int_equal(qsf_ring_cursor_next(r, &c, &p, &n, &f), 1);
        assert_int_equal(f, fsn);
        if (!frame_names(p, n, pos) || p[n - 1] != 'P')
            fail_msg("%s: the frame at FSN %" PRId64 " is not of flush %s (%s)", what, fsn, pos,
                     qsf_ring_given_up(r, fsn) ? "recovery gave that FSN up" : "another frame");
        qsf_ring_cursor_release(r, &c);
    }
    if (strict)
        check_none_after(r, fsn + 1, pub, what);
    assert_int_equal(qsf_ring_close(r, NULL), 0);
}

static void check_pair(int durability, const char *what) {
    check_pair_in(durability, true, what);
}

/* Five kills in a row on the same slot at each point and hit: a record
 * whose flush was cut must be dropped before its FSNs are used again. Point
 * 2 (a frame complete, not yet published) kills some flushes right after
 * their committing frame: recovery keeps them, so their position must
 * already be in the log. */
static void kill_at_points(int durability, bool host_loss, const char *mode) {
    static const int points[] = {QSF_FP_SRCPOS_WRITTEN, QSF_FP_FLUSH_SYNCED,
                                 QSF_FP_FRAME_CRC_WRITTEN};
    static const uint64_t nths[] = {1, 3, 17};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 3; j++) {
            tu_rmtree(slot);
            tu_rmtree(shadow); /* after a restore the slot is its shadow: kept across rounds */
            for (int round = 0; round < 5; round++) {
                char what[128];
                snprintf(what, sizeof what, "%s: point %d, hit %" PRIu64 ", round %d", mode,
                         points[i], nths[j], round);
                run_child(durability, host_loss, points[i], nths[j] + (uint64_t) round, 0);
                if (host_loss) {
                    shadow_init(slot, shadow);
                    shadow_restore();
                }
                check_pair(durability, what);
            }
        }
    }
}

static void kill_between_position_and_frames_memory(void **state) {
    (void) state;
    kill_at_points(QSF_DUR_MEMORY, false, "memory");
}

static void kill_between_position_and_frames_append(void **state) {
    (void) state;
    kill_at_points(QSF_DUR_APPEND, false, "append");
}

static void host_loss_between_position_and_frames_append(void **state) {
    (void) state;
    kill_at_points(QSF_DUR_APPEND, true, "append, host loss");
}

static void kill_at_random_moments(void **state) {
    (void) state;
    unsigned seed = 4321;
    for (int i = 0; i < 16; i++) {
        char what[96];
        unsigned us = 200 + (unsigned) rand_r(&seed) % 20000;
        snprintf(what, sizeof what, "random kill after %u us, round %d", us, i);
        if (i % 4 == 0)
            tu_rmtree(slot);
        run_child(i % 2 ? QSF_DUR_APPEND : QSF_DUR_MEMORY, false, 0, 0, us);
        check_pair(i % 2 ? QSF_DUR_APPEND : QSF_DUR_MEMORY, what);
    }
}

/* A host loss in memory and periodic mode, with each unsynced page or block
 * of every file kept or lost at random (as when the kernel had written some
 * back): the position may be older than the last surviving flush, never
 * ahead of the frames, and always the one its FSN's flush carried. The child
 * dies at the n-th frame written (not at a moment: on a loaded machine that
 * would often come before the first checkpoint), so every trial has written
 * between 20 and 300 frames, some of them synced by checkpoints. Salvage
 * then often numbers the frames after a lost page with an upper bound
 * (docs/FORMAT.md §6.15), and a position whose record survived while its
 * committing frame did not finds another frame, or a placeholder, at its
 * FSN: it must not count. */
static void host_loss_with_writeback(int durability, const char *mode) {
    unsigned seed = 77;
    for (int i = 0; i < 16; i++) {
        char what[128];
        uint64_t nth = 20 + (uint64_t) (rand_r(&seed) % 280);
        size_t unit = i % 2 ? 512 : 4096;
        snprintf(what, sizeof what, "%s: host loss at frame %" PRIu64 ", %zu-byte pieces, trial %d",
                 mode, nth, unit, i);
        tu_rmtree(slot);
        tu_rmtree(shadow);
        run_child(durability, true, QSF_FP_FRAME_CRC_WRITTEN, nth, 0);
        shadow_init(slot, shadow);
        shadow_restore_mixed(unit, 50, &seed);
        check_pair_in(durability, false, what);
    }
}

static void host_loss_with_writeback_memory(void **state) {
    (void) state;
    host_loss_with_writeback(QSF_DUR_MEMORY, "memory");
}

static void host_loss_with_writeback_periodic(void **state) {
    (void) state;
    host_loss_with_writeback(QSF_DUR_PERIODIC, "periodic");
}

/* First session: "a" (FSN 0) with its position, then "b" (FSN 1..3) killed
 * after its position was written; its frames all defer, so that recovery
 * cuts them, as when a host loss took its frames but not its position.
 * Second session: "c" (FSN 1..4) without a position. The position must stay
 * "a": the record of "b" (FSN 3) was dropped at the second open, before "c"
 * reused its FSNs. */
static void stale_child(int session) {
    qsf_ring_opts o = opts(QSF_DUR_MEMORY);
    qsf_ring *r;
    if (qsf_ring_open(&o, &r, NULL, NULL) != QSF_OK)
        _exit(2);
    if (session == 0) {
        flush_of(r, "a", 1, "a", true);
        qsf_fault_arm_here(QSF_FP_SRCPOS_WRITTEN, 1, QSF_FA_KILL);
        flush_of(r, "b", 3, "b", false);
    } else {
        flush_of(r, "c", 4, NULL, true);
        qsf_ring_close(r, NULL);
    }
    _exit(0);
}

static void position_of_a_cut_flush_never_matches_later_frames(void **state) {
    (void) state;
    for (int session = 0; session < 2; session++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            stale_child(session);
        int status;
        waitpid(pid, &status, 0);
        if (session == 0 && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            fail_msg("the first session did not reach fault point %d: status %d",
                     QSF_FP_SRCPOS_WRITTEN, status);
    }
    qsf_ring_opts o = opts(QSF_DUR_MEMORY);
    qsf_ring *r;
    assert_int_equal(qsf_ring_open(&o, &r, NULL, NULL), 0);
    assert_int_equal(qsf_ring_published_fsn(r), 4);
    char pos[8] = {0};
    size_t len;
    int64_t fsn;
    assert_int_equal(qsf_ring_source_position(r, false, pos, sizeof pos, &len, &fsn, NULL), 0);
    assert_int_equal(len, 1);
    assert_int_equal(fsn, 0);
    assert_memory_equal(pos, "a", 1);
    assert_int_equal(qsf_ring_close(r, NULL), 0);
    check_pair(QSF_DUR_MEMORY, "after the reuse of a cut flush's FSNs");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(kill_between_position_and_frames_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(kill_between_position_and_frames_append, setup, teardown),
        cmocka_unit_test_setup_teardown(host_loss_between_position_and_frames_append, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(kill_at_random_moments, setup, teardown),
        cmocka_unit_test_setup_teardown(host_loss_with_writeback_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(position_of_a_cut_flush_never_matches_later_frames, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(host_loss_with_writeback_periodic, setup, teardown),
    };
    if (getenv("QSF_TEST_ONLY")) /* one case, e.g. to run it in a loop */
        cmocka_set_test_filter(getenv("QSF_TEST_ONLY"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
