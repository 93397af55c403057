/* Logging with a level threshold read once from QSF_LOG and a swappable sink. */
#include "log.h"

#include "text.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[] = {"OFF", "ERROR", "WARN", "INFO", "DEBUG"};

static pthread_mutex_t sink_mu = PTHREAD_MUTEX_INITIALIZER;
static qsf_log_sink sink_fn;
static void *sink_user;
static int threshold = -1;

static int env_threshold(void) {
    const char *v = getenv("QSF_LOG");
    if (!v)
        return QSF_LOG_WARN;
    for (int i = 0; i <= QSF_LOG_DEBUG; i++)
        if (strcasecmp(v, level_names[i]) == 0)
            return i;
    return QSF_LOG_WARN;
}

int qsf_log_enabled(int level) {
    int t = __atomic_load_n(&threshold, __ATOMIC_RELAXED);
    if (t < 0) {
        t = env_threshold();
        __atomic_store_n(&threshold, t, __ATOMIC_RELAXED);
    }
    return level > QSF_LOG_OFF && level <= t;
}

void qsf_log_set(qsf_log_sink sink, void *user, int level) {
    pthread_mutex_lock(&sink_mu);
    sink_fn = sink;
    sink_user = user;
    if (level >= 0)
        __atomic_store_n(&threshold, level, __ATOMIC_RELAXED);
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
    pthread_mutex_lock(&sink_mu);
    if (sink_fn)
        sink_fn(level, line, sink_user);
    else
        fprintf(stderr, "qsf %s %s\n", level_names[level], line);
    pthread_mutex_unlock(&sink_mu);
}
