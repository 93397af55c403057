/* A frozen server is not a dead one (docs/PROTOCOL.md §8.6): a qwp-sink
 * process stopped with SIGSTOP for longer than liveness_timeout_millis keeps
 * its connection (its host's TCP stack still acknowledges), and after SIGCONT
 * every row is there exactly once; a host that drops every packet (a
 * network namespace this program makes for itself, with a qdisc that drops
 * everything) is found dead within liveness_timeout_millis + 1 s. Without a
 * namespace (no privileges, no tc) that test is skipped with the reason.
 *
 * argv[1] is the qwp-sink binary. QSF_FREEZE_MS sets the freeze (3000 by
 * default) and QSF_FREEZE_DEFAULTS=1 keeps the shipped liveness settings, for
 * the measurement of docs/RELIABILITY.md. */
#include "itest.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIVE      "ping_interval_millis=200;liveness_timeout_millis=1000;ack_timeout_millis=1500;"
#define MARGIN_MS 2000

static const char *EXE;
static char netns_skip[256]; /* why this program has no namespace of its own, "" if it has */

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int frozen_warns, thawed_lines;
static void watch_log(int level, const char *line, void *user) {
    (void) user;
    (void) level;
    if (strstr(line, "paused or frozen, not gone"))
        __atomic_fetch_add(&frozen_warns, 1, __ATOMIC_RELAXED);
    if (strstr(line, "answers again"))
        __atomic_fetch_add(&thawed_lines, 1, __ATOMIC_RELAXED);
}

/* ---- a qwp-sink process ---- */

static pid_t spawn_sink(const char *dir) {
    char out[600], err[600];
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
            _exit(126);
        execl(EXE, EXE, "--port", "0", "--key-column", "k", (char *) NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    return pid;
}

/* "qwp-sink: listening on 127.0.0.1:PORT" on its stderr. */
static uint16_t sink_port(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/stderr", dir);
    for (int64_t t0 = now_ms(); now_ms() - t0 < 10000; it_sleep_ms(10)) {
        char line[256] = "";
        FILE *f = fopen(path, "r");
        while (f && !strstr(line, "listening on") && fgets(line, sizeof line, f))
            ;
        if (f)
            fclose(f);
        char *p = strstr(line, "127.0.0.1:");
        if (p && atoi(p + 10) > 0)
            return (uint16_t) atoi(p + 10);
    }
    fail_msg("qwp-sink did not report its port");
    return 0;
}

/* SIGTERM: its summary line goes to stdout. */
static char *stop_sink(pid_t pid, const char *dir) {
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char path[600];
    snprintf(path, sizeof path, "%s/stdout", dir);
    size_t len;
    uint8_t *b = tu_read_file(path, &len);
    char *s = realloc(b, len + 1);
    s[len] = 0;
    return s;
}

/* Waits until the process is stopped (state T in /proc/PID/stat): SIGSTOP
 * is delivered asynchronously, and rows published before it takes hold
 * would be acknowledged. */
static void wait_stopped(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
    for (int64_t t0 = now_ms(); now_ms() - t0 < 10000; it_sleep_ms(1)) {
        char buf[512] = "";
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')'); /* "pid (comm) S ..." */
        if (p && p[1] == ' ' && p[2] == 'T')
            return;
    }
    fail_msg("qwp-sink (pid %d) did not stop", (int) pid);
}

static int64_t env_ms(const char *name, int64_t def) {
    const char *v = getenv(name);
    return v && *v ? atoll(v) : def;
}

/* ---- a frozen server ---- */

