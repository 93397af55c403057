/* Connect-string grammar: schema, pairs, ';;' escaping, control characters,
 * UTF-8, empty values, duplicate and unknown keys, positions in messages. */
#include "conf_testutil.h"

#include <stdlib.h>

static void schemas(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=localhost:9000;");
    assert_false(c->tls);
    qsf_conf_free(c);
    c = conf_ok("wss::addr=localhost:9000");
    assert_true(c->tls);
    qsf_conf_free(c);
    static const char *const others[] = {"http", "https", "tcp", "tcps", "udp", "WS", "Wss", "ws2"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        char s[64], want[64];
        snprintf(s, sizeof s, "%s::addr=a:9000;", others[i]);
        snprintf(want, sizeof want, "unsupported schema '%s'", others[i]);
        conf_bad2(s, want, "qsf speaks QWP over WebSocket; use ws:: or wss::");
    }
}

static void malformed_schema(void **state) {
    (void) state;
    conf_bad("", "expected '::' at position 0");
    conf_bad("ws", "expected '::' at position 2");
    conf_bad("ws:addr=a;", "expected '::' at position 2");
    conf_bad("::addr=a;", "missing schema at position 0");
    conf_bad("localhost:9000", "expected '::' at position 9");
    conf_bad("w s::addr=a;", "invalid character ' ' at position 1 in the schema");
}

static void escaping(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=localhost;password=p;;ssw;;rd;username=u;");
    assert_string_equal(c->password, "p;ssw;rd");
    assert_string_equal(c->username, "u");
    qsf_conf_free(c);
    /* a value may start or end with an escaped ';', and contain '=' */
    c = conf_ok("ws::addr=a;username=;;u=v;;;password=x");
    assert_string_equal(c->username, ";u=v;");
    assert_string_equal(c->password, "x");
    qsf_conf_free(c);
    c = conf_ok("ws::addr=a;zone=z;;");
    assert_string_equal(c->zone, "z;");
    qsf_conf_free(c);
}

static void whitespace_is_kept_in_values_and_invalid_in_keys(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;zone= eu west ;");
    assert_string_equal(c->zone, " eu west ");
    qsf_conf_free(c);
    conf_bad("ws::addr=a; zone=x;", "invalid character ' ' at position 11 in a key");
    conf_bad("ws::addr=a;zone =x;", "invalid character ' ' at position 15 in a key");
    /* numbers are not trimmed either */
    conf_bad("ws::addr=a;auth_timeout_ms= 5;", "auth_timeout_ms: ' 5' at position 27 is not an");
}

static void trailing_semicolon_is_optional(void **state) {
    (void) state;
    qsf_conf *a = conf_ok("ws::addr=a;sender_id=x");
    qsf_conf *b = conf_ok("ws::addr=a;sender_id=x;");
    assert_true(qsf_conf_equal(a, b));
    qsf_conf_free(a);
    qsf_conf_free(b);
}

static void empty_pairs_keys_and_values(void **state) {
    (void) state;
    conf_bad("ws::;addr=a;", "empty pair at position 4");
    /* ";;" is a literal ';', so this addr value is "a;" */
    conf_bad("ws::addr=a;;", "addr: 'a;' at position 9 has an invalid character");
    conf_bad("ws::addr=a;=x;", "empty key at position 11");
    conf_bad("ws::addr=a;sender_id=;", "sender_id: empty value at position 21");
    conf_bad("ws::addr=a;zone=", "zone: empty value at position 16");
    conf_bad("ws::addr=;", "addr: empty value at position 9");
    conf_bad("ws::addr=a;sender_id;", "key 'sender_id' at position 11 has no '='");
    conf_bad("ws::addr=a;sender_id", "key 'sender_id' at position 11 has no '='");
    conf_bad("ws::", "addr: required key missing");
}

static void control_characters_are_rejected(void **state) {
    (void) state;
    conf_bad("ws::addr=a;zone=x\ny;",
             "control character U+000A at position 17 in the value of zone");
    conf_bad("ws::addr=a;zone=x\ty;", "control character U+0009 at position 17");
    conf_bad("ws::addr=a;zone=x\x7fy;", "control character U+007F at position 17");
    conf_bad("ws::addr=a;zone=x\xc2\x85y;", "control character U+0085 at position 17");
    conf_bad("ws::addr=a;zo\x01ne=x;", "control character U+0001 at position 13 in a key");
    conf_bad("w\x1bs::addr=a;", "control character U+001B at position 1 in the schema");
    /* an embedded NUL inside the given length is a control character too */
    qsf_conf *c = NULL;
    qsf_errinfo err;
    static const char nul[] = "ws::addr=a;zone=x\0y;";
    assert_int_equal(qsf_conf_parse(nul, sizeof nul - 1, &c, &err), QSF_E_CONF);
    assert_non_null(strstr(err.msg, "control character U+0000 at position 17"));
    /* U+00A0 (after the C1 range) is an ordinary character */
    c = conf_ok("ws::addr=a;zone=x\xc2\xa0y;");
    assert_string_equal(c->zone, "x\xc2\xa0y");
    qsf_conf_free(c);
}

