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
    int64_t first_ns; /* time of the first strike on `suspect` */
} qsf_poison;

void qsf_poison_init(qsf_poison *p, int max_strikes, int64_t window_ms);

/* Counts a strike on `fsn`. Returns true when the frame must be declared
 * poisoned (latch TERMINAL PROTOCOL_VIOLATION). */
bool qsf_poison_strike(qsf_poison *p, int64_t fsn);

/* An OK reached okFsn: clears the suspicion if it covers the suspect. */
void qsf_poison_ok(qsf_poison *p, int64_t ok_fsn);

#endif
