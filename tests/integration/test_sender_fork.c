/* fork() after qsf_sender_new (docs/THREADING.md "fork()"): the child
 * inherits the sender's memory and its MAP_SHARED segments, but none of its
 * threads. Every call on that sender in the child fails with QSF_E_STATE (or
 * answers as for a NULL sender), and qsf_close there unmaps and returns
 * without joining a thread or touching a file. The parent's sender goes on
 * unaffected: every row it published arrives once, and the slot it leaves
 * needs no repair. Before, the child's rows and flush returned OK and wrote
 * over the parent's frames, and its qsf_close crashed in pthread_join. */
#include "itest.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: each expectation that fails sets one bit of the exit code
 * (cmocka's asserts cannot report from a child). */
static int child_calls(qsf_sender *s) {
    int bad = 0;
    qsf_errinfo e;
    if (qsf_table(s, "t", 1, &e) != QSF_E_STATE || !strstr(e.msg, "child of fork()"))
        bad |= 1;
    if (qsf_flush(s, NULL, &e) != QSF_E_STATE)
        bad |= 2;
    if (qsf_wait(s, 0, QSF_WAIT_OK, 1000, &e) != QSF_E_STATE)
        bad |= 4;
    qsf_error_record r;
    if (qsf_poll_error(s, &r) != QSF_E_STATE || qsf_pause(s) != QSF_E_STATE)
        bad |= 8;
    if (qsf_published_fsn(s) != -1 || qsf_buffered_rows(s) != 0)
        bad |= 16;
    if (qsf_close(s, &e) != QSF_E_STATE)
        bad |= 32;
    return bad;
}

static void a_forked_child_cannot_use_the_sender(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=fk;auto_flush=off;", it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    it_publish(s, "t", 0, 100, 0);
    for (int i = 0; i < 3; i++) { /* rows buffered at the fork */
        qsf_errinfo e;
        assert_int_equal(it_add_row(s, "t", 100 + i, "b", 0, &e), QSF_OK);
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_calls(s));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child's calls were not refused: %s %d",
                 WIFEXITED(status) ? "exit code" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    /* the parent goes on as if nothing happened */
    assert_int_equal(qsf_buffered_rows(s), 3);
    it_publish(s, "t", 103, 200, 0);
    qsf_errinfo e;
    int64_t fsn;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    it_wait_acked(s, fsn);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 200, false);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_forked_child_cannot_use_the_sender, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
