/* Opening a slot in SF mode: lock, recovery (docs/FORMAT.md §6) or fresh start
 * (docs/FORMAT.md §6.21 + the docs/DURABILITY.md §4 create barriers), and the close-time cleanup of
 * a fully drained slot (docs/DURABILITY.md §12 steps 4-6). Open, adopt and release are in
 * slot_open.c, the recovery in recover*.c, the cleanup in slot_drained.c.
 *
 * Recovery reads every file with pread through a 64 KiB buffer and never maps
 * anything: the runtime maps the returned segments afterwards (for appending
 * only) and must re-check each file's size after mapping.
 *
 * Errors of qsf_slot_open:
 *   QSF_E_LOCKED      another process (or open file description) holds the slot
 *   QSF_E_CORRUPT     chain broken: "FSN gap in recovered segments: expected X
 *                     but got Y", manifest references missing data, flagged
 *                     segment without manifest, straddling/above-active segment
 *   QSF_E_IO          read/list/stat error, size changed during the scan
 *   QSF_E_UNSUPPORTED segment version != 1 or unknown flag bits (file untouched)
 *   QSF_E_NOSPC       creating the fresh slot's files ran out of space
 *   QSF_E_DURABILITY  an fsync/fdatasync while repairing or creating a file failed
 *   QSF_E_NOMEM       out of memory
 *   QSF_E_INVAL       bad sender_id / path
 * Errors found while reading (scan, manifest, chain) leave every file
 * untouched; later ones can leave only changes a re-run would make anyway
 * (migration, deletes, quarantines, zeroed residue). On any error nothing is
 * held.
 * An unreplayable slot is NOT an error: it is quarantined, a fresh slot is
 * started and out->data_loss / out->report.quarantined_slot say so.
 */
#ifndef QSF_RECOVER_H
#define QSF_RECOVER_H

#include "qsf.h"
#include "sf/ring.h"
#include "sf/sidefile.h"
#include "sf/slot.h"
#include "sf/symdict.h"

#include <stdbool.h>
#include <stdint.h>

#define QSF_RECOVER_BUF (64 * 1024)

/* One live segment handed to the runtime. */
typedef struct qsf_seg_info {
    char name[256];       /* file name inside the slot */
    int64_t generation;   /* from "sf-<gen>.sfa"; -1 for sf-initial.sfa / other names */
    int64_t base_seq;     /* FSN of the first frame */
    uint64_t frame_count; /* valid frames; last FSN = base_seq + frame_count - 1 */
    uint64_t last_good;   /* offset after the last valid frame = append offset */
    uint64_t file_size;   /* bytes (the preallocated segment size) */
    uint8_t flags;        /* header flags (MANIFEST_REQUIRED set after open) */
    bool active;          /* the one segment the producer appends to */
} qsf_seg_info;

/* Everything qsf_slot_open hands to the runtime. Owned by the caller's struct;
 * released with qsf_slot_release. The runtime may keep it for the life of the
 * ring and use the handles in place. */
typedef struct qsf_slot_recovered {
    qsf_slot slot;               /* paths, sf_dir + slot dirfds, lock fds (logical released) */
    qsf_seg_info *segments;      /* malloc'd; sealed oldest first, active LAST */
    uint32_t segment_count;      /* >= 1 after a successful open */
    uint32_t active_index;       /* = segment_count - 1 */
    int64_t published_fsn;       /* last FSN on disk; active.base_seq - 1 if no frame */
    int64_t acked_fsn;           /* max(lowestBase - 1, watermark), clamped; -1 if none */
    int64_t commit_boundary_fsn; /* last frame without FLAG_DEFER_COMMIT; frames above
                                    it are the aborted tail. -1 if none */
    uint64_t next_generation;    /* next "sf-<gen>.sfa" counter: max(gen) + 1, fresh = 1 */
    qsf_watermark watermark;     /* open (fd >= 0) after success */
    int wm_form;                 /* enum qsf_wm_form of a .ack-watermark this open creates */
    qsf_manifest manifest;       /* open after success; generation >= 1 */
    qsf_symdict symdict;         /* entries; fd -1 and self_sufficient when unusable */
    bool fresh;                  /* no segments were recovered: a fresh slot was made */
    bool data_loss;              /* an unreplayable slot was quarantined (path in report) */
    char data_loss_reason[256];  /* why the slot was unreplayable (names FSN and id) */
    qsf_recovery_report report;  /* segments, frames, bytes, torn bytes, ... */
    /* FSN ranges the I/O thread must never send and acknowledges locally once
     * everything before them is acknowledged: the groups (flushes) recovery
     * gave up because a member was damaged. Sorted, disjoint, all above
     * acked_fsn. malloc'd (NULL when none). */
    qsf_fsn_span *retired;
    uint32_t n_retired;
    /* What this open found damaged and gave up, one entry per region
     * (report.losses of them); malloc'd, NULL when none. Reported once: a
     * later open finds the placeholders and retires the same spans again, but
     * reports no loss. */
    qsf_recovery_loss *losses;
    uint32_t n_losses;
} qsf_slot_recovered;

