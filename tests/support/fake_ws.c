/* The WebSocket layer without a socket (fake_ws.h). One lock guards all of
 * it; hooks are called with the lock released, on the thread in `service`
 * (the I/O thread), so the I/O thread may call back into the table from them. */
#include "fake_ws.h"

#include "testutil.h"

#include "bytes.h"
#include "err.h"
#include "log.h"
#include "os/os.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FWS_PRE       16                  /* headroom asked for, like LWS_PRE */
#define WAIT_BOUND_NS (10 * 1000000000ll) /* FWS_WAIT gives up after this */
#define IDLE_NS       (20 * 1000000ll)    /* service returns after this without events */
#define LOG_KEEP      40                  /* last log lines kept for fws_dump */

enum ev_kind { EV_OPEN, EV_FAIL, EV_MESSAGE, EV_VIOLATION, EV_PEER_CLOSE, EV_TICK };

typedef struct fws_event {
    int kind;
    uint64_t no;
    qsf_ws_hs hs;
    qsf_ws_fail fail;
    int code;
    char text[256];
    uint8_t *bytes;
    size_t n;
    struct fws_event *next;
} fws_event;

typedef struct fws_sent {
    uint8_t *p;
    size_t n;
    int conn;
    int64_t wire;
} fws_sent;

struct fake_ws {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* broadcast on every change */
    qsf_ws_hooks hooks;
    void *user;
    /* the attempt or connection (there is at most one) */
    bool active, open, closing, in_writable;
    bool end_pending, end_abort; /* the ending our close() asked for */
    bool writable_req, wake_req;
    int64_t tick_at; /* QSF_OS->mono_ns of the armed tick, -1 none */
    int conn;        /* connects so far: the number of the current one */
    int64_t next_wire;
    /* what the test set */
    bool hold_ends, peer_silent, choked, auto_open, auto_fail;
    qsf_ws_hs auto_hs;
    qsf_ws_fail auto_fl;
    /* queued events */
    fws_event *head, *tail;
    uint64_t next_no, done_no;
    /* records */
    int ports[256];
    fws_close closes[1024];
    int nclose;
    fws_sent *sent;
    int nsent, capsent;
    int pings;
    char state[16];
    char trans[512][32];
    int ntrans;
    char errs[16][200]; /* log lines of level ERROR */
    int nerr;
    int cancels;
    char log[LOG_KEEP][160];
    int nlog;
    int misuse;
    char first_misuse[200];
};

/* ---- the clock ---- */

static _Atomic int64_t clock_offset_ns;
static int64_t (*saved_mono)(void);

static int64_t real_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t shifted_mono_ns(void) {
    return real_mono_ns() + atomic_load(&clock_offset_ns);
}

void fws_clock_advance_ms(int64_t ms) {
    atomic_fetch_add(&clock_offset_ns, ms * 1000000);
}

/* ---- bookkeeping (under mu) ---- */

static fake_ws *pending; /* made by fws_new, adopted by create() */

/* Returns one value read under the fake's lock. */
#define READ_LOCKED(f, T, expr)                                                                    \
    do {                                                                                           \
        pthread_mutex_lock(&(f)->mu);                                                              \
        T v_ = (expr);                                                                             \
        pthread_mutex_unlock(&(f)->mu);                                                            \
        return v_;                                                                                 \
    } while (0)

static void changed(fake_ws *f) {
    pthread_cond_broadcast(&f->cv);
}

static void misuse(fake_ws *f, const char *what) {
    if (f->misuse++ == 0)
        snprintf(f->first_misuse, sizeof f->first_misuse, "%s", what);
}

static void timed_wait(fake_ws *f, int64_t ns) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t t = (int64_t) ts.tv_nsec + ns;
    ts.tv_sec += (time_t) (t / 1000000000);
    ts.tv_nsec = (long) (t % 1000000000);
    pthread_cond_timedwait(&f->cv, &f->mu, &ts);
}

/* The connection or attempt is gone: nothing of it is pending any more. */
static void gone(fake_ws *f) {
    f->active = f->open = f->closing = false;
    f->end_pending = f->writable_req = false;
}

/* ---- the log sink: the state transitions ---- */

