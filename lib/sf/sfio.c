/* Slot-relative file helpers (see sfio.h). */
#include "sf/sfio.h"

#include "err.h"
#include "os/fileutil.h"
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Link count of the last file qsf_open_regular refused with EMLINK, for the
 * message (qsf_file_err): per thread, read right after the refusal. */
static _Thread_local unsigned long refused_links;

int qsf_open_regular(int dirfd, const char *name, int flags, uint64_t *size) {
    /* O_NONBLOCK: a FIFO planted under an expected name would otherwise block
     * the open forever; it has no effect on regular files (Linux, open(2)).
     * O_TRUNC waits until the file is known to be ours: a hard link to a file
     * outside the slot must not be cut by the open that refuses it. */
    int fd =
        QSF_OS->openat(dirfd, name, (flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0)
        return -1;
    struct stat st;
    int e = 0;
    if (QSF_OS->fstat(fd, &st) != 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if (st.st_nlink > 1) { /* another name for the file: possibly outside the slot */
        refused_links = (unsigned long) st.st_nlink;
        e = EMLINK;
    } else if ((flags & O_TRUNC) && QSF_OS->ftruncate(fd, 0) != 0)
        e = errno;
    if (e != 0) {
        QSF_OS->close(fd);
        errno = e;
        return -1;
    }
    if (size)
        *size = (flags & O_TRUNC) ? 0 : (uint64_t) st.st_size;
    return fd;
}

int qsf_file_err(qsf_errinfo *err, int sys_errno, const char *what, const char *dir,
                 const char *name) {
    char links[64];
    snprintf(links, sizeof links, "has %lu hard links (refused: it may be a file outside the slot)",
             refused_links);
    const char *why = sys_errno == ELOOP                            ? "is a symbolic link (refused)"
                      : sys_errno == EMLINK                         ? links
                      : sys_errno == EINVAL && strstr(what, "open") ? "not a regular file"
                                                                    : strerror(sys_errno);
    int code = qsf_code_from_errno(sys_errno);
    if (code == QSF_E_UNSUPPORTED)
        code = QSF_E_IO;
    return qsf_err_set(err, code, 0, sys_errno, "%s %s/%s: %s", what, dir, name, why);
}

int qsf_read_at(int fd, void *buf, size_t n, uint64_t off, const char *dir, const char *name,
                qsf_errinfo *err) {
    size_t got = 0;
    int rc = qsf_pread_full(fd, buf, n, (off_t) off, &got);
    if (rc == 0)
        return QSF_OK;
    if (rc < 0)
        return qsf_err_set(err, QSF_E_IO, 0, errno, "read of %s/%s at offset %llu failed: %s", dir,
                           name, (unsigned long long) off, strerror(errno));
    return qsf_err_set(err, QSF_E_IO, 0, 0,
                       "%s/%s changed size during recovery (short read at offset %llu)", dir, name,
                       (unsigned long long) (off + got));
}

int qsf_write_at(int fd, const void *buf, size_t n, uint64_t off, const char *dir, const char *name,
                 qsf_errinfo *err) {
    if (qsf_pwrite_full(fd, buf, n, (off_t) off) == 0)
        return QSF_OK;
    int e = errno;
    int code = qsf_code_from_errno(e) == QSF_E_NOSPC ? QSF_E_NOSPC : QSF_E_IO;
    return qsf_err_set(err, code, 0, e, "write of %s/%s at offset %llu failed: %s", dir, name,
                       (unsigned long long) off, strerror(e));
}

int qsf_bufw_flush(qsf_bufw *w, qsf_errinfo *err) {
    int rc = w->used ? qsf_write_at(w->fd, w->buf, w->used, w->off, w->dir, w->name, err) : QSF_OK;
    w->off += w->used;
    w->used = 0;
    return rc;
}

int qsf_bufw_put(qsf_bufw *w, const void *p, size_t n, qsf_errinfo *err) {
    const uint8_t *b = p;
    while (n > 0) {
        size_t k = w->cap - w->used < n ? w->cap - w->used : n;
        memcpy(w->buf + w->used, b, k);
        w->used += k;
        b += k;
        n -= k;
        int rc = w->used == w->cap ? qsf_bufw_flush(w, err) : QSF_OK;
        if (rc != QSF_OK)
            return rc;
    }
    return QSF_OK;
}

int qsf_unlink_quiet(int dirfd, const char *dir, const char *name, qsf_errinfo *err) {
    if (QSF_OS->unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return QSF_OK;
    return qsf_file_err(err, errno, "cannot remove", dir, name);
}

int qsf_fault_check(int point, qsf_errinfo *err) {
    if (QSF_FAULT_POINT(point) == 0)
        return QSF_OK;
    return qsf_err_set(err, QSF_E_IO, 0, EIO, "injected failure at fault point %d", point);
}
