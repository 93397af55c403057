/* Orphan adoption: the scan and the drainer pool (see drain.h). */
#include "sender/drain.h"
#include "qsf_assert.h"
#include "sender/losses.h"

#include "err.h"
#include "inbox.h"
#include "io/io.h"
#include "log.h"
#include "os/dirlist.h"
#include "os/os.h"
#include "sender/opts.h"
#include "sender/replay.h"
#include "sf/sfa.h"
#include "sf/slot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_NS ((int64_t) 50 * 1000000) /* progress check of a draining slot */

enum outcome { SKIPPED, SUCCEEDED, FAILED, LEFT };

struct qsf_drainers {
    const qsf_conf *conf;
    qsf_inbox *inbox; /* the owner's: losses found in adopted slots */
    qsf_latch *latch;
    pthread_mutex_t mu;
    char **names; /* candidates, taken in order under mu */
    int n, next;
    pthread_t *threads;
    int nthreads;
    _Atomic bool stop;
    _Atomic int64_t deadline_ns; /* set before stop: when working drainers give up */
    _Atomic int active;
    _Atomic int failed_slots; /* .failed seen by the scan, and written since */
    _Atomic uint64_t succeeded, failed;
    _Atomic uint64_t interrupted, frames_left, bytes_left; /* what the owner's close left */
};

/* ---- the scan ---- */

/* A directory (not a symlink) of sf_dir holding a *.sfa file and no .failed;
 * an unreadable listing is no orphan. A .failed is counted (qsf_stats). */
static bool holds_orphan(qsf_drainers *d, int sf_dirfd, const char *name) {
    bool failed, segments;
    if (qsf_orphan_markers_at(sf_dirfd, name, &failed, &segments) != 0)
        return false;
    if (failed)
        atomic_fetch_add(&d->failed_slots, 1);
    return segments && !failed;
}

/* Names of slots set aside (<slot>.unreplayable-<N>) are no slot names, but
 * their .failed counts too. */
static bool is_candidate(qsf_drainers *d, int sf_dirfd, const char *name, const char *own) {
    if (name[0] == '.' || strcmp(name, own) == 0)
        return false;
    bool orphan = holds_orphan(d, sf_dirfd, name);
    return orphan && qsf_sender_id_check(name, NULL) == QSF_OK;
}

static bool keep_candidate(int sf_dirfd, const struct dirent *e, void *arg) {
    qsf_drainers *d = arg;
    return is_candidate(d, sf_dirfd, e->d_name, d->conf->sender_id);
}

/* Lists the candidates into d->names (sorted, so the order does not depend on
 * the filesystem). A listing error is a warning and means none. */
static void scan(qsf_drainers *d) {
    const char *dir = d->conf->sf_dir;
    int fd = QSF_OS->open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    DIR *dh = fd >= 0 ? QSF_OS->fdopendir(fd) : NULL;
    if (!dh) {
        QSF_LOGW("drain_orphans: cannot list %s (no orphans adopted): %s", dir, strerror(errno));
        if (fd >= 0)
            QSF_OS->close(fd);
        return;
    }
    uint32_t n = 0;
    /* A read error of the listing ends it: the slots listed before it are
     * adopted. */
    if (qsf_dir_list_sorted(dh, keep_candidate, d, &d->names, &n) != 0 && errno == ENOMEM)
        QSF_LOGW("drain_orphans: out of memory listing %s; adopting %u slots", dir, n);
    d->n = (int) n;
    QSF_OS->closedir(dh);
}

/* ---- one drainer ---- */

/* Whether to stop working on the slot: the owner is closing and the time its
 * close gives the drainers is over (connected or not: a drainer still
 * connecting may yet drain the slot within it). */
static bool past_deadline(qsf_drainers *d) {
    return atomic_load(&d->stop) && QSF_OS->mono_ns() >= atomic_load(&d->deadline_ns);
}

static bool stop_hook(void *user, qsf_io *io) {
    (void) io;
    return past_deadline(user);
}

/* Replays the opened slot until `target` is acknowledged, the connection
 * fails for good (the reason in *err, FAILED) or the owner's close ends it
 * (sender/replay.h: its error records are logged, never put in the owner's
 * inbox, where they would carry FSNs of another slot, and a terminal one would
 * pass for the owner's). */
static int replay(qsf_drainers *d, qsf_ring *ring, const qsf_recovery_report *rep, int64_t target,
                  qsf_errinfo *err) {
    qsf_replay_hooks h = {.stop = stop_hook, .user = d, .poll_ms = POLL_NS / 1000000};
    switch (qsf_replay(d->conf, ring, rep, target, &h, err)) {
    case QSF_REPLAY_DONE:
        return SUCCEEDED;
    case QSF_REPLAY_FAILED:
        return FAILED;
    case QSF_REPLAY_STOPPED:
        return LEFT;
    default: /* not the slot's fault */
        QSF_LOGW("drain_orphans: cannot start a connection: %s", err->msg);
        return SKIPPED;
    }
}