static void a_frozen_server_keeps_its_connection_and_gets_every_row_once(void **state) {
    (void) state;
    int64_t freeze_ms = env_ms("QSF_FREEZE_MS", 3000);
    bool defaults = env_ms("QSF_FREEZE_DEFAULTS", 0) != 0;
    pid_t pid = spawn_sink(it_dir);
    char conf[512];
    snprintf(conf, sizeof conf, "ws::addr=127.0.0.1:%u;%s", sink_port(it_dir),
             defaults ? "" : LIVE);
    frozen_warns = thawed_lines = 0;
    qsf_log_set(watch_log, NULL, QSF_LOG_INFO);
    qsf_sender *s = it_sender(conf);
    it_wait_acked(s, it_publish(s, "t", 0, 1000, 100));
    assert_int_equal(kill(pid, SIGSTOP), 0);
    wait_stopped(pid);
    int64_t t0 = now_ms();
    int64_t fsn = it_publish(s, "t", 1000, 2000, 100); /* its kernel takes them */
    while (__atomic_load_n(&frozen_warns, __ATOMIC_RELAXED) == 0) {
        if (now_ms() - t0 > 60000)
            fail_msg("no \"frozen\" warning within 60 s of SIGSTOP");
        it_sleep_ms(10);
    }
    print_message("# frozen warning %lld ms after SIGSTOP\n", (long long) (now_ms() - t0));
    int64_t left = freeze_ms - (now_ms() - t0);
    if (left > 0)
        it_sleep_ms((int) left); /* the freeze itself: longer than liveness_timeout_millis */
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.liveness_timeouts, 0);
    assert_int_equal(kill(pid, SIGCONT), 0);
    it_wait_acked(s, fsn);
    qsf_stats_get(s, &st);
    print_message("# %lld ms freeze: %llu connections lost, %llu frames replayed\n",
                  (long long) (now_ms() - t0), (unsigned long long) st.connections_lost,
                  (unsigned long long) st.frames_replayed);
    assert_int_equal(st.liveness_timeouts, 0);
    assert_int_equal(st.connections_lost, 0);
    assert_int_equal(st.reconnect_attempts, 0);
    assert_int_equal(st.frames_replayed, 0);
    assert_true(__atomic_load_n(&thawed_lines, __ATOMIC_RELAXED) >= 1); /* logged before the OKs */
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsf_log_set(NULL, NULL, -1);
    char *summary = stop_sink(pid, it_dir);
    print_message("# %s", summary);
    assert_non_null(strstr(summary, "\"rows\":{\"t\":2000}"));
    assert_non_null(strstr(summary, "\"duplicates\":{\"t\":0}"));
    free(summary);
}

/* ---- a dead host ---- */

static void a_host_that_drops_every_packet_is_found_dead(void **state) {
    (void) state;
    if (netns_skip[0]) {
        print_message("# skipped: %s\n", netns_skip);
        skip();
    }
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), LIVE));
    frozen_warns = 0;
    qsf_log_set(watch_log, NULL, QSF_LOG_INFO);
    it_wait_acked(s, it_publish(s, "t", 0, 100, 100));
    if (system("tc qdisc add dev lo root pfifo limit 0") != 0) {
        qsf_log_set(NULL, NULL, -1);
        print_message("# skipped: tc could not make lo drop every packet (iproute2 missing?)\n");
        skip();
    }
    int64_t t0 = now_ms();
    it_publish(s, "t", 100, 200, 100);
    qsf_stats st;
    for (;; it_sleep_ms(5)) {
        qsf_stats_get(s, &st);
        if (st.liveness_timeouts > 0)
            break;
        if (now_ms() - t0 > 1000 + 1000 + MARGIN_MS)
            break;
    }
    int64_t took = now_ms() - t0;
    assert_int_equal(system("tc qdisc del dev lo root"), 0);
    qsf_log_set(NULL, NULL, -1);
    print_message("# found dead %lld ms after the host stopped answering "
                  "(liveness_timeout_millis=1000)\n",
                  (long long) took);
    assert_true(st.liveness_timeouts > 0);
    assert_true(took <= 1000 + 1000 + MARGIN_MS);
    assert_int_equal(__atomic_load_n(&frozen_warns, __ATOMIC_RELAXED), 0); /* never "frozen" */
    qsf_error_record r;
    bool said = false;
    while (qsf_poll_error(s, &r) == 1)
        said |= strstr(r.message, "stopped acknowledging") != NULL;
    assert_true(said);
    it_close_and_check(s, sink, "t", 200, true);
}

/* ---- a network namespace of our own ---- */

static bool write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t) strlen(text);
    if (fd >= 0)
        close(fd);
    return ok;
}

static bool lo_up(void) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    bool ok = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
    ifr.ifr_flags |= IFF_UP;
    ok = ok && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* Before any thread: the whole program moves into a network namespace of its
 * own (as root, or as a user mapped to root in a user namespace), so the
 * packets it drops are its own. */
static void enter_netns(void) {
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWNET) != 0) {
        if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
            snprintf(netns_skip, sizeof netns_skip, "cannot make a network namespace: %s",
                     strerror(errno));
            return;
        }
        char map[64];
        snprintf(map, sizeof map, "0 %u 1", (unsigned) uid);
        write_file("/proc/self/setgroups", "deny");
        bool ok = write_file("/proc/self/uid_map", map);
        snprintf(map, sizeof map, "0 %u 1", (unsigned) gid);
        if (!ok || !write_file("/proc/self/gid_map", map)) {
            snprintf(netns_skip, sizeof netns_skip, "cannot map the user into its namespace");
            return;
        }
    }
    if (!lo_up())
        snprintf(netns_skip, sizeof netns_skip, "cannot bring lo up in the new namespace: %s",
                 strerror(errno));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s QWP_SINK\n", argv[0]);
        return 2;
    }
    EXE = argv[1];
    enter_netns();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            a_frozen_server_keeps_its_connection_and_gets_every_row_once, it_setup_dir,
            it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_host_that_drops_every_packet_is_found_dead, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
