/* examples/demo (what scripts/demo.sh runs): its exit code agrees with the
 * summary it prints. */
#include "itest.h"

#include "exrun.h"
#include "sink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *DEMO;
static char out[1 << 16];

/* Runs the demo with the bundled sink; returns its exit code. */
static int run_demo(const char *rows) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir);
    const char *argv[] = {DEMO, rows, dir, NULL};
    int rc = ex_run(argv, NULL, out, sizeof out);
    tu_rmtree(dir);
    return rc;
}

/* "rows lost N" in the summary must be the exit code's reason: 0 exactly when
 * nothing was lost. With no rows to publish nothing can be lost. */
static void no_rows_is_success(void **state) {
    (void) state;
    int rc = run_demo("0");
    int64_t lost = ex_number_after(out, "rows lost");
    printf("# demo 0: exit %d, rows lost %lld\n", rc, (long long) lost);
    assert_int_equal(lost, 0);
    assert_int_equal(rc, 0);
}

static void some_rows_arrive(void **state) {
    (void) state;
    int rc = run_demo("20000");
    assert_int_equal(ex_number_after(out, "rows published"), 20000);
    assert_int_equal(ex_number_after(out, "rows lost"), 0);
    assert_int_equal(rc, 0);
}

/* Through the outage, with qsf's INFO lines and stderr in the output: every
 * log line starts a line of its own (not glued onto the progress line), and
 * the summary's replayed backlog is the span the "replaying FSN a..b" log
 * lines named, first to last. */
static void outage_log_and_summary_agree(void **state) {
    (void) state;
    char dir[512];
    tu_mkdtemp(dir, sizeof dir);
    const char *argv[] = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", DEMO, "200000", dir, NULL};
    const char *env[] = {"QSF_LOG=info", NULL};
    int rc = ex_run(argv, env, out, sizeof out);
    tu_rmtree(dir);
    ex_print_comment(out);
    assert_int_equal(rc, 0);
    for (const char *p = out; (p = strstr(p, "qsf ")) != NULL; p++)
        if ((strncmp(p, "qsf WARN ", 9) == 0 || strncmp(p, "qsf INFO ", 9) == 0) && p > out &&
            p[-1] != '\n')
            fail_msg("a log line is glued onto the line before: ...%.40s", p - 20);
    long long from = -1, to = -1, a, b, sa, sb;
    for (const char *p = out; (p = strstr(p, "replaying FSN ")) != NULL; p++)
        if (sscanf(p, "replaying FSN %lld..%lld", &a, &b) == 2)
            from = from < 0 ? a : from, to = b;
    const char *sum = strstr(out, "backlog replayed     ");
    assert_non_null(sum);
    assert_true(from >= 0); /* the outage made the sender replay */
    assert_int_equal(sscanf(sum, "backlog replayed     FSN %lld..%lld", &sa, &sb), 2);
    assert_int_equal(sa, from);
    assert_int_equal(sb, to);
}

