/* The ring: a slot's log of frames, in memory (malloc'd segments) or on disk
 * (mmap'd, preallocated segment files under <sf_dir>/<sender_id>/).
 *
 * This header is the contract between the producer side (sender.c: append,
 * symbol-dictionary write-ahead, barriers), the I/O thread (cursor, acknowledge)
 * and the ring's own threads (the manager: trim, watermark, periodic checkpoints,
 * a memory-mode ring's spares; with a slot directory, the spare thread: spares.c). Behaviour:
 * docs/ARCHITECTURE.md §3; docs/DURABILITY.md §1-§3; docs/FORMAT.md §6; barriers:
 * docs/DURABILITY.md §4-§9, §12, §14.
 *
 * Threads: exactly one producer calls append/barrier/symdict_append; exactly one
 * reader (the I/O thread) uses cursors and acknowledge; any thread may read the
 * FSN gauges. open/close are called by the owner with no other thread inside.
 */
#ifndef QSF_RING_H
#define QSF_RING_H

#include "latch.h"
#include "qsf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct qsf_ring qsf_ring;

enum qsf_durability {
    QSF_DUR_MEMORY = 0,   /* page cache only */
    QSF_DUR_PERIODIC = 1, /* manager checkpoints every sync_interval_ms */
    QSF_DUR_APPEND = 2,   /* a flush is durable before it is published (group commit) */
};

typedef struct qsf_ring_opts {
    const char *sf_dir;         /* NULL: memory mode (no files, no lock) */
    const char *sender_id;      /* slot name; "default" when NULL */
    uint64_t segment_bytes;     /* sf_max_segment_bytes (>= 33) */
    uint64_t total_bytes;       /* sf_max_total_bytes; raised to 2 x segment_bytes */
    int durability;             /* enum qsf_durability */
    int64_t sync_interval_ms;   /* periodic mode */
    int64_t append_deadline_ms; /* backpressure deadline; 0 = fail at once */
    int wm_form; /* enum qsf_wm_form of a .ack-watermark the open creates (sf_ack_watermark_form) */
    qsf_latch *latch; /* the owner's terminal latch: a latched error fails appends and wakes
                         producers waiting for space; NULL: the ring keeps its own */
    bool adopt;       /* an orphan drainer's open: an unreplayable slot is marked .failed and the
                         open fails (QSF_E_CORRUPT) instead of being set aside and restarted */
    const char *slot_path; /* an operator's open of the existing slot at this path
                              (sf/operator.h: also .failed and quarantined slots; never
                              created, moved or marked); sf_dir and sender_id unused */
} qsf_ring_opts;

/* An inclusive range of FSNs. */
typedef struct qsf_fsn_span {
    int64_t from, to;
} qsf_fsn_span;

/* One damaged region of the slot and what recovery gave up because of it
 * (docs/FORMAT.md, "Salvage"). Frames given up are never sent: their FSNs are
 * retired spans. */
typedef struct qsf_recovery_loss {
    int64_t from_fsn, to_fsn;  /* FSNs given up: never sent */
    uint64_t frames_destroyed; /* frames whose bytes were damaged (now placeholders) */
    bool destroyed_exact;      /* false: frames_destroyed is an upper bound */
    uint64_t frames_retired;   /* intact frames given up with their damaged group */
    uint64_t rows;             /* rows of the given-up intact frames that could be counted */
    uint64_t frames_uncounted; /* intact given-up frames whose rows could not be counted */
    char file[256];            /* the damaged file */
    uint64_t offset;           /* where the damage starts */
    char copy[256];            /* the quarantined copy of the damaged bytes ("" if none) */
    char what[160];            /* e.g. "CRC mismatch at offset 1000000" */
} qsf_recovery_loss;

