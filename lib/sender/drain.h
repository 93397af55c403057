/* Orphan adoption (docs/FORMAT.md §7.1). With drain_orphans=on a sender scans
 * sf_dir once, while it is being created, for sibling slots left by senders
 * that are gone: subdirectories that are not its own slot, do not start with
 * '.', hold at least one *.sfa file and have no .failed. A pool of at most
 * max_background_drainers threads takes them one by one; each drainer locks
 * the slot (a slot in use is skipped, never stolen), recovers it, connects
 * with the owner's addresses, credentials and TLS settings on its own
 * connection, replays until everything that was published when it started is
 * acknowledged, and closes the slot (fully drained: its files are removed).
 *
 * A slot that cannot be drained for good (corrupt, unreplayable, credentials
 * rejected, a terminal server error) gets .failed with the reason, written
 * while the drainer still holds the slot lock, so later scans leave it alone.
 * A slot that cannot be opened for a passing reason (I/O error) is left as it
 * is for the next scan. A drainer's connection errors are logged, not put in
 * the owner's error inbox (they concern another slot); data its recovery gave
 * up is (DATA_LOSS records naming the slot, counted in the owner's close). */
#ifndef QSF_DRAIN_H
#define QSF_DRAIN_H

#include "conf/conf.h"
#include "inbox.h"
#include "latch.h"

#include <stdint.h>

typedef struct qsf_drainers qsf_drainers;

/* Scans and starts the pool. Never fails the sender: a listing error is logged
 * and means no orphans. *out is NULL when there is nothing to drain. `conf`,
 * `inbox` and `latch` (the owner's) must outlive the pool: what an adopted
 * slot's recovery gave up is reported to the owner (losses.h) before the
 * slot is drained and removed. */
void qsf_drainers_start(const qsf_conf *conf, qsf_inbox *inbox, qsf_latch *latch,
                        qsf_drainers **out);

/* What the pool did and what it left (qsf_stats, qsf_close_info). */
typedef struct qsf_drain_counts {
    int active;         /* drainers working on a slot now */
    int queued;         /* candidates no drainer has taken */
    int failed_slots;   /* slots marked .failed: seen by the scan, or given up on since */
    uint64_t succeeded; /* slots fully drained */
    uint64_t failed;    /* slots given up on (.failed written) */
    /* after qsf_drainers_stop: what the owner's close left on disk */
    uint64_t interrupted; /* slots whose drainer stopped before they were drained */
    uint64_t frames_left; /* their unacknowledged frames */
    uint64_t bytes_left;  /* their bytes */
    uint64_t not_started; /* candidates never taken: the next scan finds them */
} qsf_drain_counts;

/* The owner is closing: no drainer takes another slot; a drainer working on
 * one goes on until it is drained or until the monotonic time `deadline_ns`
 * (the owner's close_flush_timeout_millis from now; now for a fast close),
 * then leaves it as it is (what is unacknowledged stays on disk) and unlocks
 * it. Does not wait. Only the first call sets the deadline. NULL is a no-op. */
void qsf_drainers_signal_stop(qsf_drainers *d, int64_t deadline_ns);

/* Signals (deadline now, unless already signalled), joins every drainer
 * thread, logs what was left on disk, fills *left (may be NULL) and frees the
 * pool. A drainer in the middle of recovering a slot finishes that recovery
 * first. NULL is a no-op (*left zeroed). */
void qsf_drainers_stop(qsf_drainers *d, qsf_drain_counts *left);

/* The counts now. Any thread; all zero for NULL. */
void qsf_drainers_stats(const qsf_drainers *d, qsf_drain_counts *out);

#endif