static void help_prints_usage(void **state) {
    (void) state;
    const char *argv[] = {DEMO, "--help", NULL};
    assert_int_equal(ex_run(argv, NULL, out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: demo"));
    assert_null(strstr(out, "rows published"));
}

/* A stand-in for QuestDB's HTTP /exec on 127.0.0.1: answers the demo's
 * count query with what the sink holds of the table named in it, minus
 * `short_by` (a server that lost rows), in a chunked response as QuestDB
 * sends it. */
typedef struct fake_exec {
    qsink *sink;
    int fd;
    uint16_t port;
    int64_t short_by;
    atomic_int stop;
    atomic_int queries;
    pthread_t thread;
} fake_exec;

static void answer(fake_exec *x, int c) {
    char req[2048];
    size_t len = 0;
    ssize_t n;
    while (len + 1 < sizeof req && (n = recv(c, req + len, sizeof req - 1 - len, 0)) > 0) {
        len += (size_t) n;
        req[len] = '\0';
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    req[len] = '\0';
    char table[128] = "";
    const char *from = strstr(req, "FROM%20");
    if (strncmp(req, "GET /exec?query=", 16) == 0 && from)
        sscanf(from + 7, "%127[A-Za-z0-9_]", table);
    int64_t rows = qsink_rows(x->sink, table), dups = qsink_duplicates(x->sink, table, "trade_id");
    int64_t unique = rows - (dups > 0 ? dups : 0);
    char body[512], resp[1024];
    int blen = snprintf(body, sizeof body,
                        "{\"query\":\"...\",\"columns\":[{\"name\":\"count\",\"type\":\"LONG\"},"
                        "{\"name\":\"count_distinct\",\"type\":\"LONG\"}],\"timestamp\":-1,"
                        "\"dataset\":[[%lld,%lld]],\"count\":1}",
                        (long long) (rows - x->short_by), (long long) (unique - x->short_by));
    int rlen = snprintf(resp, sizeof resp,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n",
                        (unsigned) blen, body);
    send(c, resp, (size_t) rlen, MSG_NOSIGNAL);
    atomic_fetch_add(&x->queries, 1);
}

static void *exec_loop(void *arg) {
    fake_exec *x = arg;
    while (!atomic_load(&x->stop)) {
        struct pollfd p = {x->fd, POLLIN, 0};
        if (poll(&p, 1, 50) != 1)
            continue;
        int c = accept(x->fd, NULL, NULL);
        if (c >= 0) {
            answer(x, c);
            close(c);
        }
    }
    return NULL;
}

/* A listening socket on 127.0.0.1, port 0; its port goes to *port. */
static int listen_loopback(uint16_t *port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *) &a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *) &a, &alen), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void exec_start(fake_exec *x, qsink *sink, int64_t short_by) {
    memset(x, 0, sizeof *x);
    x->sink = sink;
    x->short_by = short_by;
    x->fd = listen_loopback(&x->port);
    assert_int_equal(pthread_create(&x->thread, NULL, exec_loop, x), 0);
}

static void exec_stop(fake_exec *x) {
    atomic_store(&x->stop, 1);
    pthread_join(x->thread, NULL);
    close(x->fd);
}

/* Runs "demo --conf <the sink> [mode...] rows" with /exec answered by a fake
 * server that reports short_by rows fewer than the sink holds. */
static int run_conf(const char *mode, int64_t short_by, int *queries) {
    qsink *sink = it_sink(NULL);
    fake_exec x;
    exec_start(&x, sink, short_by);
    char conf[128], exec[64];
    snprintf(conf, sizeof conf, "ws::addr=127.0.0.1:%u;", qsink_port(sink));
    snprintf(exec, sizeof exec, "127.0.0.1:%u", x.port);
    const char *with_exec[] = {DEMO, "--conf", conf, "--exec", exec, "3000", NULL};
    const char *other[] = {DEMO, "--conf", conf, mode, "3000", NULL};
    int rc = ex_run(mode ? other : with_exec, NULL, out, sizeof out);
    exec_stop(&x);
    *queries = atomic_load(&x.queries);
    qsink_stop(sink);
    printf("# demo --conf %s: exit %d\n", mode ? mode : "--exec", rc);
    ex_print_comment(out);
    return rc;
}

static void conf_counts_through_exec(void **state) {
    (void) state;
    int queries;
    int rc = run_conf(NULL, 0, &queries);
    assert_true(queries >= 1);
    assert_non_null(strstr(out, "/exec"));
    assert_int_equal(ex_number_after(out, "rows lost"), 0);
    assert_int_equal(rc, 0);
}

static void conf_short_count_is_loss(void **state) {
    (void) state;
    int queries;
    int rc = run_conf(NULL, 7, &queries);
    assert_int_equal(ex_number_after(out, "rows lost"), 7);
    assert_int_equal(rc, 2);
}

static void conf_no_count_says_so(void **state) {
    (void) state;
    int queries;
    int rc = run_conf("--no-count", 0, &queries);
    assert_int_equal(queries, 0);
    assert_non_null(strstr(out, "rows lost            unknown: not checked"));
    assert_int_equal(rc, 0);
}

/* /exec unreachable: the summary says the count failed, and so does the exit
 * code. The port was bound and closed again: nothing listens there. */
static void conf_count_failure_is_exit_3(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    uint16_t dead;
    close(listen_loopback(&dead));
    char conf[128], exec[64];
    snprintf(conf, sizeof conf, "ws::addr=127.0.0.1:%u;", qsink_port(sink));
    snprintf(exec, sizeof exec, "127.0.0.1:%u", dead);
    const char *argv[] = {DEMO, "--conf", conf, "--exec", exec, "100", NULL};
    int rc = ex_run(argv, NULL, out, sizeof out);
    qsink_stop(sink);
    assert_non_null(strstr(out, "rows lost            unknown: counting through"));
    assert_int_equal(rc, 3);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_demo DEMO\n");
        return 2;
    }
    DEMO = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_rows_is_success),       cmocka_unit_test(some_rows_arrive),
        cmocka_unit_test(help_prints_usage),        cmocka_unit_test(outage_log_and_summary_agree),
        cmocka_unit_test(conf_counts_through_exec), cmocka_unit_test(conf_short_count_is_loss),
        cmocka_unit_test(conf_no_count_says_so),    cmocka_unit_test(conf_count_failure_is_exit_3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
