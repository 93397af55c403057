/* qsf metrics example: a producer that serves its sender's stats over HTTP
 * for Prometheus to scrape, on the loopback interface only.
 *
 *   metrics_server [port [seconds]]     (defaults: 9464, run until killed)
 *
 *   GET /metrics      qsf_metrics_prometheus (text format 0.0.4)
 *   GET /stats.json   qsf_stats_json
 *
 * With QDB_CLIENT_CONF set the sender uses that connect string; otherwise the
 * example starts the bundled qwp-sink on a free loopback port and a
 * store-and-forward sender into a fresh directory under /tmp. Port 0 picks a
 * free port. Either way it prints the URL, then publishes a row every 10 ms
 * while it answers requests, one at a time, on the same thread. What the
 * metrics mean and what to alert on: docs/METRICS.md.
 *
 * Not built from an install: it embeds the bundled sink (tools/qwp-sink/sink.h
 * and its library, which are not installed). Build it in the source tree:
 * `ninja -C build examples/metrics/metrics_server`.
 */
#include "qsf.h"
#include "sink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 10

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
    (void) sig;
    stop = 1;
}

static void die(const char *what, const char *why) {
    fprintf(stderr, "metrics_server: %s: %s\n", what, why);
    exit(1);
}

/* A socket on 127.0.0.1:port, listening; *bound gets the port it has. */
static int listen_loopback(uint16_t port, uint16_t *bound) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *) &a, sizeof a) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *) &a, &len) != 0)
        die("listen on 127.0.0.1", strerror(errno));
    *bound = ntohs(a.sin_port);
    return fd;
}

/* The whole text of one of the two formats, in a buffer the caller frees. */
static char *render(qsf_sender *s, size_t (*f)(const qsf_sender *, char *, size_t), size_t *len) {
    size_t cap = f(s, NULL, 0) + 512; /* a counter may grow between the two calls */
    char *b = malloc(cap);
    if (!b)
        return NULL;
    *len = f(s, b, cap);
    if (*len >= cap)
        *len = cap - 1; /* cannot happen with 512 bytes to spare; never send past the buffer */
    return b;
}

static void send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return; /* the client went away */
        p += w;
        n -= (size_t) w;
    }
}

static void respond(int fd, const char *status, const char *type, const char *body, size_t len) {
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, type, len);
    send_all(fd, head, (size_t) n);
    send_all(fd, body, len);
}

/* Reads the request line (bounded by 1 s) and answers it. */
static void serve_one(int fd, qsf_sender *s) {
    char req[2048];
    size_t got = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got < sizeof req - 1 && !memchr(req, '\n', got) && poll(&p, 1, 1000) == 1) {
        ssize_t r = recv(fd, req + got, sizeof req - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t) r;
    }
    req[got] = 0;
    bool prom = strncmp(req, "GET /metrics ", 13) == 0;
    bool json = strncmp(req, "GET /stats.json ", 16) == 0;
    if (!prom && !json) {
        respond(fd, "404 Not Found", "text/plain", "try /metrics or /stats.json\n", 28);
        return;
    }
    size_t len;
    char *body = render(s, prom ? qsf_metrics_prometheus : qsf_stats_json, &len);
    if (body)
        respond(fd, "200 OK",
                prom ? "text/plain; version=0.0.4; charset=utf-8" : "application/json", body, len);
    else
        respond(fd, "503 Service Unavailable", "text/plain", "out of memory\n", 14);
    free(body);
}

static qsf_sender *start_sender(qsink **sink, char *dir, size_t cap) {
    qsf_sender *s = NULL;
    qsf_errinfo e;
    int rc;
    if (getenv("QDB_CLIENT_CONF")) {
        rc = qsf_sender_from_env(&s, &e);
    } else {
        qsink_opts o;
        memset(&o, 0, sizeof o);
        char err[256], conf[1024];
        if (!(*sink = qsink_start(&o, err, sizeof err)))
            die("qwp-sink", err);
        snprintf(dir, cap, "/tmp/qsf-metrics-XXXXXX");
        if (!mkdtemp(dir))
            die("mkdtemp", strerror(errno));
        snprintf(conf, sizeof conf, "ws::addr=127.0.0.1:%u;sf_dir=%s;sender_id=metrics-example;",
                 qsink_port(*sink), dir);
        rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    }
    if (rc != QSF_OK)
        die("qsf_sender_new", e.msg);
    return s;
}

static void publish_row(qsf_sender *s, int64_t i) {
    qsf_errinfo e;
    int rc = qsf_table(s, "metrics_example", 15, &e);
    if (rc == QSF_OK)
        rc = qsf_col_i64(s, "i", 1, i, &e);
    if (rc == QSF_OK)
        rc = qsf_at_now(s, &e);
    if (rc == QSF_OK && i % 10 == 0)
        rc = qsf_flush(s, NULL, &e);
    if (rc != QSF_OK && rc != QSF_E_FULL) /* a full ring is retried on the next tick */
        die("publish", e.msg);
}

int main(int argc, char **argv) {
    uint16_t port = argc > 1 ? (uint16_t) atoi(argv[1]) : 9464;
    long seconds = argc > 2 ? atol(argv[2]) : 0;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    qsink *sink = NULL;
    char dir[64] = "";
    qsf_sender *s = start_sender(&sink, dir, sizeof dir);
    uint16_t bound;
    int lfd = listen_loopback(port, &bound);
    printf("serving http://127.0.0.1:%u/metrics and /stats.json\n", bound);
    fflush(stdout);
    long ticks = seconds * 1000 / TICK_MS;
    for (int64_t i = 0; !stop && (seconds == 0 || i < ticks); i++) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        if (poll(&p, 1, TICK_MS) == 1) {
            int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0) {
                serve_one(c, s);
                close(c);
            }
        }
        publish_row(s, i);
    }
    close(lfd);
    qsf_errinfo e;
    int rc = qsf_close(s, &e);
    if (rc != QSF_OK)
        fprintf(stderr, "metrics_server: close: %s: %s\n", qsf_err_name(rc), e.msg);
    if (sink)
        qsink_stop(sink);
    if (dir[0]) /* a slot directory and its lock files stay by design */
        printf("store-and-forward directory left in %s\n", dir);
    return rc == QSF_OK ? 0 : 1;
}
