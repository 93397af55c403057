/* The I/O thread: its creation and end, the service loop, the commands other
 * threads send it (stop, pause, the latch), the tick, and the functions of
 * io.h other threads call. The connection itself lives in conn.c, what goes
 * out in send.c, what comes in in ack.c (io_int.h maps them).
 *
 * Everything here runs on the I/O thread except the functions documented in
 * io.h as callable from other threads; those touch only io->x (atomics, and
 * the rest under x.mu). */
#include "io/io_int.h"

#include "interval.h"

#include "err.h"
#include "log.h"
#include "os/os.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers of every io file ---- */

int64_t qsf_io_now_ns(void) {
    return QSF_OS->mono_ns();
}

void qsf_io_bump(_Atomic uint64_t *c) {
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

const char *qsf_io_host_name(const qsf_io *io, int i, char *buf, size_t cap) {
    if (i < 0 || i >= io->o.n_addrs)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%s:%d", io->addrs[i].host, io->addrs[i].port);
    return buf;
}

void qsf_io_signal_progress(qsf_io *io) {
    if (atomic_load(&io->x.waiters) == 0)
        return;
    pthread_mutex_lock(&io->x.mu);
    pthread_cond_broadcast(&io->x.cv);
    pthread_mutex_unlock(&io->x.mu);
}

/* Waits on x.cv at most 10 ms (so fake clocks in tests are re-read). */
static void wait_a_little(qsf_io *io) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 10000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&io->x.cv, &io->x.mu, &ts);
}

/* ---- commands ---- */

static void apply_pause(qsf_io *io) {
    enum qsf_io_state st = io->l.st;
    bool want = atomic_load(&io->x.pause_req);
    if (want && st != QSF_IO_PAUSED && st != QSF_IO_TERMINAL && st != QSF_IO_STOPPED) {
        if (st != QSF_IO_CLOSING || io->c.why != QSF_WHY_PAUSE)
            QSF_LOGD("pausing the wire (state %s)", qsf_io_state_name(st));
        atomic_store(&io->x.paused, 1);
        qsf_conn_leave(io, QSF_WHY_PAUSE);
    } else if (!want && st == QSF_IO_PAUSED) {
        QSF_LOGD("resuming the wire");
        atomic_store(&io->x.paused, 0);
        pthread_mutex_lock(&io->x.mu);
        io->x.pause_applied = false;
        pthread_mutex_unlock(&io->x.mu);
        qsf_hosts_new_round(&io->l.hosts);
        qsf_conn_schedule(io, 0);
    }
}

/* The latch outranks a pause, a stop outranks both (conn.c). */
static void apply_commands(qsf_io *io) {
    if (qsf_latch_code(io->latch))
        qsf_conn_enter_terminal(io);
    if (atomic_load(&io->x.stop_req))
        qsf_conn_leave(io, QSF_WHY_STOP);
    else
        apply_pause(io);
}

static void attempt_if_due(qsf_io *io, int64_t now) {
    if (io->l.st == QSF_IO_WAIT && now >= io->l.next_attempt_ns)
        qsf_conn_start_attempt(io);
}

static void on_wake(void *u) {
    qsf_io *io = u;
    atomic_store(&io->x.wake_pending, false);
    apply_commands(io);
    attempt_if_due(io, qsf_io_now_ns());
    if (io->l.st == QSF_IO_OPEN)
        io->ws_ops->want_writable(io->ws);
}

static void on_tick(void *u) {
    qsf_io *io = u;
    int64_t now = qsf_io_now_ns();
    qsf_ack_persist_pending(io);
    if (io->o.interval)
        qsf_interval_tick(io->o.interval, now);
    apply_commands(io);
    attempt_if_due(io, now);
    qsf_conn_tick(io, now);
    if (io->l.st == QSF_IO_OPEN)
        qsf_conn_apply(io, qsf_live_tick(io, now));
    qsf_progress_tick(io, now);
    if (io->l.st == QSF_IO_OPEN) {
        qsf_send_keepalive(io, now);
        qsf_ack_retire_given_up(io);
        if (qsf_send_due(io))
            io->ws_ops->want_writable(io->ws); /* safety net; wakes are coalesced */
        else if (io->c.cursor_ok) /* caught up: our pin must not hold space the producer needs */
            qsf_ring_cursor_skip_read(io->ring, &io->c.cur);
    }
    /* a watermark write left pending meanwhile (ack.c) keeps its nearer timer */
    io->ws_ops->tick_in(io->ws, io->l.wm_pending ? QSF_IO_WATERMARK_TICK_US : QSF_IO_TICK_US);
}

/* The loop spins after a turn with work only while an application thread
 * waits for an acknowledgement (qsf_io_wait: qsf_wait, close): that is who
 * gains the scheduler wake-up it saves. A sender streaming with nobody
 * waiting sleeps between events; its spinning cost the I/O thread about half
 * its CPU (docs/BENCHMARKS.md, "rows"). */
