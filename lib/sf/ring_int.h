/* Internals of the ring shared by ring.c (producer, reader, open/close),
 * ring_append.c and ring_txn.c (producer), manager.c (trim, prefault,
 * checkpoints), spares.c and rotation_plan.c (the spare thread), cursor.c
 * (reader) and barrier.c (data barriers).
 *
 * The chain of live segments, oldest first:
 *
 *   head -> sealed -> sealed -> ... -> active      spare (not linked)
 *                                                  pending[] (trimmed, file
 *                                                  not yet gone; still counted)
 *
 * struct qsf_ring groups its fields by owner:
 *
 *   prod   the producer's, no lock         mgr    the manager thread's
 *   chain  the chain, under mu             spr    the spare provisioner's
 *   stall  a waiting producer's, under mu  plan   the planned rotation
 *   wm     the .ack-watermark's writers, under wm.mu
 *   cfg    written by open, then read by all
 *
 * and keeps at the top level what everyone reads: the recovered slot, the
 * FSNs, the byte counts and the latches (atomics), and the locks. Each
 * group's comment gives its rule; debug builds check them (qsf_assert_held,
 * qsf_assert_producer, qsf_ring_on).
 *
 * Locking: `mu` guards the chain shape (head, active pointer changes, spare,
 * pending), the byte accounting and the wait/wake state. The producer appends
 * without it; it takes it only to rotate, to wait, and once per segment for
 * the early spare wake. Slow file operations run outside it. `mf_mu`
 * serialises manifest writes between a rotating producer and the trimming
 * manager. */
#ifndef QSF_RING_INT_H
#define QSF_RING_INT_H

#include "latch.h"
#include "qsf_assert.h"
#include "sf/recover.h"
#include "sf/ring.h"
#include "sf/segment.h"
#include "sf/srcpos.h"

#include <pthread.h>
#include <stdatomic.h>

/* The retry delay of one failing disk step, a trim stage (docs/DURABILITY.md §7)
 * or a spare's creation: 4 ms doubling to 1.024 s, no jitter. (The reconnect
 * delay with jitter is io/backoff.h, qsf_backoff.) */
typedef struct qsf_retry {
    int64_t next_ns;  /* do not try before this monotonic time */
    int64_t delay_ns; /* 0 after a success */
} qsf_retry;

/* A backpressure episode this long is logged at WARN when no hook is set. */
#define QSF_RING_EPISODE_LONG_NS ((int64_t) 5 * 1000000000)

#define QSF_RETRY_MIN_NS ((int64_t) 4 * 1000000)
#define QSF_RETRY_MAX_NS ((int64_t) 1024 * 1000000)

/* Memory mode keeps trimmed buffers (still counted as owned, so the pool never
 * takes the ring past its cap) to become spares again: a fresh buffer costs
 * populating and zeroing every page (measured: 22 % of the producer's time in
 * the e2e benchmark with a pool of 4, when acknowledgements arrive in batches
 * of more than 4 segments). Up to QSF_MEM_POOL are kept. Every
 * QSF_MEM_POOL_CHECK_NS the buffers that stayed in the pool the whole time
 * (the fewest it held since the last check) are freed, down to
 * QSF_MEM_POOL_KEEP, so neither a burst nor a slow trickle afterwards pins the
 * burst's high-water mark. */
#define QSF_MEM_POOL          64
#define QSF_MEM_POOL_KEEP     4
#define QSF_MEM_POOL_CHECK_NS ((int64_t) 1000000000)

/* The open flush (ring_txn.c): producer-private. Its frames are written but
 * not published; `seg` holds the first one, at `off`, after `frames_before`
 * older frames of that segment; the segments after it up to the active one
 * hold only frames of the flush. */
typedef struct qsf_ring_txn {
    bool open;
    int64_t first_fsn;      /* FSN of the flush's first frame */
    qsf_segment *seg;       /* segment of the first frame, NULL before one is written */
    uint64_t off;           /* its offset in seg */
    uint64_t frames_before; /* frames seg held before it */
    qsf_segment *last;      /* segment of the last frame written */
    uint32_t nsegs;         /* segments holding frames of the flush */
    bool undo_owed;         /* the abort could not undo it (the ring is latched): close retries */
    bool fresh;             /* its first frame starts a new segment (qsf_ring_txn_begin_fresh) */
    bool pos_written;       /* its source position is in the log (ring_srcpos.c), at pos_mark */
    uint64_t pos_mark;
} qsf_ring_txn;

