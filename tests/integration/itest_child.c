/* A test's child process: the test program exec'd anew with a role argument,
 * reporting its steps over a pipe (see itest.h). */
#include "itest.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARGS_MAX 16

void it_child_start(it_child *c, const char *role, const char *const args[]) {
    /* built before the fork: the child only calls fcntl and execv */
    static char exe[] = "/proc/self/exe";
    char a_fd[24];
    char *argv[ARGS_MAX + 4] = {exe, (char *) role};
    int n = 2;
    for (; args[n - 2] != NULL; n++) {
        assert_true(n - 2 < ARGS_MAX);
        argv[n] = (char *) args[n - 2];
    }
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    snprintf(a_fd, sizeof a_fd, "%d", fds[1]);
    argv[n++] = a_fd;
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fcntl(fds[1], F_SETFD, 0); /* the write end stays open across the exec */
        execv(exe, argv);
        _exit(127);
    }
    close(fds[1]);
    *c = (it_child){.pid = pid, .fd = fds[0]};
}

/* Moves the first whole line of c->buf to c->last; false when there is none. */
static bool take_line(it_child *c) {
    char *nl = memchr(c->buf, '\n', c->have);
    if (nl == NULL)
        return false;
    *nl = 0;
    snprintf(c->last, sizeof c->last, "%s", c->buf);
    c->have -= (size_t) (nl + 1 - c->buf);
    memmove(c->buf, nl + 1, c->have);
    return true;
}

bool it_child_next(it_child *c, int hang_ms, const char *what) {
    while (!take_line(c)) {
        if (c->fd < 0)
            return false;
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int r = poll(&p, 1, hang_ms);
        if (r == 0) {
            char last[sizeof c->last];
            snprintf(last, sizeof last, "%s", c->last);
            int status = it_child_kill(c);
            fail_msg("child hung awaiting %s: silent for %d ms after \"%s\" (killed: status %d)",
                     what, hang_ms, last, status);
        }
        if (r < 0)
            continue; /* EINTR */
        ssize_t n = read(c->fd, c->buf + c->have, sizeof c->buf - c->have);
        if (n == 0) {
            close(c->fd);
            c->fd = -1;
        } else if (n > 0) {
            c->have += (size_t) n;
            if (c->have == sizeof c->buf && memchr(c->buf, '\n', c->have) == NULL)
                c->have = 0; /* a line longer than any report: dropped */
        }
    }
    return true;
}

int it_child_end(it_child *c, int hang_ms, const char *what) {
    while (it_child_next(c, hang_ms, what)) {
    }
    int status;
    waitpid(c->pid, &status, 0);
    return status;
}

int it_child_kill_at(it_child *c, const char *step, int hang_ms, const char *what) {
    bool reached = false;
    while (!reached && it_child_next(c, hang_ms, what))
        reached = strcmp(c->last, step) == 0;
    int status = it_child_kill(c);
    if (!reached)
        fail_msg("child ended before \"%s\" (awaiting %s): status %d, last report \"%s\"", step,
                 what, status, c->last);
    return status;
}

int it_child_kill(it_child *c) {
    kill(c->pid, SIGKILL);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    int status;
    waitpid(c->pid, &status, 0);
    return status;
}

void it_child_report(int fd, const char *fmt, ...) {
    char line[IT_CHILD_LINE];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t) n > sizeof line - 2)
        n = (int) sizeof line - 2;
    line[n++] = '\n';
    if (write(fd, line, (size_t) n) < 0)
        _exit(2); /* the parent is gone */
}

_Noreturn void it_child_give_up(int fd, int code, const char *what, int rc, const qsf_errinfo *e) {
    it_child_report(fd, "%s: %s: %s", what, qsf_err_name(rc), e->msg);
    _exit(code);
}

qsf_sender *it_child_sender(const char *conf, int fd) {
    qsf_sender *s = NULL;
    qsf_errinfo e;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    if (rc != QSF_OK)
        it_child_give_up(fd, 3, "qsf_sender_new", rc, &e);
    it_child_report(fd, "sender created");
    return s;
}
