/* Every key: its default, its type's syntax, and the edges of its range (below,
 * at, above). Expected values are written out here, independently of the
 * property table, so a wrong row in conf/keys.def fails a test. */
#include "conf_testutil.h"

#include <stdlib.h>

static void defaults(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=localhost");
    assert_false(c->tls);
    assert_string_equal(c->client_id, "qsf/" QSF_VERSION_STRING);
    assert_null(c->username);
    assert_null(c->password);
    assert_null(c->token);
    assert_int_equal(c->auth_timeout_ms, 15000);
    assert_int_equal(c->connect_timeout, 0);
    assert_int_equal(c->tls_verify, QSF_CONF_TLS_VERIFY_ON);
    assert_null(c->tls_roots);
    assert_null(c->tls_roots_password);
    assert_int_equal(c->tls_ca, QSF_CONF_TLS_CA_OS_ROOTS);
    assert_null(c->sf_dir);
    assert_string_equal(c->sender_id, "default");
    assert_int_equal(c->sf_max_segment_bytes, 4 << 20);
    assert_int_equal(c->sf_max_total_bytes, 128 << 20);
    assert_int_equal(c->sf_durability, QSF_CONF_SF_DURABILITY_MEMORY);
    assert_int_equal(c->sf_sync_interval_millis, 5000);
    assert_int_equal(c->sf_append_deadline_millis, 30000);
    assert_false(c->drain_orphans);
    assert_int_equal(c->max_background_drainers, 4);
    assert_int_equal(c->catch_up_cap_gap_min_escalation_window_millis, 300000);
    assert_false(c->transaction);
    assert_int_equal(c->reconnect_initial_backoff_millis, 100);
    assert_int_equal(c->reconnect_max_backoff_millis, 5000);
    assert_int_equal(c->reconnect_max_duration_millis, 300000);
    assert_int_equal(c->initial_connect_retry, QSF_CONF_INITIAL_CONNECT_RETRY_OFF);
    assert_int_equal(c->close_flush_timeout_millis, 5000);
    assert_int_equal(c->ping_interval_millis, 5000);
    assert_int_equal(c->liveness_timeout_millis, 15000);
    assert_int_equal(c->ack_timeout_millis, 30000);
    assert_int_equal(c->frozen_server_timeout_millis, 300000);
    assert_false(c->request_durable_ack);
    assert_int_equal(c->durable_ack_keepalive_interval_millis, 200);
    assert_int_equal(c->error_inbox_capacity, 256);
    assert_int_equal(c->connection_listener_inbox_capacity, 64);
    assert_int_equal(c->max_frame_rejections, 4);
    assert_int_equal(c->poison_min_escalation_window_millis, 5000);
    assert_int_equal(c->on_server_error, QSF_CONF_ON_SERVER_ERROR_AUTO);
    assert_int_equal(c->on_schema_error, QSF_CONF_ON_SCHEMA_ERROR_AUTO);
    assert_int_equal(c->on_parse_error, QSF_CONF_ON_PARSE_ERROR_AUTO);
    assert_int_equal(c->on_internal_error, QSF_CONF_ON_INTERNAL_ERROR_AUTO);
    assert_int_equal(c->on_security_error, QSF_CONF_ON_SECURITY_ERROR_AUTO);
    assert_int_equal(c->on_write_error, QSF_CONF_ON_WRITE_ERROR_AUTO);
    assert_true(c->auto_flush);
    assert_int_equal(c->auto_flush_rows, 1000);
    assert_int_equal(c->auto_flush_interval, 100);
    assert_int_equal(c->auto_flush_bytes, 0);
    assert_int_equal(c->init_buf_size, 65536);
    assert_int_equal(c->max_buf_size, 104857600);
    assert_int_equal(c->max_name_len, 127);
    assert_int_equal(c->qwp_ws_progress, QSF_CONF_QWP_WS_PROGRESS_BACKGROUND);
    assert_int_equal(c->target, QSF_CONF_TARGET_ANY);
    assert_null(c->zone);
    assert_true(c->failover);
    assert_int_equal(c->failover_max_attempts, 8);
    assert_int_equal(c->failover_max_duration_ms, 30000);
    assert_int_equal(c->failover_backoff_initial_ms, 50);
    assert_int_equal(c->failover_backoff_max_ms, 1000);
    assert_int_equal(c->compression, QSF_CONF_COMPRESSION_RAW);
    assert_int_equal(c->compression_level, 1);
    assert_int_equal(c->initial_credit, 0);
    assert_int_equal(c->max_batch_rows, 0);
    assert_int_equal(c->buffer_pool_size, 4);
    assert_int_equal(c->query_close_timeout_ms, 5000);
    assert_int_equal(c->sender_pool_min, 1);
    assert_int_equal(c->sender_pool_max, 4);
    assert_int_equal(c->query_pool_min, 1);
    assert_int_equal(c->query_pool_max, 4);
    assert_int_equal(c->acquire_timeout_ms, 5000);
    assert_int_equal(c->idle_timeout_ms, 60000);
    assert_int_equal(c->max_lifetime_ms, 1800000);
    assert_int_equal(c->housekeeper_interval_ms, 5000);
    assert_false(c->lazy_connect);
    assert_int_equal(c->pool_reap, QSF_CONF_POOL_REAP_AUTO);
    assert_int_equal(c->request_timeout, 30000);
    /* nothing but addr counts as set */
    for (int k = 0; k < QSF_CONF_NKEYS; k++)
        assert_int_equal(qsf_conf_is_set(c, k), k == QSF_CONF_KEY_addr);
    qsf_conf_free(c);
}

