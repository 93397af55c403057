/* Fuzz target for a whole qwp-sink connection: the input is what a client
 * sends (upgrade request, then WebSocket frames carrying QWP messages) through
 * a socket pair into one connection's state machine: upgrade, frame rules, the
 * decoder, commits and acks, with a fault preset picked by the first byte. The
 * sink sources are compiled in directly so scripts/fuzz.sh (lib/ only) can
 * build it too. */
#include <sys/socket.h>

#include "../../tools/qwp-sink/ack.c"
#include "../../tools/qwp-sink/appendlog.c"
#include "../../tools/qwp-sink/conn.c"
#include "../../tools/qwp-sink/fault.c"
#include "../../tools/qwp-sink/http.c"
#include "../../tools/qwp-sink/malformed.c"
#include "../../tools/qwp-sink/msg_qwp.c"
#include "../../tools/qwp-sink/query.c"
#include "../../tools/qwp-sink/sink.c"
#include "../../tools/qwp-sink/store.c"
#include "../../tools/qwp-sink/storetext.c"
#include "../../tools/qwp-sink/wsframe.c"

static const char *const PRESETS[] = {
    NULL,
    "fragment=3:ping",
    "malformed=bad-length",
    "status=0x0D:gap seq=1",
    "close=1011 after=2",
    "rst bytes=300",
    "delay-ok=5",
    "forged-ok=3",
    "half-frame after=1",
    "wide-durable=300",
    "malformed=no-fin",
};

static struct qsink *sink(void) {
    static struct qsink *s;
    if (s)
        return s;
    s = calloc(1, sizeof *s);
    qsink_opts o = {.durable = 1,
                    .durable_lag_commits = 1,
                    .record_payloads = 1,
                    .recv_buf = 1 << 16,
                    .key_column = "id"};
    copy_opts(s, &o);
    store_init(&s->store, 1, NULL);
    s->store.log_commits = 1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    return s;
}

/* Forgets everything one input left behind (the sink is reused). */
static void reset(struct qsink *s) {
    store_clear(&s->store);
    fault_clear(&s->faults);
    for (int i = 0; i < s->nrecs; i++) {
        for (size_t j = 0; j < s->recs[i]->n; j++)
            free(s->recs[i]->f[j].payload);
        free(s->recs[i]->f);
        free(s->recs[i]);
    }
    s->nrecs = 0;
    s->nerrs = 0;
}

static void drain(int fd) {
    static uint8_t b[65536];
    while (recv(fd, b, sizeof b, MSG_DONTWAIT) > 0)
        ;
}

static void feed(struct conn *c, int peer, const uint8_t *p, size_t n) {
    size_t off = 0;
    for (int i = 0; i < 10000 && c->state != CS_DEAD; i++) {
        if (off < n) {
            ssize_t w = send(peer, p + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);
            off += w > 0 ? (size_t) w : 0;
            if (off == n)
                shutdown(peer, SHUT_WR);
        }
        conn_on_event(c, 1, 1);
        conn_on_timer(c, sink_now_ms() + 60000);
        drain(peer);
        if (off == n && c->state == CS_WS && buf_live(&c->out) == 0 && c->stalled)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    struct qsink *s = sink();
    const char *preset = PRESETS[data[0] % (sizeof PRESETS / sizeof PRESETS[0])];
    char err[256];
    if (preset)
        fault_parse(&s->faults, preset, err, sizeof err);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
        return 0;
    struct conn *c = conn_new(s, sv[0], (int) ++s->st.accepted);
    if (c) {
        feed(c, sv[1], data + 1, size - 1);
        conn_drop(c, 0);
        conn_free(c);
    } else {
        close(sv[0]);
    }
    close(sv[1]);
    reset(s);
    return 0;
}
