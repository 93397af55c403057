/* Carrying out the plan (docs/FORMAT.md, "Salvage" and "Cutting an
 * interrupted flush"), each step durable before the next, so that a crash
 * between any two leaves a slot that a later open (of qsf or of another
 * client) reads as valid and repairs the same way:
 *
 *   1. manifest bounds the data prove (record write + fsync)
 *   2. each damaged segment below the cut: a quarantined copy of it (synced,
 *      dir fsync), then the rewritten segment under "<name>.tmp" (placeholders
 *      for destroyed frames and for the given-up members, fsync), renamed over
 *      the original, dir fsync
 *   3. the interrupted flush: from the active segment down to the one holding
 *      its first frame, each segment's frames are zeroed (fdatasync) and then
 *      activeBase moves back to the segment before it (record + fsync), which
 *      leaves the zeroed one a clean spare; finally the segment holding the
 *      first frame is cut there (zeroed, or rewritten up to it)
 *
 * Recovery then runs again and proves the result. What the repair gives up
 * is recorded first, for the report of the open. */
#include "recover_int.h"

#include "bytes.h"
#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "qsf_assert.h"
#include "qwp/encoder.h"
#include "sf/segfmt.h"
#include "sf/sfio.h"
#include "sf/sidefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t last_fsn(const rc_seg *s) {
    return s->info.base_seq + (int64_t) s->info.frame_count - 1;
}

/* ---- writing the rewritten segment ---- */

typedef struct writer {
    qsf_bufw out;     /* buf: QSF_RECOVER_BUF bytes */
    uint64_t size;    /* the file's size: nothing is written past it */
    const rc_plan *p; /* the flushes given up */
} writer;

static int w_put(writer *w, const uint8_t *p, size_t n, qsf_errinfo *err) {
    if (w->out.off + w->out.used + n > w->size)
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "cannot rewrite %s/%s: the placeholders do not fit in %llu bytes (a gap "
                           "smaller than the smallest frame)",
                           w->out.dir, w->out.name, (unsigned long long) w->size);
    return qsf_bufw_put(&w->out, p, n, err);
}

/* A 22-byte frame holding the placeholder (deferred) or the empty commit. */
static int w_empty(writer *w, bool commits, qsf_errinfo *err) {
    uint8_t msg[QSF_QWP_PLACEHOLDER_LEN], frame[QSF_SFA_FRAME_OVERHEAD + sizeof msg];
    size_t n = commits ? qsf_qwp_empty_commit(msg) : qsf_qwp_placeholder(msg);
    qsf_sfa_frame_encode(frame, msg, (uint32_t) n);
    return w_put(w, frame, sizeof frame, err);
}

static int w_copy(writer *w, rc_reader *r, uint64_t off, uint64_t n, qsf_errinfo *err) {
    while (n > 0) {
        const uint8_t *p;
        size_t got;
        int rc =
            qsf_rc_read(r, off, n < QSF_RECOVER_BUF ? (size_t) n : QSF_RECOVER_BUF, &p, &got, err);
        if (rc == QSF_OK && got == 0)
            rc = qsf_err_set(err, QSF_E_IO, 0, 0, "%s/%s changed during recovery", r->dir, r->name);
        if (rc == QSF_OK)
            rc = w_put(w, p, got, err);
        if (rc != QSF_OK)
            return rc;
        off += got;
        n -= got;
    }
    return QSF_OK;
}

/* Each FSN of the segment: kept, or a placeholder (destroyed, or a member of
 * a given-up flush; its committing member becomes the empty commit, so the
 * flushes after it stay flushes of their own). */
static int on_rewrite(rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err) {
    writer *w = user;
    if (!s->intact)
        return w_empty(w, false, err);
    if (!qsf_rc_given_up_in(w->p, s->fsn))
        return w_copy(w, r, s->off, QSF_SFA_FRAME_OVERHEAD + (uint64_t) s->len, err);
    rc_frame_kind k;
    int rc = qsf_rc_frame_kind_of(r, s, &k, err);
    return rc == QSF_OK ? w_empty(w, k.commits, err) : rc;
}