/* Range edges: `lo_bad` and `hi_bad` are rejected with `why`, `lo`/`hi` accepted
 * and read back through the dump. NULL = no such edge. */
struct edge {
    const char *key, *lo_bad, *lo, *hi, *hi_bad, *why;
};

#define I64MAX     "9223372036854775807"
#define I64OVER    "9223372036854775808"
#define ATLEAST(n) "must be at least " n

static const struct edge edges[] = {
    {"auth_timeout_ms", "0", "1", I64MAX, NULL, ATLEAST("1")},
    {"connect_timeout", "0", "1", I64MAX, NULL, ATLEAST("1")},
    /* the ring's range (seglimits.h): what the parser accepts, a sender opens */
    {"sf_max_segment_bytes", "32", "33", "2147483647", "2147483648",
     "must be between 33 and 2147483647 bytes"},
    {"sf_max_total_bytes", "0", "1", "18446744073709551615", NULL, ATLEAST("1 bytes")},
    {"sf_sync_interval_millis", "0", "1", I64MAX, NULL, ATLEAST("1")},
    {"sf_append_deadline_millis", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"max_background_drainers", "0", "1", "64", "65", "must be between 1 and 64"},
    {"catch_up_cap_gap_min_escalation_window_millis", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"reconnect_initial_backoff_millis", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"reconnect_max_backoff_millis", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"reconnect_max_duration_millis", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"close_flush_timeout_millis", "-2", "-1", I64MAX, NULL, ATLEAST("-1")},
    {"durable_ack_keepalive_interval_millis", "-9223372036854775809", "-9223372036854775808",
     I64MAX, I64OVER, "64-bit range"},
    {"ping_interval_millis", "-9223372036854775809", "-9223372036854775808", I64MAX, I64OVER,
     "64-bit range"},
    {"liveness_timeout_millis", "-9223372036854775809", "-9223372036854775808", I64MAX, I64OVER,
     "64-bit range"},
    {"ack_timeout_millis", "-9223372036854775809", "-9223372036854775808", I64MAX, I64OVER,
     "64-bit range"},
    {"frozen_server_timeout_millis", "-9223372036854775809", "-9223372036854775808", I64MAX,
     I64OVER, "64-bit range"},
    {"error_inbox_capacity", "15", "16", "1048576", "1048577", "must be between 16 and 1048576"},
    {"connection_listener_inbox_capacity", "0", "1", "1048576", "1048577",
     "must be between 1 and 1048576"},
    {"max_frame_rejections", "0", "1", I64MAX, NULL, ATLEAST("1")},
    {"poison_min_escalation_window_millis", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"auto_flush_rows", "0", "1", I64MAX, NULL, ATLEAST("1")},
    {"auto_flush_interval", "0", "1", I64MAX, NULL, ATLEAST("1")},
    {"auto_flush_bytes", NULL, "1", I64MAX, "9223372036854775808", "must be between 0 and"},
    {"init_buf_size", "1023", "1024", NULL, NULL, ATLEAST("1024 bytes")},
    {"max_buf_size", "0", "65536", "18446744073709551615", NULL, ATLEAST("1 bytes")},
    {"max_name_len", "0", "1", "127", "128", "must be between 1 and 127"},
    {"failover_max_attempts", "0", "1", I64MAX, NULL, ATLEAST("1")},
    {"failover_max_duration_ms", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"failover_backoff_initial_ms", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"failover_backoff_max_ms", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"compression_level", "0", "1", "22", "23", "must be between 1 and 22"},
    {"initial_credit", NULL, "0", "18446744073709551615", "18446744073709551616",
     "overflows 64 bits"},
    {"max_batch_rows", "0", "1", "1048576", "1048577", "must be between 1 and 1048576"},
    {"buffer_pool_size", "0", "1", I64MAX, NULL, ATLEAST("1")},
    {"query_close_timeout_ms", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"sender_pool_min", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"sender_pool_max", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"query_pool_min", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"query_pool_max", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"acquire_timeout_ms", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"idle_timeout_ms", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"max_lifetime_ms", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"housekeeper_interval_ms", "-1", "0", I64MAX, NULL, ATLEAST("0")},
    {"request_timeout", "0", "1", I64MAX, NULL, ATLEAST("1")},
};

