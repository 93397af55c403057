/* The receive side of the WebSocket glue (lib/io/wsrx.h): reassembly up to
 * 16 MiB and not a byte more, CLOSE payloads at every limit, and the verdict
 * on a socket after a connection ended. */
#include "testutil.h"

#include "io/wsrx.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int piece(qsf_wsrx *rx, const void *in, size_t len, bool first, bool last,
                 const uint8_t **msg, size_t *n) {
    const char *why = NULL;
    int r = qsf_wsrx_piece(rx, in, len, first, last, true, msg, n, &why);
    assert_true(r != QSF_WSRX_VIOLATION || why != NULL);
    return r;
}

static void one_piece_is_handed_back_in_place(void **state) {
    (void) state;
    qsf_wsrx rx = {0};
    const uint8_t ok[11] = {0};
    const uint8_t *msg;
    size_t n;
    assert_int_equal(piece(&rx, ok, sizeof ok, true, true, &msg, &n), QSF_WSRX_MESSAGE);
    assert_ptr_equal(msg, ok);
    assert_int_equal(n, 11);
    assert_null(rx.buf); /* nothing was copied */
    qsf_wsrx_free(&rx);
}

/* The empty message of a server (malformed=empty) and empty fragments: no
 * copy from or into a null pointer (UBSan watches). */
static void empty_messages_and_fragments(void **state) {
    (void) state;
    qsf_wsrx rx = {0};
    const uint8_t *msg = (const uint8_t *) "x";
    size_t n = 1;
    assert_int_equal(piece(&rx, NULL, 0, true, true, &msg, &n), QSF_WSRX_MESSAGE);
    assert_int_equal(n, 0);
    assert_int_equal(piece(&rx, NULL, 0, true, false, &msg, &n), QSF_WSRX_MORE);
    assert_int_equal(piece(&rx, NULL, 0, false, true, &msg, &n), QSF_WSRX_MESSAGE);
    assert_int_equal(n, 0);
    assert_int_equal(piece(&rx, "ab", 2, true, false, &msg, &n), QSF_WSRX_MORE);
    assert_int_equal(piece(&rx, NULL, 0, false, false, &msg, &n), QSF_WSRX_MORE);
    assert_int_equal(piece(&rx, "c", 1, false, true, &msg, &n), QSF_WSRX_MESSAGE);
    assert_int_equal(n, 3);
    assert_memory_equal(msg, "abc", 3);
    qsf_wsrx_free(&rx);
}

/* 16 MiB in 4 KiB pieces is a message; one byte more is a violation, and the
 * rest of that message is ignored until the next one starts. */
static void sixteen_mib_and_not_a_byte_more(void **state) {
    (void) state;
    static uint8_t chunk[4096];
    memset(chunk, 0x5A, sizeof chunk);
    for (int extra = 0; extra <= 1; extra++) {
        qsf_wsrx rx = {0};
        const uint8_t *msg = NULL;
        size_t n = 0, pieces = QSF_WSRX_MAX / sizeof chunk;
        for (size_t i = 0; i < pieces; i++)
            assert_int_equal(
                piece(&rx, chunk, sizeof chunk, i == 0, !extra && i == pieces - 1, &msg, &n),
                i == pieces - 1 && !extra ? QSF_WSRX_MESSAGE : QSF_WSRX_MORE);
        if (!extra) {
            assert_int_equal(n, QSF_WSRX_MAX);
            assert_int_equal(msg[QSF_WSRX_MAX - 1], 0x5A);
        } else {
            const char *why = NULL;
            assert_int_equal(qsf_wsrx_piece(&rx, chunk, 1, false, false, true, &msg, &n, &why),
                             QSF_WSRX_VIOLATION);
            assert_non_null(strstr(why, "16 MiB"));
            assert_int_equal(piece(&rx, chunk, 1, false, true, &msg, &n), QSF_WSRX_MORE);
            assert_int_equal(piece(&rx, chunk, 5, true, true, &msg, &n), QSF_WSRX_MESSAGE);
        }
        qsf_wsrx_free(&rx);
    }
}

static void text_is_a_violation(void **state) {
    (void) state;
    qsf_wsrx rx = {0};
    const uint8_t *msg;
    size_t n;
    const char *why = NULL;
    assert_int_equal(
        qsf_wsrx_piece(&rx, (const uint8_t *) "hi", 2, true, false, false, &msg, &n, &why),
        QSF_WSRX_VIOLATION);
    assert_non_null(strstr(why, "text frame"));
    assert_int_equal(
        qsf_wsrx_piece(&rx, (const uint8_t *) "!", 1, false, true, false, &msg, &n, &why),
        QSF_WSRX_MORE);
    qsf_wsrx_free(&rx);
}