enum qsf_trim_stage { QSF_TRIM_PRE = 0, QSF_TRIM_UNLINK = 1, QSF_TRIM_POST = 2, QSF_TRIM_STAGES };

/* Why the producer last had to wait (for the QSF_E_FULL message). STALL, not
 * WAIT: QSF_WAIT_OK / QSF_WAIT_DURABLE are the public levels of qsf_wait. */
enum qsf_stall_cause {
    QSF_STALL_NONE = 0,
    QSF_STALL_SPACE,    /* no spare: the cap is reached, acknowledgements must free space */
    QSF_STALL_TRIM,     /* no spare: the cap is reached, but by acknowledged segments the
                           manager has yet to remove */
    QSF_STALL_SPARE,    /* the cap allows a spare; it has yet to be made (spares.c) */
    QSF_STALL_CREATE,   /* the cap allows a spare but creating it failed */
    QSF_STALL_PERIODIC, /* rotation waits for a periodic checkpoint */
    QSF_STALL_ROTATE,   /* a rotation barrier failed; retried */
    QSF_STALL_PLAN,     /* the spare thread is syncing the spare's planned header */
};

/* The configuration: written once by open (ring_alloc) before any thread
 * starts, then only read, by every thread, without a lock. */
typedef struct qsf_ring_cfg {
    bool sf; /* a slot directory backs the ring (else memory mode) */
    int durability;
    uint64_t seg_bytes;
    uint64_t cap_bytes; /* effective: max(total, 2 * segment) */
    int64_t sync_interval_ms;
    int64_t append_deadline_ms;
} qsf_ring_cfg;

/* The chain (see the diagram above), under mu: every change to it is made
 * holding mu, by the producer (rotation, an aborted flush's segments), the
 * manager (trim, pool) or the spare thread (spare). Each reads it under mu,
 * except the producer, which reads `active` without it (no one else changes
 * it). */
typedef struct qsf_ring_chain {
    qsf_segment *head;
    qsf_segment *active;
    qsf_segment *spare;
    qsf_segment *pending[QSF_MAX_TRIMS_PER_PASS];
    int npending;
    qsf_segment *pool[QSF_MEM_POOL]; /* memory mode: trimmed buffers kept for reuse */
    int npool;
    int pool_low;             /* fewest buffers pooled since the last check */
    int64_t pool_check_ns;    /* when the pool was last checked */
    uint32_t live;            /* segments in the chain, or taken out by a trim that has not
                                 given their bytes back yet (qsf_ring_spare_fits_locked) */
    bool rotating;            /* the producer holds the spare for rotation */
    qsf_segment *prefaulting; /* the segment the manager populates outside mu; an
                                 abort that drops it waits on space_cv until it is NULL */
    bool prefault_waited;     /* such an abort is waiting */
} qsf_ring_chain;

/* A waiting producer's side, under mu: what it waits on and why it may not
 * go on. The producer writes cause; the manager dur_err and trim_err, the
 * spare provisioner create_err; whoever frees room or ends a failure bumps
 * wake_gen and broadcasts space_cv (qsf_ring_wake_producers_locked). */
typedef struct qsf_ring_stall {
    pthread_cond_t space_cv;              /* the producer waits for space / a spare */
    uint64_t wake_gen;                    /* bumped by every broadcast of space_cv */
    int cause;                            /* enum qsf_stall_cause: why the producer last waited */
    qsf_errinfo dur_err;                  /* the latched periodic checkpoint failure */
    char create_err[QSF_ERRINFO_MSG_MAX]; /* last spare creation failure */
    char trim_err[QSF_ERRINFO_MSG_MAX];   /* why trims fail ("" once one succeeds) */
} qsf_ring_stall;

/* .ack-watermark follows ackedFsn within milliseconds (qsf_ring_persist_acked):
 * written by the I/O thread when acks advance and by the manager's passes,
 * whichever comes first, so a manager stuck in a slow barrier does not hold
 * it back. mu orders those writes with trim's write + sync; persisted is
 * read and written only under it. */
typedef struct qsf_ring_wm {
    pthread_mutex_t mu;
    int64_t persisted; /* last value written to .ack-watermark */
} qsf_ring_wm;

/* Planned rotation (rotation_plan.c), the spare thread's: fsn is the FSN at
 * which the producer switches to the spare whose header already holds it
 * durably, or -1. The spare thread writes fsn and planning under the ring's
 * mu and the producer clears fsn; the producer reads fsn on every append as
 * a hint, and decides under mu. */
