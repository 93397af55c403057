/* Failover ranking over the `addr` list (docs/PROTOCOL.md §10.2-§10.4).
 *
 * Each address has a state; a round tries every address once, best state first
 * (HEALTHY < UNKNOWN < TRANSIENT_REJECT < TRANSPORT_ERROR < TOPOLOGY_REJECT), ties
 * in `addr` order, the last host that worked first of all (sticky healthy). When a
 * round is exhausted the caller sleeps (backoff.h; a round in which every host
 * was role-rejected sleeps one fixed `reconnect_initial_backoff_millis` instead,
 * for the first three such rounds in a row: qsf_hosts_all_role_rejected) and a new round starts
 * with a fresh ranking. Single-threaded (the I/O thread). */
#ifndef QSF_IO_HOSTS_H
#define QSF_IO_HOSTS_H

#include <stdbool.h>
#include <stdint.h>

enum qsf_host_state {
    QSF_HOST_HEALTHY = 0,
    QSF_HOST_UNKNOWN = 1,
    QSF_HOST_TRANSIENT_REJECT = 2,
    QSF_HOST_TRANSPORT_ERROR = 3,
    QSF_HOST_TOPOLOGY_REJECT = 4,
};

/* Outcome of one connection attempt. */
enum qsf_host_outcome {
    QSF_ATTEMPT_OK = 0,
    QSF_ATTEMPT_TRANSPORT = 1,    /* TCP/TLS/timeout/non-101/invalid 101/no durable */
    QSF_ATTEMPT_ROLE_CATCHUP = 2, /* 421 + PRIMARY_CATCHUP */
    QSF_ATTEMPT_ROLE_OTHER = 3,   /* 421 + any other role */
    QSF_ATTEMPT_AUTH = 4,         /* 401 / 403: ends the round, state unchanged */
};

#define QSF_HOSTS_MAX 64

typedef struct qsf_hosts {
    int n;
    uint8_t state[QSF_HOSTS_MAX];
    int order[QSF_HOSTS_MAX]; /* ranking of the current round */
    int pos;                  /* next index into order; n = round exhausted */
    int sticky;               /* last host that worked, -1 if none */
    int role_rejects;         /* role rejects in the current round */
    int attempts;             /* attempts in the current round */
} qsf_hosts;

void qsf_hosts_init(qsf_hosts *h, int n);

/* Next host of the current round (starting a round if none is active), or -1
 * when the round is exhausted (sleep, then call qsf_hosts_new_round). */
int qsf_hosts_next(qsf_hosts *h);

/* Records the outcome of an attempt on host i. */
void qsf_hosts_report(qsf_hosts *h, int i, int outcome);

/* Demotes a host that broke after its upgrade (mid-stream) to TRANSPORT_ERROR. */
void qsf_hosts_demote(qsf_hosts *h, int i);

/* Whether every attempt of the round that just ended was role-rejected (421). */
bool qsf_hosts_all_role_rejected(const qsf_hosts *h);

/* Starts a fresh round (ranking recomputed). */
void qsf_hosts_new_round(qsf_hosts *h);

#endif
