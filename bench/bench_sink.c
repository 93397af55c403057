/* qwp-sink throughput: a raw-socket flooder sends pre-encoded, masked 64 KiB QWP
 * frames over loopback to an in-process sink, compared in the same run with a
 * plain TCP loopback socket pair moving the same bytes. Prints one JSON line per
 * mode and a table on stderr.
 *
 *   bench_sink [MiB per mode (default 1024)] [frame bytes (default 65536)]
 *
 * Modes: raw_tcp (the ceiling), sink (decode + count rows, as the CLI runs),
 * sink_key (also keep the key column for duplicate / order queries),
 * sink_values (decode + keep every value, as the embedded test sink runs). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "sink.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* One table "bench": id LONG, v DOUBLE, designated TIMESTAMP; as many rows as
 * fit in `target` bytes. Returns the message length. */
static size_t build_message(uint8_t *m, size_t target, uint32_t *rows_out) {
    uint32_t rows = (uint32_t) ((target - 40) / 24);
    size_t o = 12;
    m[o++] = 5;
    memcpy(m + o, "bench", 5), o += 5;
    o += qsf_put_varint(m + o, rows);
    m[o++] = 3;
    const uint8_t defs[] = {2, 'i', 'd', 0x05, 1, 'v', 0x07, 0, 0x0A};
    memcpy(m + o, defs, sizeof defs), o += sizeof defs;
    for (int c = 0; c < 3; c++) {
        m[o++] = 0; /* no nulls */
        for (uint32_t r = 0; r < rows; r++, o += 8)
            qsf_put_u64(m + o,
                        c == 0 ? r : (c == 1 ? 0x3ff8000000000000ull : 1700000000000000ull + r));
    }
    memcpy(m, "QWP1", 4);
    m[4] = 1, m[5] = 0;
    qsf_put_u16(m + 6, 1);
    qsf_put_u32(m + 8, (uint32_t) (o - 12));
    *rows_out = rows;
    return o;
}

/* The message as a masked client frame. */
static size_t build_frame(uint8_t *f, const uint8_t *m, size_t n) {
    static const uint8_t key[4] = {0x11, 0x22, 0x33, 0x44};
    size_t h = 0;
    f[h++] = 0x82;
    if (n < 65536) {
        f[h++] = 0x80 | 126, f[h++] = (uint8_t) (n >> 8), f[h++] = (uint8_t) n;
    } else {
        f[h++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--)
            f[h++] = (uint8_t) ((uint64_t) n >> (8 * i));
    }
    memcpy(f + h, key, 4), h += 4;
    for (size_t i = 0; i < n; i++)
        f[h + i] = m[i] ^ key[i & 3];
    return h + n;
}

static int tcp_connect(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *) &a, sizeof a) != 0) {
        perror("connect");
        exit(1);
    }
    return fd;
}

static void write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r <= 0) {
            perror("write");
            exit(1);
        }
        p += r, n -= (size_t) r;
    }
}

/* Sends `count` copies of the frame, 16 per writev. */
static void flood(int fd, const uint8_t *frame, size_t flen, long count) {
    struct iovec iov[16];
    for (int i = 0; i < 16; i++)
        iov[i] = (struct iovec){(void *) frame, flen};
    while (count > 0) {
        int k = count < 16 ? (int) count : 16;
        size_t want = flen * (size_t) k;
        ssize_t r = writev(fd, iov, k);
        if (r < 0) {
            perror("writev");
            exit(1);
        }
        if ((size_t) r < want) { /* finish the partial batch byte-exactly */
            size_t done = (size_t) r;
            size_t fi = done / flen, off = done % flen;
            write_all(fd, frame + off, flen - off);
            count -= (long) fi + 1;
            continue;
        }
        count -= k;
    }
}

static void *drain(void *arg) {
    int fd = *(int *) arg;
    static uint8_t buf[1 << 16];
    while (read(fd, buf, sizeof buf) > 0)
        ;
    return NULL;
}

/* ---- raw TCP baseline ---- */

struct raw_rx {
    int lfd;
    size_t total;
};

static void *raw_reader(void *arg) {
    struct raw_rx *rx = arg;
    int fd = accept(rx->lfd, NULL, NULL);
    uint8_t *buf = malloc(1 << 20);
    size_t got = 0;
    ssize_t r;
    while (got < rx->total && (r = read(fd, buf, 1 << 20)) > 0)
        got += (size_t) r;
    free(buf);
    close(fd);
    return NULL;
}