static void utf8_is_validated(void **state) {
    (void) state;
    qsf_conf *c =
        conf_ok("ws::addr=a;zone=z\xc3\xbcrich-\xe6\x9d\xb1\xe4\xba\xac-\xf0\x9f\x9a\x80;");
    assert_string_equal(c->zone, "z\xc3\xbcrich-\xe6\x9d\xb1\xe4\xba\xac-\xf0\x9f\x9a\x80");
    qsf_conf_free(c);
    static const char *const bad[] = {
        "ws::addr=a;zone=\xff;",             /* not a lead byte */
        "ws::addr=a;zone=\xc3;",             /* truncated */
        "ws::addr=a;zone=\xc0\xaf;",         /* overlong '/' */
        "ws::addr=a;zone=\xed\xa0\x80;",     /* UTF-16 surrogate */
        "ws::addr=a;zone=\xf4\x90\x80\x80;", /* past U+10FFFF */
        "ws::addr=a;zone=\x80;",             /* lone continuation byte */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        conf_bad(bad[i], "invalid UTF-8 at position 16 in the value of zone");
    conf_bad("ws::addr=a;z\xc3\xbcne=x;", "non-ASCII character U+00FC at position 12 in a key");
}

static void values_may_contain_equals(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;token=abc==;");
    assert_string_equal(c->token, "abc==");
    qsf_conf_free(c);
}

static void duplicates_and_aliases(void **state) {
    (void) state;
    conf_bad("ws::addr=a;sf_dir=/a;sf_dir=/b;",
             "duplicate key: sf_dir at position 21 (first given at position 11)");
    conf_bad("ws::addr=a;user=u;username=v;pass=p;", "duplicate key: username at position 18");
    conf_bad("ws::addr=a;username=u;user=v;pass=p;", "duplicate key: user at position 22");
    conf_bad("ws::addr=a;password=x;pass=y;user=u;", "duplicate key: pass at position 22");
    /* a duplicate is rejected even with the same value */
    conf_bad("ws::addr=a;auto_flush=on;auto_flush=on;", "duplicate key: auto_flush");
    /* aliases work on their own */
    qsf_conf *c = conf_ok("ws::addr=a;user=u;pass=p;");
    assert_string_equal(c->username, "u");
    assert_string_equal(c->password, "p");
    assert_true(qsf_conf_is_set(c, QSF_CONF_KEY_username));
    assert_true(qsf_conf_is_set(c, QSF_CONF_KEY_password));
    qsf_conf_free(c);
}

static void unknown_keys(void **state) {
    (void) state;
    conf_bad("ws::addr=a;Sf_dir=/d;", "unknown configuration key: Sf_dir at position 11");
    conf_bad("ws::addr=a;Sf_dir=/d;", "did you mean sf_dir?");
    conf_bad("ws::addr=a;USER=u;", "did you mean username?");
    const char *msg = conf_bad("ws::addr=a;frobnicate=1;", "unknown configuration key: frobnicate");
    assert_null(strstr(msg, "did you mean"));
}

static void rejected_keys_give_their_reason(void **state) {
    (void) state;
    static const struct {
        const char *key, *why;
    } cases[] = {
        {"max_datagram_size", "UDP transport only"},
        {"protocol_version", "ILP over HTTP/TCP only"},
        {"retry_timeout", "ILP over HTTP/TCP only"},
        {"request_min_throughput", "ILP over HTTP/TCP only"},
        {"ping_timeout", ".NET-only"},
        {"on_schema_mismatch_error", ".NET-only"},
        {"replay_exec", "Go-only egress key"},
        {"in_flight_window", "historic key"},
        {"gorilla", "historic key"},
        {"lb_strategy", "historic key"},
        {"error_event_inbox_capacity", "use error_inbox_capacity"},
        {"connection_event_inbox_capacity", "use connection_listener_inbox_capacity"},
        {"serverInfoTimeoutMs", "builder-only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char s[128], want[96];
        snprintf(s, sizeof s, "ws::addr=a;%s=1;", cases[i].key);
        snprintf(want, sizeof want, "unknown configuration key: %s at position 11", cases[i].key);
        conf_bad2(s, want, cases[i].why);
    }
}

static void first_error_in_string_order_wins(void **state) {
    (void) state;
    conf_bad("ws::addr=a;auth_timeout_ms=0;bogus=1;", "auth_timeout_ms: '0' at position 27");
    conf_bad("ws::addr=a;bogus=1;auth_timeout_ms=0;", "unknown configuration key: bogus");
    /* value errors come before cross-key rules */
    conf_bad("ws::sf_durability=periodic;auth_timeout_ms=x;", "auth_timeout_ms: 'x'");
}

static void error_position_matches_the_value(void **state) {
    (void) state;
    const char *s = "wss::addr=db:9000;sender_id=ingest;sf_max_total_bytes=12x;";
    const char *msg = conf_bad(s, "sf_max_total_bytes: '12x' at position ");
    size_t pos = (size_t) atoi(strstr(msg, "position ") + 9);
    assert_memory_equal(s + pos, "12x;", 4);
    assert_non_null(strstr(msg, "is not a size (expected digits with an optional k/m/g/t "
                                "suffix)"));
}

static void long_values_are_clipped_in_messages(void **state) {
    (void) state;
    char s[4096];
    int n = snprintf(s, sizeof s, "ws::addr=a;auth_timeout_ms=");
    memset(s + n, '7', 2000);
    strcpy(s + n + 2000, "x;");
    const char *msg = conf_bad(s, "auth_timeout_ms: '7777");
    assert_non_null(strstr(msg, "...' at position 27 is out of the 64-bit range"));
    assert_true(strlen(msg) < 300);
}

static void bad_arguments(void **state) {
    (void) state;
    qsf_conf *c = NULL;
    qsf_errinfo err;
    assert_int_equal(qsf_conf_parse(NULL, 3, &c, &err), QSF_E_INVAL);
    assert_int_equal(qsf_conf_parse("ws::addr=a", 10, NULL, &err), QSF_E_INVAL);
    assert_int_equal(qsf_conf_parse(NULL, 0, &c, &err), QSF_E_CONF);
    /* the length is honoured: the bytes after it are not read */
    assert_int_equal(qsf_conf_parse("ws::addr=a;bogus=1", 10, &c, NULL), QSF_OK);
    assert_int_equal(c->n_addrs, 1);
    qsf_conf_free(c);
    qsf_conf_free(NULL);
}

static void from_env(void **state) {
    (void) state;
    qsf_conf *c = NULL;
    qsf_errinfo err;
    unsetenv("QDB_CLIENT_CONF");
    assert_int_equal(qsf_conf_from_env(&c, &err), QSF_E_CONF);
    assert_non_null(strstr(err.msg, "QDB_CLIENT_CONF is not set"));
    setenv("QDB_CLIENT_CONF", "", 1);
    assert_int_equal(qsf_conf_from_env(&c, &err), QSF_E_CONF);
    assert_non_null(strstr(err.msg, "QDB_CLIENT_CONF is empty"));
    setenv("QDB_CLIENT_CONF", "wss::addr=h:1234;sender_id=env;", 1);
    assert_int_equal(qsf_conf_from_env(&c, &err), QSF_OK);
    assert_true(c->tls);
    assert_int_equal(c->addrs[0].port, 1234);
    assert_string_equal(c->sender_id, "env");
    qsf_conf_free(c);
    setenv("QDB_CLIENT_CONF", "ws::addr=h;sender_id=a.b;", 1);
    assert_int_equal(qsf_conf_from_env(&c, &err), QSF_E_CONF);
    assert_null(c);
    assert_non_null(strstr(err.msg, "QDB_CLIENT_CONF: sender_id: 'a.b' at position 21"));
    unsetenv("QDB_CLIENT_CONF");
}

static void reference_examples_parse(void **state) {
    (void) state;
    static const char *const ok[] = {
        "ws::addr=localhost:9000;",
        "wss::addr=questdb.example.com:443;username=admin;password=secret;",
        "wss::addr=node-a:9000,node-b:9000;sf_dir=/var/lib/myapp/qdb-sf;sender_id=ingest-1;",
        "wss::addr=a:9000,b:9000,c:9000;sf_dir=/var/lib/qdb-sender;sender_id=ingest-svc;"
        "request_durable_ack=on;",
        "wss::addr=a:9000;sf_dir=/var/lib/qdb-sender;sender_id=worker-7;drain_orphans=on;"
        "max_background_drainers=8;",
        "wss::addr=primary:9000;sf_dir=/var/lib/qdb-sender;sf_max_total_bytes=50G;"
        "initial_connect_retry=async;",
        "ws::addr=[::1]:9000,127.0.0.1;sf_dir=/data/sf;sf_durability=periodic;"
        "sf_sync_interval_millis=1000;",
        "ws::addr=localhost;password=p;;ssw;;rd;username=u;",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        qsf_conf_free(conf_ok(ok[i]));
    qsf_conf *c = conf_ok(ok[5]);
    assert_int_equal(c->sf_max_total_bytes, 50ULL << 30);
    assert_int_equal(c->initial_connect_retry, QSF_CONF_INITIAL_CONNECT_RETRY_ASYNC);
    qsf_conf_free(c);
    c = conf_ok(ok[7]);
    assert_string_equal(c->addrs[0].host, "localhost");
    assert_int_equal(c->addrs[0].port, 9000);
    assert_string_equal(c->password, "p;ssw;rd");
    qsf_conf_free(c);
}

static void reference_rejected_examples(void **state) {
    (void) state;
    conf_bad("ws::addr=a:9000,,b:9000;", "empty addr entry");
    conf_bad("ws::addr=a;addr=a:9000;", "duplicate addr entry: a:9000");
    conf_bad("ws::addr=::1;", "IPv6 literal without brackets");
    conf_bad("ws::addr=a;token=t;username=u;", "token at position 11 cannot be combined with "
                                               "username/password");
    conf_bad("ws::addr=a;sf_durability=periodic;", "sf_durability=periodic at position 11 "
                                                   "requires sf_dir");
    conf_bad("ws::addr=a;sf_sync_interval_millis=1000;sf_dir=/d;",
             "requires sf_durability=periodic");
    conf_bad("ws::addr=a;sender_id=my.slot;sf_dir=/d;", "'.' not allowed in sender_id");
    conf_bad("http::addr=a:9000;", "unsupported schema");
    conf_bad("ws::addr=a;Sf_dir=/d;", "unknown configuration key: Sf_dir");
}

static void long_strings_parse_in_linear_time(void **state) {
    (void) state;
    /* 1 MiB: one huge value, then 60k addr entries (duplicate detection is hashed) */
    size_t cap = 1 << 20;
    char *s = malloc(cap + 64);
    int n = sprintf(s, "ws::addr=a;zone=");
    memset(s + n, 'z', cap - (size_t) n - 1);
    s[cap - 1] = ';';
    qsf_conf *c = NULL;
    assert_int_equal(qsf_conf_parse(s, cap, &c, NULL), QSF_OK);
    assert_int_equal(strlen(c->zone), cap - (size_t) n - 1);
    qsf_conf_free(c);
    size_t len = (size_t) sprintf(s, "ws::addr=h0");
    for (int i = 1; len + 16 < cap; i++)
        len += (size_t) sprintf(s + len, ",h%d", i);
    assert_int_equal(qsf_conf_parse(s, len, &c, NULL), QSF_OK);
    assert_true(c->n_addrs > 60000);
    char last[32];
    snprintf(last, sizeof last, "h%zu", c->n_addrs - 1);
    assert_string_equal(c->addrs[c->n_addrs - 1].host, last);
    qsf_conf_free(c);
    free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schemas),
        cmocka_unit_test(malformed_schema),
        cmocka_unit_test(escaping),
        cmocka_unit_test(whitespace_is_kept_in_values_and_invalid_in_keys),
        cmocka_unit_test(trailing_semicolon_is_optional),
        cmocka_unit_test(empty_pairs_keys_and_values),
        cmocka_unit_test(control_characters_are_rejected),
        cmocka_unit_test(utf8_is_validated),
        cmocka_unit_test(values_may_contain_equals),
        cmocka_unit_test(duplicates_and_aliases),
        cmocka_unit_test(unknown_keys),
        cmocka_unit_test(rejected_keys_give_their_reason),
        cmocka_unit_test(first_error_in_string_order_wins),
        cmocka_unit_test(error_position_matches_the_value),
        cmocka_unit_test(long_values_are_clipped_in_messages),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(from_env),
        cmocka_unit_test(reference_examples_parse),
        cmocka_unit_test(reference_rejected_examples),
        cmocka_unit_test(long_strings_parse_in_linear_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