/* sf_max_segment_bytes default (docs/CONFIGURATION.md, "Keys"): size of sf-initial.sfa when
 * qsf_slot_open has to start a fresh slot. */
#define QSF_SLOT_DEFAULT_SEGMENT_BYTES (4u << 20)

/* Locks and recovers (or freshly creates) <sf_dir>/<sender_id>. `durability` is
 * an enum qsf_durability: PERIODIC and APPEND make the recovered range and the
 * dictionary durable before returning (docs/FORMAT.md §6.13). A fresh slot's sf-initial.sfa is
 * preallocated to `segment_bytes` (>= 33). Caller thread. On error *out is left
 * released (safe to pass to qsf_slot_release again). */
int qsf_slot_open_sized(const char *sf_dir, const char *sender_id, int durability,
                        uint64_t segment_bytes, qsf_slot_recovered *out, qsf_errinfo *err);

/* An orphan drainer's open (docs/FORMAT.md §7.1): as qsf_slot_open_sized, but
 * an unreplayable slot is not set aside and restarted: it is marked `.failed`
 * (with the reason) and the open fails with QSF_E_CORRUPT. */
int qsf_slot_adopt_sized(const char *sf_dir, const char *sender_id, int durability,
                         uint64_t segment_bytes, qsf_slot_recovered *out, qsf_errinfo *err);

/* The runtime's open: qsf_slot_adopt_sized when `adopt`, qsf_slot_open_sized
 * otherwise, creating a .ack-watermark in `wm_form` (an enum qsf_wm_form;
 * those two create the default QSF_WM_JAVA16). */
int qsf_slot_open_formed(const char *sf_dir, const char *sender_id, int durability,
                         uint64_t segment_bytes, int wm_form, bool adopt, qsf_slot_recovered *out,
                         qsf_errinfo *err);

/* qsf_slot_open_sized with QSF_SLOT_DEFAULT_SEGMENT_BYTES. */
int qsf_slot_open(const char *sf_dir, const char *sender_id, int durability,
                  qsf_slot_recovered *out, qsf_errinfo *err);

/* Closes every descriptor and handle, frees the segment list and the
 * dictionary, releases both locks (never deletes .lock/.lock.pid). Idempotent. */
void qsf_slot_release(qsf_slot_recovered *r);

/* docs/DURABILITY.md §12 step 4: unlinks the named segments in the given order (the caller passes
 * the active and spare segments in generation order), stopping at the first
 * failure, then fsyncs the directory. Fault point QSF_FP_SEGMENT_UNLINKED fires
 * after each unlink. Returns QSF_E_IO naming the file on failure (files after it
 * stay for the next opener). */
int qsf_slot_unlink_segments(qsf_slot *s, const char *const *names, uint32_t n, qsf_errinfo *err);

/* docs/DURABILITY.md §12 step 5: closes and unlinks sf-manifest.bin, then .symbol-dict, then
 * .ack-watermark LAST, then the logical lock file <sf_dir>/.slot-locks/<slot>.lock
 * (and its .pid), then fsyncs the slot directory. Stops at the first failure.
 * Call it only after qsf_slot_unlink_segments succeeded; step 6 is
 * qsf_slot_release. */
int qsf_slot_remove_sidefiles(qsf_slot_recovered *r, qsf_errinfo *err);

#endif
