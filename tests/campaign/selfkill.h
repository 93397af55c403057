/* A kill inside a flush: a watcher thread that SIGKILLs its own process a set
 * time after qsf_flush began. The ring shows nothing of a flush before it
 * commits (a flush is published all or nothing), so the kill is aimed by
 * time: a fraction of how long the producer's previous big flush took, which
 * lands while that flush's frames are being written into the ring. An outside
 * timer cannot aim at that window (a flush lasts about a millisecond);
 * SIGKILL from inside is the same death. */
#ifndef QSF_CAMPAIGN_SELFKILL_H
#define QSF_CAMPAIGN_SELFKILL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct selfkill {
    int64_t at_ns; /* CLOCK_MONOTONIC time to die at */
    atomic_int done;
    pthread_t thr;
} selfkill;

/* Starts watching: the process dies `after_ns` from now unless selfkill_disarm
 * comes first. 0, or -1 if the thread cannot start. */
int selfkill_arm(selfkill *k, int64_t after_ns);

/* Stops the watcher (the flush returned first). */
void selfkill_disarm(selfkill *k);

#endif
