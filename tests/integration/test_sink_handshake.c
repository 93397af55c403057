/* qwp-sink upgrade handling against docs/PROTOCOL.md §2; docs/QWP-SINK.md §2.1: every
 * rejection with its status and headers, the exact 101, negotiation headers. */
#include "testutil.h"

#include <string.h>

#include "rawws.h"
#include "sink.h"

static qsink *start(const qsink_opts *o) {
    char err[256];
    qsink *s = qsink_start(o, err, sizeof err);
    if (!s)
        fail_msg("qsink_start: %s", err);
    return s;
}

/* Sends a request built from the parts and returns the status; resp gets the
 * whole response. The connection must be closed by the server afterwards. */
static int ask(qsink *s, const char *request, char *resp, size_t cap) {
    rawws w;
    assert_int_equal(rawws_connect(&w, qsink_port(s)), 0);
    int st = rawws_request(&w, request, resp, cap);
    if (st != 101)
        assert_int_equal(rawws_wait_eof(&w, 5000), 0); /* closed after a rejection */
    rawws_close(&w);
    return st;
}

#define BASE_HEADERS                                                                               \
    "Host: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"                             \
    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " RAWWS_KEY "\r\n"

static void exact_101_and_accept(void **state) {
    (void) state;
    qsink *s = start(NULL);
    char r[4096];
    assert_int_equal(ask(s, "GET /write/v4 HTTP/1.1\r\n" BASE_HEADERS "\r\n", r, sizeof r), 101);
    assert_string_equal(r, "HTTP/1.1 101 Switching Protocols\r\n"
                           "Upgrade: websocket\r\n"
                           "Connection: Upgrade\r\n"
                           "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
                           "X-QWP-Version: 1\r\n"
                           "X-QuestDB-Role: STANDALONE\r\n"
                           "X-QWP-Max-Batch-Size: 2097138\r\n\r\n");
    /* the other path upgrades too; a higher client version negotiates down to 1 */
    assert_int_equal(
        ask(s, "GET /api/v4/write HTTP/1.1\r\n" BASE_HEADERS "X-QWP-Max-Version: 7\r\n\r\n", r,
            sizeof r),
        101);
    assert_non_null(strstr(r, "X-QWP-Version: 1\r\n"));
    char last[4096];
    qsink_last_request(s, last, sizeof last);
    assert_non_null(strstr(last, "X-QWP-Max-Version: 7"));
    qsink_stats st;
    qsink_get_stats(s, &st);
    assert_int_equal(st.upgrades, 2);
    qsink_stop(s);
}

