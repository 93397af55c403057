/* The benchmarks' view of a qsf process from inside (bench/procstat.c): the
 * CPU of the process and of each kind of thread, and a qwp-sink run as a
 * separate process, so that none of the server's CPU is counted. */
#ifndef QSF_BENCH_PROCSTAT_H
#define QSF_BENCH_PROCSTAT_H

#include "qsf.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* The kinds of thread: the calling program's main thread (the producer),
 * qsf-io, qsf-mgr, qsf-spare (SF mode), any other. */
enum { T_PRODUCER, T_IO, T_MGR, T_SPARE, T_OTHER, T_KINDS };

typedef struct cpu_snap {
    int64_t process_ns;
    int64_t thread_ns[T_KINDS];
} cpu_snap;

/* The clock `id` in nanoseconds, -1 when it cannot be read (a thread that
 * just ended). */
int64_t clock_ns(clockid_t id);

/* The CPU time so far of this process (getrusage) and of its living threads
 * by kind; exits on failure. */
void cpu_take(cpu_snap *c);

typedef struct sink_proc {
    pid_t pid;
    FILE *err; /* its stdout and stderr: the port line, then the summary at exit */
    unsigned port;
} sink_proc;

/* Starts qwp-sink on 127.0.0.1, port 0 (found beside the benchmark, as
 * ../tools/qwp-sink/qwp-sink, or named by QSF_BENCH_SINK); exits on failure. */
void sink_start(sink_proc *k);

/* As sink_start, with one more command-line argument for the sink (NULL:
 * none), e.g. "--ack-only". */
void sink_start_arg(sink_proc *k, const char *arg);

/* A sender into the sink k: auto-flush every batch_rows rows, in SF mode
 * under sfdir (NULL: memory mode); exits on failure. */
qsf_sender *sink_sender(const sink_proc *k, int batch_rows, const char *sfdir);

/* Stops the sink; returns the rows it counted (its summary line; one table). */
long long sink_stop(sink_proc *k);

#endif