/* What recovery found (docs/FORMAT.md §6.20); filled by qsf_ring_open. */
typedef struct qsf_recovery_report {
    uint32_t segments;
    uint64_t frames;
    uint64_t bytes;
    uint64_t torn_bytes;
    uint32_t quarantined_files;
    int64_t acked_fsn;
    int64_t published_fsn;
    int64_t commit_boundary_fsn; /* last frame without FLAG_DEFER_COMMIT, -1 if none */
    bool watermark_ignored;      /* .ack-watermark was above published */
    bool self_sufficient;        /* .symbol-dict unusable: frames must carry ids from 0 */
    char quarantined_slot[512];  /* non-empty if the slot was set aside as unreplayable */
    uint32_t losses;             /* damaged regions whose frames were given up (see recover.h) */
    uint64_t frames_lost;        /* FSNs given up above acked_fsn: destroyed + retired */
    uint64_t aborted_frames_cut; /* frames of an interrupted flush removed from disk */
    int64_t aborted_from_fsn;    /* their FSN span (-1, -1 when none) */
    int64_t aborted_to_fsn;
    uint64_t aborted_rows_cut; /* rows of the cut frames that could be counted */
    uint32_t debris_removed;   /* empty segment files, temporary files, old quarantined files */
    bool manifest_repaired;    /* the manifest's bounds were corrected from the segments */
} qsf_recovery_report;

/* Opens (SF: lock, recover, sanitise; memory: allocate) and starts the manager
 * thread. Errors: QSF_E_LOCKED (holder PID), QSF_E_CORRUPT (names FSNs/files),
 * QSF_E_IO, QSF_E_NOSPC, QSF_E_UNSUPPORTED, QSF_E_NOMEM. On failure nothing stays
 * locked, mapped or running. */
int qsf_ring_open(const qsf_ring_opts *opts, qsf_ring **out, qsf_recovery_report *report,
                  qsf_errinfo *err);

/* Closes per docs/DURABILITY.md §12: fully acked -> files removed in crash-safe order;
 * otherwise the tail stays on disk. Always releases the lock and frees the ring,
 * except when the manager does not stop within 5 s: then QSF_E_TIMEOUT, and the
 * ring (and the slot lock) stay held for the life of the process. Release every
 * cursor first. */
int qsf_ring_close(qsf_ring *r, qsf_errinfo *err);

/* In a child of fork() (docs/THREADING.md "fork()"): unmaps the segments and
 * closes this process's copies of the slot's descriptors, and nothing else:
 * no thread is stopped (none was copied), no file is written, truncated or
 * removed, no lock is released (closing a copy does not release the
 * parent's flock). The ring's own memory is not freed: locks in it may be
 * held by threads that exist only in the parent. Use it once, then drop r. */
void qsf_ring_forsake(qsf_ring *r);

/* SF mode: writes `.failed` (one line: reason) into the slot, durably, while the
 * ring still holds the slot lock (an orphan drainer giving up on the slot).
 * QSF_E_INVAL in memory mode. */
int qsf_ring_mark_failed(qsf_ring *r, const char *reason, qsf_errinfo *err);

/* A QSF_E_FULL that blames acknowledgements (the ring is full of unacknowledged
 * frames) is completed by whoever holds the connection, with how it stands
 * (docs/DURABILITY.md §3.3; docs/ERRORS.md §3): the ring knows nothing of it.
 * qsf_ring_full_awaits_acks tells, on the producer right after the append
 * that failed, whether the error was of that kind; qsf_ring_full_add_status
 * adds "; " and `status` to its message, within the room its cause has
 * (QSF_RING_FULL_CAUSE_MAX). */
#define QSF_RING_FULL_CAUSE_MAX 384
bool qsf_ring_full_awaits_acks(qsf_ring *r);
void qsf_ring_full_add_status(qsf_errinfo *err, const char *status);

/* A backpressure episode: one append call that had to wait for room
 * (qsf_ring_backpressure_stalls counts them; a wait for the manager's planned
 * header sync is none). Its figures come from one snapshot each: the producer
 * publishes nothing while it waits, so `published` holds throughout. */
typedef struct qsf_ring_episode {
    int64_t waited_ns;   /* so far; 0 when it begins */
    int64_t acked_begin; /* ackedFsn when it began */
    int64_t acked_now;   /* ... and at this report */
    int64_t published;   /* publishedFsn */
    const char *waiting; /* what it waits (or waited, at its end) for, e.g. "acknowledgements" */
    char cause[384];     /* BEGIN and LONG: the QSF_E_FULL message's cause text; END: "" */
    int rc;              /* END: QSF_OK (room found) or what the append returns */
} qsf_ring_episode;

