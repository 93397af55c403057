/* A hostile server against a live sender (docs/ERRORS.md, "Protocol
 * violations by the server"): every malformed frame is one category with one
 * policy -- PROTOCOL_VIOLATION, TERMINAL -- reported with its endpoint and
 * cause, returned by the next producer call and by close, on the first
 * connection (no reconnect storm); the frames stay on disk and a new sender on
 * the same sf_dir delivers every row the hostile server did not acknowledge to
 * a correct server, exactly once and in order. An ordinary server crash or
 * restart (RST, FIN, a connection dropped mid-response) is no violation: the
 * sender reconnects and delivers. */
#include "itest.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAST   "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"
#define FRAMES 20
#define ROWS   10 /* per frame */

/* Publishes frames [from, to) of ROWS rows each into "t" (keys from
 * from * ROWS), stopping at the first refused call, which must be the latched
 * QSF_E_PROTOCOL. fsn[i] is the FSN of frame i; returns the frame it stopped
 * before (to when all went in). */
static int publish(qsf_sender *s, int64_t *fsn, int from, int to) {
    qsf_errinfo e;
    for (int f = from; f < to; f++) {
        for (int r = 0; r < ROWS; r++) {
            int64_t k = (int64_t) f * ROWS + r;
            int rc = qsf_table(s, "t", 1, &e);
            rc = rc ? rc : qsf_col_i64(s, "k", 1, k, &e);
            rc = rc ? rc : qsf_at_micros(s, 1700000000000000ll + k, &e);
            if (rc != QSF_OK) {
                assert_int_equal(rc, QSF_E_PROTOCOL);
                return f;
            }
        }
        int rc = qsf_flush(s, &fsn[f], &e);
        if (rc != QSF_OK) {
            assert_int_equal(rc, QSF_E_PROTOCOL);
            return f;
        }
    }
    return to;
}

/* Waits for a latched error and for the connection to be gone (so nothing
 * moves the acknowledged FSN any more); returns the error code, 0 if none. */
static int wait_latched(qsf_sender *s) {
    qsf_stats st;
    for (int i = 0; i < 2000; i++) {
        qsf_stats_get(s, &st);
        if (st.last_error_code && !st.connected)
            return st.last_error_code;
        it_sleep_ms(5);
    }
    return st.last_error_code;
}

/* Each scenario has a slot of its own (sender_id h<scenario>). */
static int scenario;

static void sf_conf(char *out, size_t cap, const char *scheme, uint16_t port, const char *extra) {
    snprintf(out, cap, "%s::addr=127.0.0.1:%u;sf_dir=%s;sender_id=h%d;" FAST "%s",
             scheme ? scheme : "ws", port, it_dir, scenario, extra ? extra : "");
}

/* The keys of "t" on a sink, as a count per key (n keys). */
static int *key_counts(qsink *sink, int n) {
    int *c = calloc((size_t) n, sizeof *c);
    assert_non_null(c);
    char cell[64];
    for (int64_t r = 0; r < qsink_rows(sink, "t"); r++) {
        assert_int_equal(qsink_cell(sink, "t", r, "k", cell, sizeof cell), 0);
        long k = strtol(cell, NULL, 10);
        if (k < 0 || k >= n)
            fail_msg("foreign key %ld", k);
        c[k]++;
    }
    return c;
}

/* After the violation: a correct server gets every row the hostile one did not
 * acknowledge (frames past `acked`), exactly once and in order, from a new
 * sender on the same sf_dir; the rows it did acknowledge are on it. */
static void replay_to_a_correct_server(qsink *hostile, int published, const int64_t *fsn,
                                       int64_t acked) {
    qsink *good = it_sink(NULL);
    char conf[2048];
    sf_conf(conf, sizeof conf, NULL, qsink_port(good), NULL);
    qsf_sender *s = it_sender(conf);
    if (published > 0 && fsn[published - 1] > acked)
        it_wait_acked(s, fsn[published - 1]);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    int done = 0; /* frames the hostile server acknowledged */
    while (done < published && fsn[done] <= acked)
        done++;
    int n = published * ROWS;
    int *on_good = key_counts(good, n), *on_hostile = key_counts(hostile, n);
    for (int k = 0; k < n; k++) {
        int want = k >= done * ROWS;
        if (on_good[k] != want)
            fail_msg("key %d reached the correct server %d times, expected %d (acked fsn %lld)", k,
                     on_good[k], want, (long long) acked);
        if (!want && on_hostile[k] == 0)
            fail_msg("key %d was acknowledged but the server that did so never stored it", k);
    }
    if (qsink_rows(good, "t") > 0)
        assert_int_equal(qsink_first_out_of_order(good, "t", "k"), -1);
    free(on_good);
    free(on_hostile);
    qsink_stop(good);
}

/* Adds faults separated by '|'. */
static void add_faults(qsink *sink, const char *faults) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", faults);
    for (char *sv = NULL, *f = strtok_r(buf, "|", &sv); f; f = strtok_r(NULL, "|", &sv))
        it_fault(sink, f);
}

