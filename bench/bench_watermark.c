/* How far .ack-watermark trails the acknowledgements (docs/DURABILITY.md,
 * "The at-least-once window"): what a process killed at a random moment would
 * replay on restart, although the server already had it.
 *
 * A sender in SF mode streams small flushes into the in-process qwp-sink
 * (so segments fill, rotate and are trimmed: the manager is busy with disk
 * barriers the whole time). A sampler thread, every 200 us, reads the
 * sender's acked FSN and the value a reopening sender would read from
 * <slot>/.ack-watermark, and records, per sample, how many frames the file
 * is behind and for how long the acked FSN has been above the file's value.
 * One JSON line per durability mode: frames behind and milliseconds behind,
 * p50 / p99 / max. */
#include "qsf.h"
#include "sink.h"

#include "sf/sidefile.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SAMPLES_MAX (1 << 20)
#define HISTORY     (1 << 16)

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void check(int rc, const qsf_errinfo *e, const char *what) {
    if (rc != QSF_OK) {
        fprintf(stderr, "bench_watermark: %s: %s: %s\n", what, qsf_err_name(rc), e->msg);
        exit(1);
    }
}

/* The value the file holds in either form, -1 if none (docs/FORMAT.md §3.2). */
static int64_t read_watermark(int fd) {
    uint8_t b[8192];
    ssize_t n = pread(fd, b, sizeof b, 0);
    int64_t gen, fsn;
    return n > 0 && qsf_akw_read_image(b, (uint64_t) n, &gen, &fsn) == 0 ? fsn : -1;
}

typedef struct sampler {
    qsf_sender *s;
    int fd;
    _Atomic bool stop;
    int64_t hist_fsn[HISTORY], hist_ns[HISTORY]; /* when acked first reached each value */
    int nhist;
    int64_t *frames, *lag_ns;
    size_t n;
} sampler;

/* When acked first exceeded p (from the history of acked advances). */
static int64_t since_above(const sampler *sp, int64_t p) {
    for (int i = 0; i < sp->nhist; i++)
        if (sp->hist_fsn[i] > p)
            return sp->hist_ns[i];
    return -1;
}

static void *sample_main(void *arg) {
    sampler *sp = arg;
    int64_t last = -2;
    while (!atomic_load(&sp->stop) && sp->n < SAMPLES_MAX) {
        int64_t acked = qsf_acked_fsn(sp->s), t = now_ns();
        if (acked != last && sp->nhist < HISTORY) {
            sp->hist_fsn[sp->nhist] = acked;
            sp->hist_ns[sp->nhist++] = t;
            last = acked;
        }
        int64_t p = read_watermark(sp->fd);
        int64_t a2 = qsf_acked_fsn(sp->s); /* acked only grows: behind >= this */
        int64_t behind = a2 > p ? a2 - p : 0;
        int64_t from = behind ? since_above(sp, p) : -1;
        sp->frames[sp->n] = behind;
        sp->lag_ns[sp->n++] = from >= 0 ? now_ns() - from : 0;
        if (sp->nhist == HISTORY) /* keep the newest half */
            sp->nhist = 0;
        usleep(200);
    }
    return NULL;
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y ? -1 : x > y;
}

static int64_t pct(int64_t *v, size_t n, double q) {
    qsort(v, n, sizeof *v, cmp64);
    size_t i = (size_t) (q * (double) (n - 1));
    return n ? v[i] : 0;
}

