/* Per-connection wireSeq -> FSN mapping (docs/PROTOCOL.md §8.3).
 *
 * Every binary frame sent on a connection takes the next wireSeq (0-based) and is
 * either a control frame (dictionary catch-up: no FSN) or a ring frame. The map is
 * a FIFO of runs; a run is a stretch of consecutive wireSeqs that carry either
 * consecutive FSNs or only control frames:
 *
 *   run { first_wire, first_fsn (-1 for control), n }
 *
 *   wire:  0  1  2 | 3  4  5  6 | 7  8
 *   fsn:   -  -  - | 40 41 42 43| 50 51     (44..49: a skipped aborted tail)
 *
 * A cumulative OK for wireSeq S pops every run it covers and yields the highest
 * FSN at or below S. Runs are popped as they are acknowledged, so the FIFO holds
 * only the unacknowledged in-flight window. */
#ifndef QSF_IO_WIREMAP_H
#define QSF_IO_WIREMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct qsf_wire_run {
    int64_t first_wire;
    int64_t first_fsn; /* -1: control frames */
    int64_t n;
} qsf_wire_run;

typedef struct qsf_wiremap {
    qsf_wire_run *runs;
    size_t head, count, cap;
    int64_t next_wire; /* frames sent on this connection */
} qsf_wiremap;

void qsf_wiremap_init(qsf_wiremap *m);
void qsf_wiremap_free(qsf_wiremap *m);

/* New connection: wireSeq restarts at 0, every run is forgotten. */
void qsf_wiremap_reset(qsf_wiremap *m);

/* Records the next frame sent (fsn -1 for a control frame); returns its wireSeq,
 * or -1 on OOM (nothing recorded). */
int64_t qsf_wiremap_push(qsf_wiremap *m, int64_t fsn);

/* The last frame sent also stands for fsn (above its own FSN), a frame given
 * up unsent: the OK that covers that wireSeq acknowledges fsn too. Returns
 * -1 when no ring frame is in flight (nothing sent on the connection, or only
 * control frames, or all acknowledged): nothing changed. */
int qsf_wiremap_cover(qsf_wiremap *m, int64_t fsn);

/* FSN of `wire` if still mapped: >= 0; -1 for a control frame; -2 if unknown. */
int64_t qsf_wiremap_lookup(const qsf_wiremap *m, int64_t wire);

/* A cumulative OK covers every wireSeq <= wire: pops what it covers and returns
 * the highest FSN covered, or -1 if it covered no ring frame. */
int64_t qsf_wiremap_ack(qsf_wiremap *m, int64_t wire);

#endif