/* One hostile server: its faults (separated by '|'), the cause the error
 * record and the latched error must name. */
static void violation_at(qsink *sink, const char *faults, const char *cause, const char *extra) {
    scenario++;
    add_faults(sink, faults);
    char conf[2048];
    sf_conf(conf, sizeof conf, NULL, qsink_port(sink), extra);
    qsf_sender *s = it_sender(conf);
    int64_t fsn[FRAMES];
    int published = publish(s, fsn, 0, FRAMES);
    if (wait_latched(s) != QSF_E_PROTOCOL)
        fail_msg("%s: no protocol violation latched", faults);
    it_sleep_ms(200); /* what the server says after its violation is not believed */
    int64_t acked = qsf_acked_fsn(s);
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_PROTOCOL_VIOLATION);
    assert_int_equal(r.policy, QSF_POLICY_TERMINAL);
    char ep[64];
    snprintf(ep, sizeof ep, "127.0.0.1:%u", qsink_port(sink));
    assert_string_equal(r.endpoint, ep);
    if (!strstr(r.message, cause))
        fail_msg("%s: record '%s' does not say '%s'", faults, r.message, cause);
    if (r.from_fsn != acked + 1) /* the record's span starts where acknowledging stopped */
        fail_msg("%s: acknowledged up to %lld after the violation reported from %lld", faults,
                 (long long) acked, (long long) r.from_fsn);
    qsf_errinfo e;
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_PROTOCOL); /* the next call */
    assert_non_null(strstr(e.msg, cause));
    assert_int_equal(qsf_close(s, &e), QSF_E_PROTOCOL);
    qsink_stats st;
    qsink_get_stats(sink, &st);
    if (st.accepted != 1)
        fail_msg("%s: %lld connections, expected the first one only", faults,
                 (long long) st.accepted);
    replay_to_a_correct_server(sink, published, fsn, acked);
    qsink_stop(sink);
}

static void violation(const char *faults, const char *cause, const char *extra) {
    violation_at(it_sink(NULL), faults, cause, extra);
}

/* Violations libwebsockets detects itself: it drops the connection with the
 * socket still healthy. */
static void websocket_frames_libwebsockets_refuses(void **state) {
    (void) state;
    const char *kinds[] = {"rsv",       "opcode", "ctl-opcode", "ctl-fragmented", "ctl-len16",
                           "ctl-len64", "cont",   "no-fin",     "len-b63"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char f[64];
        snprintf(f, sizeof f, "malformed=%s conn=1 after=3", kinds[i]);
        violation(f, "libwebsockets refused", NULL);
    }
}

/* Violations qsf detects in what libwebsockets hands over. */
static void frames_and_payloads_qsf_refuses(void **state) {
    (void) state;
    violation("malformed=text conn=1 after=3", "text frame", NULL);
    violation("malformed=empty conn=1 after=0", "empty response", NULL); /* the first message */
    violation("malformed=empty conn=1 after=3", "empty response", NULL);
    violation("malformed=trailing conn=1 after=3", "trailing bytes", NULL);
    violation("malformed=bad-length conn=1 after=3", "cannot fit", NULL);
    violation("malformed=bad-close conn=1 after=3", "close payload", NULL);
    violation("malformed=close-utf8 conn=1 after=3", "close payload", NULL);
    violation("close=5000 conn=1 after=3", "close payload", NULL); /* libwebsockets passes it on */
}

/* An OK for a wireSeq never sent acknowledges nothing: the server that sent
 * it acknowledged nothing else (withhold-ok), so every row is replayed. */
static void ok_beyond_what_was_sent(void **state) {
    (void) state;
    violation("withhold-ok|forged-ok=1000000 conn=1 after=3", "never sent", NULL);
    violation("withhold-ok|forged-ok=0 conn=1 after=0", "never sent", NULL);
    violation("withhold-ok|forged-ok=-1 conn=1 after=2", "never sent", NULL);
}

/* One server, its faults, a sender with `extra`: every row arrives (a replay
 * may duplicate), on more than one connection when `reconnects`, and no
 * protocol violation is reported. The first `first` frames are published and
 * processed by the server before the others (so a fault at a frame count
 * lands between reads). */
static void survives(qsink *sink, const char *faults, const char *scheme, const char *extra,
                     int first, bool reconnects) {
    scenario++;
    add_faults(sink, faults);
    char conf[2048];
    sf_conf(conf, sizeof conf, scheme, qsink_port(sink), extra);
    qsf_sender *s = it_sender(conf);
    int64_t fsn[FRAMES];
    assert_int_equal(publish(s, fsn, 0, first), first);
    assert_int_equal(qsink_wait_frames(sink, first, 10000), 0);
    assert_int_equal(publish(s, fsn, first, FRAMES), FRAMES);
    it_wait_acked(s, fsn[FRAMES - 1]);
    qsf_error_record r;
    while (qsf_poll_error(s, &r) == 1)
        if (r.category == QSF_CAT_PROTOCOL_VIOLATION)
            fail_msg("%s: reported as a violation: %s", faults, r.message);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stats st;
    qsink_get_stats(sink, &st);
    if (reconnects ? st.accepted < 2 : st.accepted != 1)
        fail_msg("%s: %lld connections", faults, (long long) st.accepted);
    it_assert_rows(sink, "t", FRAMES * ROWS, reconnects);
    qsink_stop(sink);
}