/* Parses "ws::addr=a;<key>=<v>;" with what the key needs to be valid alone. */
static int parse_one(const char *key, const char *v, qsf_conf **c, qsf_errinfo *err) {
    char s[256];
    const char *extra = strcmp(key, "sf_sync_interval_millis") == 0
                            ? "sf_dir=/d;sf_durability=periodic;"
                        : strcmp(key, "max_buf_size") == 0 ? "init_buf_size=1k;"
                                                           : "";
    snprintf(s, sizeof s, "ws::addr=a;%s%s=%s;", extra, key, v);
    return qsf_conf_parse(s, strlen(s), c, err);
}

static void expect_accepted(const char *key, const char *v) {
    qsf_conf *c = NULL;
    qsf_errinfo err;
    if (parse_one(key, v, &c, &err) != QSF_OK)
        fail_msg("%s=%s rejected: %s", key, v, err.msg);
    const struct qsf_conf_keydesc *d = qsf_conf_find_key(key, strlen(key));
    assert_true(qsf_conf_is_set(c, qsf_conf_key_of(d)));
    /* the dump shows the value (sizes in their shortest exact form) */
    char want[128];
    snprintf(want, sizeof want, "\n%s=", key);
    const char *line = strstr(conf_dump_str(c), want);
    assert_non_null(line);
    char *end;
    if (c->key_derived[qsf_conf_key_of(d)]) {
        /* a rule changed the effective value (sf_max_total_bytes is raised to two
         * segments); conf_rules tests that */
    } else if (d->type == QSF_CONF_T_SIZE || d->type == QSF_CONF_T_SIZE_OFF) {
        unsigned long long dumped = strtoull(line + strlen(want), &end, 10);
        unsigned long long given = strtoull(v, NULL, 10);
        int shift = *end == 'k' ? 10 : *end == 'm' ? 20 : *end == 'g' ? 30 : *end == 't' ? 40 : 0;
        assert_true(dumped << shift == given);
    } else {
        assert_int_equal(strtoll(line + strlen(want), &end, 10), strtoll(v, NULL, 10));
    }
    qsf_conf_free(c);
}

/* A query-side key (QSF_CONF_UNCHECKED) takes any value: one its parser
 * refuses is noted and not kept, and the key keeps its default. */
static bool expect_unkept(const char *key, const char *v) {
    const struct qsf_conf_keydesc *d = qsf_conf_find_key(key, strlen(key));
    if (!d || !qsf_conf_unchecked[qsf_conf_key_of(d)])
        return false;
    qsf_conf *c = NULL, *dflt = conf_ok("ws::addr=a;");
    assert_int_equal(parse_one(key, v, &c, NULL), QSF_OK);
    assert_true(c->key_set[qsf_conf_key_of(d)]);
    assert_true(c->key_unkept[qsf_conf_key_of(d)]);
    assert_true(qsf_conf_equal(c, dflt));
    qsf_conf_free(c);
    qsf_conf_free(dflt);
    return true;
}

