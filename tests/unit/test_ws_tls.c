/* What a refused server certificate tells the user (qsf_ws_tls_explain): the
 * advice depends on whether tls_roots is set, and only an unknown issuer gets
 * one. The lws line is the one libwebsockets 4.1.6 logs from its verify
 * callback. */
#include "testutil.h"

#include "io/ws_tls.h"

#include <stdio.h>
#include <string.h>

#define UNKNOWN_ISSUER                                                                             \
    "SSL error: unable to get local issuer certificate (preverify_ok=0;err=20;depth=0)"
#define EXPIRED "SSL error: certificate has expired (preverify_ok=0;err=10;depth=0)"

static const char *explain(const qsf_ws_conf *c, const char *lws_line, const char *why,
                           bool want_tls) {
    static char reason[256];
    snprintf(reason, sizeof reason, "%s", why);
    assert_int_equal(qsf_ws_tls_explain(c, lws_line, reason, sizeof reason), want_tls);
    return reason;
}

static void unknown_issuer_without_roots_advises_tls_roots(void **state) {
    (void) state;
    qsf_ws_conf c = {.tls = true, .tls_verify = true};
    assert_string_equal(explain(&c, UNKNOWN_ISSUER, "tls: error", true),
                        "unable to get local issuer certificate (server certificate not "
                        "trusted: set tls_roots to the CA file that signed it)");
}

static void unknown_issuer_with_roots_names_the_file(void **state) {
    (void) state;
    qsf_ws_conf c = {.tls = true,
                     .tls_verify = true,
                     .tls_roots = "qsf-roots: /etc/qdb/ca.pem\n-----BEGIN CERTIFICATE-----\n"};
    const char *r = explain(&c, UNKNOWN_ISSUER, "tls: error", true);
    assert_string_equal(r, "unable to get local issuer certificate (the server certificate is "
                           "not signed by a CA in tls_roots=/etc/qdb/ca.pem)");
    assert_null(strstr(r, "set tls_roots"));
}

static void other_verification_errors_get_no_advice(void **state) {
    (void) state;
    qsf_ws_conf c = {.tls = true, .tls_verify = true};
    assert_string_equal(explain(&c, EXPIRED, "tls: error", true), "certificate has expired");
}

static void not_tls_is_left_alone(void **state) {
    (void) state;
    qsf_ws_conf plain = {.tls = false};
    assert_string_equal(explain(&plain, UNKNOWN_ISSUER, "tls: error", false), "tls: error");
    qsf_ws_conf c = {.tls = true, .tls_verify = true};
    assert_string_equal(explain(&c, UNKNOWN_ISSUER, "connection refused", false),
                        "connection refused");
    /* a TLS failure without a verification line keeps its reason */
    assert_string_equal(explain(&c, "", "SSL handshake failed", true), "SSL handshake failed");
}

static void the_lws_line_is_escaped(void **state) {
    (void) state;
    qsf_ws_conf c = {.tls = true, .tls_verify = true};
    assert_string_equal(explain(&c, "SSL error: bad\n\x1b[31m (err=10)", "tls", true),
                        "bad\\n\\x1b[31m");
}

static void roots_name(void **state) {
    (void) state;
    char n[64];
    qsf_ws_tls_roots_name("qsf-roots: /a/b.pem\n-----BEGIN", n, sizeof n);
    assert_string_equal(n, "/a/b.pem");
    qsf_ws_tls_roots_name("-----BEGIN", n, sizeof n);
    assert_string_equal(n, "tls_roots");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_issuer_without_roots_advises_tls_roots),
        cmocka_unit_test(unknown_issuer_with_roots_names_the_file),
        cmocka_unit_test(other_verification_errors_get_no_advice),
        cmocka_unit_test(not_tls_is_left_alone),
        cmocka_unit_test(the_lws_line_is_escaped),
        cmocka_unit_test(roots_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
