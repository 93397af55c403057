/* Cross-key rules (docs/CONFIGURATION.md, "Cross-key rules") and the effective values they
 * resolve: mode-dependent sf_max_total_bytes, tls_ca implied by tls_roots, and
 * initial_connect_retry promoted by reconnect_* keys. */
#include "conf_testutil.h"

static void addr_is_required(void **state) {
    (void) state;
    conf_bad("ws::sf_dir=/d;", "addr: required key missing");
    conf_bad("wss::", "addr: required key missing");
}

static void authentication(void **state) {
    (void) state;
    conf_bad("ws::addr=a;token=t;username=u;",
             "token at position 11 cannot be combined with username/password (conflicting "
             "authentication)");
    conf_bad("ws::addr=a;password=p;token=t;", "conflicting authentication");
    conf_bad("ws::addr=a;username=u;", "username at position 11 requires password (incomplete "
                                       "Basic credentials)");
    conf_bad("ws::addr=a;pass=p;", "password at position 11 requires username");
    qsf_conf *c = conf_ok("ws::addr=a;token=t;");
    assert_string_equal(c->token, "t");
    qsf_conf_free(c);
}

static void tls_rules(void **state) {
    (void) state;
    conf_bad("wss::addr=a;tls_roots=/ca.pem;tls_verify=unsafe_off;",
             "tls_roots cannot be combined with tls_verify=unsafe_off");
    conf_bad("wss::addr=a;tls_roots_password=x;", "tls_roots_password at position 12 requires "
                                                  "tls_roots");
    conf_bad("wss::addr=a;tls_ca=pem_file;", "tls_ca=pem_file at position 12 requires tls_roots");
    conf_bad("wss::addr=a;tls_roots=/ca.pem;tls_ca=os_roots;",
             "cannot be combined with tls_ca=os_roots: tls_roots implies tls_ca=pem_file");
    conf_bad("wss::addr=a;tls_roots=/ca.pem;tls_ca=webpki_roots;", "conflicting root store");
    qsf_conf *c = conf_ok("wss::addr=a;tls_roots=/ca.p12;tls_roots_password=pw;");
    assert_int_equal(c->tls_ca, QSF_CONF_TLS_CA_PEM_FILE);
    assert_false(qsf_conf_is_set(c, QSF_CONF_KEY_tls_ca));
    assert_non_null(strstr(conf_dump_str(c), "tls_ca=pem_file  (default; implied by tls_roots)"));
    qsf_conf_free(c);
    conf_expect("wss::addr=a;tls_roots=/ca.pem;tls_ca=pem_file;", tls_ca, QSF_CONF_TLS_CA_PEM_FILE);
    conf_expect("wss::addr=a;tls_verify=unsafe_off;", tls_verify, QSF_CONF_TLS_VERIFY_UNSAFE_OFF);
    /* TLS keys on ws:: are validated but not an error */
    conf_expect("ws::addr=a;tls_verify=on;tls_ca=webpki_roots;", tls, false);
    conf_bad("ws::addr=a;tls_verify=maybe;", "tls_verify: 'maybe'");
}

static void store_and_forward(void **state) {
    (void) state;
    conf_bad("ws::addr=a;sf_durability=periodic;", "sf_durability=periodic at position 11 "
                                                   "requires sf_dir");
    conf_bad("ws::addr=a;sf_durability=append;", "sf_durability=append at position 11 requires "
                                                 "sf_dir");
    conf_bad("ws::addr=a;sf_durability=flush;", "requires sf_dir");
    conf_bad("ws::addr=a;sf_sync_interval_millis=1000;sf_dir=/d;",
             "sf_sync_interval_millis at position 11 requires sf_durability=periodic");
    conf_bad("ws::addr=a;sf_sync_interval_millis=1000;sf_dir=/d;sf_durability=append;",
             "requires sf_durability=periodic");
    conf_bad("ws::addr=a;drain_orphans=on;", "drain_orphans=on at position 11 requires sf_dir");
    qsf_conf *c = conf_ok("ws::addr=a;drain_orphans=off;sf_durability=memory;");
    assert_false(c->drain_orphans);
    qsf_conf_free(c);
    c = conf_ok("ws::addr=a;sf_dir=/d;sf_durability=periodic;sf_sync_interval_millis=1000;");
    assert_int_equal(c->sf_durability, QSF_CONF_SF_DURABILITY_PERIODIC);
    assert_int_equal(c->sf_sync_interval_millis, 1000);
    qsf_conf_free(c);
}

static void total_bytes_default_depends_on_mode(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;");
    assert_int_equal(c->sf_max_total_bytes, 128ULL << 20);
    assert_non_null(strstr(conf_dump_str(c), "sf_max_total_bytes=128m  (default; memory-mode "
                                             "default 128m)"));
    qsf_conf_free(c);
    c = conf_ok("ws::addr=a;sf_dir=/d;");
    assert_int_equal(c->sf_max_total_bytes, 10ULL << 30);
    assert_non_null(strstr(conf_dump_str(c), "sf_max_total_bytes=10g  (default; SF-mode default"));
    qsf_conf_free(c);
}