/* Gives up on the slot for good: .failed with the reason, while the ring
 * still holds the slot lock. SKIPPED instead when the marker cannot be
 * written (the next scan tries again). */
static int abandon_slot(const char *name, qsf_ring *ring, const char *reason) {
    qsf_errinfo fe;
    if (qsf_ring_mark_failed(ring, reason, &fe) != QSF_OK) {
        QSF_LOGE("drain_orphans: slot %s: %s; cannot mark it failed: %s", name, reason, fe.msg);
        return SKIPPED;
    }
    QSF_LOGE("drain_orphans: gave up on slot %s: %s", name, reason);
    return FAILED; /* counted in failed_slots by the caller */
}

/* The adopting open: the slot lock, then .failed and the segments checked
 * again under it, then recovery (see recover.h). */
static int open_orphan(qsf_drainers *d, const char *name, qsf_ring **ring,
                       qsf_recovery_report *rep) {
    qsf_ring_opts ro = qsf_ring_opts_from_conf(d->conf, name);
    ro.adopt = true;
    qsf_errinfo e;
    int rc = qsf_ring_open(&ro, ring, rep, &e);
    if (rc == QSF_OK)
        return QSF_OK;
    if (rc == QSF_E_LOCKED || rc == QSF_E_INVAL) /* in use, gone, or given up on */
        QSF_LOGI("drain_orphans: slot %s left alone: %s", name, e.msg);
    else if (rc == QSF_E_CORRUPT) /* .failed was written */
        QSF_LOGE("drain_orphans: gave up on slot %s: %s", name, e.msg);
    else
        QSF_LOGW("drain_orphans: cannot open slot %s (tried again at the next start): %s", name,
                 e.msg);
    return rc;
}

/* The owner's close stopped the drainer: what stays on disk is counted. */
static void note_left(qsf_drainers *d, const char *name, qsf_ring *ring) {
    int64_t acked = qsf_ring_acked_fsn(ring), pub = qsf_ring_published_fsn(ring);
    uint64_t frames = pub > acked ? (uint64_t) (pub - acked) : 0;
    uint64_t bytes = qsf_ring_pending_bytes(ring);
    atomic_fetch_add(&d->interrupted, 1);
    atomic_fetch_add(&d->frames_left, frames);
    atomic_fetch_add(&d->bytes_left, bytes);
    QSF_LOGW("drain_orphans: slot %s not fully drained when the owner closed: %" PRIu64
             " frames (%" PRIu64 " bytes, FSN %" PRId64 "..%" PRId64 ") stay on disk",
             name, frames, bytes, acked + 1, pub);
}

/* Drains the opened slot, unless the owner's close is already over (a long
 * recovery may have taken that long). */
static int drain_opened(qsf_drainers *d, qsf_ring *ring, const qsf_recovery_report *rep,
                        qsf_errinfo *e) {
    int64_t target = qsf_ring_published_fsn(ring);
    if (qsf_ring_acked_fsn(ring) >= target)
        return SUCCEEDED;
    return past_deadline(d) ? LEFT : replay(d, ring, rep, target, e);
}

static int drain_one(qsf_drainers *d, const char *name) {
    qsf_ring *ring;
    qsf_recovery_report rep;
    int rc = open_orphan(d, name, &ring, &rep);
    if (rc != QSF_OK)
        return rc == QSF_E_CORRUPT ? FAILED : SKIPPED;
    qsf_report_losses(ring, d->inbox, d->latch); /* before the slot can be removed */
    QSF_LOGI("drain_orphans: draining slot %s (FSNs %" PRId64 "..%" PRId64 ")", name,
             qsf_ring_acked_fsn(ring) + 1, qsf_ring_published_fsn(ring));
    qsf_errinfo e;
    int out = drain_opened(d, ring, &rep, &e);
    if (out == FAILED)
        out = abandon_slot(name, ring, e.msg);
    else if (out == LEFT)
        note_left(d, name, ring);
    if (qsf_ring_close(ring, &e) != QSF_OK) {
        QSF_LOGW("drain_orphans: closing slot %s: %s", name, e.msg);
        if (out == SUCCEEDED) /* its files could not all be removed */
            out = SKIPPED;
    }
    if (out == SUCCEEDED)
        QSF_LOGI("drain_orphans: slot %s drained", name);
    return out;
}

/* Under mu: the next slot for a drainer, NULL when none. Once the owner is
 * closing no drainer takes another slot, but each still takes its first one
 * while the close's time lasts: the pool was started with the sender, and a
 * close that comes before a thread got to run must not leave its slot. */
