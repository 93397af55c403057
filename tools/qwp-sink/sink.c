/* The event loop (one thread, epoll, level-triggered) and the embedding API. */
#include "sink_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>

static char LISTEN_TAG, WAKE_TAG;

int64_t sink_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_interest(struct qsink *s, struct conn *c) {
    if (c->state == CS_DEAD)
        return;
    uint32_t m = (conn_wants_read(c) ? EPOLLIN : 0) | (conn_wants_write(c) ? EPOLLOUT : 0);
    if (m == c->evmask)
        return;
    struct epoll_event ev = {.events = m, .data.ptr = c};
    epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->evmask = m;
}

static void on_accept(struct qsink *s) {
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        s->st.accepted++;
        struct conn *c = conn_new(s, fd, (int) s->st.accepted);
        if (!c) {
            close(fd);
            continue;
        }
        c->evmask = EPOLLIN;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
        c->next = s->conns;
        s->conns = c;
    }
}

/* Frees dead connections and refreshes epoll interest of the others. */
static void reap(struct qsink *s) {
    int64_t open = 0;
    for (struct conn **pp = &s->conns; *pp;) {
        struct conn *c = *pp;
        if (c->state == CS_DEAD) {
            *pp = c->next;
            conn_free(c);
            continue;
        }
        set_interest(s, c);
        open++;
        pp = &c->next;
    }
    s->st.open = open;
}

static int next_timeout(struct qsink *s, int64_t now) {
    int64_t best = -1;
    for (struct conn *c = s->conns; c; c = c->next) {
        int64_t d = conn_next_deadline(c);
        if (d >= 0 && (best < 0 || d < best))
            best = d;
    }
    if (best < 0)
        return 1000;
    return best <= now ? 0 : (int) (best - now);
}

static void handle_events(struct qsink *s, struct epoll_event *ev, int n) {
    for (int i = 0; i < n; i++) {
        void *p = ev[i].data.ptr;
        if (p == &LISTEN_TAG) {
            on_accept(s);
        } else if (p == &WAKE_TAG) {
            uint64_t v;
            if (read(s->evfd, &v, sizeof v) < 0) {
                /* nothing to do: the wake-up already happened */
            }
        } else {
            struct conn *c = p;
            uint32_t e = ev[i].events;
            conn_on_event(c, (e & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0, (e & EPOLLOUT) != 0);
        }
    }
}

static void restart_all(struct qsink *s) {
    for (struct conn *c = s->conns; c; c = c->next)
        conn_drop(c, 0);
    s->restart = 0;
}

/* On stop: no new connections; final acks and CLOSE 1001 to every session,
 * which then half-closes and drains as usual, within the stop grace period. */
static void begin_stop(struct qsink *s, int64_t now) {
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->lfd, NULL);
    for (struct conn *c = s->conns; c; c = c->next) {
        if (c->state == CS_WS)
            conn_server_close(c, 1001, "server stopping");
        else if (c->state == CS_TLS || c->state == CS_HTTP)
            conn_drop(c, 0);
        conn_on_event(c, 0, 1);
    }
    s->stop_deadline = now + QSINK_STOP_GRACE_MS;
}

/* After the grace period: discard unread input (so close() sends FIN, not RST)
 * and close what is left. */
static void end_stop(struct qsink *s) {
    static uint8_t scratch[65536];
    for (struct conn *c = s->conns; c; c = c->next) {
        while (c->fd >= 0 && recv(c->fd, scratch, sizeof scratch, MSG_DONTWAIT) > 0)
            ;
        conn_drop(c, 0);
    }
    reap(s);
}

static int loop_done(struct qsink *s, int64_t now) {
    return s->stop_deadline > 0 && (!s->conns || now >= s->stop_deadline);
}