static bool wants_spin(void *u) {
    qsf_io *io = u;
    if (atomic_load_explicit(&io->x.waiters, memory_order_relaxed) == 0)
        return false;
    atomic_fetch_add_explicit(&io->x.spins, 1, memory_order_relaxed);
    return true;
}

/* ---- the thread ---- */

static bool finished(qsf_io *io) {
    return io->l.st == QSF_IO_STOPPED && atomic_load(&io->x.stop_req) &&
           !io->ws_ops->active(io->ws);
}

static void *io_main(void *arg) {
    qsf_io *io = arg;
    io->ws_ops->tick_in(io->ws, 0);
    while (!finished(io)) {
        if (io->ws_ops->service(io->ws))
            atomic_fetch_add_explicit(&io->x.empty_waits, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&io->x.loop_turns, 1, memory_order_relaxed);
    }
    qsf_ring_cursor_release(io->ring, &io->c.cur);
    return NULL;
}

/* ---- creation ---- */

static char *dup_into(char **cur, const char *s) {
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    memcpy(*cur, s, n);
    char *r = *cur;
    *cur += n;
    return r;
}

static int copy_opts(qsf_io *io, const qsf_io_opts *o) {
    size_t need = 0;
    const char *ss[] = {o->tls_roots, o->authorization, o->client_id};
    for (int i = 0; i < 3; i++)
        need += ss[i] ? strlen(ss[i]) + 1 : 0;
    for (int i = 0; i < o->n_addrs; i++)
        need += strlen(o->addrs[i].host) + 1;
    io->strs = malloc(need + 1);
    io->addrs = calloc((size_t) o->n_addrs, sizeof *io->addrs);
    if (!io->strs || !io->addrs)
        return -1;
    char *cur = io->strs;
    io->o = *o;
    io->o.tls_roots = dup_into(&cur, o->tls_roots);
    io->o.authorization = dup_into(&cur, o->authorization);
    io->o.client_id = dup_into(&cur, o->client_id);
    for (int i = 0; i < o->n_addrs; i++)
        io->addrs[i] = (qsf_io_addr){dup_into(&cur, o->addrs[i].host), o->addrs[i].port};
    io->o.addrs = io->addrs;
    return 0;
}

static void loop_init(qsf_io *io, const qsf_io_opts *o) {
    qsf_io_loop *l = &io->l;
    l->st = QSF_IO_WAIT;
    l->prev_host = -1;
    l->highest_sent_fsn = o->recovered_published_fsn;
    l->seen_ok = l->seen_acked = INT64_MIN; /* the first tick starts the progress watch */
    l->outage_level = QSF_LOG_INFO;
    l->down_since_ns = qsf_io_now_ns();
    qsf_hosts_init(&l->hosts, o->n_addrs);
    qsf_poison_init(&l->poison, o->max_frame_rejections, o->poison_window_ms);
    qsf_backoff_init(&l->backoff, o->backoff_initial_ms, o->backoff_max_ms,
                     (uint64_t) qsf_io_now_ns() ^ (uint64_t) (uintptr_t) io);
    l->init_deadline_ns = qsf_io_now_ns() + o->reconnect_max_duration_ms * QSF_IO_MS;
    l->retired = qsf_ring_retired(io->ring, &l->n_retired);
}

static int io_alloc(const qsf_io_opts *o, qsf_ring *ring, qsf_inbox *inbox, qsf_latch *latch,
                    qsf_io **out, qsf_errinfo *err) {
    qsf_io *io = calloc(1, sizeof *io);
    if (io)
        qsf_conn_init(&io->c);
    if (!io || copy_opts(io, o) < 0 || !(io->c.dur = qsf_durack_new()) ||
        qsf_qwp_encoder_new(&io->l.enc, err) != QSF_OK) {
        qsf_io_free(io);
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory creating the I/O thread");
    }
    io->ring = ring;
    io->inbox = inbox;
    io->latch = latch;
    io->ws_ops = o->ws_ops ? o->ws_ops : &qsf_ws_lws;
    pthread_mutex_init(&io->x.mu, NULL);
    pthread_cond_init(&io->x.cv, NULL);
    atomic_store(&io->x.highest_ok, qsf_ring_acked_fsn(ring));
    io->x.down_since_us = QSF_OS->wall_us();
    loop_init(io, o);
    *out = io;
    return QSF_OK;
}

