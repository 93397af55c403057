/* Internal error helpers: fill a caller-owned qsf_errinfo without allocating. */
#ifndef QSF_ERR_H
#define QSF_ERR_H

#include "qsf.h"

#include <stdarg.h>

/* Fills *err (if non-NULL) with code, flags, errno and a formatted message, and
 * returns `code` so callers can write `return qsf_err_set(err, ...)`. */
int qsf_err_set(qsf_errinfo *err, int code, unsigned flags, int sys_errno, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int qsf_err_vset(qsf_errinfo *err, int code, unsigned flags, int sys_errno, const char *fmt,
                 va_list ap);

/* Prefixes the existing message of *err with "<prefix>: " (truncating). */
void qsf_err_prefix(qsf_errinfo *err, const char *prefix);

/* Clears *err to QSF_OK with an empty message. */
void qsf_err_clear(qsf_errinfo *err);

/* Copies src into dst (either may be NULL). */
void qsf_err_copy(qsf_errinfo *dst, const qsf_errinfo *src);

#endif