typedef struct qsf_ring_plan {
    _Atomic int64_t fsn;
    uint64_t frame_bytes_avg; /* bytes per frame of the last sealed segment: written by
                                 the producer under mu, read by the spare thread under mu */
    bool planning;            /* under mu: the spare thread is writing the spare's header */
} qsf_ring_plan;

/* The producer's state: the thread that appends, flushes and rotates (one at
 * a time: the sender's caller) reads and writes it without a lock; no other
 * thread touches it while the ring runs (qsf_assert_producer); open sets it
 * up and close reads it after the threads stopped. */
typedef struct qsf_ring_prod {
    int64_t next_fsn;
    qsf_ring_txn txn; /* the open flush */
    /* Source positions (ring_srcpos.c): the log, and the position the next
     * commit carries (length 0: none). */
    qsf_srcpos_log srcpos;
    bool srcpos_ready;
    uint32_t srcpos_pending_len;
    uint8_t srcpos_pending[QSF_SRCPOS_MAX];
    bool rotation_owed;                   /* a rotation's barriers failed; until one succeeds no
                                             frame may go into the active segment */
    bool reuse_owed;                      /* the active segment was reused in place but its
                                             manifest step failed: that step is retried before
                                             anything else (and rotation_owed is set meanwhile) */
    char rotate_err[QSF_ERRINFO_MSG_MAX]; /* last rotation barrier failure */
    qsf_ring_episode_fn episode_fn;       /* backpressure episodes (ring.h) */
    void *episode_user;
    int64_t episode_long_ns;
} qsf_ring_prod;

/* The manager thread's state (manager.c). Its own: the idle backoff, the
 * checkpoint and trim timing, written only by the manager (start sets
 * next_sync_ns before the thread runs); stop/kick/sync_requested are its
 * inbox, written by others under mu; thread and started belong to open and
 * close. */
typedef struct qsf_ring_mgr {
    pthread_t thread;
    _Atomic pthread_t self; /* pthread_self() of the running manager, for qsf_ring_on */
    bool started;
    pthread_cond_t cv;   /* the manager waits for work */
    bool stop;           /* under mu */
    bool kick;           /* under mu: woken with work */
    bool sync_requested; /* under mu: rotation asked for a checkpoint */
    /* The idle backoff (manager.c, next_wait): the manager's wait, and what
     * the ring showed at its last pass; dozing while the wait is longer than
     * the tick, so that the next flush wakes it (ring_txn.c). */
    int64_t wait_ns, seen_pub, seen_acked;
    atomic_bool dozing;
    _Atomic uint64_t passes; /* qsf_ring_manager_passes */
    int64_t next_sync_ns;    /* periodic checkpoint due */
    qsf_retry trim_retry[QSF_TRIM_STAGES];
} qsf_ring_mgr;

/* The spare provisioner's state (spares.c): the spare thread of a ring with a
 * slot directory, else the manager (memory mode), owns next_gen, create_retry
 * and the creation log's timing without a lock; stop/kick are its inbox,
 * under mu; thread and started belong to open and close. */
typedef struct qsf_ring_spr {
    pthread_t thread;
    _Atomic pthread_t self; /* pthread_self() of the running spare thread */
    bool started;           /* the thread runs: open and close only */
    pthread_cond_t cv;
    bool stop;         /* under mu */
    bool kick;         /* under mu: woken with work */
    uint64_t next_gen; /* next segment file counter */
    int64_t last_create_log_ns;
    bool create_logged;
    qsf_retry create_retry;  /* spare creation after a failure: 4 ms doubling to 1.024 s */
    _Atomic uint64_t passes; /* qsf_ring_spare_passes */
} qsf_ring_spr;

/* Debug checks of who runs: whether the calling thread is the one that
 * recorded itself in *self as it started (qsf_ring_on_start; a thread never
 * started, or joined, matches none). Atomic, as the producer's checks read
 * it while the thread starts: relaxed is enough, a thread sees its own store
 * and any other sees an id that is not its own. */
#define qsf_ring_on(self)                                                                          \
    pthread_equal(atomic_load_explicit((self), memory_order_relaxed), pthread_self())
#define qsf_ring_on_start(self) atomic_store_explicit((self), pthread_self(), memory_order_relaxed)
#define qsf_ring_on_end(self)   atomic_store_explicit((self), (pthread_t) 0, memory_order_relaxed)
/* Producer-only state is never touched by the ring's own threads. */
#define qsf_assert_producer(r)                                                                     \
    qsf_assert(!qsf_ring_on(&(r)->mgr.self) && !qsf_ring_on(&(r)->spr.self))

