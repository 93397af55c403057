/* Recovery steps 9 and 12 (docs/FORMAT.md §6.11, §6.13) and the migration stamp of
 * docs/FORMAT.md §6.7: everything recovery changes on disk in a recovered slot. Each change is
 * made durable before recovery goes on (zeroing: pwrite + fdatasync; deletes and
 * renames: one directory fsync). */
#include "recover_int.h"

#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "qsf_assert.h"
#include "sf/segfmt.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

static int open_rw(rc_state *st, const rc_seg *s, int *fd, qsf_errinfo *err) {
    *fd = qsf_open_regular(st->out->slot.dirfd, s->info.name, O_RDWR, NULL);
    if (*fd < 0)
        return qsf_file_err(err, errno, "cannot open segment", st->out->slot.path, s->info.name);
    return QSF_OK;
}

static int data_sync(int fd, const char *dir, const char *name, qsf_errinfo *err) {
    if (QSF_OS->fdatasync(fd) == 0)
        return QSF_OK;
    int e = errno;
    return qsf_err_set(err, QSF_E_IO, 0, e, "fdatasync of %s/%s failed: %s", dir, name,
                       strerror(e));
}

/* Durably zeroes [from, to) of the segment (pwrite of zeros + fdatasync). */
int qsf_rc_zero_range(rc_state *st, rc_seg *s, uint64_t from, uint64_t to, qsf_errinfo *err) {
    qsf_assert(!st->dry_run && from <= to); /* READ and PLAN write nothing */
    int fd;
    int rc = open_rw(st, s, &fd, err);
    if (rc != QSF_OK)
        return rc;
    memset(st->buf, 0, QSF_RECOVER_BUF);
    const char *dir = st->out->slot.path;
    for (uint64_t pos = from; pos < to && rc == QSF_OK;) {
        uint64_t n = to - pos;
        size_t chunk = n < QSF_RECOVER_BUF ? (size_t) n : QSF_RECOVER_BUF;
        rc = qsf_write_at(fd, st->buf, chunk, pos, dir, s->info.name, err);
        pos += chunk;
    }
    if (rc == QSF_OK)
        rc = data_sync(fd, dir, s->info.name, err);
    QSF_OS->close(fd);
    if (rc == QSF_OK)
        QSF_LOGI("zeroed %llu bytes of %s/%s after offset %llu", (unsigned long long) (to - from),
                 dir, s->info.name, (unsigned long long) from);
    return rc;
}

/* Durably zeroes [lastGood, residue_end): an old frame beyond a tear, with a
 * valid CRC, must never line up with new appends and come back to life. */
int qsf_rc_zero_residue(rc_state *st, rc_seg *s, qsf_errinfo *err) {
    int rc = qsf_rc_zero_range(st, s, s->info.last_good, s->residue_end, err);
    if (rc == QSF_OK)
        s->residue_end = 0;
    return rc;
}

int qsf_rc_zero_sealed(rc_state *st, qsf_errinfo *err) {
    const rc_plan *p = &st->plan;
    qsf_assert(p->active != NULL);
    for (uint32_t i = 0; i < p->ndata; i++) {
        int rc = qsf_rc_residue_to_zero(p, p->data[i]) ? qsf_rc_zero_residue(st, p->data[i], err)
                                                       : QSF_OK;
        if (rc != QSF_OK)
            return rc;
    }
    return QSF_OK;
}

static int apply_one(rc_state *st, rc_seg *s, qsf_errinfo *err) {
    const qsf_slot *slot = &st->out->slot;
    if (s->fate == RC_DELETE || s->fate == RC_DEBRIS) {
        QSF_LOGI("deleting %s/%s (%s)", slot->path, s->info.name,
                 s->fate == RC_DEBRIS  ? "no header and nothing but zeros: it holds no data"
                 : s->info.frame_count ? "acknowledged leftover"
                                       : "clean spare");
        st->done.debris += s->fate == RC_DEBRIS;
        return qsf_unlink_quiet(slot->dirfd, slot->path, s->info.name, err);
    }
    st->done.quarantined++;
    uint32_t pruned = 0;
    int rc = qsf_slot_quarantine_file(slot->dirfd, slot->path, s->info.name, &pruned, err);
    st->done.debris += pruned;
    return rc;
}

