/* CPU by thread, and qwp-sink as a process (bench/procstat.h). */
#include "procstat.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void die(const char *what, const char *why) {
    fprintf(stderr, "bench: %s: %s\n", what, why);
    exit(1);
}

int64_t clock_ns(clockid_t id) {
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return -1;
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- CPU of this process and of each of its threads ---- */

/* The kernel's CPU clock of thread `tid` of this process: the clock id
 * pthread_getcpuclockid returns, built from the tid so that the library's
 * own threads can be read without their pthread_t. */
static clockid_t thread_clock(pid_t tid) {
    return (clockid_t) ((~(unsigned) tid << 3) | 6u); /* per-thread, CPUCLOCK_SCHED */
}

static int thread_kind(pid_t tid) {
    if (tid == getpid())
        return T_PRODUCER;
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int) tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(comm, sizeof comm, f))
            comm[0] = 0;
        fclose(f);
    }
    if (!strncmp(comm, "qsf-io", 6))
        return T_IO;
    if (!strncmp(comm, "qsf-spare", 9))
        return T_SPARE;
    return strncmp(comm, "qsf-mgr", 7) ? T_OTHER : T_MGR;
}

void cpu_take(cpu_snap *c) {
    memset(c, 0, sizeof *c);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    c->process_ns = ((int64_t) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                    ((int64_t) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        die("/proc/self/task", strerror(errno));
    for (struct dirent *de; (de = readdir(d));) {
        pid_t tid = (pid_t) atoi(de->d_name);
        int64_t ns = tid > 0 ? clock_ns(thread_clock(tid)) : -1;
        if (ns >= 0) /* a thread that just ended has no clock: its CPU is in process_ns */
            c->thread_ns[thread_kind(tid)] += ns;
    }
    closedir(d);
}

/* ---- qwp-sink in its own process ---- */

static const char *sink_path(void) {
    const char *env = getenv("QSF_BENCH_SINK");
    if (env)
        return env;
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
    if (n <= 0)
        die("/proc/self/exe", strerror(errno));
    path[n] = 0;
    char *dir = dirname(path);
    memmove(path, dir, strlen(dir) + 1);
    strcat(path, "/../tools/qwp-sink/qwp-sink");
    return path;
}

void sink_start(sink_proc *k) {
    sink_start_arg(k, NULL);
}

void sink_start_arg(sink_proc *k, const char *arg) {
    int p[2];
    if (pipe(p))
        die("pipe", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1); /* the summary */
    posix_spawn_file_actions_adddup2(&fa, p[1], 2); /* the port line */
    posix_spawn_file_actions_addclose(&fa, p[0]);
    const char *path = sink_path();
    char *argv[] = {(char *) path, "--port", "0", (char *) arg, NULL};
    int e = posix_spawn(&k->pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (e)
        die(path, strerror(e));
    k->err = fdopen(p[0], "r");
    char line[512];
    while (fgets(line, sizeof line, k->err))
        if (sscanf(line, "qwp-sink: listening on 127.0.0.1:%u", &k->port) == 1)
            return;
    die(path, "no 'listening on' line");
}

qsf_sender *sink_sender(const sink_proc *k, int batch_rows, const char *sfdir) {
    char conf[1024];
    snprintf(conf, sizeof conf, "ws::addr=127.0.0.1:%u;auto_flush_rows=%d;%s%s%s", k->port,
             batch_rows, sfdir ? "sf_dir=" : "", sfdir ? sfdir : "", sfdir ? ";" : "");
    qsf_sender *s;
    qsf_errinfo e;
    if (qsf_sender_new(conf, strlen(conf), &s, &e) != QSF_OK)
        die("qsf_sender_new", e.msg);
    return s;
}

long long sink_stop(sink_proc *k) {
    kill(k->pid, SIGTERM);
    long long rows = -1;
    char line[4096];
    while (fgets(line, sizeof line, k->err)) {
        char *r = strstr(line, "\"rows\":{");
        if (r && (r = strchr(r + 8, ':')))
            rows = atoll(r + 1); /* one table per case */
    }
    fclose(k->err);
    waitpid(k->pid, NULL, 0);
    return rows;
}
