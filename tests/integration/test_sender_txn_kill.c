/* transaction=on against a process killed at every step of a transaction
 * (docs/DURABILITY.md §16): while staging (each frame's payload and CRC
 * written), while the committing frame is written, after the commit before
 * any acknowledgement, and while an abort undoes its rotations; then several
 * senders in a row on the slot. Each transaction reaches the sink all at once
 * or not at all, once, and its symbols read back as they were written.
 *
 * Every wait is on an event (an acknowledgement, a line or the end of the
 * child's report pipe); the timeouts are hang guards, far beyond any step on
 * a loaded machine, and a failure names what was awaited. */
#include "itest.h"

#include "os/os.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef QSF_FAULT_INJECTION

#define FAST   "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"
#define T2_KEY 1000000 /* keys of the transaction the child may die in */
#define T2_N   400     /* its rows: 8 staged frames and the committing one */
/* A hang, not a slow machine: no acknowledgement, close or report of the
 * child for this long. */
#define HANG_MS 120000
#define STR(x)  #x
#define XSTR(x) STR(x)
/* argv[1] of this program run as the child */
#define CHILD_ARG "--txn-kill-child"

/* Row i: k = i, sym = a symbol only row i's transaction uses (so an abort
 * leaves dictionary entries behind that a later transaction reuses), blob. */
static int add_rows(qsf_sender *s, int64_t from, int64_t to, qsf_errinfo *e) {
    int rc = QSF_OK;
    for (int64_t i = from; i < to && rc == QSF_OK; i++) {
        char sym[32];
        snprintf(sym, sizeof sym, "s%" PRId64, i % 1000000 / 50);
        rc = it_add_row(s, "t", i, sym, 300, e);
    }
    return rc;
}

/* close_flush_timeout_millis is a bound in all, not a no-progress one: a
 * restart's close delivers T2 when the child committed it. */
static void conf_for(char *conf, size_t cap, qsink *sink, const char *extra) {
    char all[900];
    snprintf(all, sizeof all,
             "sf_dir=%s;sender_id=kill;sf_max_segment_bytes=32k;transaction=on;"
             "auto_flush_rows=50;close_flush_timeout_millis=" XSTR(HANG_MS) ";" FAST "%s",
             it_dir, extra ? extra : "");
    it_conf(conf, cap, qsink_port(sink), all);
}

/* Waits for the acknowledgement of fsn (qsf_wait wakes on each ack). */
static void wait_acked(qsf_sender *s, int64_t fsn, const char *what) {
    qsf_errinfo e;
    int rc = qsf_wait(s, fsn, QSF_WAIT_OK, HANG_MS, &e);
    if (rc != QSF_OK)
        fail_msg("%s: no acknowledgement of FSN %" PRId64 " (acked %" PRId64 "): %s: %s", what, fsn,
                 qsf_acked_fsn(s), qsf_err_name(rc), e.msg);
}

/* What the child does once T1 (keys 0..99) is committed and acknowledged. */
enum { DIE_IN_STAGE_OR_COMMIT, DIE_AFTER_COMMIT, DIE_IN_ABORT };

static _Noreturn void child(const char *conf, int point, uint64_t nth, int how, int fd) {
    qsf_sender *s = it_child_sender(conf, fd);
    qsf_errinfo e;
    int64_t fsn;
    int rc;
    if ((rc = add_rows(s, 0, 100, &e)) != QSF_OK || (rc = qsf_flush(s, &fsn, &e)) != QSF_OK ||
        (rc = qsf_wait(s, fsn, QSF_WAIT_OK, HANG_MS, &e)) != QSF_OK)
        it_child_give_up(fd, 4, "T1 (commit and acknowledgement)", rc, &e);
    it_child_report(fd, "T1 acknowledged");
    /* the producer's hits only: the manager's trim writes the manifest too,
     * and its hits would move the kill to a later step of the producer's */
    if (how == DIE_IN_STAGE_OR_COMMIT)
        qsf_fault_arm_here(point, nth, QSF_FA_KILL);
    if ((rc = add_rows(s, T2_KEY, T2_KEY + T2_N, &e)) != QSF_OK)
        it_child_give_up(fd, 5, "T2 rows", rc, &e);
    it_child_report(fd, "T2 staged");
    if (how == DIE_IN_ABORT) {
        qsf_fault_arm_here(point, nth, QSF_FA_KILL);
        qsf_buffer_clear(s);
        _exit(9); /* the abort did not hit the point that often */
    }
    if ((rc = qsf_flush(s, &fsn, &e)) != QSF_OK)
        it_child_give_up(fd, 6, "T2 commit", rc, &e);
    if (how == DIE_AFTER_COMMIT)
        raise(SIGKILL);
    _exit(7); /* the point was not hit that often: the caller stops there */
}

/* Runs the child (this program exec'd anew, see it_child_start) to its end;
 * true when it was killed (false: it ran to its end). */
