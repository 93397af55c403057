/* The kernel's share of a row (bench_rows, docs/BENCHMARKS.md "rows"):
 * what any client pays to move a row's encoded bytes, measured without
 * qsf on this machine in the same run. */
#include "floors.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *what) {
    fprintf(stderr, "bench floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* n bytes of a fixed pattern: the payload every floor moves. */
static uint8_t *pattern(size_t n) {
    uint8_t *p = malloc(n);
    if (!p)
        fail("malloc");
    memset(p, 0x5A, n);
    return p;
}

/* A child that accepts one connection on `ls` and reads until EOF. */
static pid_t start_reader(int ls) {
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        int c = accept(ls, NULL, NULL);
        static uint8_t buf[1 << 20];
        while (c >= 0 && read(c, buf, sizeof buf) > 0) {
        }
        _exit(0);
    }
    return pid;
}

static int listen_loopback(struct sockaddr_in *a) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t al = sizeof *a;
    *a = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (ls < 0 || bind(ls, (struct sockaddr *) a, sizeof *a) || listen(ls, 1) ||
        getsockname(ls, (struct sockaddr *) a, &al))
        fail("listen on 127.0.0.1");
    return ls;
}

static void send_all(int fd, const uint8_t *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, 0);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            fail("send");
        p += w, n -= (size_t) w;
    }
}

double qsf_floor_tcp_ns(double total_bytes, size_t chunk, uint64_t rows) {
    struct sockaddr_in a;
    int ls = listen_loopback(&a);
    pid_t pid = start_reader(ls);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *) &a, sizeof a))
        fail("connect to 127.0.0.1");
    uint8_t *buf = pattern(chunk);
    int64_t c0 = thread_cpu_ns();
    for (double sent = 0; sent < total_bytes; sent += (double) chunk)
        send_all(fd, buf, chunk);
    int64_t cpu = thread_cpu_ns() - c0;
    close(fd);
    close(ls);
    waitpid(pid, NULL, 0);
    free(buf);
    return (double) cpu / (double) rows;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* One file of file_bytes at path: created O_EXCL, preallocated, mapped
 * MAP_SHARED, large folios asked for if `large` (as the ring's segments). */
static uint8_t *open_mapped(const char *path, size_t file_bytes, bool large, int *fd) {
    *fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (*fd < 0 || posix_fallocate(*fd, 0, (off_t) file_bytes) != 0)
        fail(path);
    uint8_t *p = mmap(NULL, file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED)
        fail("mmap");
    if (large)
        (void) madvise(p, file_bytes, MADV_HUGEPAGE);
    return p;
}

/* Fresh file pages as qsf_floor_pages_ns, in `large` mode as the ring has
 * them: large folios asked for (MADV_HUGEPAGE) and the whole file populated
 * writable in one call before the copies. */
static double pages_ns(double total_bytes, size_t chunk, size_t file_bytes, const char *dir,
                       uint64_t rows, bool large) {
    char path[4200];
    snprintf(path, sizeof path, "%s/floor-pages", dir);
    if (chunk > file_bytes)
        chunk = file_bytes; /* a frame larger than a file: written a file at a time */
    uint8_t *src = pattern(chunk);
    int64_t c0 = thread_cpu_ns();
    double done = 0;
    while (done < total_bytes) {
        int fd;
        uint8_t *dst = open_mapped(path, file_bytes, large, &fd);
        if (large)
            (void) madvise(dst, file_bytes, MADV_POPULATE_WRITE);
        for (size_t off = 0; done < total_bytes && off + chunk <= file_bytes; off += chunk) {
            memcpy(dst + off, src, chunk);
            done += (double) chunk;
        }
        munmap(dst, file_bytes);
        close(fd);
        unlink(path);
    }
    int64_t cpu = thread_cpu_ns() - c0;
    free(src);
    return (double) cpu / (double) rows;
}

double qsf_floor_pages_ns(double total_bytes, size_t chunk, size_t file_bytes, const char *dir,
                          uint64_t rows) {
    return pages_ns(total_bytes, chunk, file_bytes, dir, rows, false);
}

double qsf_floor_pages_large_ns(double total_bytes, size_t chunk, size_t file_bytes,
                                const char *dir, uint64_t rows) {
    return pages_ns(total_bytes, chunk, file_bytes, dir, rows, true);
}

double qsf_floor_pages_recycled_ns(double total_bytes, size_t chunk, size_t file_bytes,
                                   const char *dir, uint64_t rows) {
    char path[2][4200];
    uint8_t *dst[2];
    int fd[2];
    if (chunk > file_bytes)
        chunk = file_bytes;
    for (int i = 0; i < 2; i++) {
        snprintf(path[i], sizeof path[i], "%s/floor-recycled-%d", dir, i);
        dst[i] = open_mapped(path[i], file_bytes, true, &fd[i]);
    }
    uint8_t *src = pattern(chunk);
    int64_t c0 = thread_cpu_ns();
    double done = 0;
    for (int f = 0; done < total_bytes; f ^= 1) {
        size_t used = 0;
        for (; done < total_bytes && used + chunk <= file_bytes; used += chunk) {
            memcpy(dst[f] + used, src, chunk);
            done += (double) chunk;
        }
        /* the only safe reuse: zeros on disk before the file takes new data */
        memset(dst[f], 0, used);
        if (msync(dst[f], used, MS_SYNC) != 0 || fdatasync(fd[f]) != 0)
            fail("msync + fdatasync");
    }
    int64_t cpu = thread_cpu_ns() - c0;
    for (int i = 0; i < 2; i++) {
        munmap(dst[i], file_bytes);
        close(fd[i]);
        unlink(path[i]);
    }
    free(src);
    return (double) cpu / (double) rows;
}
