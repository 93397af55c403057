/* Failover ranking and reconnect backoff (sf-behaviour.md §7.2-§7.4). */
#include "io/hosts.h"

#include <string.h>

/* xorshift64*: good enough for jitter, deterministic under a test seed. */
static uint64_t next_rand(uint64_t *s) {
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

int64_t qsf_jitter_ms(uint64_t *rng, int64_t b) {
    if (b <= 0)
        return 0;
    return b + (int64_t) (next_rand(rng) % (uint64_t) b);
}

void qsf_hosts_init(qsf_hosts *h, int n, int64_t initial_ms, int64_t max_ms, uint64_t seed) {
    memset(h, 0, sizeof *h);
    h->n = n > QSF_HOSTS_MAX ? QSF_HOSTS_MAX : n;
    for (int i = 0; i < h->n; i++)
        h->state[i] = QSF_HOST_UNKNOWN;
    h->sticky = -1;
    h->initial_ms = initial_ms;
    h->max_ms = max_ms < initial_ms ? initial_ms : max_ms;
    h->backoff_ms = initial_ms;
    h->rng = seed;
    h->pos = h->n; /* no round yet */
    h->attempts = -1;
}

/* Rank: sticky first, then by state, ties in addr order (stable insertion sort). */
static void rank(qsf_hosts *h) {
    int k = 0, first = -1;
    if (h->sticky >= 0 && h->state[h->sticky] == QSF_HOST_HEALTHY)
        h->order[k++] = first = h->sticky;
    for (int st = QSF_HOST_HEALTHY; st <= QSF_HOST_TOPOLOGY_REJECT; st++)
        for (int i = 0; i < h->n; i++)
            if (i != first && h->state[i] == st)
                h->order[k++] = i;
}

void qsf_hosts_new_round(qsf_hosts *h) {
    rank(h);
    h->pos = 0;
    h->role_rejects = 0;
    h->attempts = 0;
}

int qsf_hosts_next(qsf_hosts *h) {
    if (h->attempts < 0)
        qsf_hosts_new_round(h);
    if (h->pos >= h->n)
        return -1;
    h->attempts++;
    return h->order[h->pos++];
}

void qsf_hosts_report(qsf_hosts *h, int i, int outcome) {
    if (i < 0 || i >= h->n)
        return;
    switch (outcome) {
    case QSF_ATTEMPT_OK:
        h->state[i] = QSF_HOST_HEALTHY;
        h->sticky = i;
        h->backoff_ms = h->initial_ms;
        h->attempts = -1; /* the next call starts a fresh round */
        break;
    case QSF_ATTEMPT_TRANSPORT:
        h->state[i] = QSF_HOST_TRANSPORT_ERROR;
        break;
    case QSF_ATTEMPT_ROLE_CATCHUP:
        h->state[i] = QSF_HOST_TRANSIENT_REJECT;
        h->role_rejects++;
        break;
    case QSF_ATTEMPT_ROLE_OTHER:
        h->state[i] = QSF_HOST_TOPOLOGY_REJECT;
        h->role_rejects++;
        break;
    case QSF_ATTEMPT_AUTH:
        h->pos = h->n; /* authentication is cluster-wide: the round ends */
        break;
    }
}

void qsf_hosts_demote(qsf_hosts *h, int i) {
    if (i >= 0 && i < h->n)
        h->state[i] = QSF_HOST_TRANSPORT_ERROR;
    h->attempts = -1;
}

int64_t qsf_hosts_round_sleep_ms(qsf_hosts *h) {
    if (h->attempts > 0 && h->role_rejects == h->attempts)
        return h->initial_ms; /* every host role-rejected: fixed, no doubling */
    int64_t s = qsf_jitter_ms(&h->rng, h->backoff_ms);
    h->backoff_ms = h->backoff_ms * 2 > h->max_ms ? h->max_ms : h->backoff_ms * 2;
    return s;
}
