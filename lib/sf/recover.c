/* Recovery of a locked slot (docs/FORMAT.md §6): the passes, each scanning,
 * planning and repairing, until one finds nothing to repair; or a fresh start
 * (docs/FORMAT.md §6.21) when no segment survives. The steps live in recover_*.c (see
 * recover_int.h); opening and releasing a slot are in slot_open.c. */
#include "recover_int.h"

#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/sfio.h"
#include "sf/sfa.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void qsf_rc_state_free(rc_state *st) {
    qsf_rc_dict_free(st);
    free(st->buf);
    for (uint32_t i = 0; i < st->nsegs; i++)
        free(st->segs[i].pieces);
    free(st->segs);
    free(st->data);
    free(st->tmp);
    free(st->spans);
    memset(st, 0, sizeof *st);
}

void qsf_rc_report_losses(qsf_recovery_report *rep, const qsf_recovery_loss *l, uint32_t n) {
    rep->losses = n;
    rep->frames_lost = 0;
    for (uint32_t i = 0; i < n; i++)
        rep->frames_lost += l[i].frames_destroyed + l[i].frames_retired;
}

static void fill_report(rc_state *st) {
    qsf_slot_recovered *out = st->out;
    qsf_recovery_report *rep = &out->report;
    const rc_carry *c = st->carry;
    rep->segments = out->segment_count;
    for (uint32_t i = 0; i < out->segment_count; i++) {
        rep->frames += out->segments[i].frame_count;
        rep->bytes += out->segments[i].last_good - QSF_SFA_HEADER_SIZE;
    }
    for (uint32_t i = 0; i < st->nsegs; i++)
        rep->torn_bytes += st->segs[i].torn_bytes;
    if (c->torn_bytes > rep->torn_bytes) /* an earlier pass rewrote what was torn */
        rep->torn_bytes = c->torn_bytes;
    rep->quarantined_files = c->quarantined + st->quarantined;
    rep->debris_removed = c->debris + st->debris;
    rep->acked_fsn = out->acked_fsn;
    rep->published_fsn = out->published_fsn;
    rep->commit_boundary_fsn = out->commit_boundary_fsn;
    rep->self_sufficient = out->symdict.self_sufficient;
    qsf_rc_report_losses(rep, c->losses, c->nlosses);
    rep->aborted_frames_cut = c->aborted_frames;
    rep->aborted_from_fsn = c->aborted_frames ? c->aborted_from : -1;
    rep->aborted_to_fsn = c->aborted_frames ? c->aborted_to : -1;
    rep->aborted_rows_cut = c->aborted_rows;
    rep->manifest_repaired = c->manifest_repaired;
}

/* ---- docs/FORMAT.md §6.7 migration ---- */

/* Creates the manifest for a slot that had none, then stamps MANIFEST_REQUIRED
 * into every live segment (the manifest is durable first, as in docs/DURABILITY.md §4). */
static int migrate(rc_state *st, qsf_errinfo *err) {
    qsf_slot *s = &st->out->slot;
    int64_t head = st->ndata > 0 ? st->data[0]->info.base_seq : st->active->info.base_seq;
    QSF_LOGI("migrating slot %s: creating %s (headBase %lld, activeBase %lld)", s->path,
             QSF_NAME_MANIFEST, (long long) head, (long long) st->active->info.base_seq);
    int rc = qsf_manifest_create(s->dirfd, s->path, head, st->active->info.base_seq,
                                 &st->out->manifest, err);
    for (uint32_t i = 0; rc == QSF_OK && i < st->ndata; i++)
        rc = qsf_rc_stamp_flag(st, st->data[i], err);
    if (rc == QSF_OK)
        rc = qsf_rc_stamp_flag(st, st->active, err);
    return rc;
}

/* ---- docs/FORMAT.md §6.12 ---- */

int64_t qsf_rc_seed_acked(int64_t lowest_base, int64_t published, int64_t watermark,
                          bool *ignored) {
    int64_t cand = lowest_base - 1 > watermark ? lowest_base - 1 : watermark;
    *ignored = cand > published;
    return *ignored ? lowest_base - 1 : cand;
}

static int seed_watermark(qsf_slot_recovered *out, qsf_errinfo *err) {
    qsf_slot *s = &out->slot;
    int rc = qsf_watermark_open(s->dirfd, s->path, out->wm_form, &out->watermark, err);
    if (rc == QSF_OK && out->watermark.fd < 0) { /* none yet: trim needs one */
        rc = qsf_watermark_create(s->dirfd, s->path, out->wm_form, &out->watermark, err);
        if (rc == QSF_OK)
            rc = qsf_fsync_dir(s->dirfd, s->path, err);
    }
    if (rc != QSF_OK)
        return rc;
    int64_t wm = out->watermark.present ? out->watermark.fsn : -1;
    int64_t cand = qsf_rc_seed_acked(out->segments[0].base_seq, out->published_fsn, wm,
                                     &out->report.watermark_ignored);
    if (out->report.watermark_ignored)
        QSF_LOGW("watermark exceeds publishedFsn in %s (%lld > %lld); ignoring it and replaying "
                 "from FSN %lld",
                 s->path, (long long) wm, (long long) out->published_fsn, (long long) cand + 1);
    out->acked_fsn = cand;
    return QSF_OK;
}