static int read_header(rc_state *st, rc_seg *s, uint8_t h[QSF_SFA_HEADER_SIZE], qsf_errinfo *err) {
    int fd = qsf_open_regular(st->out->slot.dirfd, s->info.name, O_RDONLY, NULL);
    if (fd < 0)
        return qsf_file_err(err, errno, "cannot open segment", st->out->slot.path, s->info.name);
    int rc = qsf_read_at(fd, h, QSF_SFA_HEADER_SIZE, 0, st->out->slot.path, s->info.name, err);
    QSF_OS->close(fd);
    return rc;
}

static int sync_file(int fd, const char *dir, const char *name, qsf_errinfo *err) {
    if (QSF_OS->fsync(fd) == 0)
        return QSF_OK;
    int e = errno;
    return qsf_err_set(err, QSF_E_DURABILITY, 0, e, "fsync of %s/%s failed: %s", dir, name,
                       strerror(e));
}

/* The new image into "<name>.tmp": header, FSNs base..limit-1, zeros. */
static int write_tmp(rc_state *st, rc_seg *s, const char *tmp, int64_t limit, qsf_errinfo *err) {
    const qsf_slot *sl = &st->out->slot;
    uint8_t h[QSF_SFA_HEADER_SIZE];
    int rc = read_header(st, s, h, err);
    if (rc == QSF_OK)
        rc = qsf_unlink_quiet(sl->dirfd, sl->path, tmp, err);
    writer w = {.out = {.fd = -1, .dir = sl->path, .name = tmp, .cap = QSF_RECOVER_BUF},
                .size = s->info.file_size,
                .p = &st->plan};
    if (rc == QSF_OK)
        rc = qsf_create_prealloc(sl->dirfd, sl->path, tmp, s->info.file_size, &w.out.fd, err);
    if (rc != QSF_OK)
        return rc;
    w.out.buf = malloc(QSF_RECOVER_BUF);
    rc = w.out.buf ? w_put(&w, h, sizeof h, err)
                   : qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to rewrite %s", s->info.name);
    int64_t to = limit - 1 < last_fsn(s) ? limit - 1 : last_fsn(s);
    if (rc == QSF_OK && to >= s->info.base_seq)
        rc = qsf_rc_walk_chain(sl, st->buf, w.p, s->info.base_seq, to, on_rewrite, &w, err);
    if (rc == QSF_OK)
        rc = qsf_bufw_flush(&w.out, err);
    if (rc == QSF_OK)
        rc = sync_file(w.out.fd, sl->path, tmp, err);
    free(w.out.buf);
    QSF_OS->close(w.out.fd);
    if (rc != QSF_OK)
        QSF_OS->unlinkat(sl->dirfd, tmp, 0);
    return rc;
}

int qsf_rc_rewrite_segment(rc_state *st, rc_seg *s, int64_t limit, bool keep_copy,
                           qsf_errinfo *err) {
    const qsf_slot *sl = &st->out->slot;
    qsf_assert(!s->corrupt && limit > s->info.base_seq); /* a segment keeps its first FSN */
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->info.name);
    uint32_t pruned = 0;
    int rc = keep_copy ? qsf_slot_quarantine_copy(sl->dirfd, sl->path, s->info.name, s->copy,
                                                  sizeof s->copy, &pruned, err)
                       : QSF_OK;
    st->done.debris += pruned;
    st->done.quarantined += keep_copy && rc == QSF_OK;
    if (rc == QSF_OK)
        rc = write_tmp(st, s, tmp, limit, err);
    if (rc == QSF_OK && QSF_OS->renameat(sl->dirfd, tmp, sl->dirfd, s->info.name) != 0) {
        rc = qsf_file_err(err, errno, "cannot rename the rewritten segment", sl->path, tmp);
        QSF_OS->unlinkat(sl->dirfd, tmp, 0);
    }
    return rc == QSF_OK ? qsf_fsync_dir(sl->dirfd, sl->path, err) : rc;
}

/* Step 2 for one segment (limit: first FSN not to keep, INT64_MAX for all).
 * A segment with nothing damaged in it, rewritten only because its frames
 * need lost symbols, keeps no copy: its bytes are intact, and a copy would
 * push the damaged files' copies out of the newest QSF_MAX_QUARANTINED_KEPT. */
