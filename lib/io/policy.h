/* Error policies and the poison-frame detector (sf-behaviour.md §8).
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

/* Short name of a category, e.g. "WRITE_ERROR". */
const char *qsf_category_name(int category);

typedef struct qsf_poison {
    int max_strikes;   /* max_frame_rejections (4) */
    int64_t window_ms; /* poison_min_escalation_window_millis (5000; 0 = none) */
    int64_t suspect;   /* FSN under suspicion, -1 if none */
    int strikes;
    int64_t first_ns; /* time of the first strike on `suspect` */
} qsf_poison;

void qsf_poison_init(qsf_poison *p, int max_strikes, int64_t window_ms);

/* Counts a strike on `fsn`. Returns true when the frame must be declared
 * poisoned (latch TERMINAL PROTOCOL_VIOLATION). */
bool qsf_poison_strike(qsf_poison *p, int64_t fsn);

/* An OK reached okFsn: clears the suspicion if it covers the suspect. */
void qsf_poison_ok(qsf_poison *p, int64_t ok_fsn);

/* Delay before the first reconnect after a RETRIABLE rejection with `strikes`
 * strikes: (initial << min(strikes - 1, 6)) capped at max, plus uniform jitter in
 * [0, that). */
int64_t qsf_pacing_ms(int strikes, int64_t initial_ms, int64_t max_ms, uint64_t *rng);

/* Strike-exempt recycles (orderly closes, RETRIABLE_OTHER): the first reconnects
 * at once, later ones without progress double like qsf_pacing_ms. */
typedef struct qsf_recycle_pacer {
    int zero_progress; /* recycles in a row without progress */
    int64_t last_progress;
} qsf_recycle_pacer;

int64_t qsf_recycle_delay_ms(qsf_recycle_pacer *rp, int64_t progress, int64_t initial_ms,
                             int64_t max_ms, uint64_t *rng);

#endif