static void *loop(void *arg) {
    struct qsink *s = arg;
    struct epoll_event ev[64];
    pthread_mutex_lock(&s->mu);
    while (!loop_done(s, sink_now_ms())) {
        int64_t now = sink_now_ms();
        if (s->stop && s->stop_deadline == 0) {
            begin_stop(s, now);
            reap(s);
            continue;
        }
        int timeout = next_timeout(s, now);
        if (s->stop_deadline > 0 && timeout > s->stop_deadline - now)
            timeout = (int) (s->stop_deadline - now);
        pthread_mutex_unlock(&s->mu);
        int n = epoll_wait(s->epfd, ev, 64, timeout < 0 ? 0 : timeout);
        pthread_mutex_lock(&s->mu);
        handle_events(s, ev, n > 0 ? n : 0);
        now = sink_now_ms();
        for (struct conn *c = s->conns; c; c = c->next)
            conn_on_timer(c, now);
        if (s->restart)
            restart_all(s);
        reap(s);
        pthread_cond_broadcast(&s->cv);
    }
    end_stop(s);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void wake(struct qsink *s) {
    uint64_t one = 1;
    if (write(s->evfd, &one, sizeof one) < 0) {
        /* the counter is saturated: the loop is awake anyway */
    }
}

/* ---- start / stop ---- */

static const char *dup_opt(struct qsink *s, const char *v) {
    if (!v || s->nstrs == (int) (sizeof s->strs / sizeof s->strs[0]))
        return v ? NULL : NULL;
    return s->strs[s->nstrs++] = strdup(v);
}

static void copy_opts(struct qsink *s, const qsink_opts *o) {
    s->o = *o;
    s->o.host = dup_opt(s, o->host ? o->host : "127.0.0.1");
    s->o.auth_basic = dup_opt(s, o->auth_basic);
    s->o.auth_bearer = dup_opt(s, o->auth_bearer);
    s->o.role = dup_opt(s, o->role);
    s->o.zone = dup_opt(s, o->zone);
    s->o.tls_cert = dup_opt(s, o->tls_cert);
    s->o.tls_key = dup_opt(s, o->tls_key);
    s->o.append_path = dup_opt(s, o->append_path);
    s->o.key_column = dup_opt(s, o->key_column);
    s->recv_buf = o->recv_buf ? o->recv_buf : QSINK_DEFAULT_RECV;
    long cap = (long) s->recv_buf - WS_MAX_HDR;
    s->max_batch = o->max_batch > 0   ? o->max_batch
                   : o->max_batch < 0 ? 0
                                      : (cap > 16777216 ? 16777216 : cap);
}

static int fail(char *err, size_t cap, const char *what, const char *detail) {
    if (err)
        snprintf(err, cap, "%s: %s", what, detail);
    return -1;
}

static int setup_tls(struct qsink *s, char *err, size_t cap) {
    if (!s->o.tls_cert && !s->o.tls_key)
        return 0;
    if (!s->o.tls_cert || !s->o.tls_key)
        return fail(err, cap, "tls", "both a certificate and a key are needed");
    s->tls = SSL_CTX_new(TLS_server_method());
    char e[256] = "out of memory";
    if (s->tls && SSL_CTX_use_certificate_chain_file(s->tls, s->o.tls_cert) == 1 &&
        SSL_CTX_use_PrivateKey_file(s->tls, s->o.tls_key, SSL_FILETYPE_PEM) == 1 &&
        SSL_CTX_check_private_key(s->tls) == 1) {
        SSL_CTX_set_mode(s->tls,
                         SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        return 0;
    }
    ERR_error_string_n(ERR_get_error(), e, sizeof e);
    char what[600];
    snprintf(what, sizeof what, "tls certificate %s / key %s", s->o.tls_cert, s->o.tls_key);
    return fail(err, cap, what, e);
}

static int setup_listener(struct qsink *s, char *err, size_t cap) {
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    int v6 = strchr(s->o.host, ':') != NULL;
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *) &ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(s->o.port);
        if (inet_pton(AF_INET6, s->o.host, &a->sin6_addr) != 1)
            return fail(err, cap, "bad IPv6 address", s->o.host);
        sl = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *) &ss;
        a->sin_family = AF_INET;
        a->sin_port = htons(s->o.port);
        if (inet_pton(AF_INET, s->o.host, &a->sin_addr) != 1)
            return fail(err, cap, "bad IPv4 address", s->o.host);
        sl = sizeof *a;
    }
    s->lfd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *) &ss, sl) != 0 || listen(s->lfd, 128) != 0)
        return fail(err, cap, "listen", strerror(errno));
    getsockname(s->lfd, (struct sockaddr *) &ss, &sl);
    s->port = ntohs(v6 ? ((struct sockaddr_in6 *) &ss)->sin6_port
                       : ((struct sockaddr_in *) &ss)->sin_port);
    return 0;
}

