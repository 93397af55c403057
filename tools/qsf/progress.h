/* Progress of a drain: a bar redrawn in place on a terminal (frames, bytes,
 * rate, ETA), plain lines every few seconds otherwise (logs, pipes). */
#ifndef QSF_TOOL_PROGRESS_H
#define QSF_TOOL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct progress {
    FILE *out;
    bool tty;
    int64_t line_every_us; /* plain lines: at most one per this */
    int64_t start_us, last_us;
    uint64_t frames_total, bytes_total;
    bool drawn; /* a bar is on the line */
} progress;

/* tty: draw a bar (else plain lines every line_every_us). */
void progress_begin(progress *p, FILE *out, bool tty, int64_t now_us, uint64_t frames_total,
                    uint64_t bytes_total, int64_t line_every_us);

/* frames and bytes acknowledged so far; state: "connecting", "sending", ...
 * Redraws (tty) or prints a line when one is due. */
void progress_update(progress *p, int64_t now_us, uint64_t frames, uint64_t bytes,
                     const char *state);

/* Ends the bar's line (tty) so that other output starts on a line of its own. */
void progress_end(progress *p);

/* One line of the state: "4500/10000 frames (45%), 4.5 MB of 10.0 MB, 1.2 MB/s,
 * ETA 5s" into buf. */
void progress_text(const progress *p, int64_t now_us, uint64_t frames, uint64_t bytes, char *buf,
                   size_t cap);

#endif
