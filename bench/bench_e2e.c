/* End-to-end throughput and ack latency (docs/BENCHMARKS.md, section "e2e").
 *
 * 1. raw TCP loopback: 64 KiB writes into a reader thread that discards them
 *    (the ceiling for any WebSocket client on this machine);
 * 2. qsf, memory mode and SF mode: rows carrying a 1000-byte VARCHAR so that each
 *    flush is one ~64 KiB frame, through the ring, the I/O thread and WebSocket
 *    into the in-process qwp-sink (no_values: it decodes and counts), timed until
 *    the last frame is acknowledged;
 *    and memory mode once more with every frame through lws_write instead of
 *    the direct ws:// path (lib/io/ws_fast.h), which is what that path buys;
 * 3. small rows (a trades schema) memory vs SF: rows/s until acknowledged;
 * 4. ack latency: one row, flush, until its OK arrives; percentiles.
 * One JSON object per result on stdout, a human line per result on stderr. */
#include "io/ws_fast.h"
#include "qsf.h"
#include "sink.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRAME      (64 * 1024)
#define BIG_BYTES  (384ll << 20)
#define WARM_BYTES (256ll << 20) /* = sf_max_total_bytes below */
#define PAD        1000
#define ROWS_FRAME 64

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(int rc, const qsf_errinfo *e, const char *what) {
    if (rc != QSF_OK) {
        fprintf(stderr, "bench_e2e: %s: %s: %s\n", what, qsf_err_name(rc), e->msg);
        exit(1);
    }
}

/* ---- raw TCP ---- */

static void *drain_main(void *arg) {
    int fd = *(int *) arg;
    static char buf[1 << 20];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    return NULL;
}

static double raw_tcp_mb_s(void) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (bind(lfd, (struct sockaddr *) &a, sizeof a) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *) &a, &al))
        return perror("raw tcp"), 0;
    int cfd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(cfd, (struct sockaddr *) &a, sizeof a))
        return perror("connect"), 0;
    int sfd = accept(lfd, NULL, NULL);
    pthread_t t;
    pthread_create(&t, NULL, drain_main, &sfd);
    static char frame[FRAME];
    memset(frame, 'x', sizeof frame);
    double t0 = now_s();
    for (int64_t sent = 0; sent < BIG_BYTES;) {
        ssize_t n = write(cfd, frame, sizeof frame);
        if (n <= 0)
            break;
        sent += n;
    }
    shutdown(cfd, SHUT_WR);
    pthread_join(t, NULL);
    double mb = BIG_BYTES / 1048576.0 / (now_s() - t0);
    close(cfd), close(sfd), close(lfd);
    return mb;
}

/* ---- qsf ---- */

static qsink *sink_start(void) {
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.no_values = 1;
    char err[256];
    qsink *k = qsink_start(&o, err, sizeof err);
    if (!k) {
        fprintf(stderr, "bench_e2e: qwp-sink: %s\n", err);
        exit(1);
    }
    return k;
}

static qsf_sender *sender(qsink *k, const char *sfdir) {
    char conf[1024];
    snprintf(conf, sizeof conf,
             "ws::addr=127.0.0.1:%u;auto_flush=off;sf_max_total_bytes=256m;%s%s%s", qsink_port(k),
             sfdir ? "sf_dir=" : "", sfdir ? sfdir : "", sfdir ? ";" : "");
    qsf_sender *s;
    qsf_errinfo e;
    check(qsf_sender_new(conf, strlen(conf), &s, &e), &e, "qsf_sender_new");
    return s;
}

static void wait_acked(qsf_sender *s, int64_t fsn) {
    while (qsf_acked_fsn(s) < fsn)
        nanosleep(&(struct timespec){0, 50000}, NULL);
}

/* Publishes `rows` rows of the big-frame schema, one flush per ROWS_FRAME
 * rows; returns the FSN of the last frame. */
static int64_t publish_big(qsf_sender *s, int64_t rows) {
    static char pad[PAD];
    memset(pad, 'p', sizeof pad);
    qsf_errinfo e;
    int64_t fsn = -1;
    for (int64_t i = 0; i < rows; i++) {
        check(qsf_table(s, "blobs", 5, &e), &e, "table");
        check(qsf_col_i64(s, "id", 2, i, &e), &e, "i64");
        check(qsf_col_varchar(s, "body", 4, pad, sizeof pad, &e), &e, "varchar");
        check(qsf_at_micros(s, 1700000000000000ll + i, &e), &e, "at");
        if (i % ROWS_FRAME == ROWS_FRAME - 1)
            check(qsf_flush(s, &fsn, &e), &e, "flush");
    }
    check(qsf_flush(s, &fsn, &e), &e, "flush");
    return fsn;
}