/* The first connection never acknowledges (withhold-ok), so the sender must
 * reconnect to deliver. */
static void crashes_and_restarts_reconnect(void **state) {
    (void) state;
    survives(it_sink(NULL), "withhold-ok conn=1|rst conn=1 after=3", NULL, NULL, 0, true);
    survives(it_sink(NULL), "withhold-ok conn=1|fin conn=1 after=3", NULL, NULL, 0, true);
    survives(it_sink(NULL), "withhold-ok conn=1|restart conn=1 after=3", NULL, NULL, 0, true);
    /* it dies in the middle of a response: the OK after frame 1 is cut short */
    survives(it_sink(NULL), "half-frame conn=1 after=1|rst conn=1 after=4", NULL, NULL, 2, true);
    survives(it_sink(NULL), "half-frame conn=1 after=1|restart conn=1 after=4", NULL, NULL, 2,
             true);
}

/* What libwebsockets 4.1.6 hides from qsf (docs/ERRORS.md): a close code a
 * server may not send reaches qsf as 1002, an ordinary non-orderly close; a
 * masked frame is unmasked and delivered. */
static void what_libwebsockets_hides(void **state) {
    (void) state;
    survives(it_sink(NULL), "withhold-ok conn=1|close=999 conn=1 after=3", NULL, NULL, 0, true);
    survives(it_sink(NULL), "withhold-ok conn=1|close=1005 conn=1 after=3", NULL, NULL, 0, true);
    survives(it_sink(NULL), "withhold-ok conn=1|close=2000 conn=1 after=3", NULL, NULL, 0, true);
    survives(it_sink(NULL), "malformed=masked conn=1 after=3", NULL, NULL, 0, false);
}

/* A durable ack naming 65,535 tables (65,534 the sender never wrote, more
 * than any OK named) is a protocol violation: the client does not keep a
 * server's made-up names (it kept every one, 889 MB after 200 such acks). */
static void durable_ack_naming_65535_tables(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.durable = 1;
    violation_at(it_sink(&o), "wide-durable=65535 conn=1 after=3",
                 "names more tables no OK named than the widest OK", "request_durable_ack=on;");
}

/* ---- the same over TLS: a TLS close (close_notify, then FIN) is no violation ---- */

static char pki[512], ca[600], cert[600], key[600];

static qsink *tls_sink(void) {
    return it_tls_sink(cert, key);
}

static void over_tls(void **state) {
    (void) state;
    char extra[700];
    snprintf(extra, sizeof extra, "tls_roots=%s;", ca);
    survives(tls_sink(), "withhold-ok conn=1|fin conn=1 after=3", "wss", extra, 0, true);
    survives(tls_sink(), "withhold-ok conn=1|rst conn=1 after=3", "wss", extra, 0, true);
    survives(tls_sink(), "withhold-ok conn=1|restart conn=1 after=3", "wss", extra, 0, true);
    survives(tls_sink(), "withhold-ok conn=1|close=1011 conn=1 after=3", "wss", extra, 0, true);
    scenario++;
    qsink *sink = tls_sink();
    it_fault(sink, "malformed=rsv conn=1 after=3");
    char conf[2048];
    sf_conf(conf, sizeof conf, "wss", qsink_port(sink), extra);
    qsf_sender *s = it_sender(conf);
    int64_t fsn[FRAMES];
    publish(s, fsn, 0, FRAMES);
    assert_int_equal(wait_latched(s), QSF_E_PROTOCOL);
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_non_null(strstr(r.message, "libwebsockets refused"));
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_PROTOCOL);
    qsink_stop(sink);
}

static int make_pki(void **state) {
    (void) state;
    it_make_pki(pki, sizeof pki, ca, cert, key, sizeof ca);
    return 0;
}

static int drop_pki(void **state) {
    (void) state;
    tu_rmtree(pki);
    return 0;
}

int main(void) {
    qsf_log_set(NULL, NULL, getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF);
    if (getenv("QSF_TEST_ONLY"))
        cmocka_set_test_filter(getenv("QSF_TEST_ONLY"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(websocket_frames_libwebsockets_refuses, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(frames_and_payloads_qsf_refuses, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(ok_beyond_what_was_sent, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(crashes_and_restarts_reconnect, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(what_libwebsockets_hides, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(durable_ack_naming_65535_tables, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(over_tls, it_setup_dir, it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, make_pki, drop_pki);
}