static void keep_line(fake_ws *f, int level, const char *line) {
    snprintf(f->log[f->nlog++ % LOG_KEEP], sizeof f->log[0], "%s", line);
    if (level == QSF_LOG_ERROR && f->nerr < (int) (sizeof f->errs / sizeof f->errs[0]))
        snprintf(f->errs[f->nerr++], sizeof f->errs[0], "%s", line);
    const char *p = "I/O state ";
    if (strncmp(line, p, strlen(p)) != 0)
        return;
    const char *to = strstr(line, " -> ");
    if (to && f->ntrans < (int) (sizeof f->trans / sizeof f->trans[0])) {
        snprintf(f->trans[f->ntrans++], sizeof f->trans[0], "%s", line + strlen(p));
        snprintf(f->state, sizeof f->state, "%s", to + 4);
    }
}

static void log_sink(int level, const char *line, void *user) {
    fake_ws *f = user;
    if (getenv("QSF_TEST_LOG"))
        fprintf(stderr, "qsf %d %s\n", level, line);
    pthread_mutex_lock(&f->mu);
    keep_line(f, level, line);
    changed(f);
    pthread_mutex_unlock(&f->mu);
}

/* ---- life ---- */

fake_ws *fws_new(void) {
    fake_ws *f = calloc(1, sizeof *f);
    assert_non_null(f);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->tick_at = -1;
    f->next_no = 1;
    snprintf(f->state, sizeof f->state, "WAIT");
    atomic_store(&clock_offset_ns, 0);
    saved_mono = qsf_os_table.mono_ns;
    qsf_os_table.mono_ns = shifted_mono_ns;
    qsf_log_set(log_sink, f, QSF_LOG_DEBUG);
    pending = f;
    return f;
}

void fws_free(fake_ws *f) {
    if (!f)
        return;
    qsf_log_set(NULL, NULL, QSF_LOG_WARN);
    qsf_os_table.mono_ns = saved_mono;
    if (pending == f)
        pending = NULL;
    while (f->head) {
        fws_event *e = f->head;
        f->head = e->next;
        free(e->bytes);
        free(e);
    }
    for (int i = 0; i < f->nsent; i++)
        free(f->sent[i].p);
    free(f->sent);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* ---- the table (the I/O thread) ---- */

static fake_ws *F(const qsf_ws *ws) {
    return (fake_ws *) ws;
}

static int op_create(const qsf_ws_conf *conf, const qsf_ws_hooks *hooks, void *user, qsf_ws **out,
                     qsf_errinfo *err) {
    (void) conf;
    fake_ws *f = pending;
    if (!f)
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "fake ws: fws_new() was not called");
    pending = NULL;
    f->hooks = *hooks;
    f->user = user;
    *out = (qsf_ws *) f;
    return QSF_OK;
}

static void op_destroy(qsf_ws *ws) {
    (void) ws; /* the test reads the records after qsf_io_free; fws_free frees */
}

static void enqueue(fake_ws *f, fws_event *e);

static int op_connect(qsf_ws *ws, const char *host, int port, qsf_errinfo *err) {
    (void) host;
    (void) err;
    fake_ws *f = F(ws);
    pthread_mutex_lock(&f->mu);
    if (f->active)
        misuse(f, "connect() while an attempt or a connection exists");
    if (f->conn < (int) (sizeof f->ports / sizeof f->ports[0]))
        f->ports[f->conn] = port;
    f->conn++;
    gone(f);
    f->active = true;
    f->end_abort = false;
    f->next_wire = 0;
    if (f->auto_open || f->auto_fail) {
        fws_event *e = calloc(1, sizeof *e);
        assert_non_null(e);
        e->kind = f->auto_open ? EV_OPEN : EV_FAIL;
        e->hs = f->auto_hs;
        e->fail = f->auto_fl;
        enqueue(f, e);
    }
    changed(f);
    pthread_mutex_unlock(&f->mu);
    return QSF_OK;
}

static bool op_active(const qsf_ws *ws) {
    READ_LOCKED(F(ws), bool, F(ws)->active);
}

static size_t op_pre(void) {
    return FWS_PRE;
}