static int wait_initial(qsf_io *io, qsf_errinfo *err) {
    pthread_mutex_lock(&io->x.mu);
    while (io->x.init_state == 0)
        pthread_cond_wait(&io->x.cv, &io->x.mu);
    int st = io->x.init_state;
    qsf_errinfo e = io->x.init_err;
    pthread_mutex_unlock(&io->x.mu);
    if (st > 0)
        return QSF_OK;
    int code = e.code ? e.code : QSF_E_CONNECT;
    qsf_err_set(err, code, e.flags & ~QSF_ERRF_FATAL, e.sys_errno, "initial connect failed: %s",
                e.msg[0] ? e.msg : "no endpoint could be reached");
    return code;
}

static int create_ws(qsf_io *io, qsf_errinfo *err) {
    const qsf_io_opts *o = &io->o;
    qsf_ws_conf wc = {o->tls,           o->tls_verify, o->tls_roots,
                      o->authorization, o->client_id,  o->request_durable_ack};
    qsf_ws_hooks hooks;
    qsf_conn_hooks(&hooks);
    hooks.on_wake = on_wake;
    hooks.on_tick = on_tick;
    hooks.wants_spin = wants_spin;
    return io->ws_ops->create(&wc, &hooks, io, &io->ws, err);
}

int qsf_io_start(const qsf_io_opts *o, qsf_ring *ring, qsf_inbox *inbox, qsf_latch *latch,
                 qsf_io **out, qsf_errinfo *err) {
    if (o->n_addrs < 1)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "no address to connect to");
    qsf_io *io = NULL;
    int rc = io_alloc(o, ring, inbox, latch, &io, err);
    if (rc)
        return rc;
    if ((rc = create_ws(io, err)) != QSF_OK) {
        qsf_io_free(io);
        return rc;
    }
    if (qsf_latch_subscribe(latch, qsf_io_on_latched, io) != QSF_OK) {
        qsf_io_free(io);
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "too many subscribers of one latch");
    }
    io->subscribed = true;
    if (o->initial_mode == QSF_IO_INIT_ASYNC)
        io->x.init_state = 1;
    qsf_conn_schedule(io, 0);
    if (pthread_create(&io->thr, NULL, io_main, io) != 0) {
        qsf_io_free(io);
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "cannot start the I/O thread");
    }
    io->thr_started = true;
    pthread_setname_np(io->thr, "qsf-io");
    if ((rc = wait_initial(io, err)) != QSF_OK) {
        qsf_io_stop(io);
        qsf_io_free(io);
        return rc;
    }
    *out = io;
    return QSF_OK;
}

void qsf_io_wake(qsf_io *io) {
    if (!atomic_exchange(&io->x.wake_pending, true))
        io->ws_ops->cancel(io->ws);
}

void qsf_io_stop(qsf_io *io) {
    if (!io || !io->thr_started)
        return;
    atomic_store(&io->x.stop_req, 1);
    io->ws_ops->cancel(io->ws);
    pthread_join(io->thr, NULL);
    io->thr_started = false;
    atomic_store(&io->x.connected, 0);
}

/* After the thread stopped: until every qsf_io_wait caller has left (each
 * sees stop_req within 10 ms and returns QSF_E_CLOSED), since what they wait
 * on (x.mu, the ring, the owner's latch) is freed next. */
static void wait_out_waiters(qsf_io *io) {
    atomic_store(&io->x.stop_req, 1);
    pthread_mutex_lock(&io->x.mu);
    while (atomic_load(&io->x.waiters) > 0) {
        pthread_cond_broadcast(&io->x.cv);
        wait_a_little(io);
    }
    pthread_mutex_unlock(&io->x.mu);
}

void qsf_io_free(qsf_io *io) {
    if (!io)
        return;
    qsf_io_stop(io);
    wait_out_waiters(io);
    if (io->subscribed)
        qsf_latch_unsubscribe(io->latch, qsf_io_on_latched, io);
    qsf_conn_free(io);
    if (io->ws)
        io->ws_ops->destroy(io->ws);
    free(io->l.sbuf);
    qsf_qwp_encoder_free(io->l.enc);
    pthread_mutex_destroy(&io->x.mu);
    pthread_cond_destroy(&io->x.cv);
    free(io->addrs);
    free(io->strs);
    free(io);
}

/* ---- other threads ---- */

int64_t qsf_io_highest_ok(const qsf_io *io) {
    return atomic_load(&((qsf_io *) io)->x.highest_ok);
}

uint64_t qsf_io_loop_turns(const qsf_io *io) {
    return atomic_load_explicit(&((qsf_io *) io)->x.loop_turns, memory_order_relaxed);
}

uint64_t qsf_io_spins(const qsf_io *io) {
    return atomic_load_explicit(&((qsf_io *) io)->x.spins, memory_order_relaxed);
}

uint64_t qsf_io_empty_waits(const qsf_io *io) {
    return atomic_load_explicit(&((qsf_io *) io)->x.empty_waits, memory_order_relaxed);
}

int64_t qsf_io_max_batch(const qsf_io *io) {
    return atomic_load(&((qsf_io *) io)->x.max_batch);
}

