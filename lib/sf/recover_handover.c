/* WRITE when the plan repairs nothing: the recovered slot handed to the
 * runtime (leftovers deleted and quarantined, a legacy slot migrated
 * (docs/FORMAT.md §6.7), the live segments, ackedFsn seeded from the
 * watermark (docs/FORMAT.md §6.12), the retired spans, the rebuilt dictionary
 * and the baseline sync (docs/FORMAT.md §6.13)); or, with no chain, the
 * empty slot restarted (docs/FORMAT.md §6.5, then recover_fresh.c). */
#include "recover_int.h"

#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "sf/sfio.h"

/* ---- docs/FORMAT.md §6.7 migration ---- */

/* Creates the manifest for a slot that had none, then stamps MANIFEST_REQUIRED
 * into every live segment (the manifest is durable first, as in docs/DURABILITY.md §4). */
static int migrate(rc_state *st, qsf_errinfo *err) {
    qsf_slot *s = &st->out->slot;
    const rc_plan *p = &st->plan;
    int64_t head = p->ndata > 0 ? p->data[0]->info.base_seq : p->active->info.base_seq;
    QSF_LOGI("migrating slot %s: creating %s (headBase %lld, activeBase %lld)", s->path,
             QSF_NAME_MANIFEST, (long long) head, (long long) p->active->info.base_seq);
    int rc = qsf_manifest_create(s->dirfd, s->path, head, p->active->info.base_seq,
                                 &st->out->manifest, err);
    for (uint32_t i = 0; rc == QSF_OK && i < p->ndata; i++)
        rc = qsf_rc_stamp_flag(st, p->data[i], err);
    if (rc == QSF_OK)
        rc = qsf_rc_stamp_flag(st, p->active, err);
    return rc;
}

/* ---- docs/FORMAT.md §6.12 ---- */

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

/* ---- handing over ---- */

/* docs/FORMAT.md §6.5 "no valid segment": quarantined debris is gone; a collapsed manifest
 * (headBase == activeBase) is removed; then the slot starts fresh. */
int qsf_rc_start_empty(rc_state *st, uint64_t seg_bytes, qsf_errinfo *err) {
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
    return rc;
}

int qsf_rc_hand_over(rc_state *st, int durability, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    const rc_plan *p = &st->plan;
    int rc = p->legacy ? migrate(st, err) : QSF_OK;
    if (rc == QSF_OK)
        rc = qsf_rc_apply_fates(st, err);
    if (rc == QSF_OK && p->active->residue_end > 0)
        rc = qsf_rc_zero_residue(st, p->active, err);
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
    return rc;
}
