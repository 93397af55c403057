/* Append benchmark: publish latency (p50/p99/p99.9) and throughput of
 * qsf_ring_append for 64 B, 1 KiB and 64 KiB frames in memory mode and in SF
 * mode with each durability (memory, periodic, append), against memcpy of the
 * same bytes measured in the same run. A reader thread consumes and
 * acknowledges, so trim and spare provisioning run as in production; when it
 * has caught up it parks 50 us, like the reference client's I/O loop.
 *
 * `sf/append+position` is `sf/append` with a 16-byte source position on every
 * flush (docs/DURABILITY.md §9a: a record write and one fdatasync more per
 * barrier); run it with `sf/append` for a same-run A/B.
 *
 * Usage: bench_append [dir [modes [frame_bytes]]]
 *   dir: SF slots go under it (default $TMPDIR or /tmp); modes/frame_bytes
 *   run only those modes ("sf/memory", or a comma-separated list
 *   "sf/append,sf/append+position") or that size.
 * Per ring run, the CPU time over the timed part of the producer (this
 * thread), of the ring's manager thread (qsf-mgr) and of its spare thread
 * (qsf-spare, SF modes; -1 without one): who pays for the page faults,
 * zeroing and barriers. SF modes also report what the slot's block device
 * took during the timed part and the close (device_written_mb, and per byte
 * of frames: device_written_per_frame_byte; devstat.h), on a quiet machine
 * the disk cost of each mode; absent where the kernel does not say.
 * QSF_BENCH_NO_BARRIERS=1 (a diagnostic, not a configuration): fsync,
 *   fdatasync and msync become no-ops in the ring's syscall table, to see what
 *   SF mode would do if the disk barriers cost nothing.
 * Output: one JSON object per result on stdout, a table on stderr. */
#include "devstat.h"
#include "os/os.h"
#include "procstat.h"
#include "sf/ring.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SEGMENT     (16u << 20)
#define TOTAL       (256ull << 20)
#define FLUSH_EVERY 64 /* append mode: one barrier per 64 frames (group commit) */

typedef struct mode {
    const char *name;
    bool sf;
    int durability;
    double pace_mb_s; /* 0: as fast as possible; else the producer's offered rate */
    bool position;    /* every flush carries a source position */
} mode;

/* The paced SF run measures publish latency at an offered load the manager
 * can stay ahead of (spares created and pages faulted in before the producer
 * needs them), which is the steady state the design aims for; the unpaced
 * runs measure throughput and include every wait for a spare. */
static const mode modes[] = {
    {"memory", false, QSF_DUR_MEMORY, 0, false},
    {"sf/memory", true, QSF_DUR_MEMORY, 0, false},
    {"sf/memory@50MB/s", true, QSF_DUR_MEMORY, 50, false},
    {"sf/periodic", true, QSF_DUR_PERIODIC, 0, false},
    {"sf/append", true, QSF_DUR_APPEND, 0, false},
    {"sf/append+position", true, QSF_DUR_APPEND, 0, true},
};

static const size_t sizes[] = {64, 1024, 65536};

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

typedef struct result {
    int64_t p50, p99, p999, p9999, max;
    size_t over_1ms; /* appends that took more than 1 ms (rotations that waited for the disk) */
    double mb_s;
    uint64_t stalls; /* appends that waited for space or a spare */
    double producer_cpu_ms, manager_cpu_ms, spare_cpu_ms; /* over the timed part; -1 if unknown */
    int64_t dev_written; /* SF: bytes the device took for the timed part and the close; -1 */
} result;

static result summarize(int64_t *lat, size_t n, size_t bytes, int64_t total_ns) {
    size_t slow = 0;
    for (size_t i = 0; i < n; i++)
        slow += lat[i] > 1000000;
    qsort(lat, n, sizeof *lat, cmp_i64);
    result r = {.p50 = lat[n / 2],
                .p99 = lat[n * 99 / 100],
                .p999 = lat[n * 999 / 1000],
                .p9999 = lat[n * 9999 / 10000],
                .max = lat[n - 1],
                .over_1ms = slow};
    r.mb_s = (double) bytes * (double) n / ((double) total_ns / 1e9) / 1e6;
    return r;
}

/* ---- reader: consumes and acknowledges ---- */

typedef struct reader {
    qsf_ring *r;
    _Atomic bool stop;
    _Atomic int64_t read;
} reader;