static void expect_rejected(const char *key, const char *v, const char *why) {
    if (expect_unkept(key, v))
        return;
    qsf_conf *c = (qsf_conf *) 1;
    qsf_errinfo err;
    assert_int_equal(parse_one(key, v, &c, &err), QSF_E_CONF);
    assert_null(c);
    char want[160]; /* long values are clipped in messages: compare their start */
    snprintf(want, sizeof want, "%s: '%.40s", key, v);
    if (!strstr(err.msg, want) || !strstr(err.msg, "' at position ") || !strstr(err.msg, why))
        fail_msg("%s=%s: message '%s' lacks '%s' / '%s'", key, v, err.msg, want, why);
}

static void range_edges(void **state) {
    (void) state;
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        const struct edge *e = &edges[i];
        if (e->lo_bad)
            expect_rejected(e->key, e->lo_bad, e->why);
        expect_accepted(e->key, e->lo);
        if (e->hi)
            expect_accepted(e->key, e->hi);
        if (e->hi_bad)
            expect_rejected(e->key, e->hi_bad, e->why);
    }
}

static void every_numeric_key_has_an_edge_row(void **state) {
    (void) state;
    for (size_t k = 0; k < QSF_CONF_NKEYS; k++) {
        const struct qsf_conf_keydesc *d = &qsf_conf_keys[k];
        bool numeric = d->type == QSF_CONF_T_INT || d->type == QSF_CONF_T_MS ||
                       d->type == QSF_CONF_T_SIZE || d->type >= QSF_CONF_T_INT_OFF;
        bool found = false;
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
            found |= strcmp(edges[i].key, d->name) == 0;
        if (numeric && d->type != QSF_CONF_T_ADDR && !found)
            fail_msg("no range-edge row for %s", d->name);
    }
}

