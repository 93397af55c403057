/* Logging. Every error qsf reports is also logged once. Lines go to stderr by
 * default as "qsf <LEVEL> <message>"; QSF_LOG=off|error|warn|info|debug sets the
 * threshold (default warn). Tests may install a sink to capture lines. */
#ifndef QSF_LOG_H
#define QSF_LOG_H

enum { QSF_LOG_OFF = 0, QSF_LOG_ERROR = 1, QSF_LOG_WARN = 2, QSF_LOG_INFO = 3, QSF_LOG_DEBUG = 4 };

typedef void (*qsf_log_sink)(int level, const char *line, void *user);

void qsf_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True if a line at `level` would be written (skip costly formatting otherwise). */
int qsf_log_enabled(int level);

/* Replaces the sink (NULL restores stderr) and threshold (-1 keeps it). */
void qsf_log_set(qsf_log_sink sink, void *user, int level);

#define QSF_LOGE(...) qsf_log(QSF_LOG_ERROR, __VA_ARGS__)
#define QSF_LOGW(...) qsf_log(QSF_LOG_WARN, __VA_ARGS__)
#define QSF_LOGI(...) qsf_log(QSF_LOG_INFO, __VA_ARGS__)
#define QSF_LOGD(...) qsf_log(QSF_LOG_DEBUG, __VA_ARGS__)

#endif
