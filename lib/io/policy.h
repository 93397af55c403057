/* Error policies and the poison-frame detector (docs/PROTOCOL.md §9).
 *
 * status byte -> category -> policy is a fixed table (there is no drop policy).
 * The detector counts strikes against one suspect FSN and escalates only when
 * both `max_strikes` strikes accumulated and `window_ms` passed since the first
 * one (times from QSF_OS->mono_ns, so tests can move the clock). Single-threaded
 * (the I/O thread). */
#ifndef QSF_IO_POLICY_H
#define QSF_IO_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* QSF_CAT_* for a server status byte (0x00-0x02 and 0x0E are not errors). */
int qsf_status_category(int status);

/* QSF_POLICY_* for a category. */
int qsf_category_policy(int category);

typedef struct qsf_poison {
    int max_strikes;   /* max_frame_rejections (4) */
    int64_t window_ms; /* poison_min_escalation_window_millis (5000; 0 = none) */
    int64_t suspect;   /* FSN under suspicion, -1 if none */
    int strikes;
    int losses;       /* of them, lost connections (the rest: rejections) */
    bool accepted;    /* a rejection, or the server accepted frames during the run */
    int64_t first_ns; /* time of the first strike on `suspect` */
} qsf_poison;

void qsf_poison_init(qsf_poison *p, int max_strikes, int64_t window_ms);

/* Counts a strike on `fsn`: an explicit rejection of it. Returns true when
 * the frame must be declared poisoned (latch TERMINAL PROTOCOL_VIOLATION). */
bool qsf_poison_strike(qsf_poison *p, int64_t fsn);

/* Counts a lost connection whose last frame sent was `fsn`, `accepted`: the
 * server accepted frames on it. Losses escalate like rejections, but only
 * once the server accepted frames at some point of the run (docs/PROTOCOL.md
 * §9.3): a path that accepts nothing says nothing of a frame. */
bool qsf_poison_strike_loss(qsf_poison *p, int64_t fsn, bool accepted);

/* The run of evidence against the suspect is broken (a loss that is no
 * strike, docs/PROTOCOL.md §9.3): the next strike starts a new count. */
void qsf_poison_clear(qsf_poison *p);

/* An OK reached okFsn: clears the suspicion if it covers the suspect. */
void qsf_poison_ok(qsf_poison *p, int64_t ok_fsn);

#endif
