/* wss with a throwaway CA made by the openssl CLI at test time: verification is
 * on by default and fails clearly, tls_roots makes it pass, unsafe_off skips it. */
#include "itest.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[512], ca[600], cert[600], key[600];

static int make_pki(void **state) {
    (void) state;
    it_make_pki(dir, sizeof dir, ca, cert, key, sizeof ca);
    return 0;
}

static int drop_pki(void **state) {
    (void) state;
    tu_rmtree(dir);
    return 0;
}

static qsink *tls_sink(void) {
    return it_tls_sink(cert, key);
}

static void tls_roots_verifies_the_server(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[1024];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), ca);
    qsf_sender *s = it_sender(conf);
    int64_t fsn = it_publish(s, "t", 0, 2000, 500);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 2000, false);
}

static void unknown_ca_fails_verification_clearly(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[1024];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;", qsink_port(sink));
    qsf_sender *s = NULL;
    qsf_errinfo e;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    assert_int_equal(rc, QSF_E_TLS);
    assert_null(s);
    assert_non_null(strstr(e.msg, "TLS"));
    assert_non_null(strstr(e.msg, "127.0.0.1"));
    qsink_stats st;
    qsink_get_stats(sink, &st);
    assert_int_equal(st.upgrades, 0);
    qsink_stop(sink);
}

static void unsafe_off_skips_verification(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[1024];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_verify=unsafe_off;", qsink_port(sink));
    qsf_sender *s = it_sender(conf);
    int64_t fsn = it_publish(s, "t", 0, 100, 0);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 100, false);
}

int main(void) {
    qsf_log_set(NULL, NULL, getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tls_roots_verifies_the_server),
        cmocka_unit_test(unknown_ca_fails_verification_clearly),
        cmocka_unit_test(unsafe_off_skips_verification),
    };
    return cmocka_run_group_tests(tests, make_pki, drop_pki);
}
