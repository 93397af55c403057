/* The effective-configuration dump, the canonical connect string (round trip),
 * clone and equality. */
#include "conf_testutil.h"

#include <stdlib.h>

static void dump_lists_every_key_once_in_table_order(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;");
    const char *d = conf_dump_str(c);
    assert_memory_equal(d, "schema=ws  (set)\naddr=a:9000  (set)\n", 36);
    const char *prev = d;
    for (size_t k = 0; k < QSF_CONF_NKEYS; k++) {
        char want[96];
        snprintf(want, sizeof want, "\n%s=", qsf_conf_keys[k].name);
        const char *at = strstr(d, want);
        if (!at)
            fail_msg("dump lacks %s", qsf_conf_keys[k].name);
        assert_true(at >= prev);
        assert_null(strstr(at + 1, want));
        prev = at;
    }
    size_t lines = 0;
    for (const char *p = d; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, QSF_CONF_NKEYS + 1);
    qsf_conf_free(c);
}

static void dump_marks_set_and_default(void **state) {
    (void) state;
    qsf_conf *c =
        conf_ok("wss::addr=[::1]:9001,h;sender_id=s1;sf_dir=/d;sf_max_segment_bytes=65537;"
                "auto_flush_rows=off;initial_credit=3t;connect_timeout=250;");
    const char *d = conf_dump_str(c);
    static const char *const lines[] = {
        "schema=wss  (set)\n",
        "\naddr=[::1]:9001,h:9000  (set)\n",
        "\nsender_id=s1  (set)\n",
        "\nsf_dir=/d  (set)\n",
        "\nsf_max_segment_bytes=65537  (set)\n",
        "\nauto_flush_rows=off  (set)\n",
        "\ninitial_credit=3t  (set)\n",
        "\nconnect_timeout=250  (set)\n",
        "\nclient_id=qsf/" QSF_VERSION_STRING "  (default)\n",
        "\nsf_max_total_bytes=10g  (default; SF-mode default 10g)\n",
        "\nauto_flush_bytes=off  (default)\n",
        "\ninit_buf_size=64k  (default)\n",
        "\nmax_batch_rows=<unset>  (default)\n",
        "\nzone=<unset>  (default)\n",
        "\ntls_ca=os_roots  (default)\n",
        "\ninitial_connect_retry=off  (default)\n",
        "\nrequest_durable_ack=off  (default)\n",
        "\nclose_flush_timeout_millis=5000  (default)\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!strstr(d, lines[i]))
            fail_msg("dump lacks '%s':\n%s", lines[i], d);
    qsf_conf_free(c);
}

static void dump_has_snprintf_semantics(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;");
    size_t need = qsf_conf_dump(c, NULL, 0);
    char *full = malloc(need + 1), small[10];
    assert_int_equal(qsf_conf_dump(c, full, need + 1), need);
    assert_int_equal(strlen(full), need);
    assert_int_equal(qsf_conf_dump(c, small, sizeof small), need);
    assert_string_equal(small, "schema=ws");
    assert_int_equal(qsf_conf_dump(NULL, small, sizeof small), 0);
    assert_string_equal(small, "");
    free(full);
    qsf_conf_free(c);
}

static qsf_conf *reparse(const qsf_conf *c, bool secrets) {
    size_t n = qsf_conf_to_string(c, secrets, NULL, 0);
    char *s = malloc(n + 1);
    assert_int_equal(qsf_conf_to_string(c, secrets, s, n + 1), n);
    qsf_conf *back = conf_ok(s);
    free(s);
    return back;
}

static void canonical_string_round_trips(void **state) {
    (void) state;
    static const char *const cases[] = {
        "ws::addr=localhost;",
        "wss::addr=[fe80::1%eth0]:1,B:2;addr=c;user=u;pass=p;;w;;;tls_roots=/r;;x;",
        "ws::addr=a;sf_dir=/d;sf_durability=flush;sf_max_segment_bytes=1g;sf_max_total_bytes=1g;",
        "ws::addr=a;reconnect_max_backoff_millis=0;auto_flush_bytes=0;auto_flush_rows=off;",
        "ws::addr=a;initial_connect_retry=true;sf_max_total_bytes=100B;max_buf_size=65537;",
        "ws::addr=a;close_flush_timeout_millis=-1;durable_ack_keepalive_interval_millis=-5;",
        "ws::addr=a;zone= x;client_id=c id;token=t=;initial_credit=0;",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qsf_conf *c = conf_ok(cases[i]);
        qsf_conf *back = reparse(c, true);
        if (!qsf_conf_equal(c, back))
            fail_msg("round trip of '%s' differs", cases[i]);
        qsf_conf_free(back);
        qsf_conf_free(c);
    }
}

static void canonical_string_form(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("wss::user=u;addr=B:2;sf_durability=flush;sf_dir=/d;pass=a;;b;"
                          "addr=[::1];sf_max_segment_bytes=4096b;initial_connect_retry=sync;");
    char s[512];
    qsf_conf_to_string(c, true, s, sizeof s);
    assert_string_equal(s, "wss::addr=B:2,[::1]:9000;username=u;password=a;;b;sf_dir=/d;"
                           "sf_max_segment_bytes=4k;sf_durability=append;"
                           "initial_connect_retry=on;");
    qsf_conf_free(c);
}

static void equality_sees_every_difference(void **state) {
    (void) state;
    static const char *const variants[] = {
        "ws::addr=a;",
        "wss::addr=a;",
        "ws::addr=a:1;",
        "ws::addr=[::1];",
        "ws::addr=a,b;",
        "ws::addr=a;auth_timeout_ms=15000;",
        "ws::addr=a;zone=z;",
        "ws::addr=a;failover=off;",
        "ws::addr=a;target=replica;",
        "ws::addr=a;sf_max_segment_bytes=8m;",
    };
    size_t n = sizeof variants / sizeof variants[0];
    for (size_t i = 0; i < n; i++) {
        qsf_conf *a = conf_ok(variants[i]);
        for (size_t j = 0; j < n; j++) {
            qsf_conf *b = conf_ok(variants[j]);
            assert_int_equal(qsf_conf_equal(a, b), i == j);
            qsf_conf_free(b);
        }
        qsf_conf_free(a);
    }
}

static void clone_is_deep_and_equal(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a,b;sf_dir=/d;token=t;zone=z;");
    qsf_conf *k = qsf_conf_clone(c);
    assert_non_null(k);
    assert_true(qsf_conf_equal(c, k));
    assert_ptr_not_equal(k->sf_dir, c->sf_dir);
    assert_ptr_not_equal(k->addrs, c->addrs);
    qsf_conf_free(c); /* the clone must not share anything with the original */
    assert_string_equal(k->sf_dir, "/d");
    assert_string_equal(k->token, "t");
    assert_string_equal(k->addrs[1].host, "b");
    assert_true(qsf_conf_is_set(k, QSF_CONF_KEY_zone));
    qsf_conf_free(k);
    assert_null(qsf_conf_clone(NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dump_lists_every_key_once_in_table_order),
        cmocka_unit_test(dump_marks_set_and_default),
        cmocka_unit_test(dump_has_snprintf_semantics),
        cmocka_unit_test(canonical_string_round_trips),
        cmocka_unit_test(canonical_string_form),
        cmocka_unit_test(equality_sees_every_difference),
        cmocka_unit_test(clone_is_deep_and_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