static bool run_child(const char *conf, int point, uint64_t nth, int how) {
    char a_point[24], a_nth[24], a_how[24], what[96];
    snprintf(a_point, sizeof a_point, "%d", point);
    snprintf(a_nth, sizeof a_nth, "%" PRIu64, nth);
    snprintf(a_how, sizeof a_how, "%d", how);
    snprintf(what, sizeof what, "the end of the child (fault point %d, hit %" PRIu64 ")", point,
             nth);
    it_child c;
    it_child_start(&c, CHILD_ARG, (const char *const[]){conf, a_point, a_nth, a_how, NULL});
    int status = it_child_end(&c, HANG_MS, what);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        return true;
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 7 && WEXITSTATUS(status) != 9))
        fail_msg("child (fault point %d, hit %" PRIu64 ") failed: status %d, last report \"%s\"",
                 point, nth, status, c.last);
    return false;
}

/* The child's part of main: argv after CHILD_ARG is conf, point, nth, how and
 * the report pipe's write end. */
static int child_main(char **argv) {
    child(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 10), atoi(argv[5]), atoi(argv[6]));
}

/* How often each key of one transaction reached the sink: the same for all of
 * them (0 when it never committed; more than once only as a whole replay of
 * a committed group, the at-least-once window of docs/DURABILITY.md §10). */
static int64_t times_delivered(const uint8_t *seen, int64_t n, const char *what) {
    for (int64_t i = 1; i < n; i++)
        if (seen[i] != seen[0])
            fail_msg("transaction %s delivered in part: key +%" PRId64 " %u times, key +0 %u times",
                     what, i, seen[i], seen[0]);
    return seen[0];
}

/* The sink's table t holds T1 (keys 0..99), T2 (T2_KEY..) and T3 (200..299),
 * each whole, T3 once, and every row's symbol the one it was written with.
 * Returns how many times T2 was delivered. */
static int64_t check_table(qsink *sink) {
    uint8_t t1[100] = {0}, t2[T2_N] = {0}, t3[100] = {0};
    int64_t rows = qsink_rows(sink, "t");
    for (int64_t r = 0; r < rows; r++) {
        char k[32], sym[32], want[32];
        assert_int_equal(qsink_cell(sink, "t", r, "k", k, sizeof k), 0);
        assert_int_equal(qsink_cell(sink, "t", r, "sym", sym, sizeof sym), 0);
        int64_t key = strtoll(k, NULL, 10);
        snprintf(want, sizeof want, "s%" PRId64, key % 1000000 / 50);
        if (strcmp(sym, want) != 0)
            fail_msg("row %" PRId64 " (k=%" PRId64 "): sym %s, written %s", r, key, sym, want);
        if (key < 100)
            t1[key]++;
        else if (key >= 200 && key < 300)
            t3[key - 200]++;
        else if (key >= T2_KEY && key < T2_KEY + T2_N)
            t2[key - T2_KEY]++;
        else
            fail_msg("foreign key %" PRId64, key);
    }
    assert_true(times_delivered(t1, 100, "T1") >= 1);
    assert_int_equal(times_delivered(t3, 100, "T3"), 1);
    return times_delivered(t2, T2_N, "T2");
}

/* Three senders after the killed one: the first two only open and close, the
 * third commits T3 (keys 200..299, symbols of T2's). */
static void restarts(const char *conf) {
    qsf_errinfo e;
    for (int i = 0; i < 2; i++) {
        qsf_sender *s = it_sender(conf);
        int rc = qsf_close(s, &e);
        if (rc != QSF_OK)
            fail_msg("restart %d: close: %s: %s", i, qsf_err_name(rc), e.msg);
    }
    qsf_sender *s = it_sender(conf);
    /* T2's symbols again (s20000..s20007 are keys T2_KEY..), and new ones */
    int rc = add_rows(s, 200, 300, &e);
    int64_t fsn = -1;
    if (rc == QSF_OK)
        rc = qsf_flush(s, &fsn, &e);
    if (rc != QSF_OK)
        fail_msg("T3: %s: %s", qsf_err_name(rc), e.msg);
    wait_acked(s, fsn, "T3");
    rc = qsf_close(s, &e);
    if (rc != QSF_OK)
        fail_msg("last close: %s: %s", qsf_err_name(rc), e.msg);
}

/* One kill and the restarts after it, on a fresh slot and sink. Returns
 * whether the child was killed, *t2 whether T2 was delivered. */
static bool one_round(int point, uint64_t nth, int how, int64_t *t2) {
    char dir[600];
    snprintf(dir, sizeof dir, "rm -rf %s/kill", it_dir);
    assert_int_equal(system(dir), 0);
    qsink *sink = it_sink(NULL);
    char conf[1400];
    conf_for(conf, sizeof conf, sink, NULL);
    bool killed = run_child(conf, point, nth, how);
    restarts(conf);
    *t2 = check_table(sink);
    qsink_stop(sink);
    return killed;
}

/* Killed after the payload of the nth frame of T2 was written (its CRC not):
 * T2 never commits, however far it got; the committing frame included. */
