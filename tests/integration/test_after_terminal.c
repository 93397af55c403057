/* What the calls say once a terminal error is latched (docs/ERRORS.md §4,
 * §7): qsf_wait returns it every time, also for an FSN acknowledged before it
 * latched (it returned QSF_OK); and the close message keeps every count when
 * the terminal error's own text is long, the cut marked (the counts after the
 * first 200 bytes of the summary were cut off mid-text). */
#include "itest.h"

#include <stdio.h>
#include <string.h>

static void wait_on_an_acknowledged_fsn_returns_the_latched_error(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "status=0x03:column-type seq=1 times=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "auto_flush=off;"));
    int64_t acked = it_publish(s, "t", 0, 10, 0); /* wire seq 0: acknowledged */
    it_wait_acked(s, acked);
    int64_t rejected = it_publish(s, "t", 10, 20, 0); /* wire seq 1: rejected, terminal */
    qsf_errinfo e;
    assert_int_equal(qsf_wait(s, rejected, QSF_WAIT_OK, 20000, &e), QSF_E_SERVER);
    assert_int_equal(qsf_wait(s, acked, QSF_WAIT_OK, 0, &e), QSF_E_SERVER);
    assert_true(e.flags & QSF_ERRF_FATAL);
    assert_int_equal(qsf_wait(s, acked, QSF_WAIT_OK, 1000, &e), QSF_E_SERVER);
    assert_int_equal(qsf_close(s, &e), QSF_E_SERVER);
    qsink_stop(sink);
}

static void a_long_close_message_keeps_its_counts(void **state) {
    (void) state;
    char fault[400], reason[240];
    memset(reason, 'x', sizeof reason - 1);
    reason[sizeof reason - 1] = 0;
    memcpy(reason, "column-type-", 12);
    snprintf(fault, sizeof fault, "status=0x03:%s seq=0 times=1", reason);
    qsink *sink = it_sink(NULL);
    it_fault(sink, fault);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=long;auto_flush=off;", it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    assert_int_equal(qsf_pause(s), QSF_OK); /* the frame goes out once the rows are buffered */
    int64_t fsn = it_publish(s, "t", 0, 10, 0);
    qsf_errinfo e;
    for (int k = 10; k < 15; k++)
        assert_int_equal(it_add_row(s, "t", k, "b", 0, &e), QSF_OK);
    assert_int_equal(qsf_resume(s), QSF_OK);
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 20000, &e), QSF_E_SERVER);
    qsf_close_info ci = {.struct_size = sizeof ci};
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_SERVER);
    assert_int_equal(ci.rows_unpublished, 5);
    assert_int_equal(ci.frames_unacked, 1);
    if (!strstr(e.msg, "column-type-xxx") || !strstr(e.msg, " [...]; close: ") ||
        !strstr(e.msg, "5 buffered rows dropped") || !strstr(e.msg, "1 frames (") ||
        !strstr(e.msg, "not acknowledged, kept in the slot for the next sender"))
        fail_msg("close message: %s", e.msg);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wait_on_an_acknowledged_fsn_returns_the_latched_error),
        cmocka_unit_test_setup_teardown(a_long_close_message_keeps_its_counts, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