enum { QSF_RING_EPISODE_BEGIN, QSF_RING_EPISODE_LONG, QSF_RING_EPISODE_END };

/* Called on the producer thread, without ring locks: BEGIN when an append
 * starts waiting, LONG once when it has waited long_ms, END when it stops
 * (room found, or it fails). */
typedef void (*qsf_ring_episode_fn)(void *user, int phase, const qsf_ring_episode *ep);

/* Sets the episode hook (NULL: none; an episode that passes long_ms is then
 * logged at WARN by the ring). Call while no append runs. */
void qsf_ring_set_episode_fn(qsf_ring *r, qsf_ring_episode_fn fn, void *user, int64_t long_ms);

/* ---- producer ---- */

/* A flush is published all or nothing. Between begin and commit the producer
 * appends the flush's frames: they are written into the ring (FSNs assigned,
 * rotations made, space waited for) but no reader sees them; commit makes them
 * visible all at once, abort removes them as if they had never been written.
 * A process that dies with a flush open leaves its frames on disk without a
 * committing frame, and recovery removes them (docs/FORMAT.md).
 *
 * qsf_ring_txn_begin: QSF_E_STATE if a flush is open; the latched terminal
 * error; QSF_E_DURABILITY while a periodic checkpoint failure is latched.
 *
 * qsf_ring_txn_append: one frame (a complete QWP message). Blocks while the
 * ring is full, up to append_deadline_ms, then QSF_E_FULL (retriable).
 * QSF_E_TOO_LARGE at once if len > segment_bytes - 32, or when the flush
 * already fills every segment the ring may hold (sf_max_total_bytes) and needs
 * another: no acknowledgement could make room. A latched terminal error ends
 * a wait at once. *fsn_out gets the frame's FSN. After an error the flush is
 * still open: abort it.
 *
 * qsf_ring_txn_commit: append mode first makes everything written (and the
 * dictionary) durable, then every frame of the flush becomes visible (release
 * ordering). On a failed barrier the flush is aborted (QSF_E_DURABILITY;
 * QSF_ERRF_IN_DOUBT only if even the zeroing could not be made durable, so a
 * host crash might bring the frames back).
 *
 * qsf_ring_txn_abort: zeroes the flush's frames, undoes its rotations (the
 * manifest moves back first, docs/DURABILITY.md §6 in reverse) and gives back its
 * FSNs. If that fails the sender cannot go on: the latch is set (QSF_E_IO or
 * QSF_E_DURABILITY), the frames stay unpublished and the next recovery removes
 * them. */
int qsf_ring_txn_begin(qsf_ring *r, qsf_errinfo *err);
/* As begin, but the flush's first frame starts a new segment if the active
 * one holds frames: for a flush that got QSF_E_TOO_LARGE only because it
 * started behind older frames (qsf_ring_txn_started_behind), which then fits
 * the ring once those are acknowledged and trimmed. */
int qsf_ring_txn_begin_fresh(qsf_ring *r, qsf_errinfo *err);
/* Whether the last flush's first frame went into a segment that already
 * held frames. */
bool qsf_ring_txn_started_behind(const qsf_ring *r);
int qsf_ring_txn_append(qsf_ring *r, const void *payload, size_t len, int64_t *fsn_out,
                        qsf_errinfo *err);
/* A frame built in place (the encoder's placer, qwp/encoder.h), saving the
 * copy of qsf_ring_txn_append: qsf_ring_txn_place lends room for a frame of
 * up to `cap` bytes in the active segment, its envelope marking it as being
 * written (qsf_seg_place), or returns NULL whenever the frame would not
 * simply go there (no flush open, an error latched, a rotation due or owed,
 * no room, `append` durability, a source position staged): then the caller
 * builds it elsewhere and appends it, which rotates, waits or reports. Until
 * qsf_ring_txn_append_placed (the frame of `len` <= cap bytes written there,
 * its FSN assigned as by an append) or qsf_ring_txn_unplace (given up: the
 * room zeroed), the producer calls nothing else on the ring. */