static void *reader_main(void *arg) {
    reader *rd = arg;
    qsf_ring_cursor c = {0};
    while (qsf_ring_cursor_seek(rd->r, &c, qsf_ring_acked_fsn(rd->r) + 1) != 0)
        ;
    int64_t n = 0;
    for (;;) {
        const uint8_t *p;
        uint32_t len;
        int64_t fsn;
        if (qsf_ring_cursor_next(rd->r, &c, &p, &len, &fsn) == 1) {
            if ((++n & 63) == 0)
                qsf_ring_acknowledge(rd->r, fsn);
            atomic_store_explicit(&rd->read, fsn, memory_order_relaxed);
            continue;
        }
        if (atomic_load(&rd->stop))
            break;
        /* Caught up: park like the reference I/O loop (50 us) instead of
         * spinning on the producer's cache lines. */
        struct timespec park = {0, 50000};
        nanosleep(&park, NULL);
    }
    qsf_ring_acknowledge(rd->r, qsf_ring_published_fsn(rd->r));
    qsf_ring_cursor_release(rd->r, &c);
    return NULL;
}

/* ---- CPU time of the threads (procstat.c) ---- */

static double cpu_ms(int64_t from, int64_t to) {
    return from < 0 || to < 0 ? -1 : (double) (to - from) / 1e6;
}

/* ---- one run ---- */

/* Enough bytes to cycle the 256 MiB ring several times (append mode: less,
 * every 64 frames wait for the disk). */
static size_t frames_for(size_t size, const mode *m) {
    size_t bytes =
        m->durability == QSF_DUR_APPEND || m->pace_mb_s > 0 ? (128u << 20) : (1024u << 20);
    size_t n = bytes / size;
    return n > 4000000 ? 4000000 : n;
}

/* The position of the flush that starts at frame i: 16 bytes, as an
 * application's file offset and line number might be. */
static int stage_position(qsf_ring *r, size_t i, qsf_errinfo *e) {
    char pos[17];
    snprintf(pos, sizeof pos, "%016zx", i);
    return qsf_ring_srcpos_stage(r, pos, 16, e);
}

static int run_ring(const mode *m, size_t size, const char *dir, int64_t *lat, size_t n,
                    result *out) {
    qsf_ring_opts o = {.sf_dir = m->sf ? dir : NULL,
                       .sender_id = "bench",
                       .segment_bytes = SEGMENT,
                       .total_bytes = TOTAL,
                       .durability = m->durability,
                       .sync_interval_ms = 100,
                       .append_deadline_ms = 30000};
    qsf_ring *r;
    qsf_errinfo e;
    if (qsf_ring_open(&o, &r, NULL, &e) != QSF_OK) {
        fprintf(stderr, "open %s: %s\n", m->name, e.msg);
        return -1;
    }
    usleep(20000); /* let the first spare be provisioned */
    reader rd = {.r = r};
    pthread_t t;
    pthread_create(&t, NULL, reader_main, &rd);
    uint8_t *buf = malloc(size);
    memset(buf, 0x5A, size);
    /* Warm-up: cycle 8 segments through the ring first, so the timed part is
     * the steady state (spares ready, memory-mode buffers reused), not the
     * first touch of fresh memory. */
    for (size_t done = 0; done < 8 * (size_t) SEGMENT; done += size + 8)
        if (qsf_ring_append(r, buf, size, NULL, &e) != QSF_OK) {
            fprintf(stderr, "warm-up %s: %s\n", m->name, e.msg);
            exit(1);
        }
    /* What the warm-up left dirty goes out first: the device's count is then
     * the timed part's (devstat.h). */
    int64_t dev0 = -1;
    if (m->sf) {
        sync();
        dev0 = dev_written_bytes(dir);
    }
    /* append mode: FLUSH_EVERY frames per flush (one barrier each, before they
     * are published); the other modes publish every frame as its own flush. */
    size_t per_flush = m->durability == QSF_DUR_APPEND ? FLUSH_EVERY : 1;
    uint64_t stalls0 = qsf_ring_backpressure_stalls(r);
    cpu_snap cpu0;
    cpu_take(&cpu0);
    int64_t start = now_ns();
    int64_t gap = m->pace_mb_s > 0 ? (int64_t) ((double) size * 1e3 / m->pace_mb_s) : 0;
    for (size_t i = 0; i < n; i++) {
        while (gap && now_ns() < start + (int64_t) i * gap)
            ;
        int64_t t0 = now_ns();
        if ((i % per_flush == 0 && qsf_ring_txn_begin(r, &e) != QSF_OK) ||
            (i % per_flush == 0 && m->position && stage_position(r, i, &e) != QSF_OK) ||
            qsf_ring_txn_append(r, buf, size, NULL, &e) != QSF_OK ||
            ((i + 1) % per_flush == 0 && qsf_ring_txn_commit(r, &e) != QSF_OK)) {
            fprintf(stderr, "append %s: %s\n", m->name, e.msg);
            exit(1);
        }
        lat[i] = now_ns() - t0;
    }
    if (n % per_flush && qsf_ring_txn_commit(r, &e) != QSF_OK) {
        fprintf(stderr, "commit %s: %s\n", m->name, e.msg);
        exit(1);
    }
    int64_t total = now_ns() - start;
    cpu_snap cpu1;
    cpu_take(&cpu1);
    uint64_t stalls = qsf_ring_backpressure_stalls(r) - stalls0;
    atomic_store(&rd.stop, true);
    pthread_join(t, NULL);
    qsf_ring_close(r, NULL);
    free(buf);
    *out = summarize(lat, n, size, total);
    out->dev_written = -1;
    if (dev0 >= 0) { /* closed: what is still dirty goes out now */
        sync();
        int64_t dev1 = dev_written_bytes(dir);
        out->dev_written = dev1 >= dev0 ? dev1 - dev0 : -1;
    }
    out->stalls = stalls;
    out->producer_cpu_ms = cpu_ms(cpu0.thread_ns[T_PRODUCER], cpu1.thread_ns[T_PRODUCER]);
    out->manager_cpu_ms = cpu_ms(cpu0.thread_ns[T_MGR], cpu1.thread_ns[T_MGR]);
    /* a memory-mode ring has no spare thread */
    out->spare_cpu_ms = m->sf ? cpu_ms(cpu0.thread_ns[T_SPARE], cpu1.thread_ns[T_SPARE]) : -1;
    return 0;
}