static void integers(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;close_flush_timeout_millis=-1;max_name_len=007;");
    assert_int_equal(c->close_flush_timeout_millis, -1);
    assert_int_equal(c->max_name_len, 7);
    qsf_conf_free(c);
    static const char *const bad[] = {"+5", "0x10", "1e3", "5 ", "-", "--1", "1.0", "5ms", "٣"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_rejected("auth_timeout_ms", bad[i], "is not an integer (expected decimal digits)");
    expect_rejected("close_flush_timeout_millis", "x",
                    "is not an integer (expected decimal digits with an optional leading '-')");
    expect_rejected("auth_timeout_ms", "99999999999999999999", "is out of the 64-bit range");
    expect_rejected("auth_timeout_ms", "-5", "must be at least 1");
}

static void sizes(void **state) {
    (void) state;
    static const struct {
        const char *text;
        uint64_t bytes;
    } ok[] = {
        {"4m", 4194304},
        {"4MB", 4194304},
        {"4mb", 4194304},
        {"4Mb", 4194304},
        {"1k", 1024},
        {"1KB", 1024},
        {"3g", 3ULL << 30},
        {"2t", 2ULL << 40},
        {"2TB", 2ULL << 40},
        {"100b", 100},
        {"100B", 100},
        {"100", 100},
        {"16777215t", 16777215ULL << 40},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char s[128];
        snprintf(s, sizeof s, "ws::addr=a;sf_max_segment_bytes=33;sf_max_total_bytes=%s;",
                 ok[i].text);
        conf_expect(s, sf_max_total_bytes, ok[i].bytes);
    }
    static const char *const bad[] = {"12x", "m", "4mm", "4bb", "4 m", "1.5g", "-1k", "kb", "4p"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_rejected("sf_max_total_bytes", bad[i],
                        "is not a size (expected digits with an optional k/m/g/t suffix)");
    expect_rejected("sf_max_total_bytes", "16777216t", "overflows 64 bits");
    expect_rejected("sf_max_total_bytes", "99999999999999999999", "overflows 64 bits");
    expect_rejected("auto_flush_bytes", "x", "suffix, or off)");
}

static void booleans(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;request_durable_ack=on;failover=off;lazy_connect=on;");
    assert_true(c->request_durable_ack);
    assert_false(c->failover);
    assert_true(c->lazy_connect);
    qsf_conf_free(c);
    static const char *const bad[] = {"true", "false", "ON", "Off", "1", "0", "yes"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_rejected("request_durable_ack", bad[i], "is not on/off (expected on or off)");
}

static void initial_connect_retry_words(void **state) {
    (void) state;
    static const struct {
        const char *word;
        int v;
    } cases[] = {
        {"off", QSF_CONF_INITIAL_CONNECT_RETRY_OFF},
        {"false", QSF_CONF_INITIAL_CONNECT_RETRY_OFF},
        {"on", QSF_CONF_INITIAL_CONNECT_RETRY_ON},
        {"true", QSF_CONF_INITIAL_CONNECT_RETRY_ON},
        {"sync", QSF_CONF_INITIAL_CONNECT_RETRY_ON},
        {"async", QSF_CONF_INITIAL_CONNECT_RETRY_ASYNC},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char s[96];
        snprintf(s, sizeof s, "ws::addr=a;initial_connect_retry=%s;", cases[i].word);
        conf_expect(s, initial_connect_retry, cases[i].v);
    }
    expect_rejected("initial_connect_retry", "TRUE",
                    "is not one of: off, false, on, true, sync, async");
}

static void enums_are_case_sensitive(void **state) {
    (void) state;
    static const struct {
        const char *key, *word;
        int v;
    } ok[] = {
        {"tls_verify", "unsafe_off", QSF_CONF_TLS_VERIFY_UNSAFE_OFF},
        {"tls_ca", "webpki_roots", QSF_CONF_TLS_CA_WEBPKI_ROOTS},
        {"tls_ca", "webpki_and_os_roots", QSF_CONF_TLS_CA_WEBPKI_AND_OS_ROOTS},
        {"on_server_error", "retriable_other", QSF_CONF_ON_SERVER_ERROR_RETRIABLE_OTHER},
        {"on_write_error", "terminal", QSF_CONF_ON_WRITE_ERROR_TERMINAL},
        {"target", "replica", QSF_CONF_TARGET_REPLICA},
        {"compression", "zstd", QSF_CONF_COMPRESSION_ZSTD},
        {"compression", "auto", QSF_CONF_COMPRESSION_AUTO},
        {"pool_reap", "manual", QSF_CONF_POOL_REAP_MANUAL},
        {"qwp_ws_progress", "background", QSF_CONF_QWP_WS_PROGRESS_BACKGROUND},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        qsf_conf *c = NULL;
        assert_int_equal(parse_one(ok[i].key, ok[i].word, &c, NULL), QSF_OK);
        const struct qsf_conf_keydesc *d = qsf_conf_find_key(ok[i].key, strlen(ok[i].key));
        assert_int_equal(*(int *) qsf_conf_field(c, d), ok[i].v);
        size_t n = 0;
        const char *w = qsf_conf_enum_word(d, ok[i].v, &n);
        assert_int_equal(n, strlen(ok[i].word));
        assert_memory_equal(w, ok[i].word, n);
        qsf_conf_free(c);
    }
    expect_rejected("tls_verify", "ON", "is not one of: on, unsafe_off");
    expect_rejected("compression", "Zstd", "is not one of: raw, zstd, auto");
    expect_rejected("on_parse_error", "drop",
                    "is not one of: auto, terminal, retriable, "
                    "retriable_other");
}

static void durability_words(void **state) {
    (void) state;
    conf_expect("ws::addr=a;sf_dir=/d;sf_durability=flush;", sf_durability,
                QSF_CONF_SF_DURABILITY_APPEND);
    conf_expect("ws::addr=a;sf_dir=/d;sf_durability=append;", sf_durability,
                QSF_CONF_SF_DURABILITY_APPEND);
    conf_expect("ws::addr=a;sf_durability=memory;", sf_durability, QSF_CONF_SF_DURABILITY_MEMORY);
    expect_rejected("sf_durability", "fsync", "is not one of: memory, periodic, append, flush");
}

/* sf_ack_watermark_form (qsf only): java16 by default, dual on request, and
 * nothing else. */
static void watermark_form_words(void **state) {
    (void) state;
    conf_expect("ws::addr=a;sf_dir=/d;", sf_ack_watermark_form,
                QSF_CONF_SF_ACK_WATERMARK_FORM_JAVA16);
    conf_expect("ws::addr=a;sf_dir=/d;sf_ack_watermark_form=dual;", sf_ack_watermark_form,
                QSF_CONF_SF_ACK_WATERMARK_FORM_DUAL);
    conf_expect("ws::addr=a;sf_dir=/d;sf_ack_watermark_form=java16;", sf_ack_watermark_form,
                QSF_CONF_SF_ACK_WATERMARK_FORM_JAVA16);
    expect_rejected("sf_ack_watermark_form", "foo", "is not one of: java16, dual");
    expect_rejected("sf_ack_watermark_form", "DUAL", "is not one of: java16, dual");
}

static void or_off_values(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;auto_flush_rows=off;auto_flush_interval=off;"
                          "auto_flush_bytes=off;");
    assert_int_equal(c->auto_flush_rows, 0);
    assert_int_equal(c->auto_flush_interval, 0);
    assert_int_equal(c->auto_flush_bytes, 0);
    assert_true(qsf_conf_is_set(c, QSF_CONF_KEY_auto_flush_rows));
    qsf_conf_free(c);
    c = conf_ok("ws::addr=a;auto_flush_rows=5;auto_flush_interval=250;auto_flush_bytes=1m;");
    assert_int_equal(c->auto_flush_rows, 5);
    assert_int_equal(c->auto_flush_interval, 250);
    assert_int_equal(c->auto_flush_bytes, 1 << 20);
    qsf_conf_free(c);
    conf_expect("ws::addr=a;auto_flush_bytes=0;", auto_flush_bytes, 0);
    expect_rejected("auto_flush_rows", "OFF",
                    "is not an integer (expected decimal digits, or off)");
    expect_rejected("auto_flush_interval", "none", ", or off)");
}

static void strings(void **state) {
    (void) state;
    char s[512], v[256];
    memset(v, 'x', 128);
    v[128] = '\0';
    snprintf(s, sizeof s, "ws::addr=a;client_id=%s;", v);
    qsf_conf *c = conf_ok(s);
    assert_int_equal(strlen(c->client_id), 128);
    qsf_conf_free(c);
    v[128] = 'x', v[129] = '\0';
    expect_rejected("client_id", v, "is 129 bytes long (allowed: 1..128)");
    expect_rejected("client_id", "caf\xc3\xa9", "non-printable or non-ASCII byte at offset 3");
    c = conf_ok("ws::addr=a;client_id=my app/1.0 (x);sender_id=A-z_09;");
    assert_string_equal(c->client_id, "my app/1.0 (x)");
    assert_string_equal(c->sender_id, "A-z_09");
    qsf_conf_free(c);
    memset(v, 's', 200);
    v[200] = '\0';
    snprintf(s, sizeof s, "ws::addr=a;sender_id=%s;", v);
    c = conf_ok(s);
    qsf_conf_free(c);
    v[200] = 's', v[201] = '\0';
    expect_rejected("sender_id", v, "is 201 bytes long (allowed: 1..200)");
    static const struct {
        const char *id, *what;
    } bad[] = {
        {"a/b", "'/'"}, {"a b", "' '"}, {"..", "'.'"}, {"a\\b", "'\\'"}, {"\xc3\xa9", "non-ASCII"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char why[64];
        snprintf(why, sizeof why, "%s not allowed in sender_id", bad[i].what);
        expect_rejected("sender_id", bad[i].id, why);
    }
    /* paths are verbatim */
    c = conf_ok("ws::addr=a;sf_dir=~/with space/;;x;");
    assert_string_equal(c->sf_dir, "~/with space/;x");
    qsf_conf_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(range_edges),
        cmocka_unit_test(every_numeric_key_has_an_edge_row),
        cmocka_unit_test(integers),
        cmocka_unit_test(sizes),
        cmocka_unit_test(booleans),
        cmocka_unit_test(initial_connect_retry_words),
        cmocka_unit_test(enums_are_case_sensitive),
        cmocka_unit_test(durability_words),
        cmocka_unit_test(watermark_form_words),
        cmocka_unit_test(or_off_values),
        cmocka_unit_test(strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
