/* Error inbox: drop-oldest on overflow, polling, handler on a dispatcher thread. */
#include "testutil.h"

#include "inbox.h"
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static qsf_error_record rec(int64_t wire, int policy) {
    qsf_error_record r;
    memset(&r, 0, sizeof r);
    r.category = QSF_CAT_WRITE_ERROR;
    r.policy = policy;
    r.wire_seq = wire;
    snprintf(r.message, sizeof r.message, "error %lld", (long long) wire);
    return r;
}

static void overflow_drops_the_oldest(void **state) {
    (void) state;
    qsf_inbox *ib = qsf_inbox_new(4); /* clamped to 16 */
    for (int i = 0; i < 20; i++) {
        qsf_error_record r = rec(i, QSF_POLICY_RETRIABLE);
        qsf_inbox_push(ib, &r);
    }
    assert_int_equal(qsf_inbox_dropped(ib), 4);
    qsf_error_record out;
    for (int i = 4; i < 20; i++) {
        assert_int_equal(qsf_inbox_poll(ib, &out), 1);
        assert_int_equal(out.wire_seq, i);
    }
    assert_int_equal(qsf_inbox_poll(ib, &out), 0);
    qsf_inbox_free(ib);
}

static pthread_t handler_thread;
static int handled;
static int64_t last_wire = -1;
static void handler(void *user, const qsf_error_record *r) {
    (void) user;
    handler_thread = pthread_self();
    assert_true(r->wire_seq == last_wire + 1); /* in order */
    last_wire = r->wire_seq;
    __atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

static void handler_runs_on_a_dispatcher_thread_in_order(void **state) {
    (void) state;
    qsf_inbox *ib = qsf_inbox_new(64);
    for (int i = 0; i < 10; i++) {
        qsf_error_record r = rec(i, QSF_POLICY_RETRIABLE);
        qsf_inbox_push(ib, &r);
    }
    assert_int_equal(qsf_inbox_set_handler(ib, handler, NULL), QSF_OK);
    for (int i = 0; i < 2000 && __atomic_load_n(&handled, __ATOMIC_SEQ_CST) < 10; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_int_equal(handled, 10);
    assert_false(pthread_equal(handler_thread, pthread_self()));
    assert_int_equal(qsf_inbox_delivered(ib), 10);
    qsf_inbox_free(ib);
}

int main(void) {
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(overflow_drops_the_oldest),
        cmocka_unit_test(handler_runs_on_a_dispatcher_thread_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
