/* Host ranking and rounds (docs/PROTOCOL.md §10.2-§10.4). */
#include "testutil.h"

#include "io/hosts.h"

static void round_tries_every_host_in_addr_order_then_ends(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(qsf_hosts_next(&h), i);
        qsf_hosts_report(&h, i, QSF_ATTEMPT_TRANSPORT);
    }
    assert_int_equal(qsf_hosts_next(&h), -1);
}

static void ranking_prefers_better_states_and_sticky_healthy(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 4);
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
    qsf_hosts_init(&h, 2);
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
    qsf_hosts_init(&h, 3);
    assert_int_equal(qsf_hosts_next(&h), 0);
    qsf_hosts_report(&h, 0, QSF_ATTEMPT_AUTH);
    assert_int_equal(qsf_hosts_next(&h), -1);
}

static void a_round_of_role_rejections_is_recognised(void **state) {
    (void) state;
    qsf_hosts h;
    qsf_hosts_init(&h, 3);
    for (int r = 0; r < 5; r++) {
        for (int i = 0; i < 3; i++) {
            int k = qsf_hosts_next(&h);
            assert_true(k >= 0);
            qsf_hosts_report(&h, k, k == 1 ? QSF_ATTEMPT_ROLE_CATCHUP : QSF_ATTEMPT_ROLE_OTHER);
        }
        assert_int_equal(qsf_hosts_next(&h), -1);
        assert_true(qsf_hosts_all_role_rejected(&h));
        qsf_hosts_new_round(&h);
    }
    /* one transport failure in the round: not a round of role rejections */
    int k = qsf_hosts_next(&h);
    qsf_hosts_report(&h, k, QSF_ATTEMPT_ROLE_OTHER);
    k = qsf_hosts_next(&h);
    qsf_hosts_report(&h, k, QSF_ATTEMPT_TRANSPORT);
    assert_false(qsf_hosts_all_role_rejected(&h));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_tries_every_host_in_addr_order_then_ends),
        cmocka_unit_test(ranking_prefers_better_states_and_sticky_healthy),
        cmocka_unit_test(mid_stream_break_demotes_the_host),
        cmocka_unit_test(auth_failure_ends_the_round),
        cmocka_unit_test(a_round_of_role_rejections_is_recognised),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
