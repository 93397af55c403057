/* The public log handler (qsf_set_log_handler, lib/log.c): the threshold,
 * QSF_LOG read from the environment, a replaced handler never called again,
 * and a handler that logs itself (no deadlock: its line goes to stderr). */
#include "testutil.h"

#include "inbox.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lines[5];
static char last[256];

static void handler(void *user, int level, const char *line) {
    (void) user;
    lines[level]++;
    snprintf(last, sizeof last, "%s", line);
}

static int other_calls;
static void other(void *user, int level, const char *line) {
    (void) user;
    (void) level;
    (void) line;
    other_calls++;
}

static void reset(void) {
    memset(lines, 0, sizeof lines);
    last[0] = 0;
}

/* Runs first: nothing has set a threshold yet, so QSF_LOG (set by main) does. */
static void the_environment_sets_the_first_threshold(void **state) {
    (void) state;
    reset();
    assert_int_equal(qsf_set_log_handler(QSF_LOG_DEFAULT, handler, NULL), QSF_OK);
    QSF_LOGI("an info line");
    QSF_LOGD("a debug line");
    assert_int_equal(lines[QSF_LOG_INFO], 1);
    assert_int_equal(lines[QSF_LOG_DEBUG], 0);
    assert_string_equal(last, "an info line");
}

static void the_threshold_filters(void **state) {
    (void) state;
    reset();
    assert_int_equal(qsf_set_log_handler(QSF_LOG_WARN, handler, NULL), QSF_OK);
    QSF_LOGE("e %d", 1);
    QSF_LOGW("w");
    QSF_LOGI("i");
    assert_int_equal(lines[QSF_LOG_ERROR], 1);
    assert_int_equal(lines[QSF_LOG_WARN], 1);
    assert_int_equal(lines[QSF_LOG_INFO], 0);
    assert_int_equal(qsf_set_log_handler(QSF_LOG_OFF, handler, NULL), QSF_OK);
    QSF_LOGE("nothing");
    assert_int_equal(lines[QSF_LOG_ERROR], 1);
    assert_int_equal(qsf_set_log_handler(QSF_LOG_DEBUG + 1, handler, NULL), QSF_E_INVAL);
    assert_int_equal(qsf_set_log_handler(-2, handler, NULL), QSF_E_INVAL);
}

static void a_replaced_handler_is_not_called_again(void **state) {
    (void) state;
    reset();
    assert_int_equal(qsf_set_log_handler(QSF_LOG_INFO, handler, NULL), QSF_OK);
    assert_int_equal(qsf_set_log_handler(QSF_LOG_DEFAULT, other, NULL), QSF_OK);
    QSF_LOGI("to the other");
    assert_int_equal(other_calls, 1);
    assert_int_equal(lines[QSF_LOG_INFO], 0);
}

/* Lines are one line of visible text, whatever the arguments held. */
static void lines_are_escaped(void **state) {
    (void) state;
    reset();
    assert_int_equal(qsf_set_log_handler(QSF_LOG_INFO, handler, NULL), QSF_OK);
    QSF_LOGI("server said %s", "a\nforged line");
    assert_string_equal(last, "server said a\\nforged line");
}

/* An error record's line names only what the record has: a connection lost
 * with nothing unacknowledged has no FSN span (not "fsn 100..99"), and no
 * server status or wire sequence when no frame was answered. */
static void a_record_line_says_only_what_it_has(void **state) {
    (void) state;
    reset();
    assert_int_equal(qsf_set_log_handler(QSF_LOG_INFO, handler, NULL), QSF_OK);
    qsf_inbox *ib = qsf_inbox_new(4);
    qsf_error_record r = {.struct_size = sizeof r, .policy = QSF_POLICY_RETRIABLE};
    r.status = -1;
    r.wire_seq = -1;
    r.from_fsn = 100;
    r.to_fsn = 99;
    snprintf(r.endpoint, sizeof r.endpoint, "127.0.0.1:9000");
    snprintf(r.message, sizeof r.message, "connection lost");
    qsf_inbox_push(ib, &r);
    assert_string_equal(last, "RETRIABLE error at 127.0.0.1:9000: connection lost");
    r.status = 3;
    r.wire_seq = 7;
    r.from_fsn = r.to_fsn = 12;
    qsf_inbox_push(ib, &r);
    assert_string_equal(last, "RETRIABLE error at 127.0.0.1:9000: connection lost "
                              "(server status 3, wire seq 7, FSN 12..12)");
    qsf_inbox_free(ib);
}

static int depth;
static void logging_handler(void *user, int level, const char *line) {
    (void) user;
    (void) level;
    (void) line;
    depth++;
    QSF_LOGW("from inside the handler"); /* to stderr, not back here */
}

static void a_handler_that_logs_does_not_deadlock(void **state) {
    (void) state;
    depth = 0;
    assert_int_equal(qsf_set_log_handler(QSF_LOG_INFO, logging_handler, NULL), QSF_OK);
    QSF_LOGW("outside");
    assert_int_equal(depth, 1);
}

int main(void) {
    setenv("QSF_LOG", "info", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_environment_sets_the_first_threshold),
        cmocka_unit_test(the_threshold_filters),
        cmocka_unit_test(a_replaced_handler_is_not_called_again),
        cmocka_unit_test(lines_are_escaped),
        cmocka_unit_test(a_record_line_says_only_what_it_has),
        cmocka_unit_test(a_handler_that_logs_does_not_deadlock),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    qsf_set_log_handler(QSF_LOG_WARN, NULL, NULL);
    return rc;
}
