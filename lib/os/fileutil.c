/* Positioned I/O, preallocated creation and directory sync (see fileutil.h). */
#include "os/fileutil.h"

#include "err.h"
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

int qsf_pread_full(int fd, void *buf, size_t n, off_t off, size_t *got) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = QSF_OS->pread(fd, (char *) buf + done, n - done, off + (off_t) done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        done += (size_t) r;
    }
    if (got)
        *got = done;
    return done == n ? 0 : 1;
}

int qsf_pwrite_full(int fd, const void *buf, size_t n, off_t off) {
    size_t done = 0;
    while (done < n) {
        ssize_t w = QSF_OS->pwrite(fd, (const char *) buf + done, n - done, off + (off_t) done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        done += (size_t) w;
    }
    return 0;
}

int qsf_code_from_errno(int e) {
    switch (e) {
    case ENOSPC:
    case EDQUOT:
        return QSF_E_NOSPC;
    case ENOMEM:
        return QSF_E_NOMEM;
    case EOPNOTSUPP:
    case EINVAL:
        return QSF_E_UNSUPPORTED;
    default:
        return QSF_E_IO;
    }
}

static int prealloc_fail(int dirfd, const char *dir_path, const char *name, int fd, int e,
                         qsf_errinfo *err) {
    QSF_OS->close(fd);
    QSF_OS->unlinkat(dirfd, name, 0);
    int code = qsf_code_from_errno(e);
    const char *why = code == QSF_E_UNSUPPORTED ? "preallocation unsupported" : strerror(e);
    return qsf_err_set(err, code, code == QSF_E_NOSPC ? QSF_ERRF_RETRIABLE : 0, e,
                       "pre-allocation failed for %s/%s: %s", dir_path, name, why);
}

int qsf_create_prealloc(int dirfd, const char *dir_path, const char *name, uint64_t size,
                        int *fd_out, qsf_errinfo *err) {
    int fd = QSF_OS->openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        return qsf_err_set(err, qsf_code_from_errno(e) == QSF_E_NOSPC ? QSF_E_NOSPC : QSF_E_IO, 0,
                           e, "cannot create %s/%s: %s", dir_path, name, strerror(e));
    }
    int e = QSF_OS->fallocate(fd, 0, (off_t) size);
    if (e != 0)
        return prealloc_fail(dirfd, dir_path, name, fd, e, err);
    struct stat st;
    if (QSF_OS->fstat(fd, &st) != 0)
        return prealloc_fail(dirfd, dir_path, name, fd, errno, err);
    if ((uint64_t) st.st_size != size)
        return prealloc_fail(dirfd, dir_path, name, fd, EIO, err);
    *fd_out = fd;
    return QSF_OK;
}

int qsf_fsync_dir(int dirfd, const char *dir_path, qsf_errinfo *err) {
    if (QSF_OS->fsync(dirfd) == 0)
        return QSF_OK;
    int e = errno;
    return qsf_err_set(err, QSF_E_IO, QSF_ERRF_RETRIABLE, e, "fsync of directory %s failed: %s",
                       dir_path, strerror(e));
}