static double run_raw(const uint8_t *frame, size_t flen, long count) {
    struct raw_rx rx = {.total = flen * (size_t) count};
    rx.lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    bind(rx.lfd, (struct sockaddr *) &a, sizeof a);
    listen(rx.lfd, 1);
    getsockname(rx.lfd, (struct sockaddr *) &a, &al);
    pthread_t t;
    pthread_create(&t, NULL, raw_reader, &rx);
    int fd = tcp_connect(ntohs(a.sin_port));
    double t0 = now_s();
    flood(fd, frame, flen, count);
    pthread_join(t, NULL);
    double dt = now_s() - t0;
    close(fd);
    close(rx.lfd);
    return dt;
}

/* ---- sink ---- */

/* values: 0 count only, 1 keep every value, 2 keep the key column "id" only. */
static double run_sink(const uint8_t *frame, size_t flen, long count, int values,
                       int64_t rows_per_frame) {
    qsink_opts o = {
        .no_values = values != 1, .recv_buf = 16u << 20, .key_column = values == 2 ? "id" : NULL};
    char err[256];
    qsink *s = qsink_start(&o, err, sizeof err);
    if (!s) {
        fprintf(stderr, "qsink_start: %s\n", err);
        exit(1);
    }
    int fd = tcp_connect(qsink_port(s));
    const char *req = "GET /write/v4 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
                      "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    write_all(fd, (const uint8_t *) req, strlen(req));
    if (qsink_wait_upgrades(s, 1, 5000) != 0) {
        fprintf(stderr, "no upgrade\n");
        exit(1);
    }
    pthread_t t;
    pthread_create(&t, NULL, drain, &fd);
    double t0 = now_s();
    flood(fd, frame, flen, count);
    if (qsink_wait_rows(s, "bench", rows_per_frame * count, 120000) != 0) {
        fprintf(stderr, "sink did not get every row\n");
        exit(1);
    }
    double dt = now_s() - t0;
    qsink_stats st;
    qsink_get_stats(s, &st);
    shutdown(fd, SHUT_WR);
    pthread_join(t, NULL);
    close(fd);
    qsink_stop(s);
    if (st.errors != 0) {
        fprintf(stderr, "sink sent %lld errors\n", (long long) st.errors);
        exit(1);
    }
    return dt;
}

static void report(const char *mode, size_t flen, long count, double dt, double raw_mbps) {
    double mbps = (double) flen * (double) count / dt / 1e6;
    printf("{\"bench\":\"sink\",\"mode\":\"%s\",\"frame_bytes\":%zu,\"frames\":%ld,"
           "\"seconds\":%.3f,\"mb_per_s\":%.0f",
           mode, flen, count, dt, mbps);
    if (raw_mbps > 0)
        printf(",\"ratio_vs_raw_tcp\":%.3f", mbps / raw_mbps);
    printf("}\n");
    fprintf(stderr, "%-12s %8zu B x %7ld  %8.3f s  %9.0f MB/s\n", mode, flen, count, dt, mbps);
}

int main(int argc, char **argv) {
    long mib = argc > 1 ? atol(argv[1]) : 1024;
    size_t target = argc > 2 ? (size_t) atol(argv[2]) : 65536;
    if (mib <= 0 || target < 64 || target > (8u << 20)) {
        fprintf(stderr, "usage: bench_sink [MiB per mode] [frame bytes 64..8388608]\n");
        return 2;
    }
    uint8_t *msg = malloc(target + 64), *frame = malloc(target + 80);
    uint32_t rows;
    size_t mlen = build_message(msg, target - 14, &rows);
    size_t flen = build_frame(frame, msg, mlen);
    long count = (long) ((size_t) mib * 1048576 / flen);
    fprintf(stderr, "mode         frame           count   seconds       rate\n");
    double raw = run_raw(frame, flen, count);
    double raw_mbps = (double) flen * (double) count / raw / 1e6;
    report("raw_tcp", flen, count, raw, 0);
    report("sink", flen, count, run_sink(frame, flen, count, 0, rows), raw_mbps);
    report("sink_key", flen, count / 4, run_sink(frame, flen, count / 4, 2, rows), raw_mbps);
    report("sink_values", flen, count / 4, run_sink(frame, flen, count / 4, 1, rows), raw_mbps);
    free(msg);
    free(frame);
    return 0;
}
