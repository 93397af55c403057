/* A kill inside a flush, aimed by what the ring shows: a watcher thread that
 * SIGKILLs its own process as soon as the sender's published FSN reaches a
 * target, i.e. once the first frames of a multi-frame flush are in the ring and
 * before the rest is. An outside timer cannot aim at that window (a flush lasts
 * about a millisecond); SIGKILL from inside is the same death. */
#ifndef QSF_CAMPAIGN_SELFKILL_H
#define QSF_CAMPAIGN_SELFKILL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "qsf.h"

typedef struct selfkill {
    const qsf_sender *s;
    int64_t target; /* kill once qsf_published_fsn(s) >= target */
    atomic_int done;
    pthread_t thr;
} selfkill;

/* Starts watching: the process dies when target is reached before
 * selfkill_disarm. 0, or -1 if the thread cannot start. */
int selfkill_arm(selfkill *k, const qsf_sender *s, int64_t target);

/* Stops the watcher (the flush returned first). */
void selfkill_disarm(selfkill *k);

#endif
