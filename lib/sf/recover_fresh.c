/* Fresh start (docs/FORMAT.md §6.21) and the create barrier sequence (docs/DURABILITY.md §4):
 *
 *   1. .ack-watermark: stale one removed, new zero bytes of out->wm_form (O_EXCL, fsync)
 *   2. .symbol-dict: created or truncated, 8-byte header
 *   3. sf-initial.sfa: O_EXCL + posix_fallocate, header (flags 0, baseSeq 0) by pwrite
 *   4. sync header (fsync), dir fsync
 *   5. sf-manifest.bin generation 1 (0, 0) + fsync, dir fsync
 *   6. stamp MANIFEST_REQUIRED (header byte 5) + fsync
 *
 * A crash between steps leaves an unflagged segment without manifest (a legacy
 * slot, migrated next time) or a manifest plus an unflagged segment (valid):
 * the manifest is never durable before the segment it names. */
#include "recover_int.h"

#include "err.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/sfio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int header_sync(int fd, const char *dir, qsf_errinfo *err) {
    if (QSF_OS->fsync(fd) == 0)
        return QSF_OK;
    return qsf_file_err(err, errno, "cannot sync header of", dir, QSF_NAME_INITIAL);
}

/* Steps 3-4: the first segment, durable with its directory entry. */
static int create_initial(qsf_slot *s, uint64_t size, int *fd, qsf_errinfo *err) {
    int rc = qsf_create_prealloc(s->dirfd, s->path, QSF_NAME_INITIAL, size, fd, err);
    if (rc != QSF_OK)
        return rc;
    uint8_t h[QSF_SFA_HEADER_SIZE];
    qsf_sfa_header_encode(h, 0, 0, QSF_OS->wall_us());
    rc = qsf_write_at(*fd, h, sizeof h, 0, s->path, QSF_NAME_INITIAL, err);
    if (rc == QSF_OK)
        rc = header_sync(*fd, s->path, err);
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(s->dirfd, s->path, err);
    if (rc != QSF_OK) {
        QSF_OS->close(*fd);
        QSF_OS->unlinkat(s->dirfd, QSF_NAME_INITIAL, 0);
        *fd = -1;
    }
    return rc;
}

/* Steps 5-6. */
static int manifest_and_stamp(qsf_slot_recovered *out, int fd, qsf_errinfo *err) {
    qsf_slot *s = &out->slot;
    int rc = qsf_manifest_create(s->dirfd, s->path, 0, 0, &out->manifest, err);
    if (rc != QSF_OK)
        return rc;
    uint8_t flags = QSF_SFA_FLAG_MANIFEST_REQUIRED;
    rc = qsf_write_at(fd, &flags, 1, 5, s->path, QSF_NAME_INITIAL, err);
    if (rc == QSF_OK)
        rc = header_sync(fd, s->path, err);
    return rc;
}

static int describe(qsf_slot_recovered *out, uint64_t size, qsf_errinfo *err) {
    out->segments = calloc(1, sizeof *out->segments);
    if (!out->segments)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the segment list");
    qsf_seg_info *si = &out->segments[0];
    snprintf(si->name, sizeof si->name, "%s", QSF_NAME_INITIAL);
    si->generation = -1;
    si->last_good = QSF_SFA_HEADER_SIZE;
    si->file_size = size;
    si->flags = QSF_SFA_FLAG_MANIFEST_REQUIRED;
    si->active = true;
    out->segment_count = 1;
    out->active_index = 0;
    out->published_fsn = out->acked_fsn = out->commit_boundary_fsn = -1;
    out->fresh = true;
    return QSF_OK;
}

int qsf_rc_fresh_start(qsf_slot_recovered *out, uint64_t segment_bytes, qsf_errinfo *err) {
    qsf_slot *s = &out->slot;
    if (segment_bytes < QSF_SFA_MIN_SEGMENT)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "segment size %llu is below the %d-byte minimum",
                           (unsigned long long) segment_bytes, QSF_SFA_MIN_SEGMENT);
    int rc = qsf_watermark_create(s->dirfd, s->path, out->wm_form, &out->watermark, err);
    if (rc == QSF_OK)
        rc = qsf_symdict_create(&out->symdict, s->dirfd, s->path, err);
    int fd = -1;
    if (rc == QSF_OK)
        rc = create_initial(s, segment_bytes, &fd, err);
    if (rc == QSF_OK) {
        rc = manifest_and_stamp(out, fd, err);
        QSF_OS->close(fd);
    }
    if (rc == QSF_OK)
        rc = describe(out, segment_bytes, err);
    return rc;
}
