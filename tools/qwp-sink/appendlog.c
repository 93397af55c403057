/* The --append file (see appendlog.h for the ordering it guarantees). */
#include "appendlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Length of the file up to and including its last newline (0 if none). */
static off_t complete_length(int fd, off_t end) {
    char b[4096];
    while (end > 0) {
        off_t from = end > (off_t) sizeof b ? end - (off_t) sizeof b : 0;
        ssize_t n = pread(fd, b, (size_t) (end - from), from);
        if (n <= 0)
            return -1;
        for (ssize_t i = n; i-- > 0;)
            if (b[i] == '\n')
                return from + i + 1;
        end = from;
    }
    return 0;
}

/* A sink killed inside a write leaves a torn last line. No acknowledgement
 * covered it (the OK waits for the whole write), so it is cut off rather than
 * glued to the next row. */
static int cut_torn_tail(struct appendlog *a, char *err, size_t cap) {
    struct stat st;
    if (fstat(a->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    off_t keep = complete_length(a->fd, st.st_size);
    if (keep == st.st_size)
        return 0;
    if (keep < 0 || ftruncate(a->fd, keep) != 0) {
        snprintf(err, cap, "%s: cannot cut its torn last line: %s", a->path, strerror(errno));
        return -1;
    }
    fprintf(stderr, "qwp-sink: append file %s: cut a torn last line of %lld bytes\n", a->path,
            (long long) (st.st_size - keep));
    return 0;
}

/* Newlines in the file: its complete rows, once a torn tail is cut. A device
 * (/dev/full reads zeros without end) holds none. */
static long long count_lines(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    char b[65536];
    long long lines = 0;
    ssize_t n;
    for (off_t at = 0; at < st.st_size && (n = pread(fd, b, sizeof b, at)) > 0; at += n)
        for (ssize_t i = 0; i < n; i++)
            lines += b[i] == '\n';
    return lines;
}

int appendlog_open(struct appendlog *a, const char *path, int sync, char *err, size_t cap) {
    memset(a, 0, sizeof *a);
    a->sync = sync;
    snprintf(a->path, sizeof a->path, "%s", path);
    a->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (a->fd < 0) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (cut_torn_tail(a, err, cap) != 0) {
        close(a->fd);
        a->fd = -1;
        return -1;
    }
    a->rows_before = count_lines(a->fd);
    if (a->rows_before > 0)
        fprintf(stderr,
                "qwp-sink: append file %s holds %lld rows of earlier runs; the summary's rows "
                "and duplicates count this run's only\n",
                a->path, a->rows_before);
    return 0;
}

int appendlog_pending(const struct appendlog *a) {
    return buf_live(&a->pend) > 0;
}

static int report_failure(struct appendlog *a, const char *what) {
    if (!a->failing)
        fprintf(stderr,
                "qwp-sink: append file %s: %s failed: %s; no OK or durable ack goes out "
                "until its rows are written\n",
                a->path, what, strerror(errno));
    a->failing = 1;
    return -1;
}

int appendlog_write(struct appendlog *a) {
    while (buf_live(&a->pend) > 0) {
        ssize_t n = write(a->fd, buf_head(&a->pend), buf_live(&a->pend));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            errno = EIO; /* a regular file or device that takes nothing */
        if (n <= 0)
            return report_failure(a, "write");
        buf_consume(&a->pend, (size_t) n);
        a->unsynced = a->sync;
    }
    if (a->unsynced && fdatasync(a->fd) != 0)
        return report_failure(a, "fdatasync"); /* retried by the next call */
    a->unsynced = 0;
    a->failing = 0;
    return 0;
}

void appendlog_close(struct appendlog *a) {
    if (a->fd < 0)
        return;
    appendlog_write(a);
    close(a->fd);
    a->fd = -1;
    buf_free(&a->pend);
}