static const char *take_locked(qsf_drainers *d, bool first) {
    qsf_assert_held(&d->mu);
    if (d->next >= d->n)
        return NULL;
    if (atomic_load(&d->stop) && (!first || past_deadline(d)))
        return NULL;
    atomic_fetch_add(&d->active, 1);
    return d->names[d->next++];
}

static void *drainer_main(void *arg) {
    qsf_drainers *d = arg;
    for (bool first = true;; first = false) {
        pthread_mutex_lock(&d->mu);
        const char *name = take_locked(d, first);
        pthread_mutex_unlock(&d->mu);
        if (!name)
            return NULL;
        int out = drain_one(d, name);
        if (out == SUCCEEDED)
            atomic_fetch_add(&d->succeeded, 1);
        else if (out == FAILED) {
            atomic_fetch_add(&d->failed, 1);
            atomic_fetch_add(&d->failed_slots, 1);
        }
        atomic_fetch_sub(&d->active, 1);
    }
}

/* ---- the pool ---- */

static void pool_free(qsf_drainers *d) {
    qsf_dir_names_free(d->names, (uint32_t) d->n);
    free(d->threads);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

void qsf_drainers_start(const qsf_conf *conf, qsf_inbox *inbox, qsf_latch *latch,
                        qsf_drainers **out) {
    *out = NULL;
    qsf_drainers *d = calloc(1, sizeof *d);
    if (!d) {
        QSF_LOGW("drain_orphans: out of memory; no orphans adopted");
        return;
    }
    d->conf = conf;
    d->inbox = inbox;
    d->latch = latch;
    pthread_mutex_init(&d->mu, NULL);
    scan(d);
    int want =
        d->n < (int) conf->max_background_drainers ? d->n : (int) conf->max_background_drainers;
    d->threads = want > 0 ? calloc((size_t) want, sizeof *d->threads) : NULL;
    for (int i = 0; i < want && d->threads; i++) {
        if (pthread_create(&d->threads[i], NULL, drainer_main, d) != 0)
            break;
        d->nthreads++;
    }
    if (d->nthreads == 0) {
        if (d->n > 0)
            QSF_LOGW("drain_orphans: cannot start a drainer thread; %d orphan slots left", d->n);
        pool_free(d);
        return;
    }
    QSF_LOGI("drain_orphans: %d orphan slots under %s, %d drainers", d->n, conf->sf_dir,
             d->nthreads);
    *out = d;
}

void qsf_drainers_signal_stop(qsf_drainers *d, int64_t deadline_ns) {
    if (!d || atomic_load(&d->stop))
        return;
    atomic_store(&d->deadline_ns, deadline_ns);
    atomic_store(&d->stop, true);
}

/* The counters now (final once every drainer thread is joined). */
static void counts_of(qsf_drainers *d, qsf_drain_counts *c) {
    memset(c, 0, sizeof *c);
    if (!d)
        return;
    c->active = atomic_load(&d->active);
    c->failed_slots = atomic_load(&d->failed_slots);
    c->succeeded = atomic_load(&d->succeeded);
    c->failed = atomic_load(&d->failed);
    c->interrupted = atomic_load(&d->interrupted);
    c->frames_left = atomic_load(&d->frames_left);
    c->bytes_left = atomic_load(&d->bytes_left);
    pthread_mutex_lock(&d->mu);
    c->queued = d->n - d->next;
    pthread_mutex_unlock(&d->mu);
}

static void log_left(const qsf_drainers *d, const qsf_drain_counts *c) {
    if (!c->interrupted && !c->not_started)
        return;
    QSF_LOGW("drain_orphans: the owner's close left orphan slots under %s on disk: %" PRIu64
             " stopped before they were drained (%" PRIu64 " frames, %" PRIu64
             " bytes unacknowledged), %" PRIu64 " never started (the next scan finds them)",
             d->conf->sf_dir, c->interrupted, c->frames_left, c->bytes_left, c->not_started);
}

void qsf_drainers_stop(qsf_drainers *d, qsf_drain_counts *left) {
    qsf_drain_counts c;
    if (d) {
        qsf_drainers_signal_stop(d, QSF_OS->mono_ns());
        for (int i = 0; i < d->nthreads; i++)
            pthread_join(d->threads[i], NULL);
    }
    counts_of(d, &c);
    c.not_started = (uint64_t) c.queued;
    c.queued = 0;
    if (d) {
        log_left(d, &c);
        pool_free(d);
    }
    if (left)
        *left = c;
}

void qsf_drainers_stats(const qsf_drainers *d, qsf_drain_counts *out) {
    counts_of((qsf_drainers *) d, out);
}
