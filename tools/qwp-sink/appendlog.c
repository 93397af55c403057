/* The --append file (see appendlog.h for the ordering it guarantees). */
#include "appendlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int appendlog_open(struct appendlog *a, const char *path, int sync, char *err, size_t cap) {
    memset(a, 0, sizeof *a);
    a->sync = sync;
    snprintf(a->path, sizeof a->path, "%s", path);
    a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (a->fd < 0) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
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
