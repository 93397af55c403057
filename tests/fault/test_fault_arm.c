/* The fault points' arming: qsf_fault_arm counts every thread's hits,
 * qsf_fault_arm_here only the arming thread's, so a step on the caller can be
 * failed while the manager passes the same point (test_sender_txn_kill's
 * failed abort). */
#include "testutil.h"

#include "os/os.h"

#include <pthread.h>

#ifdef QSF_FAULT_INJECTION

static void *hit_once(void *arg) {
    *(int *) arg = qsf_fault_hit(QSF_FP_MANIFEST_WRITTEN);
    return NULL;
}

/* The point's result when another thread passes it once. */
static int hit_on_another_thread(void) {
    pthread_t t;
    int rc = 1;
    assert_int_equal(pthread_create(&t, NULL, hit_once, &rc), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    return rc;
}

static void arm_counts_every_thread(void **state) {
    (void) state;
    qsf_fault_arm(QSF_FP_MANIFEST_WRITTEN, 1, QSF_FA_FAIL);
    assert_int_equal(hit_on_another_thread(), -1); /* the first hit, whoever's */
    assert_int_equal(qsf_fault_hit(QSF_FP_MANIFEST_WRITTEN), 0);
    assert_int_equal(qsf_fault_hits(QSF_FP_MANIFEST_WRITTEN), 2);
    qsf_fault_disarm_all();
}

static void arm_here_counts_this_thread_only(void **state) {
    (void) state;
    qsf_fault_arm_here(QSF_FP_MANIFEST_WRITTEN, 1, QSF_FA_FAIL);
    assert_int_equal(hit_on_another_thread(), 0);
    assert_int_equal(qsf_fault_hits(QSF_FP_MANIFEST_WRITTEN), 0);
    assert_int_equal(qsf_fault_hit(QSF_FP_MANIFEST_WRITTEN), -1);
    assert_int_equal(qsf_fault_hits(QSF_FP_MANIFEST_WRITTEN), 1);
    qsf_fault_disarm_all();
    qsf_fault_arm(QSF_FP_MANIFEST_WRITTEN, 1, QSF_FA_FAIL); /* a plain arm after it */
    assert_int_equal(hit_on_another_thread(), -1);
    qsf_fault_disarm_all();
}

#endif

int main(void) {
#ifndef QSF_FAULT_INJECTION
    return 77; /* needs -Dfault_injection=true */
#else
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arm_counts_every_thread),
        cmocka_unit_test(arm_here_counts_this_thread_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
