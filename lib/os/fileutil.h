/* File helpers shared by the slot code, all through the syscall table: whole
 * positioned reads/writes that retry short transfers, preallocated exclusive
 * creation (the ENOSPC contract of docs/FORMAT.md §2.5), and directory fsync. */
#ifndef QSF_FILEUTIL_H
#define QSF_FILEUTIL_H

#include "qsf.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads exactly n bytes at off. Returns 0, or -1 with errno set (EIO-like), or
 * 1 when end of file came first (*got holds the bytes read). */
int qsf_pread_full(int fd, void *buf, size_t n, off_t off, size_t *got);

/* Writes exactly n bytes at off, retrying short writes. 0 or -1 with errno. */
int qsf_pwrite_full(int fd, const void *buf, size_t n, off_t off);

/* Creates <dir>/<name> with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0600, and
 * reserves `size` bytes with posix_fallocate, then checks the size with fstat.
 * On any failure the partial file is removed and QSF_E_NOSPC / QSF_E_IO /
 * QSF_E_UNSUPPORTED is returned with "pre-allocation failed for <path>: <reason>".
 * `dir_path` is only used in messages. On success *fd_out is the open descriptor. */
int qsf_create_prealloc(int dirfd, const char *dir_path, const char *name, uint64_t size,
                        int *fd_out, qsf_errinfo *err);

/* fsync of a directory descriptor; QSF_E_IO with the path on failure. */
int qsf_fsync_dir(int dirfd, const char *dir_path, qsf_errinfo *err);

/* Maps errno to a qsf code: ENOSPC/EDQUOT -> QSF_E_NOSPC, ENOMEM -> QSF_E_NOMEM,
 * EOPNOTSUPP/EINVAL (from fallocate) -> QSF_E_UNSUPPORTED, else QSF_E_IO. */
int qsf_code_from_errno(int e);

#endif
