/* qsf_close called from the log handler is refused with QSF_E_STATE and
 * changes nothing (docs/THREADING.md "Which call from where"). The handler
 * runs on the thread that logs, holding the log's destination lock:
 *
 * - on a sender's I/O thread, closing that sender joins the I/O thread from
 *   itself and frees it under its own feet;
 * - on the I/O thread of another sender, the close waits for the closed
 *   sender's threads while they wait for the destination lock to log;
 * - on the thread that is closing the sender (the close logs its data-loss
 *   line), a nested close stops and frees the sender the outer one is using.
 *
 * Each sender then goes on and closes normally. CI runs this test in its
 * AddressSanitizer build. */
#include "itest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* What the handler is to do: on the first line that contains `needle` and is
 * logged on a thread named `thread` (or on the thread `self` when thread is
 * NULL), close `target` and record what the two close calls returned. */
typedef struct close_try {
    qsf_sender *target;
    const char *thread;
    pthread_t self;
    const char *needle;
    atomic_int close_rc, report_rc, done;
    char msg[QSF_ERRINFO_MSG_MAX];
} close_try;

static close_try try;

static bool on_its_thread(const close_try *t) {
    if (!t->thread)
        return pthread_equal(pthread_self(), t->self);
    char name[16] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    return strcmp(name, t->thread) == 0;
}

static void on_log(void *user, int level, const char *line) {
    (void) level;
    close_try *t = user;
    if (atomic_load(&t->done) || !strstr(line, t->needle) || !on_its_thread(t))
        return;
    qsf_errinfo e;
    atomic_store(&t->close_rc, qsf_close(t->target, &e));
    snprintf(t->msg, sizeof t->msg, "%s", e.msg);
    qsf_close_info ci = {.struct_size = sizeof ci};
    atomic_store(&t->report_rc, qsf_close_report(t->target, &ci, &e));
    atomic_store(&t->done, 1);
}

/* Installs the handler at DEBUG for `target`; the caller then makes the line. */
static void arm(qsf_sender *target, const char *thread, const char *needle) {
    memset(&try, 0, sizeof try);
    try.target = target;
    try.thread = thread;
    try.self = pthread_self();
    try.needle = needle;
    assert_int_equal(qsf_set_log_handler(QSF_LOG_DEBUG, on_log, &try), QSF_OK);
}

/* The handler has run (20 s bound); both answers were refusals that say why. */
static void expect_refused(void) {
    for (int i = 0; i < 2000 && !atomic_load(&try.done); i++)
        it_sleep_ms(10);
    assert_int_equal(qsf_set_log_handler(QSF_LOG_WARN, NULL, NULL), QSF_OK);
    assert_int_equal(atomic_load(&try.done), 1);
    assert_int_equal(atomic_load(&try.close_rc), QSF_E_STATE);
    assert_int_equal(atomic_load(&try.report_rc), QSF_E_STATE);
    if (!strstr(try.msg, "qsf_close called from the log handler"))
        fail_msg("unexpected message: %s", try.msg);
}

/* qsf_pause makes the I/O thread log "wire paused" (INFO). */
static void pause_and_resume(qsf_sender *s) {
    assert_int_equal(qsf_pause(s), QSF_OK);
    expect_refused();
    assert_int_equal(qsf_resume(s), QSF_OK);
}

static void on_the_io_thread_of_the_sender(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ""));
    arm(s, "qsf-io", "wire paused");
    pause_and_resume(s);
    it_wait_acked(s, it_publish(s, "t", 0, 100, 50)); /* the sender goes on */
    it_close_and_check(s, sink, "t", 100, false);
}

static void on_the_io_thread_of_another_sender(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *a = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ""));
    qsf_sender *b = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ""));
    arm(b, "qsf-io", "wire paused"); /* only a's I/O thread logs it */
    pause_and_resume(a);
    qsf_errinfo e;
    assert_int_equal(qsf_close(a, &e), QSF_OK);
    it_wait_acked(b, it_publish(b, "t", 0, 100, 50));
    it_close_and_check(b, sink, "t", 100, false);
}

/* A memory-mode sender that never connects: its close gives up the frames
 * and logs the loss (ERROR) on the closing thread, before it frees the
 * sender. The nested close is refused; the outer one reports the loss. */
static void on_the_thread_closing_the_sender(void **state) {
    (void) state;
    char conf[512];
    qsf_sender *s = it_sender(
        it_conf(conf, sizeof conf, 1, "initial_connect_retry=async;close_flush_timeout_millis=0;"));
    (void) it_publish(s, "t", 0, 10, 0);
    arm(s, NULL, "not acknowledged when the memory-mode sender closed");
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    expect_refused();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(on_the_io_thread_of_the_sender),
        cmocka_unit_test(on_the_io_thread_of_another_sender),
        cmocka_unit_test(on_the_thread_closing_the_sender),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