/* memcpy of the same bytes into a pre-faulted buffer as large as the ring's
 * cap, wrapping around: the raw cost of moving the bytes into memory that is
 * not in cache, which is what the ring does. */
static result run_memcpy(size_t size, int64_t *lat, size_t n) {
    uint8_t *dst = malloc(TOTAL);
    uint8_t *src = malloc(size);
    memset(dst, 1, TOTAL); /* non-zero: a zero memset after malloc may become calloc */
    memset(src, 0x5A, size);
    size_t off = 0;
    int64_t start = now_ns();
    for (size_t i = 0; i < n; i++) {
        int64_t t0 = now_ns();
        if (off + size > TOTAL)
            off = 0;
        memcpy(dst + off, src, size);
        off += size;
        __asm__ volatile("" : : "r"(dst) : "memory");
        lat[i] = now_ns() - t0;
    }
    int64_t total = now_ns() - start;
    free(dst);
    free(src);
    return summarize(lat, n, size, total);
}

/* memcpy of the same bytes into fresh files like the ring's segments
 * (O_EXCL, posix_fallocate, MAP_SHARED, large folios asked for), a new file
 * every SEGMENT bytes and the old one unlinked, on one thread: the floor SF
 * mode stands on, because every byte lands in a page-cache page that did not
 * exist before. */
static double run_memcpy_file(size_t size, size_t n, const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/memcpy-file", dir);
    uint8_t *src = malloc(size);
    memset(src, 0x5A, size);
    int64_t start = now_ns();
    size_t i = 0;
    while (i < n) {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || posix_fallocate(fd, 0, SEGMENT) != 0) {
            perror("memcpy-file");
            exit(1);
        }
        uint8_t *dst = mmap(NULL, SEGMENT, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        (void) madvise(dst, SEGMENT, MADV_HUGEPAGE); /* as the ring's segments */
        for (size_t off = 24; i < n && off + size + 8 <= SEGMENT; off += size + 8, i++)
            memcpy(dst + off + 8, src, size);
        munmap(dst, SEGMENT);
        close(fd);
        unlink(path);
    }
    int64_t total = now_ns() - start;
    free(src);
    return (double) size * (double) n / ((double) total / 1e9) / 1e6;
}

/* Guest memory of a VM may be backed lazily by the host: the first touch of a
 * page costs far more than later ones. Touch (and free) 2 GiB once, so the
 * runs below measure the ring and memcpy, not the hypervisor. */
static void warm_memory(void) {
    size_t n = (size_t) 2 << 30;
    uint8_t *p = malloc(n);
    if (!p)
        return;
    memset(p, 1, n);
    __asm__ volatile("" : : "r"(p) : "memory");
    free(p);
}

