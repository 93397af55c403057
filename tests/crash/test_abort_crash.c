/* A process killed while an aborted flush is being zeroed (docs/DURABILITY.md
 * §3.2): the flush never returned, so the next open finds the flush that did
 * and a torn tail, never damage followed by intact frames of the aborted flush
 * (which salvage would report as a data loss). The child publishes one
 * flush, writes a second of six frames in one segment (the last one
 * committing), aborts it and is killed halfway through the zeroing. */
#include "testutil.h"

#include "ring_testutil.h"
#include "sftest.h"

#include "os/os.h"
#include "sf/ring.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FRAMES 6

static qsf_ring_opts opts(void) {
    qsf_ring_opts o = {0};
    o.sf_dir = rt_dir;
    o.sender_id = "t";
    o.segment_bytes = 64 * 1024;
    o.total_bytes = 1 << 20;
    o.durability = QSF_DUR_MEMORY;
    o.sync_interval_ms = 1000;
    o.append_deadline_ms = 10000;
    return o;
}

static void child(void) {
    qsf_ring_opts o = opts();
    qsf_ring *r;
    if (qsf_ring_open(&o, &r, NULL, NULL) != QSF_OK)
        _exit(2);
    uint8_t m[600];
    size_t n = st_qwp_table(m, 0x00, "t", 1, 200, 'a');
    if (qsf_ring_append(r, m, n, NULL, NULL) != QSF_OK)
        _exit(3);
    if (qsf_ring_txn_begin(r, NULL) != QSF_OK)
        _exit(4);
    for (int i = 0; i < FRAMES; i++) {
        n = st_qwp_table(m, i == FRAMES - 1 ? 0x00 : 0x01, "t", 2, 500, (uint8_t) ('b' + i));
        if (qsf_ring_txn_append(r, m, n, NULL, NULL) != QSF_OK)
            _exit(5);
    }
    qsf_fault_arm_here(QSF_FP_FRAMES_HALF_ZEROED, 1, QSF_FA_KILL);
    qsf_ring_txn_abort(r, NULL);
    _exit(6); /* the abort did not reach the point */
}

static void killed_while_an_abort_zeroes(void **state) {
    (void) state;
    pid_t pid = fork();
    if (pid == 0)
        child();
    int status;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        fail_msg("the child was not killed while zeroing: status %d", status);
    qsf_ring_opts o = opts();
    qsf_ring *r = NULL;
    qsf_recovery_report rep;
    qsf_errinfo e;
    if (qsf_ring_open(&o, &r, &rep, &e) != QSF_OK)
        fail_msg("open after the kill: %s", e.msg);
    if (rep.losses)
        fail_msg("recovery reported %u damaged places after a kill inside an abort", rep.losses);
    assert_int_equal(rep.published_fsn, 0); /* the flush that returned */
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    assert_int_equal(rt_count_files("t", ".corrupt"), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(killed_while_an_abort_zeroes, rt_setup, rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
