/* Recycling a trimmed segment file as a spare (SF mode, `memory` durability).
 *
 * A fresh segment file costs a page-cache page allocation and a fault for
 * every 4 KiB the producer writes. A trimmed segment whose pages are still
 * resident and mapped is made an empty spare again instead of being unlinked
 * (sf-format.md §9.4 step 5), keeping its descriptor and its mapping.
 *
 * Runs on the manager thread only, and only for segments of a trim quantum
 * whose barriers 1-4 are done: the watermark covers every frame in the
 * segment and the manifest headBase lies above its last FSN. Steps:
 *
 *   (a) zero the frame area [24, size) through the mapping, last chunk first;
 *   (b) msync(MS_SYNC) + fdatasync of that range: the zeros are durable;
 *   (c) rewrite the header (provisional baseSeq = publishedFsn + 1,
 *       MANIFEST_REQUIRED) and sync the header;
 *   (d) rename to a fresh sf-<gen>.sfa (the counter only grows and the slot is
 *       locked, so the name is unused) and fsync the directory.
 *
 * Crash at each point, against recovery (sf-format.md §8.8-8.9); "old" is the
 * trimmed segment's name and baseSeq B with B + frameCount - 1 < headBase:
 *
 *   - before or during (a), or after (a) before (b): old name, old header,
 *     and frames that are a prefix of the old ones (scanning stops at the
 *     first zeroed frame) or none. With frames: a data segment wholly below
 *     headBase, deleted as an acknowledged leftover. Without: an empty extra,
 *     deleted if clean or quarantined if bytes of an old frame remain. A host
 *     crash may persist any subset of the zeroed pages; the result is the
 *     same, because every frame recovery can reach still sits at its original
 *     offset under its original header, i.e. carries its original FSN.
 *   - after (b), before or during (c): zeros are durable, so whichever header
 *     the disk holds (old base B, or the new provisional base) the file is a
 *     clean empty extra and is deleted. (b) must come first: a header with the
 *     new base next to old frames would present acknowledged frames as new
 *     FSNs at or above activeBase.
 *   - after (c), before or after (d): a clean empty extra under the old or the
 *     new name, deleted; its base cannot outrank the active segment because
 *     the active is chosen by frames first, and between two clean empties at
 *     activeBase either is correct (neither holds a frame).
 *   - as a spare: exactly a spare of §9.2, except that its provisional base may
 *     fall below activeBase while it waits in the pool. Recovery deletes it as
 *     a clean empty extra; a drained close unlinks pooled files before the
 *     active segment (ring.c) so a collapsed slot never keeps one.
 *
 * Any failure leaves the file in one of these states; the caller then unlinks
 * it under its current name as an ordinary trim. */
#include "sf/ring_int.h"

#include "err.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/sfa.h"
#include "sf/sfio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* (d): a fresh name, then the directory barrier. On a failed directory fsync
 * the segment already carries the new name, which the caller then unlinks. */
static int rename_fresh(qsf_ring *r, qsf_segment *s, qsf_errinfo *e) {
    const qsf_slot *sl = &r->rec.slot;
    char name[QSF_SEG_NAME_MAX];
    uint64_t gen = r->next_gen++;
    qsf_seg_name(gen, name);
    if (QSF_OS->renameat(sl->dirfd, s->name, sl->dirfd, name) != 0) {
        int err = errno;
        return qsf_err_set(e, QSF_E_IO, QSF_ERRF_RETRIABLE, err, "cannot rename %s/%s to %s: %s",
                           sl->path, s->name, name, strerror(err));
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    s->gen = gen;
    int rc = qsf_fault_check(QSF_FP_RECYCLE_RENAMED, e);
    return rc == QSF_OK ? qsf_fsync_dir(sl->dirfd, sl->path, e) : rc;
}

int qsf_recycle_segment(qsf_ring *r, qsf_segment *s, qsf_errinfo *e) {
    const char *dir = r->rec.slot.path;
    qsf_seg_wipe_frames(s); /* (a) */
    int rc = qsf_fault_check(QSF_FP_RECYCLE_ZEROED, e);
    if (rc == QSF_OK) /* (b) */
        rc = qsf_seg_sync_range(s, QSF_SFA_HEADER_SIZE, s->size, dir, e);
    if (rc != QSF_OK)
        return rc;
    qsf_seg_reset_file(s, qsf_ring_published_fsn(r) + 1, QSF_SFA_FLAG_MANIFEST_REQUIRED); /* (c) */
    rc = qsf_fault_check(QSF_FP_RECYCLE_HEADER, e);
    if (rc == QSF_OK)
        rc = qsf_seg_sync_header(s, dir, e);
    if (rc == QSF_OK)
        rc = qsf_fault_check(QSF_FP_SEGMENT_RECYCLED, e);
    return rc == QSF_OK ? rename_fresh(r, s, e) : rc; /* (d) */
}
