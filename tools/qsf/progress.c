/* Progress of a drain (progress.h). The rate is the bytes acknowledged since
 * the start over the time since the start; the ETA the bytes left at that
 * rate (unknown until something was acknowledged). */
#include "progress.h"

#include "out.h"

#include <inttypes.h>
#include <string.h>

#define BAR 24

void progress_begin(progress *p, FILE *out, bool tty, int64_t now_us, uint64_t frames_total,
                    uint64_t bytes_total, int64_t line_every_us) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = tty;
    p->line_every_us = line_every_us;
    p->start_us = p->last_us = now_us;
    p->frames_total = frames_total;
    p->bytes_total = bytes_total;
}

void progress_text(const progress *p, int64_t now_us, uint64_t frames, uint64_t bytes, char *buf,
                   size_t cap) {
    char done[32], total[32], rate[32], eta[32] = "?";
    double secs = (double) (now_us - p->start_us) / 1e6;
    double bps = secs > 0 ? (double) bytes / secs : 0;
    out_bytes(done, sizeof done, bytes);
    out_bytes(total, sizeof total, p->bytes_total);
    out_bytes(rate, sizeof rate, (uint64_t) bps);
    if (bps > 0 && p->bytes_total >= bytes)
        out_age(eta, sizeof eta, (int64_t) ((double) (p->bytes_total - bytes) / bps * 1e6));
    unsigned pct = p->frames_total ? (unsigned) (frames * 100 / p->frames_total) : 100;
    snprintf(buf, cap, "%" PRIu64 "/%" PRIu64 " frames (%u%%), %s of %s, %s/s, ETA %s", frames,
             p->frames_total, pct, done, total, rate, eta);
}

static void bar(const progress *p, uint64_t frames, char out[BAR + 1]) {
    unsigned n = p->frames_total ? (unsigned) (frames * BAR / p->frames_total) : BAR;
    for (unsigned i = 0; i < BAR; i++)
        out[i] = i < n ? '#' : '.';
    out[BAR] = '\0';
}

void progress_update(progress *p, int64_t now_us, uint64_t frames, uint64_t bytes,
                     const char *state) {
    char line[200];
    if (!p->tty && now_us - p->last_us < p->line_every_us)
        return;
    p->last_us = now_us;
    progress_text(p, now_us, frames, bytes, line, sizeof line);
    if (!p->tty) {
        fprintf(p->out, "drain: %s, %s\n", state, line);
        fflush(p->out);
        return;
    }
    char b[BAR + 1];
    bar(p, frames, b);
    fprintf(p->out, "\r\033[K[%s] %s  %s", b, line, state);
    fflush(p->out);
    p->drawn = true;
}

void progress_end(progress *p) {
    if (p->drawn)
        fputc('\n', p->out);
    p->drawn = false;
}