struct qsf_ring {
    qsf_ring_cfg cfg; /* set by open, then only read */

    /* SF backing: slot, watermark, manifest and dictionary handles as
     * recovery left them (rec.symdict is the memory-only dictionary in memory
     * mode). */
    qsf_slot_recovered rec;
    pthread_mutex_t mf_mu;   /* manifest writes: rotating producer vs trimming manager */
    pthread_mutex_t dict_mu; /* dictionary append (producer) vs sync (manager) */
    pthread_mutex_t sync_mu; /* data barriers (manager, producer) vs zeroing an aborted flush */
    _Atomic uint64_t dict_bytes;

    /* chain (see the diagram above) */
    pthread_mutex_t mu;
    qsf_ring_chain chain; /* under mu */
    qsf_ring_stall stall; /* under mu */
    _Atomic uint64_t owned_bytes;

    /* FSNs, each on its own cache line (so is the producer's group): the
     * producer writes published_fsn on every append, the reader writes
     * acked_fsn. */
    _Alignas(64) qsf_ring_prod prod; /* the producer's own */
    _Alignas(64) _Atomic int64_t published_fsn;
    _Alignas(64) _Atomic int64_t acked_fsn;
    _Alignas(64) qsf_ring_wm wm;     /* the .ack-watermark's writers' */
    _Alignas(64) qsf_ring_plan plan; /* the planned rotation */

    /* failure latches */
    qsf_latch *latch;        /* the sender's terminal latch (opts.latch, or own_latch) */
    qsf_latch own_latch;     /* used when the opener passed none (tests, tools) */
    _Atomic int dur_latched; /* periodic checkpoint failure latched */
    _Atomic uint64_t stalls;

    qsf_ring_mgr mgr; /* the manager thread's (manager.c) */
    qsf_ring_spr spr; /* the spare provisioner's (spares.c) */
};

/* ---- manager.c ---- */
int qsf_mgr_start(qsf_ring *r, qsf_errinfo *err);
/* Stops and joins the manager, bounded by 5 s. Returns false if it did not stop. */
bool qsf_mgr_stop(qsf_ring *r);
/* Wakes the manager (takes mu). */
void qsf_mgr_wake(qsf_ring *r);
/* The same, under mu. */
void qsf_mgr_kick_locked(qsf_ring *r);
/* One manager pass (also used by close and by tests through the thread). */
void qsf_mgr_pass(qsf_ring *r);
/* Trims every trimmable sealed segment now, ignoring backoff (close). */
int qsf_mgr_trim_all(qsf_ring *r, qsf_errinfo *err);

/* ---- ring_threads.c: the manager's and the spare thread's common parts ---- */
/* Under mu: waits on cv until *kick or *stop, or wait_ns passed. */
void qsf_ring_thread_wait(qsf_ring *r, pthread_cond_t *cv, const bool *kick, const bool *stop,
                          int64_t wait_ns);
/* Sets *stop under mu, signals cv and joins t, bounded by 5 s; false if it
 * did not end. */
bool qsf_ring_thread_stop(qsf_ring *r, pthread_t t, pthread_cond_t *cv, bool *stop);

/* ---- spares.c ---- */
/* Starts the spare thread of an SF ring (a memory-mode ring has none). */
int qsf_spares_start(qsf_ring *r, qsf_errinfo *err);
/* Stops and joins it, bounded by 5 s. Returns false if it did not stop. */
bool qsf_spares_stop(qsf_ring *r);
/* Under mu: wakes whoever provisions spares (the spare thread, or the
 * manager of a memory-mode ring). */
void qsf_spares_kick_locked(qsf_ring *r);
/* Creates a spare if one is needed and fits, then plans its rotation. */
void qsf_spares_pass(qsf_ring *r);

/* ---- rotation_plan.c ---- */
/* Spare thread: if the spare's header can be written ahead of need, writes the
 * FSN the active segment will most likely end at and syncs it (see there). */
void qsf_plan_rotation(qsf_ring *r);

/* ---- barrier.c: data barriers (qsf_barrier_*; the durability modes are
 * QSF_DUR_*, the durable-ack tracking of the I/O thread is qsf_durable_*) ---- */
