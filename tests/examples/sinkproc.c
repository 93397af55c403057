/* qwp-sink as a child process (see sinkproc.h). */
#include "sinkproc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* The sink writes its stderr to <dir>/sink.log; its first line says where
 * it listens. Polls for it for up to 10 s. */
static int read_port(const char *log, uint16_t *port) {
    static const char TAG[] = "listening on 127.0.0.1:";
    for (int i = 0; i < 1000; i++) {
        char line[512] = "";
        FILE *f = fopen(log, "r");
        const char *p = NULL;
        while (f && !p && fgets(line, sizeof line, f))
            p = strstr(line, TAG);
        if (f)
            fclose(f);
        if (p) {
            *port = (uint16_t) atoi(p + strlen(TAG));
            return 0;
        }
        usleep(10000);
    }
    return -1;
}

int sinkproc_start(sinkproc *p, const char *exe, const char *dir) {
    memset(p, 0, sizeof *p);
    char log[512];
    snprintf(p->append, sizeof p->append, "%s/rows.jsonl", dir);
    snprintf(log, sizeof log, "%s/sink.log", dir);
    fflush(NULL);
    p->pid = fork();
    if (p->pid == 0) {
        if (!freopen(log, "w", stderr))
            _exit(126);
        dup2(STDERR_FILENO, STDOUT_FILENO); /* its summary too: not TAP */
        execl(exe, exe, "--port", "0", "--append", p->append, (char *) NULL);
        _exit(127);
    }
    int rc = p->pid > 0 ? read_port(log, &p->port) : -1;
    if (rc != 0)
        fprintf(stderr, "sinkproc: %s did not say where it listens (see %s)\n", exe, log);
    return rc;
}

void sinkproc_stop(sinkproc *p) {
    if (p->pid <= 0)
        return;
    kill(p->pid, SIGTERM);
    while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    p->pid = 0;
}

int64_t sinkproc_count(const sinkproc *p, const char *table, const char *needle) {
    char prefix[300], line[8192];
    snprintf(prefix, sizeof prefix, "{\"table\":\"%s\"", table);
    FILE *f = fopen(p->append, "r");
    int64_t n = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, prefix, strlen(prefix)) == 0 && (!needle || strstr(line, needle)))
            n++;
    if (f)
        fclose(f);
    return n;
}

uint16_t sinkproc_dead_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    uint16_t port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *) &a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *) &a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}
