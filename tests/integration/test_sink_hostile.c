/* qwp-sink faults of a hostile or wedged server (docs/QWP-SINK.md): each one
 * puts on the wire exactly the bytes it promises, and nothing else. */
#include "sinktest.h"

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qwp/response.h"

static qsink *S;

static int setup(void **state) {
    (void) state;
    S = st_start(NULL);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    qsink_stop(S);
    return 0;
}

static void open_ok(rawws *w) {
    assert_int_equal(rawws_open(w, qsink_port(S), NULL), 0);
}

static void send_frames(rawws *w, int n) {
    assert_int_equal(rawws_send_binary_n(w, RAWWS_EMPTY_COMMIT, 14, n), 0);
}

/* half-frame: the OK for frame 0 (11 bytes) goes out as its 2-byte header and
 * 5 bytes of payload; then nothing, not even a PONG or a CLOSE echo, while the
 * sink goes on reading and processing frames. */
static void half_frame_then_silence(void **state) {
    (void) state;
    st_fault(S, "half-frame after=1");
    rawws w;
    open_ok(&w);
    send_frames(&w, 1);
    rawws_frame f;
    assert_int_equal(rawws_recv(&w, &f, 300), 0); /* no complete frame */
    assert_int_equal(w.len, 7);
    assert_int_equal(w.in[0], 0x82);
    assert_int_equal(w.in[1], 11);
    assert_int_equal(w.in[2], 0x00); /* status OK, then 4 of the 8 sequence bytes */
    send_frames(&w, 3);
    assert_int_equal(rawws_send_frame(&w, 1, 0, 9, "p", 1, 1), 0);
    const uint8_t close_1000[2] = {0x03, 0xE8};
    assert_int_equal(rawws_send_frame(&w, 1, 0, 8, close_1000, 2, 1), 0);
    assert_int_equal(qsink_wait_frames(S, 4, 5000), 0); /* still reading */
    assert_int_equal(rawws_recv(&w, &f, 300), 0);
    assert_int_equal(w.len, 7); /* not one byte more */
    qsink_stats st;
    qsink_get_stats(S, &st);
    assert_int_equal(st.open, 1); /* the client's CLOSE did not end it either */
    rawws_close(&w);
    assert_int_equal(qsink_wait_idle(S, 5000), 0);
}

/* Raw bytes from the sink until it is quiet for 300 ms (or EOF); the bytes
 * rawws already buffered come first. */
static size_t read_raw(rawws *w, uint8_t *out, size_t cap) {
    size_t n = w->len < cap ? w->len : cap;
    memcpy(out, w->in, n);
    w->len = 0;
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    while (n < cap && poll(&p, 1, 300) == 1) {
        ssize_t r = recv(w->fd, out + n, cap - n, 0);
        if (r <= 0)
            break;
        n += (size_t) r;
    }
    return n;
}

/* Bytes that complete `frames` whole server frames at the start of out, or 0
 * while they are not all there yet. */
static size_t frames_end(const uint8_t *out, size_t n, int frames) {
    size_t at = 0;
    for (int f = 0; f < frames; f++) {
        if (n < at + 2)
            return 0;
        uint64_t len = out[at + 1] & 0x7F;
        size_t hdr = len == 126 ? 4 : len == 127 ? 10 : 2;
        if (n < at + hdr)
            return 0;
        if (hdr > 2) {
            len = 0;
            for (size_t i = 2; i < hdr; i++)
                len = len << 8 | out[at + i];
        }
        if (n - at - hdr < len)
            return 0;
        at += hdr + (size_t) len;
    }
    return at;
}

/* Reads until `frames` whole frames have arrived (the sink always sends them:
 * waiting on their bytes, not on a quiet spell, holds on a loaded machine),
 * then whatever follows within 300 ms. */
static size_t read_frames(rawws *w, uint8_t *out, size_t cap, int frames) {
    size_t n = w->len < cap ? w->len : cap;
    memcpy(out, w->in, n);
    w->len = 0;
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    while (n < cap && frames_end(out, n, frames) == 0 && poll(&p, 1, 60000) == 1) {
        ssize_t r = recv(w->fd, out + n, cap - n, 0);
        if (r <= 0)
            return n;
        n += (size_t) r;
    }
    while (n < cap && poll(&p, 1, 300) == 1) {
        ssize_t r = recv(w->fd, out + n, cap - n, 0);
        if (r <= 0)
            break;
        n += (size_t) r;
    }
    return n;
}

/* What goes on the wire for one frame under malformed=KIND. */
static size_t malformed_wire(const char *kind, uint8_t *out, size_t cap) {
    qsink_stop(S);
    S = st_start(NULL);
    char line[64];
    snprintf(line, sizeof line, "malformed=%s", kind);
    st_fault(S, line);
    rawws w;
    open_ok(&w);
    send_frames(&w, 1);
    size_t n = read_raw(&w, out, cap);
    rawws_close(&w);
    return n;
}

static void expect_wire(const char *kind, const uint8_t *want, size_t n) {
    uint8_t got[256];
    size_t l = malformed_wire(kind, got, sizeof got);
    if (l != n || memcmp(got, want, n) != 0)
        fail_msg("malformed=%s: %zu bytes on the wire, expected %zu", kind, l, n);
}