/* "<segment>.tmp" files: rewrites that never reached their rename (the
 * original is still in place and is recovered as it is). */
static int remove_tmp(rc_state *st, bool *changed, qsf_errinfo *err) {
    const qsf_slot *slot = &st->out->slot;
    const rc_found *f = &st->found;
    for (uint32_t i = 0; i < f->ntmp; i++) {
        QSF_LOGI("deleting %s/%s (an interrupted rewrite)", slot->path, f->tmp[i]);
        int rc = qsf_unlink_quiet(slot->dirfd, slot->path, f->tmp[i], err);
        if (rc != QSF_OK)
            return rc;
        st->done.debris++;
        *changed = true;
    }
    return QSF_OK;
}

/* Deletes extras, leftovers and debris, then quarantines corrupt and torn
 * files (only reached after the chain validated), then one directory fsync. */
int qsf_rc_apply_fates(rc_state *st, qsf_errinfo *err) {
    qsf_assert(!st->dry_run);
    qsf_assert(!st->plan.active || st->plan.active->fate == RC_KEEP); /* never the live one */
    bool changed = false;
    int rc = remove_tmp(st, &changed, err);
    if (rc != QSF_OK)
        return rc;
    static const int order[] = {RC_DELETE, RC_DEBRIS, RC_QUARANTINE};
    for (int pass = 0; pass < 3; pass++)
        for (uint32_t i = 0; i < st->found.nsegs; i++) {
            rc_seg *s = &st->found.segs[i];
            if (s->fate != order[pass] || s == st->plan.active)
                continue;
            rc = apply_one(st, s, err);
            if (rc != QSF_OK)
                return rc;
            changed = true;
        }
    return changed ? qsf_fsync_dir(st->out->slot.dirfd, st->out->slot.path, err) : QSF_OK;
}

/* Sets MANIFEST_REQUIRED in the header (byte 5) with pwrite, then fsync. */
int qsf_rc_stamp_flag(rc_state *st, rc_seg *s, qsf_errinfo *err) {
    qsf_assert(!st->dry_run);
    if (s->info.flags & QSF_SFA_FLAG_MANIFEST_REQUIRED)
        return QSF_OK;
    int fd;
    int rc = open_rw(st, s, &fd, err);
    if (rc != QSF_OK)
        return rc;
    uint8_t flags = (uint8_t) (s->info.flags | QSF_SFA_FLAG_MANIFEST_REQUIRED);
    rc = qsf_write_at(fd, &flags, 1, QSF_SFA_AT_FLAGS, st->out->slot.path, s->info.name, err);
    if (rc == QSF_OK && QSF_OS->fsync(fd) != 0)
        rc = qsf_file_err(err, errno, "cannot sync header of", st->out->slot.path, s->info.name);
    QSF_OS->close(fd);
    if (rc == QSF_OK)
        s->info.flags = flags;
    return rc;
}

/* periodic/append: the recovered bytes may exist only in the page cache. */
int qsf_rc_baseline(rc_state *st, int durability, qsf_errinfo *err) {
    if (durability != QSF_DUR_PERIODIC && durability != QSF_DUR_APPEND)
        return QSF_OK;
    qsf_slot_recovered *out = st->out;
    for (uint32_t i = 0; i < out->segment_count; i++) {
        rc_seg tmp;
        tmp.info = out->segments[i];
        int fd;
        int rc = open_rw(st, &tmp, &fd, err);
        if (rc == QSF_OK) {
            rc = data_sync(fd, out->slot.path, tmp.info.name, err);
            QSF_OS->close(fd);
        }
        if (rc != QSF_OK)
            return rc;
    }
    if (out->symdict.fd >= 0)
        out->symdict.dirty = true; /* read back from a file that may be unsynced */
    return qsf_symdict_sync(&out->symdict, err);
}
