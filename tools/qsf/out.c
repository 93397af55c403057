/* Printing foreign text, times and sizes (out.h). */
#include "out.h"

#include "text.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void out_text(FILE *f, const char *s, size_t n) {
    char small[1024];
    size_t need = QSF_TEXT_ESCAPED_MAX(n);
    char *buf = need <= sizeof small ? small : malloc(need);
    if (!buf) { /* no memory for the escaped form: say so rather than print it raw */
        fputs("(text not shown: out of memory)", f);
        return;
    }
    size_t len = qsf_text_escape(buf, need, s, n);
    fwrite(buf, 1, len < need ? len : need - 1, f);
    if (buf != small)
        free(buf);
}

void out_str(FILE *f, const char *s) {
    out_text(f, s, strlen(s));
}

void out_time(char *buf, size_t cap, int64_t us) {
    time_t t = (time_t) (us / 1000000);
    struct tm tm;
    char day[32];
    gmtime_r(&t, &tm);
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%06" PRId64 "Z", day, us % 1000000);
}

void out_age(char *buf, size_t cap, int64_t us) {
    int64_t s = us / 1000000;
    if (s < 60)
        snprintf(buf, cap, "%" PRId64 "s", s);
    else if (s < 3600)
        snprintf(buf, cap, "%" PRId64 "m %" PRId64 "s", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, cap, "%" PRId64 "h %" PRId64 "m", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, cap, "%" PRId64 "d %" PRId64 "h", s / 86400, s % 86400 / 3600);
}

void out_bytes(char *buf, size_t cap, uint64_t n) {
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB"};
    double v = (double) n;
    int u = 0;
    while (v >= 1000 && u < 4) {
        v /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%" PRIu64 " B", n);
    else
        snprintf(buf, cap, "%.1f %s", v, unit[u]);
}