static int no_sync(int fd) {
    (void) fd;
    return 0;
}

static int no_msync(void *addr, size_t len, int flags) {
    (void) addr, (void) len, (void) flags;
    return 0;
}

static bool drop_barriers(void) {
    const char *v = getenv("QSF_BENCH_NO_BARRIERS");
    if (!v || strcmp(v, "1") != 0)
        return false;
    QSF_OS->fsync = no_sync;
    QSF_OS->fdatasync = no_sync;
    QSF_OS->msync = no_msync;
    return true;
}

/* Whether `name` is one of the comma-separated modes in `only` (NULL: all). */
static bool selected(const char *only, const char *name) {
    if (!only)
        return true;
    size_t n = strlen(name);
    for (const char *p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

static int64_t timer_overhead(void) {
    int64_t best = INT64_MAX;
    for (int i = 0; i < 100000; i++) {
        int64_t a = now_ns(), b = now_ns();
        if (b - a < best)
            best = b - a;
    }
    return best;
}

int main(int argc, char **argv) {
    const char *base = argc > 1 ? argv[1] : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/qsf-bench-XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    warm_memory();
    bool no_barriers = drop_barriers();
    int64_t timer = timer_overhead();
    fprintf(stderr, "%-16s %6s %8s %8s %8s %8s %9s %9s %10s %10s %6s %10s\n", "mode", "bytes",
            "frames", "p50_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns", "MB/s", "memcpyMB/s",
            "ratio", "fileMB/s");
    const char *only_mode = argc > 2 && argv[2][0] ? argv[2] : NULL;
    size_t only_size = argc > 3 ? (size_t) strtoull(argv[3], NULL, 10) : 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
            const mode *m = &modes[mi];
            if (!selected(only_mode, m->name) || (only_size && only_size != sizes[si]))
                continue;
            size_t n = frames_for(sizes[si], m);
            int64_t *lat = malloc(n * sizeof *lat);
            result q, c;
            if (run_ring(m, sizes[si], dir, lat, n, &q) != 0)
                return 1;
            c = run_memcpy(sizes[si], lat, n);
            double ratio = q.mb_s / c.mb_s;
            double file_mb_s = m->sf ? run_memcpy_file(sizes[si], n, dir) : 0;
            printf("{\"bench\":\"append\",\"mode\":\"%s\",\"frame_bytes\":%zu,\"frames\":%zu,"
                   "\"p50_ns\":%" PRId64 ",\"p99_ns\":%" PRId64 ",\"p999_ns\":%" PRId64
                   ",\"p9999_ns\":%" PRId64 ",\"max_ns\":%" PRId64 ",\"over_1ms\":%zu"
                   ",\"mb_per_s\":%.0f,\"memcpy_p50_ns\":%" PRId64 ",\"memcpy_mb_per_s\":%.0f,"
                   "\"ratio_vs_memcpy\":%.3f,\"stalls\":%" PRIu64 ",\"timer_ns\":%" PRId64,
                   m->name, sizes[si], n, q.p50, q.p99, q.p999, q.p9999, q.max, q.over_1ms, q.mb_s,
                   c.p50, c.mb_s, ratio, q.stalls, timer);
            if (m->sf)
                printf(",\"memcpy_file_mb_per_s\":%.0f,\"ratio_vs_memcpy_file\":%.3f", file_mb_s,
                       q.mb_s / file_mb_s);
            printf(",\"producer_cpu_ms\":%.1f,\"manager_cpu_ms\":%.1f,\"spare_cpu_ms\":%.1f",
                   q.producer_cpu_ms, q.manager_cpu_ms, q.spare_cpu_ms);
            if (q.dev_written >= 0)
                printf(",\"device_written_mb\":%.1f,\"device_written_per_frame_byte\":%.3f",
                       (double) q.dev_written / 1e6,
                       (double) q.dev_written / ((double) n * (double) sizes[si]));
            if (no_barriers)
                printf(",\"no_barriers\":true");
            printf("}\n");
            fflush(stdout);
            fprintf(stderr,
                    "%-16s %6zu %8zu %8" PRId64 " %8" PRId64 " %8" PRId64 " %9" PRId64 " %9" PRId64
                    " %10.0f %10.0f %6.3f %10.0f\n",
                    m->name, sizes[si], n, q.p50, q.p99, q.p999, q.p9999, q.max, q.mb_s, c.mb_s,
                    ratio, file_mb_s);
            free(lat);
        }
    }
    rmdir(dir);
    return 0;
}