static int op_send_binary_from(qsf_ws *ws, uint8_t *buf, const uint8_t *src, size_t len) {
    (void) buf;
    fake_ws *f = F(ws);
    pthread_mutex_lock(&f->mu);
    int rc = -1;
    if (!f->in_writable)
        misuse(f, "a frame sent outside on_writable");
    if (!f->open) {
        misuse(f, "a frame sent on a connection that is not open");
    } else {
        if (f->nsent == f->capsent) {
            f->capsent = f->capsent ? f->capsent * 2 : 64;
            f->sent = realloc(f->sent, (size_t) f->capsent * sizeof *f->sent);
            assert_non_null(f->sent);
        }
        fws_sent *s = &f->sent[f->nsent++];
        s->p = malloc(len ? len : 1);
        assert_non_null(s->p);
        memcpy(s->p, src, len);
        s->n = len;
        s->conn = f->conn;
        s->wire = f->next_wire++;
        rc = 0;
    }
    changed(f);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

static int op_send_ping(qsf_ws *ws) {
    fake_ws *f = F(ws);
    pthread_mutex_lock(&f->mu);
    int rc = f->open ? 0 : -1;
    f->pings += f->open;
    changed(f);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

static bool op_choked(const qsf_ws *ws) {
    READ_LOCKED(F(ws), bool, F(ws)->choked);
}

static void op_want_writable(qsf_ws *ws) {
    fake_ws *f = F(ws);
    pthread_mutex_lock(&f->mu);
    if (f->active)
        f->writable_req = true;
    changed(f);
    pthread_mutex_unlock(&f->mu);
}

/* As lws: an abort, or a close before the upgrade, ends it at once (1006 if
 * it was open); an orderly close sends CLOSE, and the connection ends when
 * the peer answers (never, while the peer is silent). */
static void op_close(qsf_ws *ws, int code, bool abort) {
    fake_ws *f = F(ws);
    pthread_mutex_lock(&f->mu);
    if (f->nclose < (int) (sizeof f->closes / sizeof f->closes[0]))
        f->closes[f->nclose] = (fws_close){code, abort, f->conn, f->active};
    f->nclose++;
    if (f->active && (abort || !f->open)) {
        f->end_pending = f->end_abort = true;
    } else if (f->active) {
        f->closing = true;
        f->end_pending |= !f->peer_silent;
    }
    changed(f);
    pthread_mutex_unlock(&f->mu);
}

/* ---- service ---- */

static void finish_event(fake_ws *f, fws_event *e) {
    pthread_mutex_lock(&f->mu);
    f->done_no = e->no;
    changed(f);
    pthread_mutex_unlock(&f->mu);
    free(e->bytes);
    free(e);
}

/* Checks the event against the connection and applies what it does to it;
 * false when the connection cannot have it (a test error, recorded). */
static bool admit(fake_ws *f, const fws_event *e) {
    switch (e->kind) {
    case EV_OPEN:
    case EV_FAIL:
        if (!f->active || f->open) {
            misuse(f, e->kind == EV_OPEN ? "test: upgrade event without an attempt"
                                         : "test: failure event without an attempt");
            return false;
        }
        if (e->kind == EV_OPEN)
            f->open = true;
        else
            gone(f);
        return true;
    case EV_MESSAGE:
    case EV_VIOLATION:
    case EV_PEER_CLOSE:
        if (!f->open) {
            misuse(f, "test: connection event without an open connection");
            return false;
        }
        if (e->kind == EV_PEER_CLOSE)
            gone(f);
        return true;
    default:
        return true;
    }
}

/* Called with mu held; returns with it released. */
static void deliver(fake_ws *f, fws_event *e) {
    bool ok = admit(f, e);
    pthread_mutex_unlock(&f->mu);
    const qsf_ws_hooks *h = &f->hooks;
    if (ok) {
        switch (e->kind) {
        case EV_OPEN:
            h->on_open(f->user, &e->hs);
            break;
        case EV_FAIL:
            h->on_connect_fail(f->user, &e->fail);
            break;
        case EV_MESSAGE:
            h->on_message(f->user, e->bytes, e->n);
            break;
        case EV_VIOLATION:
            h->on_violation(f->user, e->text);
            break;
        case EV_PEER_CLOSE:
            h->on_closed(f->user, e->code, e->text);
            break;
        default:
            h->on_tick(f->user);
        }
    }
    finish_event(f, e);
}

/* The ending a close() asked for. Called with mu held; returns with it released. */
static void end_connection(fake_ws *f) {
    bool was_open = f->open;
    int code = f->end_abort ? 1006 : 1000;
    gone(f);
    changed(f);
    pthread_mutex_unlock(&f->mu);
    if (was_open) {
        f->hooks.on_closed(f->user, code, "");
        return;
    }
    qsf_ws_fail fail;
    memset(&fail, 0, sizeof fail);
    snprintf(fail.reason, sizeof fail.reason, "connection aborted");
    f->hooks.on_connect_fail(f->user, &fail);
}

static void call_unlocked(fake_ws *f, void (*fn)(void *)) {
    pthread_mutex_unlock(&f->mu);
    fn(f->user);
}

static void writable(fake_ws *f) {
    f->writable_req = false;
    f->in_writable = true;
    pthread_mutex_unlock(&f->mu);
    f->hooks.on_writable(f->user);
    pthread_mutex_lock(&f->mu);
    f->in_writable = false;
    pthread_mutex_unlock(&f->mu);
}

/* One pass, as lws_service: a wake, else the next queued event, else the
 * ending of a close, else a due tick, else writable; or nothing after a
 * bounded wait. */
static bool op_service(qsf_ws *ws) {
    fake_ws *f = F(ws);
    pthread_mutex_lock(&f->mu);
    for (int round = 0;; round++) {
        int64_t now = QSF_OS->mono_ns();
        if (f->wake_req) {
            f->wake_req = false;
            call_unlocked(f, f->hooks.on_wake);
        } else if (f->head) {
            fws_event *e = f->head;
            f->head = e->next;
            if (!f->head)
                f->tail = NULL;
            deliver(f, e);
        } else if (f->end_pending && !f->hold_ends) {
            end_connection(f);
        } else if (f->tick_at >= 0 && now >= f->tick_at) {
            f->tick_at = -1;
            call_unlocked(f, f->hooks.on_tick);
        } else if (f->writable_req && f->open && !f->closing && !f->choked) {
            writable(f);
        } else if (round == 0) {
            int64_t w = f->tick_at >= 0 && f->tick_at - now < IDLE_NS ? f->tick_at - now : IDLE_NS;
            timed_wait(f, w);
            continue;
        } else {
            pthread_mutex_unlock(&f->mu);
        }
        return false;
    }
}

static void op_cancel(qsf_ws *ws) {
    fake_ws *f = F(ws);
    pthread_mutex_lock(&f->mu);
    f->wake_req = true;
    f->cancels++;
    changed(f);
    pthread_mutex_unlock(&f->mu);
}

static void op_tick_in(qsf_ws *ws, int64_t us) {
    fake_ws *f = F(ws);
    pthread_mutex_lock(&f->mu);
    f->tick_at = QSF_OS->mono_ns() + us * 1000;
    changed(f);
    pthread_mutex_unlock(&f->mu);
}

const qsf_ws_ops fws_ops = {
    .create = op_create,
    .destroy = op_destroy,
    .connect = op_connect,
    .active = op_active,
    .pre = op_pre,
    .send_binary_from = op_send_binary_from,
    .send_ping = op_send_ping,
    .choked = op_choked,
    .want_writable = op_want_writable,
    .close = op_close,
    .service = op_service,
    .cancel = op_cancel,
    .tick_in = op_tick_in,
};

/* ---- the test's side ---- */

qsf_ws_hs fws_hs(int version, bool durable, int64_t max_batch) {
    qsf_ws_hs hs;
    memset(&hs, 0, sizeof hs);
    hs.version = version;
    hs.durable_granted = durable;
    hs.max_batch = max_batch;
    return hs;
}

void fws_set_auto_open(fake_ws *f, const qsf_ws_hs *hs) {
    pthread_mutex_lock(&f->mu);
    f->auto_open = hs != NULL;
    if (hs)
        f->auto_hs = *hs;
    pthread_mutex_unlock(&f->mu);
}

void fws_set_auto_fail(fake_ws *f, int http_status, const char *reason) {
    pthread_mutex_lock(&f->mu);
    f->auto_fail = reason != NULL;
    memset(&f->auto_fl, 0, sizeof f->auto_fl);
    f->auto_fl.http_status = http_status;
    snprintf(f->auto_fl.reason, sizeof f->auto_fl.reason, "%s", reason ? reason : "");
    pthread_mutex_unlock(&f->mu);
}

/* Under mu. */
static void enqueue(fake_ws *f, fws_event *e) {
    e->no = f->next_no++;
    if (f->tail)
        f->tail->next = e;
    else
        f->head = e;
    f->tail = e;
    changed(f);
}

static uint64_t push(fake_ws *f, fws_event *e) {
    pthread_mutex_lock(&f->mu);
    enqueue(f, e);
    uint64_t no = e->no;
    pthread_mutex_unlock(&f->mu);
    return no;
}

static fws_event *event(int kind, const char *text) {
    fws_event *e = calloc(1, sizeof *e);
    assert_non_null(e);
    e->kind = kind;
    snprintf(e->text, sizeof e->text, "%s", text ? text : "");
    return e;
}

uint64_t fws_open(fake_ws *f, const qsf_ws_hs *hs) {
    fws_event *e = event(EV_OPEN, NULL);
    e->hs = *hs;
    return push(f, e);
}

uint64_t fws_fail(fake_ws *f, int http_status, const char *reason) {
    fws_event *e = event(EV_FAIL, NULL);
    e->fail.http_status = http_status;
    snprintf(e->fail.reason, sizeof e->fail.reason, "%s", reason ? reason : "");
    return push(f, e);
}

uint64_t fws_message(fake_ws *f, const uint8_t *p, size_t n) {
    fws_event *e = event(EV_MESSAGE, NULL);
    e->bytes = malloc(n ? n : 1);
    assert_non_null(e->bytes);
    memcpy(e->bytes, p, n);
    e->n = n;
    return push(f, e);
}

uint64_t fws_violation(fake_ws *f, const char *why) {
    return push(f, event(EV_VIOLATION, why));
}

uint64_t fws_peer_close(fake_ws *f, int code, const char *reason) {
    fws_event *e = event(EV_PEER_CLOSE, reason);
    e->code = code;
    return push(f, e);
}

uint64_t fws_tick(fake_ws *f) {
    return push(f, event(EV_TICK, NULL));
}

size_t fws_build_ok(uint8_t *out, size_t cap, int64_t seq) {
    assert_true(cap >= 11);
    out[0] = 0x00;
    qsf_put_i64(out + 1, seq);
    qsf_put_u16(out + 9, 0); /* no table entries */
    return 11;
}

size_t fws_build_error(uint8_t *out, size_t cap, uint8_t status, int64_t seq, const char *msg) {
    size_t n = strlen(msg);
    assert_true(status != 0x00 && status != 0x01 && status != 0x02 && status != 0x0E);
    assert_true(n <= 1024 && cap >= 11 + n);
    out[0] = status;
    qsf_put_i64(out + 1, seq);
    qsf_put_u16(out + 9, (uint16_t) n);
    memcpy(out + 11, msg, n);
    return 11 + n;
}

uint64_t fws_ok(fake_ws *f, int64_t seq) {
    uint8_t b[11];
    return fws_message(f, b, fws_build_ok(b, sizeof b, seq));
}

uint64_t fws_error(fake_ws *f, uint8_t status, int64_t seq, const char *msg) {
    uint8_t b[11 + 1024];
    return fws_message(f, b, fws_build_error(b, sizeof b, status, seq, msg));
}

static uint64_t done_no(fake_ws *f) {
    pthread_mutex_lock(&f->mu);
    uint64_t d = f->done_no;
    pthread_mutex_unlock(&f->mu);
    return d;
}

void fws_wait_done(fake_ws *f, uint64_t ev) {
    FWS_WAIT(f, done_no(f) >= ev);
}

void fws_sync(fake_ws *f) {
    fws_wait_done(f, fws_tick(f));
}

#define SETTER(name, field)                                                                        \
    void name(fake_ws *f, bool v) {                                                                \
        pthread_mutex_lock(&f->mu);                                                                \
        f->field = v;                                                                              \
        changed(f);                                                                                \
        pthread_mutex_unlock(&f->mu);                                                              \
    }
SETTER(fws_hold_ends, hold_ends)
SETTER(fws_set_peer_silent, peer_silent)
SETTER(fws_set_choked, choked)

/* ---- the records ---- */

int fws_connects(fake_ws *f) {
    READ_LOCKED(f, int, f->conn);
}

int fws_connect_port(fake_ws *f, int n) {
    assert_true(n >= 1 && n <= (int) (sizeof f->ports / sizeof f->ports[0]));
    READ_LOCKED(f, int, n <= f->conn ? f->ports[n - 1] : -1);
}

int fws_closes(fake_ws *f) {
    READ_LOCKED(f, int, f->nclose);
}

fws_close fws_close_at(fake_ws *f, int i) {
    assert_true(i >= 0 && i < fws_closes(f) && i < (int) (sizeof f->closes / sizeof f->closes[0]));
    READ_LOCKED(f, fws_close, f->closes[i]);
}

int fws_frames(fake_ws *f) {
    READ_LOCKED(f, int, f->nsent);
}

size_t fws_frame(fake_ws *f, int i, uint8_t *out, size_t cap, int *conn, int64_t *wire) {
    assert_true(i >= 0 && i < fws_frames(f)); /* frames are only ever added */
    pthread_mutex_lock(&f->mu);
    const fws_sent *s = &f->sent[i];
    memcpy(out, s->p, s->n < cap ? s->n : cap);
    if (conn)
        *conn = s->conn;
    if (wire)
        *wire = s->wire;
    size_t n = s->n;
    pthread_mutex_unlock(&f->mu);
    return n;
}

int fws_frames_on(fake_ws *f, int conn) {
    pthread_mutex_lock(&f->mu);
    int n = 0;
    for (int i = 0; i < f->nsent; i++)
        n += f->sent[i].conn == conn;
    pthread_mutex_unlock(&f->mu);
    return n;
}

int fws_pings(fake_ws *f) {
    READ_LOCKED(f, int, f->pings);
}

bool fws_is_active(fake_ws *f) {
    READ_LOCKED(f, bool, f->active);
}

bool fws_is_open(fake_ws *f) {
    READ_LOCKED(f, bool, f->open);
}

bool fws_state_is(fake_ws *f, const char *state) {
    READ_LOCKED(f, bool, strcmp(f->state, state) == 0);
}

int fws_transitions(fake_ws *f) {
    READ_LOCKED(f, int, f->ntrans);
}

const char *fws_transition(fake_ws *f, int i, char *buf, size_t cap) {
    pthread_mutex_lock(&f->mu);
    snprintf(buf, cap, "%s", i >= 0 && i < f->ntrans ? f->trans[i] : "?");
    pthread_mutex_unlock(&f->mu);
    return buf;
}

int fws_error_lines(fake_ws *f, const char *needle) {
    pthread_mutex_lock(&f->mu);
    int n = 0;
    for (int i = 0; i < f->nerr; i++)
        n += strstr(f->errs[i], needle) != NULL;
    pthread_mutex_unlock(&f->mu);
    return n;
}

int fws_cancels(fake_ws *f) {
    READ_LOCKED(f, int, f->cancels);
}

int fws_misuse(fake_ws *f) {
    READ_LOCKED(f, int, f->misuse);
}

/* Appends printf-style to buf at *at (bounded). */
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...) {
    if (*at >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, cap - *at, fmt, ap);
    va_end(ap);
    *at += n > 0 ? (size_t) n : 0;
}

void fws_dump(fake_ws *f, char *buf, size_t cap) {
    size_t at = 0;
    buf[0] = 0;
    pthread_mutex_lock(&f->mu);
    put(buf, cap, &at, "state %s; active %d open %d; %d connects (ports", f->state, f->active,
        f->open, f->conn);
    for (int i = 0; i < f->conn && i < 16; i++)
        put(buf, cap, &at, " %d", f->ports[i]);
    put(buf, cap, &at, "); %d frames; %d closes:", f->nsent, f->nclose);
    for (int i = 0; i < f->nclose && i < 16; i++)
        put(buf, cap, &at, " [conn %d code %d%s]", f->closes[i].conn, f->closes[i].code,
            f->closes[i].abort ? " abort" : "");
    put(buf, cap, &at, "\nmisuse %d%s%s\ntransitions:", f->misuse, f->misuse ? ": " : "",
        f->first_misuse);
    for (int i = f->ntrans > 24 ? f->ntrans - 24 : 0; i < f->ntrans; i++)
        put(buf, cap, &at, " %s;", f->trans[i]);
    put(buf, cap, &at, "\nlast log lines:\n");
    for (int i = f->nlog > LOG_KEEP ? f->nlog - LOG_KEEP : 0; i < f->nlog; i++)
        put(buf, cap, &at, "  %s\n", f->log[i % LOG_KEEP]);
    pthread_mutex_unlock(&f->mu);
}

int64_t fws_deadline(void) {
    return real_mono_ns() + WAIT_BOUND_NS;
}

void fws_wait_step(fake_ws *f, int64_t deadline, const char *what, const char *file, int line) {
    if (real_mono_ns() > deadline) {
        static char dump[16384];
        fws_dump(f, dump, sizeof dump);
        fail_msg("%s:%d: still not true after 10 s: %s\n%s", file, line, what, dump);
    }
    pthread_mutex_lock(&f->mu);
    timed_wait(f, 5 * 1000000ll);
    pthread_mutex_unlock(&f->mu);
}