static int close_hex(const char *hex, int *code, char *reason, size_t cap) {
    uint8_t b[256];
    size_t n = tu_hex(hex, b, sizeof b);
    return qsf_wsrx_close(b, n, code, reason, cap);
}

static int close_code(int c) {
    uint8_t b[2] = {(uint8_t) (c >> 8), (uint8_t) c};
    int code;
    char r[8];
    return qsf_wsrx_close(b, 2, &code, r, sizeof r) == 0 ? code : -1;
}

static void close_payloads_at_every_limit(void **state) {
    (void) state;
    int code;
    char reason[128];
    assert_int_equal(qsf_wsrx_close(NULL, 0, &code, reason, sizeof reason), 0);
    assert_int_equal(code, 1005); /* no code at all is allowed */
    assert_int_equal(close_hex("03", &code, reason, sizeof reason), -1);
    assert_int_equal(close_hex("03 E8 C3 28", &code, reason, sizeof reason), -1); /* not UTF-8 */
    assert_int_equal(code, 1005);
    const int good[] = {1000, 1001, 1002, 1003, 1007, 1011, 1014, 3000, 4999};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(close_code(good[i]), good[i]);
    const int bad[] = {0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(close_code(bad[i]), -1);
    /* 125 bytes (the control frame maximum) pass, with the reason cut to cap */
    uint8_t b[126];
    b[0] = 0x03, b[1] = 0xF3; /* 1011 */
    memset(b + 2, 'r', sizeof b - 2);
    assert_int_equal(qsf_wsrx_close(b, 125, &code, reason, sizeof reason), 0);
    assert_int_equal(code, 1011);
    assert_int_equal(strlen(reason), 123);
    assert_int_equal(qsf_wsrx_close(b, 125, &code, reason, 10), 0);
    assert_string_equal(reason, "rrrrrrrrr");
    assert_int_equal(qsf_wsrx_close(b, 126, &code, reason, sizeof reason), -1);
}

static void reset(int fd) {
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

/* Waits (without reading) until the socket has bytes (POLLIN) or saw the
 * peer's FIN or reset (POLLRDHUP; POLLERR and POLLHUP come anyway). */
static void wait_for(int fd, short events) {
    struct pollfd p = {.fd = fd, .events = events};
    assert_int_equal(poll(&p, 1, 5000), 1);
}

static void a_healthy_socket_means_refused_anything_else_lost(void **state) {
    (void) state;
    int c, s;
    tu_tcp_pair(&c, &s);
    assert_int_equal(qsf_wsrx_ended(c, false), QSF_WSRX_REFUSED); /* idle, healthy */
    assert_int_equal(qsf_wsrx_ended(c, true), QSF_WSRX_LOST);     /* TLS ended */
    assert_int_equal(write(s, "more", 4), 4);
    wait_for(c, POLLIN);
    assert_int_equal(qsf_wsrx_ended(c, false), QSF_WSRX_REFUSED); /* bytes left unread */
    close(s);
    uint8_t b[8];
    assert_int_equal(recv(c, b, sizeof b, 0), 4);
    wait_for(c, POLLRDHUP);
    assert_int_equal(qsf_wsrx_ended(c, false), QSF_WSRX_LOST); /* FIN */
    close(c);
    tu_tcp_pair(&c, &s);
    reset(s);
    wait_for(c, POLLRDHUP);
    assert_int_equal(qsf_wsrx_ended(c, false), QSF_WSRX_LOST); /* RST */
    assert_int_equal(qsf_wsrx_ended(c, false), QSF_WSRX_LOST); /* and after it was read */
    close(c);
    tu_tcp_pair(&c, &s);
    assert_int_equal(write(s, "xy", 2), 2);
    wait_for(c, POLLIN);
    reset(s);
    wait_for(c, POLLRDHUP);
    assert_int_equal(qsf_wsrx_ended(c, false), QSF_WSRX_LOST); /* RST behind unread bytes */
    close(c);
    assert_int_equal(qsf_wsrx_ended(-1, false), QSF_WSRX_LOST);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_piece_is_handed_back_in_place),
        cmocka_unit_test(empty_messages_and_fragments),
        cmocka_unit_test(sixteen_mib_and_not_a_byte_more),
        cmocka_unit_test(text_is_a_violation),
        cmocka_unit_test(close_payloads_at_every_limit),
        cmocka_unit_test(a_healthy_socket_means_refused_anything_else_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
