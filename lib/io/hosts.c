/* Failover ranking (docs/PROTOCOL.md §10.2-§10.4). */
#include "io/hosts.h"

#include <string.h>

void qsf_hosts_init(qsf_hosts *h, int n) {
    memset(h, 0, sizeof *h);
    h->n = n > QSF_HOSTS_MAX ? QSF_HOSTS_MAX : n;
    for (int i = 0; i < h->n; i++)
        h->state[i] = QSF_HOST_UNKNOWN;
    h->sticky = -1;
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

bool qsf_hosts_all_role_rejected(const qsf_hosts *h) {
    return h->attempts > 0 && h->role_rejects == h->attempts;
}
