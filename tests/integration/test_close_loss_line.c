/* A close that gives up accepted data logs it at ERROR (docs/ERRORS.md §11:
 * ERROR is "the sender stopped, or data was given up"). A memory-mode sender
 * that cannot reach its server holds its frames in memory only: closing it
 * loses them, and close's line is the one line that says so. */
#include "itest.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int loss_level = -1;
static char loss_line[600];

static void on_log(void *user, int level, const char *line) {
    (void) user;
    pthread_mutex_lock(&mu);
    if (strstr(line, "when the memory-mode sender closed")) {
        loss_level = level;
        snprintf(loss_line, sizeof loss_line, "%.599s", line);
    }
    pthread_mutex_unlock(&mu);
}

static void a_memory_mode_close_that_loses_frames_says_so_at_error(void **state) {
    (void) state;
    assert_int_equal(qsf_set_log_handler(QSF_LOG_DEBUG, on_log, NULL), QSF_OK);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, 1, /* nothing listens on port 1 */
                                      "initial_connect_retry=async;close_flush_timeout_millis=0;"));
    it_publish(s, "t", 0, 300, 100);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    assert_non_null(strstr(e.msg, "3 frames"));
    qsf_set_log_handler(QSF_LOG_OFF, NULL, NULL);
    if (loss_level != QSF_LOG_ERROR)
        fail_msg("the loss was logged at level %d (ERROR is %d): \"%s\"", loss_level, QSF_LOG_ERROR,
                 loss_line);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_memory_mode_close_that_loses_frames_says_so_at_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