static int rewrite(rc_state *st, rc_seg *s, int64_t limit, qsf_errinfo *err) {
    int rc = qsf_rc_rewrite_segment(st, s, limit, !s->unknown_only, err);
    if (rc == QSF_OK && s->unknown_only)
        QSF_LOGW("segment %s/%s rewritten with placeholders for the flushes given up because "
                 "they need symbols that are lost",
                 st->out->slot.path, s->info.name);
    else if (rc == QSF_OK)
        QSF_LOGW("segment %s/%s rewritten with placeholders for what was damaged or given up; "
                 "the damaged file is kept as %s",
                 st->out->slot.path, s->info.name, s->copy);
    return rc;
}

/* ---- the cut ---- */

/* File offset where FSN fsn's bytes start (it is an intact frame, the first
 * slot of a gap, or the first frame lost at the end). */
typedef struct find {
    int64_t fsn;
    uint64_t off;
} find;

static int on_find(rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err) {
    (void) r;
    (void) err;
    find *f = user;
    f->off = s->off;
    return QSF_OK;
}

static int zero_from(rc_state *st, rc_seg *s, uint64_t from, qsf_errinfo *err) {
    uint64_t end = s->residue_end > s->info.last_good ? s->residue_end : s->info.last_good;
    for (uint32_t i = 0; i < s->npieces; i++)
        if (s->pieces[i].end > end)
            end = s->pieces[i].end;
    return end > from ? qsf_rc_zero_range(st, s, from, end, err) : QSF_OK;
}

static rc_seg *segment_of(const rc_plan *p, int64_t fsn) {
    for (uint32_t i = 0; i < p->ndata; i++)
        if (p->data[i]->info.base_seq <= fsn && fsn <= last_fsn(p->data[i]))
            return p->data[i];
    return p->active;
}

static rc_seg *chain_before(const rc_plan *p, const rc_seg *s) {
    for (uint32_t i = 1; i < p->ndata; i++)
        if (p->data[i] == s)
            return p->data[i - 1];
    return p->ndata > 0 && p->data[p->ndata - 1] != s ? p->data[p->ndata - 1] : NULL;
}

static int manifest_to(rc_state *st, int64_t head, int64_t active, qsf_errinfo *err) {
    qsf_manifest *m = &st->out->manifest;
    if (m->fd < 0)
        return QSF_OK; /* a legacy slot: its manifest is made after recovery */
    if (head != m->head_base || active != m->active_base)
        QSF_LOGW("%s/%s: correcting headBase %lld -> %lld, activeBase %lld -> %lld from the "
                 "segments",
                 m->dir, QSF_NAME_MANIFEST, (long long) m->head_base, (long long) head,
                 (long long) m->active_base, (long long) active);
    return qsf_manifest_correct(m, head, active, err);
}

static int cut(rc_state *st, qsf_errinfo *err) {
    const rc_plan *p = &st->plan;
    rc_seg *k = segment_of(p, p->cut.from), *j = p->active;
    int rc = QSF_OK;
    while (rc == QSF_OK && j != k) {
        rc_seg *prev = chain_before(p, j);
        rc = zero_from(st, j, QSF_SFA_HEADER_SIZE, err); /* an empty active at the chain end */
        if (rc == QSF_OK)
            rc = manifest_to(st, st->out->manifest.head_base, prev->info.base_seq, err);
        j = prev;
    }
    if (rc != QSF_OK)
        return rc;
    qsf_assert(p->cut.from > p->acked && k->info.base_seq <= p->cut.from); /* never acked */
    if (k->rewrite)
        return rewrite(st, k, p->cut.from, err);
    find f = {.fsn = p->cut.from, .off = 0};
    rc = qsf_rc_walk_chain(&st->out->slot, st->buf, p, p->cut.from, p->cut.from, on_find, &f, err);
    return rc == QSF_OK ? zero_from(st, k, f.off, err) : rc;
}