static void run(const char *mode, uint16_t port, const char *dir) {
    char conf[1024], slot[700], path[800];
    snprintf(conf, sizeof conf,
             "ws::addr=127.0.0.1:%u;sf_dir=%s;sender_id=%s;sf_durability=%s;"
             "sf_max_segment_bytes=1m;auto_flush=off;",
             port, dir, mode, mode);
    snprintf(slot, sizeof slot, "%s/%s", dir, mode);
    qsf_sender *s;
    qsf_errinfo e;
    check(qsf_sender_new(conf, strlen(conf), &s, &e), &e, "sender");
    snprintf(path, sizeof path, "%s/.ack-watermark", slot);
    static sampler sp;
    memset(&sp, 0, sizeof sp);
    sp.s = s;
    sp.fd = open(path, O_RDONLY);
    sp.frames = malloc(SAMPLES_MAX * sizeof *sp.frames);
    sp.lag_ns = malloc(SAMPLES_MAX * sizeof *sp.lag_ns);
    pthread_t t;
    pthread_create(&t, NULL, sample_main, &sp);
    int64_t end = now_ns() + 5 * 1000000000ll, fsn = -1, rows = 0;
    while (now_ns() < end) {
        for (int i = 0; i < 50; i++, rows++) {
            check(qsf_table(s, "t", 1, &e), &e, "table");
            check(qsf_col_i64(s, "k", 1, rows, &e), &e, "col");
            check(
                qsf_col_varchar(s, "v", 1, "............................................", 40, &e),
                &e, "col");
            check(qsf_at_micros(s, 1700000000000000ll + rows, &e), &e, "at");
        }
        check(qsf_flush(s, &fsn, &e), &e, "flush");
    }
    check(qsf_wait(s, fsn, QSF_WAIT_OK, 10000, &e), &e, "wait");
    atomic_store(&sp.stop, true);
    pthread_join(t, NULL);
    size_t n = sp.n;
    int64_t f50 = pct(sp.frames, n, 0.5), f99 = pct(sp.frames, n, 0.99),
            fmax = pct(sp.frames, n, 1.0);
    int64_t l50 = pct(sp.lag_ns, n, 0.5), l99 = pct(sp.lag_ns, n, 0.99),
            lmax = pct(sp.lag_ns, n, 1.0);
    printf("{\"bench\":\"watermark\",\"mode\":\"%s\",\"frames\":%" PRId64 ",\"samples\":%zu,"
           "\"frames_behind_p50\":%" PRId64 ",\"frames_behind_p99\":%" PRId64
           ",\"frames_behind_max\":%" PRId64 ",\"ms_behind_p50\":%.3f,\"ms_behind_p99\":%.3f,"
           "\"ms_behind_max\":%.3f}\n",
           mode, fsn + 1, n, f50, f99, fmax, l50 / 1e6, l99 / 1e6, lmax / 1e6);
    fprintf(stderr,
            "watermark %-8s %8" PRId64 " frames: behind p50 %" PRId64 " p99 %" PRId64
            " max %" PRId64 " frames; p50 %.2f p99 %.2f max %.2f ms\n",
            mode, fsn + 1, f50, f99, fmax, l50 / 1e6, l99 / 1e6, lmax / 1e6);
    fflush(stdout);
    close(sp.fd);
    free(sp.frames);
    free(sp.lag_ns);
    check(qsf_close(s, &e), &e, "close");
}

int main(int argc, char **argv) {
    char dir[] = "/tmp/qsf-bench-wm-XXXXXX";
    const char *base = argc > 1 ? argv[1] : NULL;
    char buf[512];
    if (base) {
        snprintf(buf, sizeof buf, "%s/qsf-bench-wm-XXXXXX", base);
        if (!mkdtemp(buf))
            return 1;
    } else if (!mkdtemp(dir)) {
        return 1;
    }
    const char *d = base ? buf : dir;
    qsink_opts o = {.no_values = 1, .no_frame_log = 1};
    char err[256];
    qsink *k = qsink_start(&o, err, sizeof err);
    if (!k) {
        fprintf(stderr, "sink: %s\n", err);
        return 1;
    }
    const char *modes[] = {"memory", "periodic", "append"};
    for (int i = 0; i < 3; i++)
        run(modes[i], qsink_port(k), d);
    qsink_stop(k);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    return system(cmd) == 0 ? 0 : 1;
}