static void total_bytes_is_at_least_two_segments(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;sf_max_segment_bytes=1g;sf_max_total_bytes=1g;");
    assert_int_equal(c->sf_max_total_bytes, 2ULL << 30);
    assert_true(qsf_conf_is_set(c, QSF_CONF_KEY_sf_max_total_bytes));
    assert_non_null(strstr(conf_dump_str(c), "sf_max_total_bytes=2g  (set; raised to 2 x "
                                             "sf_max_segment_bytes)"));
    qsf_conf_free(c);
    /* also the mode default is raised */
    conf_expect("ws::addr=a;sf_max_segment_bytes=100m;", sf_max_total_bytes, 200ULL << 20);
    /* exactly two segments is kept, and so is more */
    c = conf_ok("ws::addr=a;sf_max_segment_bytes=1m;sf_max_total_bytes=2m;");
    assert_int_equal(c->sf_max_total_bytes, 2ULL << 20);
    assert_null(strstr(conf_dump_str(c), "raised"));
    qsf_conf_free(c);
    /* the largest segment the parser accepts: two of them, no overflow */
    conf_expect("ws::addr=a;sf_max_segment_bytes=2147483647;", sf_max_total_bytes,
                2 * 2147483647ULL);
}

static void auto_flush(void **state) {
    (void) state;
    static const char *const triggers[] = {"auto_flush_rows=5", "auto_flush_interval=off",
                                           "auto_flush_bytes=1m"};
    for (size_t i = 0; i < 3; i++) {
        char s[128];
        snprintf(s, sizeof s, "ws::addr=a;auto_flush=off;%s;", triggers[i]);
        conf_bad2(s, "auto_flush=off at position 11 cannot be combined with ",
                  "(conflicting auto-flush settings)");
    }
    qsf_conf *c = conf_ok("ws::addr=a;auto_flush=off;");
    assert_false(c->auto_flush);
    assert_int_equal(c->auto_flush_rows, 1000); /* defaults stay; the switch wins */
    qsf_conf_free(c);
    c = conf_ok("ws::addr=a;auto_flush=on;auto_flush_rows=10;");
    assert_int_equal(c->auto_flush_rows, 10);
    qsf_conf_free(c);
}

static void buffers(void **state) {
    (void) state;
    conf_bad("ws::addr=a;init_buf_size=2m;max_buf_size=1m;",
             "init_buf_size (2097152 bytes) exceeds max_buf_size (1048576 bytes)");
    conf_bad("ws::addr=a;max_buf_size=32k;", "init_buf_size (65536 bytes) exceeds");
    qsf_conf *c = conf_ok("ws::addr=a;init_buf_size=1m;max_buf_size=1m;");
    assert_int_equal(c->init_buf_size, c->max_buf_size);
    qsf_conf_free(c);
}

static void unsupported_values(void **state) {
    (void) state;
    conf_bad("ws::addr=a;qwp_ws_progress=manual;", "qwp_ws_progress=manual at position 11 is "
                                                   "not supported: qsf always runs its own I/O "
                                                   "thread");
    qsf_conf *c = conf_ok("ws::addr=a;transaction=off;qwp_ws_progress=background;");
    assert_false(c->transaction);
    qsf_conf_free(c);
    c = conf_ok("ws::addr=a;transaction=on;"); /* accepted: lib/sender/txn.c */
    assert_true(c->transaction);
    qsf_conf_free(c);
}

static void reconnect_keys_promote_initial_connect_retry(void **state) {
    (void) state;
    static const char *const keys[] = {"reconnect_initial_backoff_millis",
                                       "reconnect_max_backoff_millis",
                                       "reconnect_max_duration_millis"};
    for (size_t i = 0; i < 3; i++) {
        char s[128];
        snprintf(s, sizeof s, "ws::addr=a;%s=0;", keys[i]);
        qsf_conf *c = conf_ok(s);
        assert_int_equal(c->initial_connect_retry, QSF_CONF_INITIAL_CONNECT_RETRY_ON);
        assert_false(qsf_conf_is_set(c, QSF_CONF_KEY_initial_connect_retry));
        assert_non_null(strstr(conf_dump_str(c), "initial_connect_retry=on  (default; promoted "
                                                 "to on because a reconnect_* key is set)"));
        qsf_conf_free(c);
    }
    /* an explicit value wins, whatever it is */
    conf_expect("ws::addr=a;reconnect_max_backoff_millis=10;initial_connect_retry=off;",
                initial_connect_retry, QSF_CONF_INITIAL_CONNECT_RETRY_OFF);
    conf_expect("ws::addr=a;initial_connect_retry=async;reconnect_max_backoff_millis=10;",
                initial_connect_retry, QSF_CONF_INITIAL_CONNECT_RETRY_ASYNC);
    conf_expect("ws::addr=a;", initial_connect_retry, QSF_CONF_INITIAL_CONNECT_RETRY_OFF);
}

static void rule_order_is_deterministic(void **state) {
    (void) state;
    /* several violations: the first rule of the table is reported */
    conf_bad("ws::token=t;username=u;", "addr: required key missing");
    conf_bad("ws::addr=a;token=t;username=u;drain_orphans=on;", "conflicting authentication");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(addr_is_required),
        cmocka_unit_test(authentication),
        cmocka_unit_test(tls_rules),
        cmocka_unit_test(store_and_forward),
        cmocka_unit_test(total_bytes_default_depends_on_mode),
        cmocka_unit_test(total_bytes_is_at_least_two_segments),
        cmocka_unit_test(auto_flush),
        cmocka_unit_test(buffers),
        cmocka_unit_test(unsupported_values),
        cmocka_unit_test(reconnect_keys_promote_initial_connect_retry),
        cmocka_unit_test(rule_order_is_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