/* Syncs every live segment whose written bytes are not yet durable, after the
 * dictionary (docs/DURABILITY.md §8 steps 1-3, docs/DURABILITY.md §9): published frames and those
 * of an open flush alike. On failure the failed published range is re-dirtied
 * and the error returned. Takes sync_mu. */
int qsf_barrier_sync_written(qsf_ring *r, qsf_errinfo *err);

/* ---- ring_reuse.c ---- */
/* Under mu: the active segment is the only live one, holds nothing
 * unacknowledged and no spare is there: it may be reused in place. */
bool qsf_ring_reusable_locked(const qsf_ring *r);

/* Producer: a rotation whose manifest step began and then failed (the record
 * written, its fsync not) left the manifest naming the spare's base; when the
 * flush is then aborted, its FSNs are given back and no segment will ever
 * have that base. Brings the manifest back to the active segment, durably
 * (and the owed rotation is owed no more). Called by the abort (best effort),
 * before the next rotation's first step, and at close. */
int qsf_ring_manifest_back(qsf_ring *r, qsf_errinfo *err);

/* At close: retries the undo of a flush whose abort failed, so that a slot
 * with everything published acknowledged can still be closed drained. */
int qsf_ring_txn_retry_undo(qsf_ring *r, qsf_errinfo *err);
/* Producer: reuses it (see ring_reuse.c for the barrier order). */
int qsf_ring_reuse_active(qsf_ring *r, qsf_errinfo *err);

/* ---- ring_append.c ---- */
/* The latched terminal error, else the latched periodic checkpoint failure. */
int qsf_ring_latched_error(qsf_ring *r, qsf_errinfo *err);

/* ---- cursor.c ---- */
/* Offset of frame `fsn` in s, walking published frames only; UINT64_MAX if the
 * segment's published frames end before it. */
uint64_t qsf_ring_offset_of(const qsf_segment *s, int64_t fsn);

/* Retry bookkeeping (manager.c): a failed attempt doubles the delay from 4 ms
 * to 1.024 s, a success clears it. */
bool qsf_retry_due(const qsf_retry *b, int64_t now);
void qsf_retry_result(qsf_retry *b, bool ok, int64_t now);

/* ---- ring.c helpers used by the others ---- */
int64_t qsf_ring_now_ns(void);
/* Frees a segment's bytes from the accounting and wakes waiting producers. */
void qsf_ring_release_bytes_locked(qsf_ring *r, uint64_t bytes);
/* Effective cap check for a new spare: under mu. */
bool qsf_ring_spare_fits_locked(const qsf_ring *r);
/* Whether the ring's segment files take their frames by pwrite
 * (qsf_seg_write_file): `append` durability, whose barriers would otherwise
 * write every folio a store through the mapping dirtied whole. Set on every
 * file segment the ring makes or recovers. */
static inline bool qsf_ring_frames_by_pwrite(const qsf_ring *r) {
    return r->cfg.durability == QSF_DUR_APPEND;
}
/* Memory mode, under mu: a pooled buffer becomes the spare (if there is no
 * spare). The producer calls it at rotation too, so a busy manager thread
 * does not stall it while trimmed buffers are waiting. */
bool qsf_ring_spare_from_pool_locked(qsf_ring *r);
/* Bumps wake_gen and wakes every waiting producer: under mu. */
void qsf_ring_wake_producers_locked(qsf_ring *r);

/* ---- ring_srcpos.c ---- */
int qsf_ring_srcpos_open(qsf_ring *r, qsf_errinfo *err);
void qsf_ring_srcpos_close(qsf_ring *r);
/* Commit: writes the staged position with the flush's last FSN (before its
 * barrier); an abort takes it back; after publishing, committed clears it. */
int qsf_ring_srcpos_write(qsf_ring *r, int64_t fsn, qsf_errinfo *err);
/* Before a frame of the open flush: a committing frame gets the position
 * written first, with its FSN; any frame after it takes it back. */
int qsf_ring_srcpos_before_frame(qsf_ring *r, const void *payload, size_t len, qsf_errinfo *err);
void qsf_ring_srcpos_retract(qsf_ring *r);
void qsf_ring_srcpos_committed(qsf_ring *r);
/* The data barriers sync the log first (barrier.c). */
int qsf_ring_srcpos_sync(qsf_ring *r, qsf_errinfo *err);
/* Drained close: the log keeps only the last position, at FSN -1. */
int qsf_ring_srcpos_finalize(qsf_ring *r, qsf_errinfo *err);

#endif
