/* Host ranking, rounds and backoff (sf-behaviour.md §7.2-§7.4). */
#include "testutil.h"

#include "io/hosts.h"

static void round_tries_every_host_in_addr_order_then_ends(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 3, 100, 5000, 42);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(qsf_hosts_next(&h), i);
        qsf_hosts_report(&h, i, QSF_ATTEMPT_TRANSPORT);
    }
    assert_int_equal(qsf_hosts_next(&h), -1);
}

static void ranking_prefers_better_states_and_sticky_healthy(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 4, 100, 5000, 1);
    assert_int_equal(qsf_hosts_next(&h), 0);
    qsf_hosts_report(&h, 0, QSF_ATTEMPT_ROLE_OTHER); /* topology reject: last */
    assert_int_equal(qsf_hosts_next(&h), 1);
    qsf_hosts_report(&h, 1, QSF_ATTEMPT_TRANSPORT);
    assert_int_equal(qsf_hosts_next(&h), 2);
    qsf_hosts_report(&h, 2, QSF_ATTEMPT_ROLE_CATCHUP);
    assert_int_equal(qsf_hosts_next(&h), 3);
    qsf_hosts_report(&h, 3, QSF_ATTEMPT_OK);
    /* new round: healthy 3, transient 2, transport 1, topology 0 */
    int want[] = {3, 2, 1, 0};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(qsf_hosts_next(&h), want[i]);
        qsf_hosts_report(&h, want[i], QSF_ATTEMPT_TRANSPORT);
    }
    assert_int_equal(qsf_hosts_next(&h), -1);
}

static void mid_stream_break_demotes_the_host(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 2, 100, 5000, 1);
    assert_int_equal(qsf_hosts_next(&h), 0);
    qsf_hosts_report(&h, 0, QSF_ATTEMPT_OK);
    qsf_hosts_demote(&h, 0);
    assert_int_equal(qsf_hosts_next(&h), 1); /* unknown beats transport error */
    qsf_hosts_report(&h, 1, QSF_ATTEMPT_OK);
    assert_int_equal(qsf_hosts_next(&h), 1); /* sticky */
}

static void auth_failure_ends_the_round(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 3, 100, 5000, 1);
    assert_int_equal(qsf_hosts_next(&h), 0);
    qsf_hosts_report(&h, 0, QSF_ATTEMPT_AUTH);
    assert_int_equal(qsf_hosts_next(&h), -1);
}

static void backoff_doubles_with_equal_jitter_and_caps(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 1, 100, 5000, 7);
    int64_t b = 100;
    for (int round = 0; round < 12; round++) {
        assert_int_equal(qsf_hosts_next(&h), 0);
        qsf_hosts_report(&h, 0, QSF_ATTEMPT_TRANSPORT);
        assert_int_equal(qsf_hosts_next(&h), -1);
        int64_t s = qsf_hosts_round_sleep_ms(&h);
        assert_true(s >= b && s < 2 * b);
        b = b * 2 > 5000 ? 5000 : b * 2;
        qsf_hosts_new_round(&h);
    }
    /* success resets the backoff */
    assert_int_equal(qsf_hosts_next(&h), 0);
    qsf_hosts_report(&h, 0, QSF_ATTEMPT_OK);
    assert_int_equal(qsf_hosts_next(&h), 0);
    qsf_hosts_report(&h, 0, QSF_ATTEMPT_TRANSPORT);
    assert_int_equal(qsf_hosts_next(&h), -1);
    int64_t s = qsf_hosts_round_sleep_ms(&h);
    assert_true(s >= 100 && s < 200);
}

static void all_role_rejected_sleeps_fixed_initial(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 3, 100, 5000, 3);
    for (int r = 0; r < 5; r++) {
        for (int i = 0; i < 3; i++) {
            int k = qsf_hosts_next(&h);
            assert_true(k >= 0);
            qsf_hosts_report(&h, k, k == 1 ? QSF_ATTEMPT_ROLE_CATCHUP : QSF_ATTEMPT_ROLE_OTHER);
        }
        assert_int_equal(qsf_hosts_next(&h), -1);
        assert_int_equal(qsf_hosts_round_sleep_ms(&h), 100);
        qsf_hosts_new_round(&h);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_tries_every_host_in_addr_order_then_ends),
        cmocka_unit_test(ranking_prefers_better_states_and_sticky_healthy),
        cmocka_unit_test(mid_stream_break_demotes_the_host),
        cmocka_unit_test(auth_failure_ends_the_round),
        cmocka_unit_test(backoff_doubles_with_equal_jitter_and_caps),
        cmocka_unit_test(all_role_rejected_sleeps_fixed_initial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