static void log_cut(const rc_state *st) {
    const rc_span *c = &st->plan.cut;
    QSF_LOGW("slot %s: an interrupted flush of %lld frames (FSN %lld..%lld, %llu rows%s) was never "
             "acknowledged and was discarded",
             st->out->slot.path, (long long) (c->to - c->from + 1), (long long) c->from,
             (long long) c->to, (unsigned long long) c->rows, c->uncounted ? " counted" : "");
}

/* Steps 1-3. */
static int carry_out(rc_state *st, qsf_errinfo *err) {
    const rc_found *f = &st->found;
    const rc_plan *p = &st->plan;
    const qsf_manifest *m = &st->out->manifest;
    int rc = QSF_OK;
    if (p->new_head >= 0 || p->new_active >= 0)
        rc = manifest_to(st, p->new_head >= 0 ? p->new_head : m->head_base,
                         p->new_active >= 0 ? p->new_active : m->active_base, err);
    bool cutting = p->cut.from <= p->cut.to;
    rc_seg *k = cutting ? segment_of(p, p->cut.from) : NULL;
    for (uint32_t i = 0; rc == QSF_OK && i < f->nsegs; i++) {
        rc_seg *s = &f->segs[i];
        if (s->rewrite && (!k || s->info.base_seq < k->info.base_seq))
            rc = rewrite(st, s, INT64_MAX, err);
    }
    if (rc == QSF_OK && cutting) {
        log_cut(st);
        rc = cut(st, err);
    }
    return rc;
}

/* ---- the report of the open ---- */

/* What the repair gives up, into the report of the open (st->carry, which
 * outlives the pass): the losses, the interrupted flush cut, the manifest
 * corrected, the largest torn tail (the rewrite removes it). */
static int record(rc_state *st, qsf_errinfo *err) {
    const rc_plan *p = &st->plan;
    const rc_span *cs = &p->cut;
    rc_carry *c = st->carry;
    int rc = qsf_rc_record_losses(st, err);
    /* frames the published mark names were published: a loss, not a flush
     * that never returned */
    bool published_tail = p->active->marked && p->active->fill > 0;
    if (cs->from <= cs->to && !published_tail) {
        c->aborted_frames += (uint64_t) (cs->to - cs->from + 1);
        c->aborted_rows += cs->rows;
        c->aborted_from =
            c->aborted_frames == (uint64_t) (cs->to - cs->from + 1) ? cs->from : c->aborted_from;
        c->aborted_to = cs->to;
    }
    c->manifest_repaired |= p->new_head >= 0 || p->new_active >= 0;
    const rc_found *f = &st->found;
    for (uint32_t i = 0; i < f->nsegs; i++)
        if (f->segs[i].torn_bytes > c->torn_bytes)
            c->torn_bytes = f->segs[i].torn_bytes;
    return rc;
}

/* Each loss recorded from loss `first` on names its file's quarantined copy. */
static void name_copies(rc_state *st, uint32_t first) {
    rc_carry *c = st->carry;
    for (uint32_t k = first; k < c->nlosses; k++)
        for (uint32_t i = 0; i < st->found.nsegs; i++) {
            const rc_seg *s = &st->found.segs[i];
            if (strcmp(c->losses[k].file, s->info.name) == 0 && s->copy[0])
                snprintf(c->losses[k].copy, sizeof c->losses[k].copy, "%s", s->copy);
        }
}

int qsf_rc_repair(rc_state *st, qsf_errinfo *err) {
    const rc_plan *p = &st->plan;
    qsf_assert(!st->dry_run && qsf_rc_plan_repairs(st));
    uint32_t first_new = st->carry->nlosses;
    int rc = record(st, err);
    if (rc == QSF_OK)
        rc = carry_out(st, err);
    /* the cut removed what the mark named: once reported, it is done with
     * (a crash before this reports it again, never silently) */
    if (rc == QSF_OK && p->active->marked && p->active->fill > 0 && p->cut.from <= p->cut.to)
        rc = qsf_unlink_quiet(st->out->slot.dirfd, st->out->slot.path, QSF_NAME_PUBLISHED, err);
    if (rc == QSF_OK)
        name_copies(st, first_new);
    return rc;
}