static void rejections_in_server_order(void **state) {
    (void) state;
    qsink *s = start(NULL);
    char r[4096];
    assert_int_equal(ask(s, "GET /other HTTP/1.1\r\n" BASE_HEADERS "\r\n", r, sizeof r), 404);
    /* Origin is checked before everything else that is wrong here */
    assert_int_equal(ask(s,
                         "GET /write/v4 HTTP/1.1\r\nOrigin: http://x\r\n"
                         "Sec-WebSocket-Version: 12\r\n\r\n",
                         r, sizeof r),
                     400);
    assert_non_null(strstr(r, "Content-Type: text/plain\r\n"));
    assert_non_null(strstr(r, "Origin header not allowed on QWP WebSocket"));
    assert_int_equal(ask(s,
                         "GET /write/v4 HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n"
                         "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " RAWWS_KEY "\r\n\r\n",
                         r, sizeof r),
                     400);
    assert_non_null(strstr(r, "Upgrade header"));
    assert_int_equal(ask(s,
                         "GET /write/v4 HTTP/1.1\r\nConnection: keep-alive\r\n"
                         "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                         "Sec-WebSocket-Key: " RAWWS_KEY "\r\n\r\n",
                         r, sizeof r),
                     400);
    assert_non_null(strstr(r, "Connection header"));
    assert_int_equal(ask(s,
                         "GET /write/v4 HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n"
                         "Upgrade: WebSocket\r\nSec-WebSocket-Version: 13\r\n"
                         "Sec-WebSocket-Key: short==\r\n\r\n",
                         r, sizeof r),
                     400);
    assert_non_null(strstr(r, "Sec-WebSocket-Key"));
    assert_int_equal(ask(s,
                         "GET /write/v4 HTTP/1.1\r\nConnection: Upgrade\r\n"
                         "Upgrade: websocket\r\nSec-WebSocket-Version: 12\r\n"
                         "Sec-WebSocket-Key: " RAWWS_KEY "\r\n\r\n",
                         r, sizeof r),
                     426);
    assert_string_equal(r, "HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                           "Content-Length: 0\r\n\r\n");
    assert_int_equal(ask(s,
                         "GET /write/v4 HTTP/1.1\r\nConnection: Upgrade\r\n"
                         "Upgrade: websocket\r\nSec-WebSocket-Key: " RAWWS_KEY "\r\n\r\n",
                         r, sizeof r),
                     426);
    qsink_stats st;
    qsink_get_stats(s, &st);
    assert_int_equal(st.rejected, 7);
    assert_int_equal(st.upgrades, 0);
    qsink_stop(s);
}

static void authentication(void **state) {
    (void) state;
    qsink_opts o = {.auth_basic = "admin:quest", .auth_bearer = "tok123"};
    qsink *s = start(&o);
    char r[4096];
    const char *base = "GET /write/v4 HTTP/1.1\r\n" BASE_HEADERS;
    char req[1024];
    assert_int_equal(ask(s, "GET /write/v4 HTTP/1.1\r\n" BASE_HEADERS "\r\n", r, sizeof r), 401);
    snprintf(req, sizeof req, "%sAuthorization: Basic YWRtaW46cXVlc3Q=\r\n\r\n", base);
    assert_int_equal(ask(s, req, r, sizeof r), 101);
    snprintf(req, sizeof req, "%sAuthorization: Basic YWRtaW46d3Jvbmc=\r\n\r\n", base);
    assert_int_equal(ask(s, req, r, sizeof r), 401);
    snprintf(req, sizeof req, "%sAuthorization: Bearer tok123\r\n\r\n", base);
    assert_int_equal(ask(s, req, r, sizeof r), 101);
    snprintf(req, sizeof req, "%sAuthorization: Bearer tok124\r\n\r\n", base);
    assert_int_equal(ask(s, req, r, sizeof r), 401);
    qsink_stop(s);
}

static void role_421_with_zone(void **state) {
    (void) state;
    qsink_opts o = {.role = "REPLICA", .zone = "eu-1"};
    qsink *s = start(&o);
    char r[4096];
    assert_int_equal(ask(s, "GET /write/v4 HTTP/1.1\r\n" BASE_HEADERS "\r\n", r, sizeof r), 421);
    assert_string_equal(r, "HTTP/1.1 421 Misdirected Request\r\nConnection: close\r\n"
                           "Content-Length: 0\r\nX-QuestDB-Role: REPLICA\r\n"
                           "X-QuestDB-Zone: eu-1\r\n\r\n");
    qsink_stop(s);
    qsink_opts p = {.role = "PRIMARY"};
    s = start(&p);
    assert_int_equal(ask(s, "GET /write/v4 HTTP/1.1\r\n" BASE_HEADERS "\r\n", r, sizeof r), 101);
    assert_non_null(strstr(r, "X-QuestDB-Role: PRIMARY\r\n"));
    qsink_stop(s);
}

static void durable_header_and_batch_size(void **state) {
    (void) state;
    qsink_opts o = {.durable = 1, .recv_buf = 65536};
    qsink *s = start(&o);
    char r[4096];
    const char *dreq =
        "GET /write/v4 HTTP/1.1\r\n" BASE_HEADERS "X-QWP-Request-Durable-Ack: TRUE\r\n\r\n";
    assert_int_equal(ask(s, dreq, r, sizeof r), 101);
    assert_non_null(strstr(r, "X-QWP-Version: 1\r\nX-QWP-Durable-Ack: enabled\r\n"
                              "X-QuestDB-Role: STANDALONE\r\nX-QWP-Max-Batch-Size: 65522\r\n"));
    /* not requested: not granted */
    assert_int_equal(ask(s, "GET /write/v4 HTTP/1.1\r\n" BASE_HEADERS "\r\n", r, sizeof r), 101);
    assert_null(strstr(r, "Durable"));
    qsink_stop(s);
    /* requested but the server does not support it (like OSS): silently no header */
    qsink_opts p = {.max_batch = -1};
    s = start(&p);
    assert_int_equal(ask(s, dreq, r, sizeof r), 101);
    assert_null(strstr(r, "Durable"));
    assert_null(strstr(r, "Max-Batch"));
    qsink_stop(s);
}

static void ipv6_listener(void **state) {
    (void) state;
    qsink_opts o = {.host = "::1"};
    char err[256];
    qsink *s = qsink_start(&o, err, sizeof err);
    if (!s)
        skip(); /* no IPv6 loopback in this environment */
    assert_true(qsink_port(s) > 0);
    qsink_stop(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_101_and_accept),
        cmocka_unit_test(rejections_in_server_order),
        cmocka_unit_test(authentication),
        cmocka_unit_test(role_421_with_zone),
        cmocka_unit_test(durable_header_and_batch_size),
        cmocka_unit_test(ipv6_listener),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
