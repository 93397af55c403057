/* Running example programs from the tests (see exrun.h). */
#include "exrun.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(const char *const argv[], const char *const env[], int out_fd) {
    dup2(out_fd, STDOUT_FILENO);
    close(out_fd);
    for (size_t i = 0; env && env[i]; i++)
        putenv((char *) env[i]);
    execv(argv[0], (char *const *) argv);
    fprintf(stderr, "exrun: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Reads fd to its end into out; the excess beyond cap is read and dropped. */
static void slurp(int fd, char *out, size_t cap) {
    size_t len = 0;
    char sink[4096];
    for (;;) {
        char *dst = len + 1 < cap ? out + len : sink;
        size_t room = len + 1 < cap ? cap - 1 - len : sizeof sink;
        ssize_t n = read(fd, dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (dst != sink)
            len += (size_t) n;
    }
    if (cap)
        out[len] = '\0';
}

int ex_run(const char *const argv[], const char *const env[], char *out, size_t cap) {
    int p[2];
    if (pipe(p) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        child(argv, env, p[1]);
    }
    close(p[1]);
    slurp(p[0], out, cap);
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int64_t ex_number_after(const char *text, const char *label) {
    const char *p = strstr(text, label);
    if (!p)
        return INT64_MIN;
    p += strlen(label);
    while (*p == ' ' || *p == ':' || *p == '=')
        p++;
    char *end;
    long long v = strtoll(p, &end, 10);
    return end == p ? INT64_MIN : (int64_t) v;
}

void ex_print_comment(const char *text) {
    while (*text) {
        size_t n = strcspn(text, "\n");
        printf("# %.*s\n", (int) n, text);
        text += n + (text[n] == '\n');
    }
    fflush(stdout);
}