/* OK(seq 0, no tables) is 11 zero bytes; Z11 spells them out. */
#define Z11 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0

static void malformed_websocket_frames(void **state) {
    (void) state;
    const uint8_t opcode[] = {0x83, 11, Z11};
    expect_wire("opcode", opcode, sizeof opcode);
    const uint8_t ctl_opcode[] = {0x8B, 11, Z11};
    expect_wire("ctl-opcode", ctl_opcode, sizeof ctl_opcode);
    const uint8_t ctl_frag[] = {0x09, 0x00, 0x82, 11, Z11};
    expect_wire("ctl-fragmented", ctl_frag, sizeof ctl_frag);
    const uint8_t ctl_len16[] = {0x89, 0x7E, 0x00, 0x01, 'p', 0x82, 11, Z11};
    expect_wire("ctl-len16", ctl_len16, sizeof ctl_len16);
    const uint8_t ctl_len64[] = {0x89, 0x7F, 0, 0, 0, 0, 0, 0, 0, 1, 'p', 0x82, 11, Z11};
    expect_wire("ctl-len64", ctl_len64, sizeof ctl_len64);
    const uint8_t cont[] = {0x80, 11, Z11};
    expect_wire("cont", cont, sizeof cont);
    const uint8_t no_fin[] = {0x02, 5, 0, 0, 0, 0, 0, 0x82, 11, Z11};
    expect_wire("no-fin", no_fin, sizeof no_fin);
    const uint8_t len_b63[] = {0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x82, 11, Z11};
    expect_wire("len-b63", len_b63, sizeof len_b63);
    const uint8_t empty[] = {0x82, 0x00}; /* in place of the OK */
    expect_wire("empty", empty, sizeof empty);
    const uint8_t close_utf8[] = {0x88, 4, 0x03, 0xE8, 0xC3, 0x28}; /* at once, then FIN */
    expect_wire("close-utf8", close_utf8, sizeof close_utf8);
}

/* wide-durable=65535: the next durable ack names 65,535 tables, the one the
 * frame committed to last, at its real watermark. */
static void wide_durable_ack(void **state) {
    (void) state;
    qsink_opts o = {.durable = 1};
    qsink_stop(S);
    S = st_start(&o);
    st_fault(S, "wide-durable=65535");
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(S), "X-QWP-Request-Durable-Ack: true\r\n"), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    size_t cap = 4u << 20;
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    size_t n = read_frames(&w, b, cap, 2); /* the OK, then the durable ack */
    assert_true(n > 13 + 11);
    assert_int_equal(b[0], 0x82); /* the OK first, 2 + 11 + one table entry */
    size_t ok_len = 2u + b[1];
    const uint8_t *d = b + ok_len;
    assert_int_equal(d[0], 0x82);
    assert_int_equal(d[1], 0x7F);
    uint64_t len = 0;
    for (int i = 0; i < 8; i++)
        len = len << 8 | d[2 + i];
    assert_int_equal(ok_len + 10 + len, n);
    qsf_response r;
    char why[160];
    assert_int_equal(qsf_response_parse(d + 10, (size_t) len, &r, why, sizeof why), 0);
    assert_int_equal(r.kind, QSF_RESP_DURABLE);
    assert_int_equal(r.table_count, 65535);
    size_t pos = 0;
    qsf_resp_table t = {0};
    for (int i = 0; i < 65535; i++)
        assert_true(qsf_response_table(&r, &pos, &t));
    assert_int_equal(t.name_len, 7);
    assert_memory_equal(t.name, "sensors", 7);
    assert_int_equal(t.seq_txn, 1);
    free(b);
    rawws_close(&w);
}

/* A process that forks while the sink runs (the tests' killed children do)
 * holds duplicates of the sink's sockets: closing a connection's fd then
 * leaves its open file description registered in epoll, which went on
 * reporting events for the freed connection (TSan: heap-use-after-free in
 * conn_on_event). The sink removes a socket from epoll before closing it. */
static void a_forked_child_keeps_no_freed_connection_alive(void **state) {
    (void) state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(qsink_port(S))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *) &a, sizeof a), 0);
    qsink_stats st;
    for (int i = 0; i < 500; i++) {
        qsink_get_stats(S, &st);
        if (st.open == 1)
            break;
        usleep(10000);
    }
    assert_int_equal(st.open, 1);
    pid_t pid = fork(); /* holds the sink's end of the connection */
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test, whatever happens to it */
        pause();
        _exit(0);
    }
    assert_true(pid > 0);
    /* EOF from the client: the sink drops the connection, and its end stays
     * readable in the child's copy, which a level-triggered epoll reports
     * on every turn of the loop */
    int sent = (int) send(fd, "X", 1, MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    int idle = qsink_wait_idle(S, 5000);
    usleep(200000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(fd);
    assert_int_equal(sent, 1);
    assert_int_equal(idle, 0); /* dropped and freed */
    qsink_get_stats(S, &st);
    assert_int_equal(st.open, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(half_frame_then_silence, setup, teardown),
        cmocka_unit_test_setup_teardown(a_forked_child_keeps_no_freed_connection_alive, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(malformed_websocket_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(wide_durable_ack, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