static int64_t watermark(qsf_io *io, int level) {
    return level == QSF_WAIT_DURABLE ? qsf_ring_acked_fsn(io->ring) : qsf_io_highest_ok(io);
}

/* What ends a wait for fsn short of it (the watermark at m): a latched
 * error, or qsf_close stopping the thread (qsf_io_free waits for the wait to
 * leave). QSF_OK: neither. */
static int wait_ended(qsf_io *io, int64_t fsn, int64_t m, qsf_errinfo *err) {
    int rc = qsf_latch_get(io->latch, err);
    if (rc == QSF_OK && atomic_load(&io->x.stop_req))
        rc = qsf_err_set(
            err, QSF_E_CLOSED, 0, 0,
            "the sender is closing: fsn %" PRId64 " not reached (watermark %" PRId64 ")", fsn, m);
    return rc;
}

int qsf_io_wait(qsf_io *io, int64_t fsn, int level, int64_t timeout_ms, bool absolute,
                qsf_errinfo *err) {
    atomic_fetch_add(&io->x.waiters, 1); /* first: qsf_io_free waits for it to leave */
    int64_t mark = watermark(io, level), since = qsf_io_now_ns();
    pthread_mutex_lock(&io->x.mu);
    int rc = QSF_OK;
    for (;;) {
        int64_t m = watermark(io, level), now = qsf_io_now_ns();
        if (m >= fsn)
            break;
        if ((rc = wait_ended(io, fsn, m, err)) != QSF_OK)
            break;
        if (m != mark && !absolute) {
            mark = m; /* progress restarts the no-progress clock */
            since = now;
        }
        /* in milliseconds: any int64_t bound, INT64_MAX included, is one
         * (its nanoseconds would overflow and time out at once) */
        if ((now - since) / QSF_IO_MS >= timeout_ms) {
            rc = qsf_err_set(err, QSF_E_TIMEOUT, QSF_ERRF_RETRIABLE, 0,
                             "%s for %" PRId64 " ms waiting for fsn %" PRId64 " (watermark %" PRId64
                             ")",
                             absolute ? "timed out" : "no progress", timeout_ms, fsn, m);
            break;
        }
        wait_a_little(io);
    }
    pthread_mutex_unlock(&io->x.mu);
    atomic_fetch_sub(&io->x.waiters, 1);
    return rc;
}

/* qsf_pause: waits (bounded) until the wire is idle, so nothing published
 * after the call goes out before qsf_resume. Counted among the waiters from
 * the first, as qsf_io_wait is, so that qsf_io_free waits for it to leave; it
 * leaves once a stop is asked. */
void qsf_io_pause(qsf_io *io, bool pause) {
    atomic_fetch_add(&io->x.waiters, 1);
    atomic_store(&io->x.pause_req, pause);
    if (pause)
        atomic_store(&io->x.paused, 1);
    io->ws_ops->cancel(io->ws);
    int64_t deadline = qsf_io_now_ns() + QSF_IO_PAUSE_NS;
    pthread_mutex_lock(&io->x.mu);
    while (pause && !io->x.pause_applied && !qsf_latch_code(io->latch) && io->x.init_state >= 0 &&
           !atomic_load(&io->x.stop_req) && qsf_io_now_ns() < deadline)
        wait_a_little(io);
    pthread_mutex_unlock(&io->x.mu);
    atomic_fetch_sub(&io->x.waiters, 1);
}

void qsf_io_stats(const qsf_io *cio, qsf_stats *out) {
    qsf_io *io = (qsf_io *) cio;
    qsf_io_shared *x = &io->x;
    out->frames_sent = atomic_load(&x->frames_sent);
    out->frames_replayed = atomic_load(&x->frames_replayed);
    out->acks = atomic_load(&x->acks);
    out->durable_acks = atomic_load(&x->durable_acks);
    out->durable_trim_advances = atomic_load(&x->durable_trims);
    out->server_errors = atomic_load(&x->server_errors);
    out->reconnect_attempts = atomic_load(&x->reconnect_attempts);
    out->reconnects_succeeded = atomic_load(&x->reconnects_ok);
    out->highest_ok_fsn = atomic_load(&x->highest_ok);
    out->connected = atomic_load(&x->connected);
    out->paused = atomic_load(&x->paused);
    out->ever_connected = atomic_load(&x->ever_connected);
    out->last_error_code = atomic_load(&x->last_error_code);
    out->connections_lost = atomic_load(&x->connections_lost);
    out->liveness_timeouts = atomic_load(&x->liveness_timeouts);
    pthread_mutex_lock(&x->mu);
    snprintf(out->current_host, sizeof out->current_host, "%s", out->connected ? x->cur_host : "");
    pthread_mutex_unlock(&x->mu);
}