uint8_t *qsf_ring_txn_place(qsf_ring *r, size_t cap);
void qsf_ring_txn_append_placed(qsf_ring *r, size_t len, int64_t *fsn_out);
void qsf_ring_txn_unplace(qsf_ring *r, size_t cap);
int qsf_ring_txn_commit(qsf_ring *r, qsf_errinfo *err);
int qsf_ring_txn_abort(qsf_ring *r, qsf_errinfo *err);

/* A point inside the open flush (its frames written so far), to roll back
 * to: qsf_ring_txn_rollback removes every frame written after the mark, as
 * an abort removes a whole flush (zeroed, rotations undone, FSNs given back),
 * and the flush stays open. If that undo fails the whole flush is aborted
 * (with the latch set if even that fails) and the error returned. Producer. */
typedef struct qsf_ring_mark {
    const void *seg; /* opaque: the active segment at the mark, NULL if no frame yet */
    uint64_t off, frames;
    int64_t fsn;
    uint32_t nsegs;
} qsf_ring_mark;
void qsf_ring_txn_mark(const qsf_ring *r, qsf_ring_mark *m);
int qsf_ring_txn_rollback(qsf_ring *r, const qsf_ring_mark *m, qsf_errinfo *err);

/* A flush of one frame: begin, append, commit (abort on failure). */
int qsf_ring_append(qsf_ring *r, const void *payload, size_t len, int64_t *fsn_out,
                    qsf_errinfo *err);

/* Largest payload one frame may have (segment_bytes - 32). */
size_t qsf_ring_max_payload(const qsf_ring *r);

/* What recovery gave up (SF mode; none in memory mode): the FSN spans of
 * whole flushes the reader must never send (acknowledged locally once
 * everything before one is acknowledged), sorted and disjoint; and the losses
 * to report, one per damaged place. Valid for the life of the ring. */
const qsf_fsn_span *qsf_ring_retired(const qsf_ring *r, uint32_t *n);
/* Whether fsn lies in one of the retired spans (its flush was given up). */
bool qsf_ring_given_up(const qsf_ring *r, int64_t fsn);
const qsf_recovery_loss *qsf_ring_losses(const qsf_ring *r, uint32_t *n);

/* The slot directory ("<sf_dir>/<sender_id>"), NULL in memory mode. */
const char *qsf_ring_slot_path(const qsf_ring *r);

/* The latch the ring reads (opts.latch, or its own). */
qsf_latch *qsf_ring_latch(qsf_ring *r);

/* ---- symbol dictionary (write-ahead, .symbol-dict; in-memory copy for catch-up) ---- */

/* Appends entries [first, first+count) (UTF-8 strings) as one SYD1 chunk before
 * the frame that first uses them is published. Entries already persisted are
 * skipped (never written twice). In memory mode only the in-memory copy grows. */
int qsf_ring_symdict_append(qsf_ring *r, uint32_t first, uint32_t count, const char *const *strs,
                            const uint32_t *lens, qsf_errinfo *err);

/* Entries known to the ring (persisted or recovered), and entry i. The returned
 * pointer stays valid for the life of the ring. Any thread (acquire). */
uint32_t qsf_ring_symdict_size(const qsf_ring *r);
const char *qsf_ring_symdict_entry(const qsf_ring *r, uint32_t i, uint32_t *len);

/* ---- gauges (any thread) ---- */

/* Source positions (docs/DURABILITY.md §9a). Producer thread. stage: the
 * position (1..256 bytes, copied) the next commit carries (QSF_E_INVAL
 * otherwise); unstage drops it if no commit took it. commit_empty: a flush
 * without frames records the position at publishedFsn (synced in append
 * mode). source_position: the newest position at or below publishedFsn
 * (acked: ackedFsn); *len 0 and *fsn -1 when there is none; QSF_E_INVAL when
 * cap is too small (*len says how much is needed). */