/* ---- one pass ---- */

/* docs/FORMAT.md §6.5 "no valid segment": quarantined debris is gone; a collapsed manifest
 * (headBase == activeBase) is removed; then the slot starts fresh. */
static int start_empty(rc_state *st, uint64_t seg_bytes, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    qsf_slot *s = &out->slot;
    int rc = QSF_OK;
    if (out->manifest.fd >= 0) {
        qsf_manifest_close(&out->manifest);
        rc = qsf_unlink_quiet(s->dirfd, s->path, QSF_NAME_MANIFEST, err);
        if (rc == QSF_OK)
            rc = qsf_fsync_dir(s->dirfd, s->path, err);
    }
    if (rc == QSF_OK)
        rc = qsf_rc_fresh_start(out, seg_bytes, err);
    if (rc == QSF_OK)
        fill_report(st);
    return rc;
}

/* Everything after the chain is known: clean up, seed, analyse, baseline. */
static int finish_recovered(rc_state *st, int durability, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    int rc = st->legacy ? migrate(st, err) : QSF_OK;
    if (rc == QSF_OK)
        rc = qsf_rc_apply_fates(st, err);
    if (rc == QSF_OK && st->active->residue_end > 0)
        rc = qsf_rc_zero_residue(st, st->active, err);
    if (rc == QSF_OK)
        rc = qsf_rc_publish_chain(st, err);
    if (rc == QSF_OK)
        rc = seed_watermark(out, err);
    if (rc == QSF_OK)
        rc = qsf_rc_publish_retired(st, err);
    /* nothing was left to cut: the last frame on disk commits, or every frame
     * after the last committing one is acknowledged */
    out->commit_boundary_fsn = out->published_fsn;
    if (rc == QSF_OK)
        rc = qsf_rc_dict_finish(st, err);
    if (rc == QSF_OK && out->data_loss)
        rc = qsf_rc_set_aside_loss(st, err);
    if (rc == QSF_OK && !out->data_loss)
        rc = qsf_rc_baseline(st, durability, err);
    fill_report(st);
    return rc;
}

/* The .ack-watermark value as it is on disk, in either form, without
 * repairing anything (the handle is opened later): -1 when the file is absent,
 * has neither size or no valid value. */
static int read_watermark(const qsf_slot *s, int64_t *wm, qsf_errinfo *err) {
    *wm = -1;
    uint64_t size = 0;
    int fd = qsf_open_regular(s->dirfd, QSF_NAME_WATERMARK, O_RDONLY, &size);
    if (fd < 0)
        return errno == ENOENT
                   ? QSF_OK
                   : qsf_file_err(err, errno, "cannot open", s->path, QSF_NAME_WATERMARK);
    uint8_t img[QSF_DUAL_FILE_SIZE];
    bool known = size == QSF_DUAL_FILE_SIZE || size == QSF_AKW_COMPACT_SIZE;
    int rc = known ? qsf_read_at(fd, img, size, 0, s->path, QSF_NAME_WATERMARK, err) : QSF_OK;
    int64_t g, v;
    if (rc == QSF_OK && known && qsf_akw_read_image(img, size, &g, &v) == 0)
        *wm = v;
    QSF_OS->close(fd);
    return rc;
}

int qsf_rc_plan(rc_state *st, qsf_errinfo *err) {
    int64_t lowest = st->ndata > 0 ? st->data[0]->info.base_seq : st->active->info.base_seq;
    int64_t published = st->active->info.base_seq + (int64_t) st->active->info.frame_count - 1;
    bool ignored;
    st->acked = qsf_rc_seed_acked(lowest, published, st->wm, &ignored);
    return qsf_rc_plan_groups(st, err);
}