static int setup_loop(struct qsink *s, char *err, size_t cap) {
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s->epfd < 0 || s->evfd < 0)
        return fail(err, cap, "epoll", strerror(errno));
    struct epoll_event l = {.events = EPOLLIN, .data.ptr = &LISTEN_TAG};
    struct epoll_event w = {.events = EPOLLIN, .data.ptr = &WAKE_TAG};
    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &l);
    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->evfd, &w);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&s->mu, NULL);
    return 0;
}

static void sink_free(struct qsink *s) {
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->epfd >= 0)
        close(s->epfd);
    if (s->evfd >= 0)
        close(s->evfd);
    if (s->tls)
        SSL_CTX_free(s->tls);
    if (s->store.append)
        appendlog_close(s->store.append);
    store_free(&s->store);
    fault_clear(&s->faults);
    for (int i = 0; i < s->nrecs; i++) {
        for (size_t j = 0; j < s->recs[i]->n; j++)
            free(s->recs[i]->f[j].payload);
        free(s->recs[i]->f);
        free(s->recs[i]);
    }
    free(s->recs);
    free(s->errs);
    for (int i = 0; i < s->nstrs; i++)
        free(s->strs[i]);
    free(s);
}

qsink *qsink_start(const qsink_opts *opts, char *err, size_t errcap) {
    static const qsink_opts defaults;
    struct qsink *s = calloc(1, sizeof *s);
    if (!s) {
        fail(err, errcap, "qsink_start", "out of memory");
        return NULL;
    }
    s->lfd = s->epfd = s->evfd = -1;
    copy_opts(s, opts ? opts : &defaults);
    store_init(&s->store, !s->o.no_values, s->o.key_column);
    s->store.log_commits = s->o.durable;
    if (s->o.append_path) {
        if (appendlog_open(&s->append, s->o.append_path, s->o.append_sync, err, errcap) != 0) {
            sink_free(s);
            return NULL;
        }
        s->store.append = &s->append;
    }
    if (setup_tls(s, err, errcap) != 0 || setup_listener(s, err, errcap) != 0 ||
        setup_loop(s, err, errcap) != 0 || pthread_create(&s->thr, NULL, loop, s) != 0) {
        sink_free(s);
        return NULL;
    }
    return s;
}

void qsink_stop(qsink *s) {
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_mutex_unlock(&s->mu);
    wake(s);
    pthread_join(s->thr, NULL);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    sink_free(s);
}

uint16_t qsink_port(const qsink *s) {
    return s->port;
}

/* ---- runtime control ---- */

int qsink_fault(qsink *s, const char *line, char *err, size_t errcap) {
    char e[512];
    pthread_mutex_lock(&s->mu);
    int rc = fault_parse(&s->faults, line, e, sizeof e);
    pthread_mutex_unlock(&s->mu);
    if (rc != 0 && err)
        snprintf(err, errcap, "%s", e);
    wake(s);
    return rc;
}

void qsink_fault_clear(qsink *s) {
    pthread_mutex_lock(&s->mu);
    fault_clear(&s->faults);
    for (struct conn *c = s->conns; c; c = c->next) {
        c->silent = c->stalled = c->withhold = 0;
        c->delay_ok_ms = 0;
        c->malformed = 0;
        memset(&c->style, 0, sizeof c->style);
    }
    pthread_mutex_unlock(&s->mu);
    wake(s);
}

void qsink_restart(qsink *s) {
    pthread_mutex_lock(&s->mu);
    s->restart = 1;
    pthread_mutex_unlock(&s->mu);
    wake(s);
}