int qsf_ring_srcpos_stage(qsf_ring *r, const void *pos, size_t len, qsf_errinfo *err);
void qsf_ring_srcpos_unstage(qsf_ring *r);
int qsf_ring_srcpos_commit_empty(qsf_ring *r, qsf_errinfo *err);
int qsf_ring_source_position(const qsf_ring *r, bool acked, void *buf, size_t cap, size_t *len,
                             int64_t *fsn, qsf_errinfo *err);

int64_t qsf_ring_published_fsn(const qsf_ring *r); /* -1 if none */
int64_t qsf_ring_acked_fsn(const qsf_ring *r);     /* -1 if none */
/* Passes the manager thread has made (tests: that an idle ring's manager sleeps). */
uint64_t qsf_ring_manager_passes(const qsf_ring *r);
/* Passes the spare thread has made (SF mode; 0 in memory mode, which has none). */
uint64_t qsf_ring_spare_passes(const qsf_ring *r);
/* SF mode: the FSN at which the producer will switch to a spare whose header
 * the spare thread already synced (see rotation_plan.c), or -1. */
int64_t qsf_ring_planned_fsn(const qsf_ring *r);
/* Bytes (8-byte envelopes included) of the published frames above ackedFsn. */
uint64_t qsf_ring_pending_bytes(const qsf_ring *r);
/* createdMicros (wall clock) of the live segment holding `fsn`, -1 if none does. */
int64_t qsf_ring_created_us(const qsf_ring *r, int64_t fsn);
uint64_t qsf_ring_owned_bytes(const qsf_ring *r);
/* Append calls that had to wait for space (totalBackpressureStalls; one per call). */
uint64_t qsf_ring_backpressure_stalls(const qsf_ring *r);

/* ---- reader (I/O thread) ---- */

typedef struct qsf_ring_cursor {
    void *seg;        /* pinned segment, opaque */
    uint64_t offset;  /* offset of the next frame within seg */
    int64_t next_fsn; /* FSN of the next frame */
    uint32_t epoch;   /* seg's epoch when offset was taken */
} qsf_ring_cursor;

/* Positions the cursor at `fsn` (normally acked + 1), pinning its segment so the
 * manager never unmaps it. QSF_E_INVAL if fsn is trimmed or beyond published+1.
 * A cursor starts zeroed ({0}); seeking releases a previous position. */
int qsf_ring_cursor_seek(qsf_ring *r, qsf_ring_cursor *c, int64_t fsn);

/* Returns 1 and the next published frame (payload only, no envelope; valid until
 * the next call or release), 0 if nothing more is published yet. Moves across
 * segment boundaries, re-pinning. */
int qsf_ring_cursor_next(qsf_ring *r, qsf_ring_cursor *c, const uint8_t **payload, uint32_t *len,
                         int64_t *fsn);

/* Whether a frame qsf_ring_cursor_next returned still matches the CRC-32C
 * stored in its envelope (docs/FORMAT.md §2): a byte changed since it was
 * published (bit rot, a stray write into the segment) makes it damage, to be
 * given up, never sent. */
bool qsf_ring_frame_intact(const uint8_t *payload, uint32_t len);

/* Unpins. The cursor must be sought again before use. */
void qsf_ring_cursor_release(qsf_ring *r, qsf_ring_cursor *c);

/* Reader, when it has nothing to send: moves the cursor past segments it has
 * read to the end and that are sealed, without taking a frame, so its pin does
 * not keep an acknowledged segment from being trimmed while a producer waits
 * for that space (a long flush fills the ring unpublished, and the reader,
 * caught up, would otherwise not move before it is published). */
void qsf_ring_cursor_skip_read(qsf_ring *r, qsf_ring_cursor *c);

/* SF mode: writes ackedFsn into .ack-watermark (a record write, no sync) if it
 * moved since the last write. The I/O thread calls it as acknowledgements
 * arrive and the manager on every pass, so the persisted value follows the
 * acks within milliseconds even while the manager waits on a slow disk
 * barrier. Any thread. */
int qsf_ring_persist_acked(qsf_ring *r, qsf_errinfo *err);

/* Advances ackedFsn to min(fsn, published), forward only; wakes the manager and
 * any producer waiting for space. Returns true if it advanced. */
bool qsf_ring_acknowledge(qsf_ring *r, int64_t fsn);

#endif