/* 64 KiB frames of rows with a 1000-byte VARCHAR; returns wire MB/s. A
 * warm-up of one ring cap goes first, untimed, so the timed part is a running
 * sender's steady state (connection up, memory-mode buffers reused), not its
 * first touch of fresh memory. */
static double big_frames(const char *sfdir, double *rows_s) {
    qsink *k = sink_start();
    qsf_sender *s = sender(k, sfdir);
    qsf_errinfo e;
    wait_acked(s, publish_big(s, WARM_BYTES / (PAD + 24)));
    qsink_stats st0, st;
    qsink_get_stats(k, &st0);
    int64_t rows = BIG_BYTES / (PAD + 24);
    double t0 = now_s();
    wait_acked(s, publish_big(s, rows));
    double el = now_s() - t0;
    qsink_get_stats(k, &st);
    check(qsf_close(s, &e), &e, "close");
    qsink_stop(k);
    *rows_s = rows / el;
    return (st.bytes - st0.bytes) / 1048576.0 / el;
}

static const char *SYMS[] = {"BTC-USD", "ETH-USD", "SOL-USD", "XRP-USD"};

/* Small rows (trades): rows/s until the last is acknowledged. */
static double small_rows(const char *sfdir, int64_t rows, double *mb_s) {
    qsink *k = sink_start();
    qsf_sender *s = sender(k, sfdir);
    qsf_errinfo e;
    int64_t fsn = -1;
    double t0 = now_s();
    for (int64_t i = 0; i < rows; i++) {
        check(qsf_table(s, "trades", 6, &e), &e, "table");
        check(qsf_symbol(s, "symbol", 6, SYMS[i & 3], 7, &e), &e, "symbol");
        check(qsf_col_f64(s, "price", 5, 100.0 + (double) (i % 1000), &e), &e, "f64");
        check(qsf_col_f64(s, "amount", 6, 0.5, &e), &e, "f64");
        check(qsf_col_i64(s, "trade_id", 8, i, &e), &e, "i64");
        check(qsf_at_micros(s, 1700000000000000ll + i, &e), &e, "at");
        if (i % 10000 == 9999)
            check(qsf_flush(s, &fsn, &e), &e, "flush");
    }
    check(qsf_flush(s, &fsn, &e), &e, "flush");
    wait_acked(s, fsn);
    double el = now_s() - t0;
    qsink_stats st;
    qsink_get_stats(k, &st);
    check(qsf_close(s, &e), &e, "close");
    qsink_stop(k);
    *mb_s = st.bytes / 1048576.0 / el;
    return rows / el;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* One row per flush; time from flush to its OK (highest OK FSN). */
static void ack_latency(const char *sfdir, const char *mode) {
    enum { N = 2000 };
    static double lat[N];
    qsink *k = sink_start();
    qsf_sender *s = sender(k, sfdir);
    qsf_errinfo e;
    for (int i = 0; i < N; i++) {
        check(qsf_table(s, "lat", 3, &e), &e, "table");
        check(qsf_col_i64(s, "id", 2, i, &e), &e, "i64");
        check(qsf_at_micros(s, 1700000000000000ll + i, &e), &e, "at");
        int64_t fsn;
        double t0 = now_s();
        check(qsf_flush(s, &fsn, &e), &e, "flush");
        check(qsf_wait(s, fsn, QSF_WAIT_OK, 5000, &e), &e, "wait");
        lat[i] = (now_s() - t0) * 1e6;
    }
    check(qsf_close(s, &e), &e, "close");
    qsink_stop(k);
    qsort(lat, N, sizeof lat[0], cmp_d);
    printf("{\"bench\":\"e2e_ack_latency\",\"mode\":\"%s\",\"samples\":%d,\"p50_us\":%.0f,"
           "\"p90_us\":%.0f,\"p99_us\":%.0f,\"max_us\":%.0f}\n",
           mode, N, lat[N / 2], lat[N * 9 / 10], lat[N * 99 / 100], lat[N - 1]);
    fprintf(stderr, "ack latency %-6s p50 %6.0f us  p90 %6.0f us  p99 %6.0f us\n", mode, lat[N / 2],
            lat[N * 9 / 10], lat[N * 99 / 100]);
}

int main(int argc, char **argv) {
    char dir[] = "/tmp/qsf-bench-e2e-XXXXXX";
    if (!mkdtemp(dir))
        return perror("mkdtemp"), 1;
    char sf[512];
    snprintf(sf, sizeof sf, "%s;sender_id=e2e", dir);

    if (argc > 1 && strcmp(argv[1], "frames") == 0) { /* profiling aid */
        double r;
        fprintf(stderr, "memory %.0f MB/s\n", big_frames(NULL, &r));
        if (argc < 3 || strcmp(argv[2], "memory") != 0) /* "frames memory": memory only */
            fprintf(stderr, "sf %.0f MB/s\n", big_frames(sf, &r));
        return 0;
    }
    double raw = raw_tcp_mb_s();
    printf("{\"bench\":\"e2e_raw_tcp\",\"frame_bytes\":%d,\"bytes\":%lld,\"mb_per_s\":%.0f}\n",
           FRAME, BIG_BYTES, raw);
    fprintf(stderr, "raw TCP loopback      %8.0f MB/s (64 KiB writes)\n", raw);
    double mem_rows, sf_rows;
    double mem = big_frames(NULL, &mem_rows);
    double sfm = big_frames(sf, &sf_rows);
    printf("{\"bench\":\"e2e_frames\",\"mode\":\"memory\",\"frame_bytes\":%d,\"mb_per_s\":%.0f,"
           "\"rows_per_s\":%.0f,\"vs_raw_tcp\":%.3f}\n",
           ROWS_FRAME * (PAD + 24), mem, mem_rows, mem / raw);
    printf("{\"bench\":\"e2e_frames\",\"mode\":\"sf\",\"frame_bytes\":%d,\"mb_per_s\":%.0f,"
           "\"rows_per_s\":%.0f,\"vs_raw_tcp\":%.3f,\"sf_time_vs_memory\":%.3f}\n",
           ROWS_FRAME * (PAD + 24), sfm, sf_rows, sfm / raw, mem / sfm);
    fprintf(stderr,
            "qsf 64 KiB frames     memory %6.0f MB/s (%.2f of raw)  sf %6.0f MB/s (time x%.2f)\n",
            mem, mem / raw, sfm, mem / sfm);
    /* memory mode through lws_write: what the direct path buys */
    atomic_store(&qsf_ws_fast_enabled, false);
    double lws_rows, lws = big_frames(NULL, &lws_rows);
    atomic_store(&qsf_ws_fast_enabled, true);
    printf("{\"bench\":\"e2e_frames\",\"mode\":\"memory\",\"send_path\":\"lws_write\","
           "\"frame_bytes\":%d,\"mb_per_s\":%.0f,\"rows_per_s\":%.0f,\"vs_raw_tcp\":%.3f,"
           "\"direct_path_speedup\":%.3f}\n",
           ROWS_FRAME * (PAD + 24), lws, lws_rows, lws / raw, mem / lws);
    fprintf(stderr, "qsf 64 KiB frames     memory, lws_write %6.0f MB/s (direct path x%.2f)\n", lws,
            mem / lws);
    /* the same with 64 MiB segments: 16x fewer rotations (and their barriers) */
    char sf64[600];
    snprintf(sf64, sizeof sf64, "%s;sender_id=e2e64;sf_max_segment_bytes=64m", dir);
    double sf64_rows, sfm64 = big_frames(sf64, &sf64_rows);
    printf("{\"bench\":\"e2e_frames\",\"mode\":\"sf\",\"segment_bytes\":67108864,"
           "\"frame_bytes\":%d,\"mb_per_s\":%.0f,\"rows_per_s\":%.0f,\"vs_raw_tcp\":%.3f,"
           "\"sf_time_vs_memory\":%.3f}\n",
           ROWS_FRAME * (PAD + 24), sfm64, sf64_rows, sfm64 / raw, mem / sfm64);
    fprintf(stderr, "qsf 64 KiB frames     sf, 64 MiB segments %6.0f MB/s (time x%.2f)\n", sfm64,
            mem / sfm64);
    double mmb, smb;
    double mr = small_rows(NULL, 2000000, &mmb);
    double sr = small_rows(sf, 2000000, &smb);
    printf("{\"bench\":\"e2e_rows\",\"mode\":\"memory\",\"rows\":2000000,\"rows_per_s\":%.0f,"
           "\"mb_per_s\":%.1f}\n",
           mr, mmb);
    printf("{\"bench\":\"e2e_rows\",\"mode\":\"sf\",\"rows\":2000000,\"rows_per_s\":%.0f,"
           "\"mb_per_s\":%.1f,\"sf_time_vs_memory\":%.3f}\n",
           sr, smb, mr / sr);
    fprintf(stderr, "qsf small rows        memory %8.0f rows/s  sf %8.0f rows/s (time x%.2f)\n", mr,
            sr, mr / sr);
    ack_latency(NULL, "memory");
    ack_latency(sf, "sf");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
