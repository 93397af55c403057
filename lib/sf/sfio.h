/* Slot-relative file helpers shared by sidefile.c, symdict.c, slot.c, the
 * recovery code and the operator tooling (lib/sfops). Every call goes through
 * the syscall table, opens with O_NOFOLLOW | O_CLOEXEC and formats errors as
 * "<what> <dir>/<name>: <reason>". */
#ifndef QSF_SFIO_H
#define QSF_SFIO_H

#include "qsf.h"

#include <stdint.h>
#include <sys/types.h>

/* Opens <dir>/<name> with flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK (mode
 * 0600; O_NONBLOCK so a FIFO cannot block the open) and checks that it is a
 * regular file with exactly one name: a hard link could be a file outside the
 * slot, which qsf must never write. O_TRUNC is applied only after those
 * checks. Returns the fd, or -1 with errno (ELOOP for a symlink, EINVAL for a
 * non-regular file, EMLINK for a file with more than one hard link, ENXIO for
 * a write-only FIFO without a reader); *size gets the file size if non-NULL.
 * qsf_file_err right after an EMLINK names the link count. */
int qsf_open_regular(int dirfd, const char *name, int flags, uint64_t *size);

/* Fills err with an errno-derived code and "<what> <dir>/<name>: <strerror>". */
int qsf_file_err(qsf_errinfo *err, int sys_errno, const char *what, const char *dir,
                 const char *name);

/* Reads exactly n bytes at off of <dir>/<name>; a short read (file shrank) is an
 * I/O error too. QSF_OK or QSF_E_IO naming the file and offset. */
int qsf_read_at(int fd, void *buf, size_t n, uint64_t off, const char *dir, const char *name,
                qsf_errinfo *err);

/* Writes exactly n bytes at off. QSF_OK, QSF_E_NOSPC or QSF_E_IO naming the file. */
int qsf_write_at(int fd, const void *buf, size_t n, uint64_t off, const char *dir, const char *name,
                 qsf_errinfo *err);

/* A buffered sequential writer of one file (never a mapping): puts collect
 * in buf and reach the file in cap-byte writes (qsf_write_at) at off, then
 * off + cap, ...; qsf_bufw_flush writes what is left. The caller owns fd and
 * buf. Used where a file is written as one stream: recovery's rewrite of a
 * segment, the .rejected image. */
typedef struct qsf_bufw {
    int fd;
    const char *dir, *name; /* for the error messages */
    uint8_t *buf;
    size_t cap, used;
    uint64_t off; /* file offset of buf[0] */
} qsf_bufw;

/* n bytes after the previous ones. QSF_OK, or qsf_write_at's error. */
int qsf_bufw_put(qsf_bufw *w, const void *p, size_t n, qsf_errinfo *err);

/* Writes the bytes still in buf. */
int qsf_bufw_flush(qsf_bufw *w, qsf_errinfo *err);

/* Unlinks <dir>/<name>; a missing file is success. */
int qsf_unlink_quiet(int dirfd, const char *dir, const char *name, qsf_errinfo *err);

/* Returns -1 (fault armed to fail) or 0; maps a failing fault point to QSF_E_IO. */
int qsf_fault_check(int point, qsf_errinfo *err);

#endif
