/* A log handler that replaces or removes itself with qsf_set_log_handler,
 * the way an event handler may (docs/THREADING.md lists qsf_set_log_handler
 * as callable from any thread at any time). It runs holding the log's
 * destination lock: the call must not wait for that lock, which its own
 * thread holds, and the next line goes to the handler it installed. */
#include "testutil.h"

#include "log.h"

#include <string.h>

static int first_calls, second_calls;

static void second(void *user, int level, const char *line) {
    (void) user;
    (void) level;
    (void) line;
    second_calls++;
}

/* Hands over to `second` on its first line. */
static void first(void *user, int level, const char *line) {
    (void) user;
    (void) level;
    (void) line;
    if (first_calls++ == 0)
        qsf_set_log_handler(QSF_LOG_DEFAULT, second, NULL);
}

static int quitter_calls;

/* Removes itself on its first line: back to stderr, with the threshold off. */
static void quitter(void *user, int level, const char *line) {
    (void) user;
    (void) level;
    (void) line;
    quitter_calls++;
    qsf_set_log_handler(QSF_LOG_OFF, NULL, NULL);
}

static void a_handler_hands_over_to_another(void **state) {
    (void) state;
    assert_int_equal(qsf_set_log_handler(QSF_LOG_INFO, first, NULL), QSF_OK);
    QSF_LOGW("one");
    QSF_LOGW("two");
    assert_int_equal(first_calls, 1);
    assert_int_equal(second_calls, 1);
}

static void a_handler_removes_itself(void **state) {
    (void) state;
    assert_int_equal(qsf_set_log_handler(QSF_LOG_INFO, quitter, NULL), QSF_OK);
    QSF_LOGW("one");
    QSF_LOGW("two (the threshold is off now: not written)");
    assert_int_equal(quitter_calls, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_handler_hands_over_to_another),
        cmocka_unit_test(a_handler_removes_itself),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
