/* Logging. Lines go to stderr by default as "qsf <LEVEL> <message>", or to
 * the handler of qsf_set_log_handler (include/qsf.h: levels, QSF_LOG, which
 * thread calls it). QSF_LOG=off|error|warn|info|debug sets the threshold
 * (default warn) until a call sets one. Every error qsf reports is logged
 * once; every state change of a sender is one line (docs/ERRORS.md, "Log
 * lines"). Tests may install a sink to capture lines. */
#ifndef QSF_LOG_H
#define QSF_LOG_H

#include "qsf.h"

#include <stdbool.h>

typedef void (*qsf_log_sink)(int level, const char *line, void *user);

void qsf_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True if a line at `level` would be written (skip costly formatting otherwise). */
int qsf_log_enabled(int level);

/* Replaces the sink (NULL restores stderr) and threshold (-1 keeps it); the
 * sink replaces a handler of qsf_set_log_handler, and the other way round. */
void qsf_log_set(qsf_log_sink sink, void *user, int level);

/* True while this thread is inside the log destination (a log handler or a
 * test's sink): it holds the destination lock, and may be one of qsf's own
 * threads in the middle of its work (qsf_close refuses to run there). */
bool qsf_log_in_handler(void);

#define QSF_LOGE(...) qsf_log(QSF_LOG_ERROR, __VA_ARGS__)
#define QSF_LOGW(...) qsf_log(QSF_LOG_WARN, __VA_ARGS__)
#define QSF_LOGI(...) qsf_log(QSF_LOG_INFO, __VA_ARGS__)
#define QSF_LOGD(...) qsf_log(QSF_LOG_DEBUG, __VA_ARGS__)

#endif
