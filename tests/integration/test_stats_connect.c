/* qsf_stats while the sender has never connected: every failed attempt after
 * the first is a reconnect attempt, and last_error_code says why (the rule:
 * docs/METRICS.md §3). A sender that keeps failing from its start must not
 * look like one that is fine. */
#include "itest.h"

#include <inttypes.h>

#define FAST    "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=20;"
#define NOWHERE 1 /* nothing listens on port 1 of the loopback */

static void failures_before_the_first_connection_are_counted(void **state) {
    (void) state;
    char conf[256];
    qsf_sender *s =
        it_sender(it_conf(conf, sizeof conf, NOWHERE, "initial_connect_retry=async;" FAST));
    qsf_stats st;
    for (int k = 0; k < 1000; k++) { /* a few rounds of refused connections */
        qsf_stats_get(s, &st);
        if (st.reconnect_attempts >= 3 && st.last_error_code == QSF_E_CONNECT)
            break;
        it_sleep_ms(5);
    }
    assert_int_equal(st.ever_connected, 0);
    assert_int_equal(st.reconnects_succeeded, 0);
    if (st.reconnect_attempts < 3 || st.last_error_code != QSF_E_CONNECT)
        fail_msg("after 5 s of refused connections: reconnect_attempts %" PRIu64
                 ", last_error_code %d",
                 st.reconnect_attempts, st.last_error_code);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failures_before_the_first_connection_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
