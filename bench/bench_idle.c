/* What an idle sender costs (docs/BENCHMARKS.md, "idle"): a sender connected
 * to a qwp-sink process, one row sent and acknowledged, then nothing for a few
 * seconds. Per case (memory and SF mode): the CPU of the process and of its
 * qsf-io and qsf-mgr threads per second of idling, as a share of one core,
 * how often the I/O loop turned (and how many of its waits found nothing to
 * do) and the ring manager ran a pass. One JSON
 * object per case on stdout, a human line on stderr.
 *
 * Usage: bench_idle [seconds]   (default 5) */
#include "procstat.h"
#include "qsf.h"
#include "sender/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, const qsf_errinfo *e) {
    fprintf(stderr, "bench_idle: %s: %s\n", what, e->msg);
    exit(1);
}

static void one_row(qsf_sender *s) {
    qsf_errinfo e;
    int64_t fsn;
    if (qsf_table(s, "idle", 4, &e) || qsf_col_i64(s, "k", 1, 1, &e) ||
        qsf_at_micros(s, 1700000000000000, &e) || qsf_flush(s, &fsn, &e))
        die("the row", &e);
    while (qsf_acked_fsn(s) < fsn)
        usleep(1000);
}

static void run_case(const char *mode, const char *sfdir, double seconds) {
    sink_proc k;
    sink_start(&k);
    char conf[1024];
    snprintf(conf, sizeof conf, "ws::addr=127.0.0.1:%u;%s%s%s", k.port, sfdir ? "sf_dir=" : "",
             sfdir ? sfdir : "", sfdir ? ";" : "");
    qsf_sender *s;
    qsf_errinfo e;
    if (qsf_sender_new(conf, strlen(conf), &s, &e) != QSF_OK)
        die("qsf_sender_new", &e);
    one_row(s);
    usleep(300000); /* the manager reaches its longest wait */
    cpu_snap c0, c1;
    cpu_take(&c0);
    uint64_t turns0 = qsf_io_loop_turns(s->io), passes0 = qsf_ring_manager_passes(s->ring),
             spare_passes0 = qsf_ring_spare_passes(s->ring);
    uint64_t empty0 = qsf_io_empty_waits(s->io);
    usleep((useconds_t) (seconds * 1e6));
    uint64_t turns = qsf_io_loop_turns(s->io) - turns0;
    uint64_t passes = qsf_ring_manager_passes(s->ring) - passes0;
    uint64_t spare_passes = qsf_ring_spare_passes(s->ring) - spare_passes0;
    uint64_t empty = qsf_io_empty_waits(s->io) - empty0;
    cpu_take(&c1);
    if (qsf_close(s, &e) != QSF_OK)
        die("qsf_close", &e);
    sink_stop(&k);
    double per_s = 1e6 * seconds; /* ns of CPU per second -> % of a core: / 1e7 */
    double pct = (double) (c1.process_ns - c0.process_ns) / per_s / 10;
    double io = (double) (c1.thread_ns[T_IO] - c0.thread_ns[T_IO]) / per_s / 10;
    double mgr = (double) (c1.thread_ns[T_MGR] - c0.thread_ns[T_MGR]) / per_s / 10;
    double spare = (double) (c1.thread_ns[T_SPARE] - c0.thread_ns[T_SPARE]) / per_s / 10;
    printf("{\"bench\":\"idle\",\"mode\":\"%s\",\"seconds\":%.1f,\"cpu_pct\":%.3f,"
           "\"io_cpu_pct\":%.3f,\"manager_cpu_pct\":%.3f,\"spare_cpu_pct\":%.3f,"
           "\"io_turns_per_s\":%.1f,\"io_empty_waits_per_s\":%.1f,\"manager_passes_per_s\":%.1f,"
           "\"spare_passes_per_s\":%.1f}\n",
           mode, seconds, pct, io, mgr, spare, (double) turns / seconds, (double) empty / seconds,
           (double) passes / seconds, (double) spare_passes / seconds);
    fprintf(stderr,
            "idle %-6s %.1f s: %.3f %% of a core (qsf-io %.3f %%, qsf-mgr %.3f %%, qsf-spare "
            "%.3f %%), %.1f I/O turns/s, %.1f manager passes/s, %.1f spare passes/s\n",
            mode, seconds, pct, io, mgr, spare, (double) turns / seconds, (double) passes / seconds,
            (double) spare_passes / seconds);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    char dir[] = "/tmp/qsf-bench-idle-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char sfdir[600];
    snprintf(sfdir, sizeof sfdir, "%s;sender_id=idle", dir);
    run_case("memory", NULL, seconds);
    run_case("sf", sfdir, seconds);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
