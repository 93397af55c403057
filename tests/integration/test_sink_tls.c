/* qwp-sink over TLS (wss): a throwaway CA and server certificate are made with
 * the openssl command at test time; the client verifies the chain and the
 * host name, upgrades and gets its rows acknowledged. */
#include "sinktest.h"

#include <stdio.h>
#include <stdlib.h>

static char DIR_[256];

static int run(const char *fmt, const char *dir) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, dir, dir, dir, dir, dir, dir, dir, dir);
    return system(cmd);
}

/* CA key + self-signed CA, server key + CSR, server cert for localhost/127.0.0.1. */
static int make_certs(const char *d) {
    const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    char fmt[2048];
    snprintf(fmt, sizeof fmt,
             "cd %%s && openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 "
             "-subj /CN=qsf-test-ca >/dev/null 2>&1 && "
             "openssl req %s -keyout srv.key -out srv.csr -subj /CN=localhost >/dev/null 2>&1 && "
             "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > ext && "
             "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
             "-out srv.pem -days 2 -extfile ext >/dev/null 2>&1",
             ec, ec);
    return run(fmt, d);
}

static void wss_round_trip(void **state) {
    (void) state;
    if (system("command -v openssl >/dev/null 2>&1") != 0) {
        print_message("# SKIP: no openssl command to make a throwaway certificate\n");
        skip();
    }
    tu_mkdtemp(DIR_, sizeof DIR_);
    assert_int_equal(make_certs(DIR_), 0);
    char cert[300], key[300], ca[300];
    snprintf(cert, sizeof cert, "%s/srv.pem", DIR_);
    snprintf(key, sizeof key, "%s/srv.key", DIR_);
    snprintf(ca, sizeof ca, "%s/ca.pem", DIR_);
    qsink_opts o = {.tls_cert = cert, .tls_key = key};
    qsink *s = st_start(&o);
    /* a plain-text client gets nowhere, and does not hurt the server */
    rawws w;
    char resp[2048];
    assert_int_equal(rawws_connect(&w, qsink_port(s)), 0);
    assert_int_equal(rawws_upgrade(&w, "/write/v4", NULL, resp, sizeof resp), -1);
    rawws_close(&w);
    assert_int_equal(rawws_connect_tls(&w, qsink_port(s), ca), 0);
    assert_int_equal(rawws_upgrade(&w, "/write/v4", NULL, resp, sizeof resp), 101);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 0);
    assert_int_equal(qsink_rows(s, "sensors"), 2);
    assert_int_equal(rawws_send_frame(&w, 1, 0, 8, "\x03\xe8", 2, 1), 0);
    st_expect_close(&w, 1000);
    rawws_close(&w);
    qsink_stop(s);
    /* a key that does not match is refused at start with a clear message */
    qsink_opts bad = {.tls_cert = cert, .tls_key = ca};
    char err[1024];
    assert_null(qsink_start(&bad, err, sizeof err));
    assert_non_null(strstr(err, "srv.pem"));
    tu_rmtree(DIR_);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wss_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