/* The plan changes files: record what it gives up, carry it out, run again. */
static int repair_pass(rc_state *st, qsf_errinfo *err) {
    rc_carry *c = st->carry;
    uint32_t first_new = c->nlosses;
    int rc = qsf_rc_record_losses(st, err);
    /* frames the published mark names were published: a loss, not a flush
     * that never returned */
    bool published_tail = st->active->marked && st->active->fill > 0;
    if (st->cut.from <= st->cut.to && !published_tail) {
        c->aborted_frames += (uint64_t) (st->cut.to - st->cut.from + 1);
        c->aborted_rows += st->cut.rows;
        c->aborted_from = c->aborted_frames == (uint64_t) (st->cut.to - st->cut.from + 1)
                              ? st->cut.from
                              : c->aborted_from;
        c->aborted_to = st->cut.to;
    }
    c->manifest_repaired |= st->new_head >= 0 || st->new_active >= 0;
    for (uint32_t i = 0; i < st->nsegs; i++)
        if (st->segs[i].torn_bytes > c->torn_bytes)
            c->torn_bytes = st->segs[i].torn_bytes;
    if (rc == QSF_OK)
        rc = qsf_rc_repair(st, err);
    /* the cut removed what the mark named: once reported, it is done with
     * (a crash before this reports it again, never silently) */
    if (rc == QSF_OK && st->active->marked && st->active->fill > 0 && st->cut.from <= st->cut.to)
        rc = qsf_unlink_quiet(st->out->slot.dirfd, st->out->slot.path, QSF_NAME_PUBLISHED, err);
    for (uint32_t k = first_new; rc == QSF_OK && k < c->nlosses; k++)
        for (uint32_t i = 0; i < st->nsegs; i++) /* name each loss's quarantined copy */
            if (strcmp(c->losses[k].file, st->segs[i].info.name) == 0 && st->segs[i].copy[0])
                snprintf(c->losses[k].copy, sizeof c->losses[k].copy, "%s", st->segs[i].copy);
    return rc;
}

static int recovery_pass(qsf_slot_recovered *out, rc_carry *carry, int durability,
                         uint64_t seg_bytes, bool *rerun, qsf_errinfo *err) {
    rc_state st = {.out = out, .carry = carry, .new_head = -1, .new_active = -1};
    st.buf = malloc(QSF_RECOVER_BUF);
    if (!st.buf)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the recovery buffer");
    bool empty = false;
    int rc = qsf_rc_enumerate(&st, err);
    if (rc == QSF_OK)
        rc = qsf_rc_scan_all(&st, err);
    if (rc == QSF_OK)
        rc = read_watermark(&out->slot, &st.wm, err);
    if (rc == QSF_OK)
        rc = qsf_manifest_open(out->slot.dirfd, out->slot.path, &out->manifest, err);
    if (rc == QSF_OK)
        rc = qsf_rc_build_chain(&st, &empty, err);
    *rerun = rc == QSF_OK && st.rerun;
    if (rc == QSF_OK && !*rerun && !empty)
        rc = qsf_symdict_open(&out->symdict, out->slot.dirfd, out->slot.path, err);
    if (rc == QSF_OK && !*rerun && !empty)
        rc = qsf_rc_dict_begin(&st, err);
    if (rc == QSF_OK && !*rerun && !empty)
        rc = qsf_rc_plan(&st, err);
    if (rc == QSF_OK && !*rerun && !empty && qsf_rc_plan_repairs(&st)) {
        rc = repair_pass(&st, err);
        *rerun = true;
    }
    if (rc == QSF_OK && !*rerun && empty)
        rc = qsf_rc_apply_fates(&st, err);
    if (rc == QSF_OK && !*rerun)
        rc = empty ? start_empty(&st, seg_bytes, err) : finish_recovered(&st, durability, err);
    carry->debris += *rerun ? st.debris : 0;
    carry->quarantined += *rerun ? st.quarantined : 0;
    out->next_generation = st.any_gen && st.max_gen + 1 > 1 ? st.max_gen + 1 : 1;
    qsf_rc_state_free(&st);
    return rc;
}

#define RC_MAX_PASSES 4

/* Repairs (zeroed sealed residue, rewrites, the cut, manifest corrections)
 * are proven by a clean re-run (qsf rule). */
int qsf_rc_recover_slot(qsf_slot_recovered *out, int durability, uint64_t seg_bytes,
                        qsf_errinfo *err) {
    rc_carry carry = {.aborted_from = -1, .aborted_to = -1};
    int rc = QSF_OK;
    bool rerun = true;
    for (int pass = 0; rc == QSF_OK && rerun && pass < RC_MAX_PASSES; pass++) {
        if (pass > 0) {
            qsf_rc_drop_pass(out);
            QSF_LOGI("slot %s: repaired; re-running recovery to prove it", out->slot.path);
        }
        rc = recovery_pass(out, &carry, durability, seg_bytes, &rerun, err);
    }
    if (rc == QSF_OK && rerun)
        rc = qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                         "slot %s: recovery repaired the slot %d times and still finds something "
                         "to repair (residue after the last frame of a sealed segment, or damage "
                         "that comes back)",
                         out->slot.path, RC_MAX_PASSES);
    if (rc == QSF_OK) {
        out->losses = carry.losses;
        out->n_losses = carry.nlosses;
        carry.losses = NULL;
    }
    free(carry.losses);
    return rc;
}