static void killed_writing_any_frame_commits_nothing(void **state) {
    (void) state;
    uint64_t n = 1;
    int64_t t2;
    while (one_round(QSF_FP_FRAME_PAYLOAD_WRITTEN, n, DIE_IN_STAGE_OR_COMMIT, &t2)) {
        if (t2)
            fail_msg("killed writing frame %" PRIu64 " of T2: T2 was delivered", n);
        n++;
    }
    assert_int_equal(n, 10); /* it died in every frame of T2, 8 staged and the commit */
}

/* Killed after the CRC of the nth frame: before the committing frame nothing,
 * once the committing frame is whole all of T2 (the flush had not returned). */
static void killed_after_each_crc_all_or_nothing(void **state) {
    (void) state;
    uint64_t n = 1;
    int64_t t2 = 0, last = 0;
    while (one_round(QSF_FP_FRAME_CRC_WRITTEN, n, DIE_IN_STAGE_OR_COMMIT, &t2)) {
        if (n < 9 && t2) /* frame 9 is the committing one */
            fail_msg("killed after the CRC of frame %" PRIu64 " of T2: T2 was delivered", n);
        last = t2;
        n++;
    }
    assert_int_equal(n, 10);
    assert_true(last >= 1); /* died once its last frame was whole: delivered */
}

/* Killed at once after qsf_flush returned: T2 is delivered once. */
static void killed_after_commit_delivers_once(void **state) {
    (void) state;
    int64_t t2;
    assert_true(one_round(0, 0, DIE_AFTER_COMMIT, &t2));
    assert_true(t2 >= 1);
}

/* Killed at each manifest write while qsf_buffer_clear undoes T2's rotations
 * (and, first, at each rotation while staging it): T2 never commits. */
static void killed_in_manifest_steps_commits_nothing(void **state) {
    (void) state;
    int64_t t2;
    uint64_t n = 1;
    while (one_round(QSF_FP_MANIFEST_WRITTEN, n, DIE_IN_ABORT, &t2)) {
        assert_int_equal(t2, 0);
        n++;
    }
    assert_true(n > 2); /* the abort wrote the manifest more than once */
    for (n = 1; one_round(QSF_FP_MANIFEST_WRITTEN, n, DIE_IN_STAGE_OR_COMMIT, &t2); n++)
        if (t2 && n < 8)
            fail_msg("killed at manifest write %" PRIu64 ": T2 delivered", n);
}

/* Killed half-way through writing T2's new symbols to .symbol-dict. */
static void killed_writing_symbols_commits_nothing(void **state) {
    (void) state;
    int64_t t2;
    for (uint64_t n = 1; n <= 3; n++) {
        if (!one_round(QSF_FP_SYMDICT_HALF_WRITTEN, n, DIE_IN_STAGE_OR_COMMIT, &t2))
            break;
        assert_int_equal(t2, 0);
    }
}

/* The abort itself fails (a manifest write while qsf_buffer_clear undoes T2's
 * rotations): the sender latches it and goes no further, and the next senders'
 * recovery removes what is left of T2. nth counts the manifest writes of the
 * abort. */
static void abort_that_fails_is_cut_later(uint64_t nth) {
    qsink *sink = it_sink(NULL);
    char conf[1400];
    conf_for(conf, sizeof conf, sink, NULL);
    qsf_sender *s = it_sender(conf);
    qsf_errinfo e;
    int64_t fsn;
    assert_int_equal(add_rows(s, 0, 100, &e), QSF_OK);
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    wait_acked(s, fsn, "T1");
    assert_int_equal(add_rows(s, T2_KEY, T2_KEY + T2_N, &e), QSF_OK);
    /* this thread's hits only: the manager may trim what the undo leaves
     * behind at the same time, and its manifest write would take the fault */
    qsf_fault_arm_here(QSF_FP_MANIFEST_WRITTEN, nth, QSF_FA_FAIL);
    assert_int_equal(qsf_buffer_clear(s), T2_N);
    qsf_fault_disarm_all();
    int rc = qsf_flush(s, &fsn, &e);
    assert_int_not_equal(rc, QSF_OK); /* latched: the ring is not as it must be */
    assert_true(e.flags & QSF_ERRF_FATAL);
    assert_int_not_equal(qsf_close(s, &e), QSF_OK);
    restarts(conf);
    assert_int_equal(check_table(sink), 0);
    qsink_stop(sink);
}

static void failed_abort_commits_nothing(void **state) {
    (void) state;
    for (uint64_t nth = 1; nth <= 2; nth++) {
        char dir[600];
        snprintf(dir, sizeof dir, "rm -rf %s/kill", it_dir);
        assert_int_equal(system(dir), 0);
        abort_that_fails_is_cut_later(nth);
    }
}

#endif

int main(int argc, char **argv) {
#ifndef QSF_FAULT_INJECTION
    (void) argc;
    (void) argv;
    return 77; /* needs -Dfault_injection=true */
#else
    if (argc == 7 && strcmp(argv[1], CHILD_ARG) == 0)
        return child_main(argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(killed_writing_any_frame_commits_nothing, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(killed_after_each_crc_all_or_nothing, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(killed_after_commit_delivers_once, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(killed_in_manifest_steps_commits_nothing, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(killed_writing_symbols_commits_nothing, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(failed_abort_commits_nothing, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
