/* Logging with a level threshold (QSF_LOG, read once, or set by a call) and a
 * swappable destination: stderr, the application's handler or a test's sink. */
#include "log.h"

#include "text.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[] = {"OFF", "ERROR", "WARN", "INFO", "DEBUG"};

/* One destination at a time, under sink_mu: calls are serialised, and a
 * replaced one has returned before the replacing call does. */
static pthread_mutex_t sink_mu = PTHREAD_MUTEX_INITIALIZER;
static qsf_log_sink sink_fn;
static qsf_log_handler handler_fn;
static void *sink_user;
static int threshold = -1;
/* This thread is inside the destination: a line it logs goes to stderr
 * instead of deadlocking on sink_mu. */
static _Thread_local bool in_sink;

static int env_threshold(bool *unknown) {
    const char *v = getenv("QSF_LOG");
    *unknown = false;
    if (!v || !*v)
        return QSF_LOG_WARN;
    for (int i = 0; i <= QSF_LOG_DEBUG; i++)
        if (strcasecmp(v, level_names[i]) == 0)
            return i;
    *unknown = true;
    return QSF_LOG_WARN;
}

int qsf_log_enabled(int level) {
    int t = __atomic_load_n(&threshold, __ATOMIC_RELAXED);
    if (t < 0) {
        bool unknown;
        t = env_threshold(&unknown);
        int none = -1;
        if (__atomic_compare_exchange_n(&threshold, &none, t, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED) &&
            unknown)
            qsf_log(QSF_LOG_WARN,
                    "QSF_LOG=%s is not one of off, error, warn, info, debug: using warn",
                    getenv("QSF_LOG"));
        t = __atomic_load_n(&threshold, __ATOMIC_RELAXED);
    }
    return level > QSF_LOG_OFF && level <= t;
}

/* From inside the destination (a handler replacing or removing itself) this
 * thread holds sink_mu already: it assigns without waiting for itself. */
static void set_destination(qsf_log_sink sink, qsf_log_handler handler, void *user, int level) {
    bool nested = in_sink;
    if (!nested)
        pthread_mutex_lock(&sink_mu);
    sink_fn = sink;
    handler_fn = handler;
    sink_user = user;
    if (level >= 0)
        __atomic_store_n(&threshold, level, __ATOMIC_RELAXED);
    if (!nested)
        pthread_mutex_unlock(&sink_mu);
}

void qsf_log_set(qsf_log_sink sink, void *user, int level) {
    set_destination(sink, NULL, user, level);
}

QSF_API int qsf_set_log_handler(int level, qsf_log_handler fn, void *user) {
    if (level < QSF_LOG_DEFAULT || level > QSF_LOG_DEBUG)
        return QSF_E_INVAL;
    set_destination(NULL, fn, user, level);
    return QSF_OK;
}

bool qsf_log_in_handler(void) {
    return in_sink;
}

static void write_line(int level, const char *line) {
    if (in_sink) {
        fprintf(stderr, "qsf %s %s\n", level_names[level], line);
        return;
    }
    pthread_mutex_lock(&sink_mu);
    in_sink = true;
    if (handler_fn)
        handler_fn(sink_user, level, line);
    else if (sink_fn)
        sink_fn(level, line, sink_user);
    else
        fprintf(stderr, "qsf %s %s\n", level_names[level], line);
    in_sink = false;
    pthread_mutex_unlock(&sink_mu);
}

void qsf_log(int level, const char *fmt, ...) {
    if (!qsf_log_enabled(level))
        return;
    char raw[1536], line[QSF_TEXT_ESCAPED_MAX(sizeof raw)];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* one line, whatever the arguments held (server text, file names) */
    qsf_text_escape(line, sizeof line, raw,
                    n < 0                     ? 0
                    : (size_t) n < sizeof raw ? (size_t) n
                                              : sizeof raw - 1);
    write_line(level, line);
}
