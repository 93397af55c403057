/* Opening a slot (recover.h): lock it, recover it (recover.c) or start it
 * fresh, and decide what an unreplayable slot becomes: set aside and restarted
 * by an owner's open, marked .failed by an orphan drainer's; and the lifetime
 * of what an open hands to the runtime, up to its release. */
#include "recover_int.h"

#include "err.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- result bookkeeping ---- */

static void handles_init(qsf_slot_recovered *out) {
    out->watermark.fd = -1;
    out->watermark.fsn = -1;
    out->manifest.fd = -1;
    qsf_symdict_init(&out->symdict);
}

static void free_results(qsf_slot_recovered *out) {
    free(out->segments);
    out->segments = NULL;
    out->segment_count = out->active_index = 0;
    free(out->retired);
    out->retired = NULL;
    out->n_retired = 0;
    free(out->losses);
    out->losses = NULL;
    out->n_losses = 0;
}

void qsf_rc_drop_pass(qsf_slot_recovered *out) {
    qsf_watermark_close(&out->watermark);
    qsf_manifest_close(&out->manifest);
    qsf_symdict_destroy(&out->symdict);
    free_results(out);
    qsf_slot s = out->slot;
    int form = out->wm_form;
    memset(out, 0, sizeof *out);
    out->slot = s;
    out->wm_form = form;
    handles_init(out);
}

/* docs/FORMAT.md §5.6: set the unreplayable slot aside and start fresh under its name. */
static int quarantine_and_restart(qsf_slot_recovered *out, uint64_t seg_bytes, qsf_errinfo *err) {
    char reason[sizeof out->data_loss_reason], path[sizeof out->report.quarantined_slot];
    snprintf(reason, sizeof reason, "%s", out->data_loss_reason);
    qsf_recovery_loss *losses = out->losses; /* what was found before: still reported */
    uint32_t nlosses = out->n_losses;
    out->losses = NULL;
    qsf_rc_drop_pass(out);
    out->losses = losses;
    out->n_losses = nlosses;
    int rc = qsf_slot_quarantine_slot(&out->slot, reason, path, sizeof path, err);
    if (rc == QSF_OK)
        rc = qsf_slot_recreate(&out->slot, err);
    if (rc == QSF_OK)
        rc = qsf_rc_fresh_start(out, seg_bytes, err);
    if (rc != QSF_OK)
        return rc;
    out->next_generation = 1;
    out->data_loss = true;
    snprintf(out->data_loss_reason, sizeof out->data_loss_reason, "%s", reason);
    snprintf(out->report.quarantined_slot, sizeof out->report.quarantined_slot, "%s", path);
    out->report.segments = 1;
    out->report.acked_fsn = out->report.published_fsn = out->report.commit_boundary_fsn = -1;
    /* out->losses is the one loss of the slot set aside (everything above
     * its ackedFsn, qsf_rc_set_aside_loss): the report counts it too, so
     * the recovery line and the loss agree */
    qsf_rc_report_losses(&out->report, out->losses, out->n_losses);
    QSF_LOGE("data loss: slot %s was unreplayable (%s) and was moved to %s; starting fresh",
             out->slot.path, reason, path);
    return QSF_OK;
}

static bool slot_dir_exists(const char *sf_dir, const char *sender_id) {
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", sf_dir, sender_id);
    return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* An adopting open, under the locks: the slot must still hold segments and no
 * .failed (QSF_E_INVAL otherwise, nothing touched). */
static int still_an_orphan(const qsf_slot *slot, qsf_errinfo *err) {
    bool failed, segments;
    if (qsf_orphan_markers_at(slot->dirfd, ".", &failed, &segments) != 0) {
        int e = errno;
        return qsf_err_set(err, QSF_E_IO, QSF_ERRF_RETRIABLE, e, "cannot list slot %s: %s",
                           slot->path, strerror(e));
    }
    if (failed)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "slot %s is marked .failed", slot->path);
    if (!segments)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "slot %s holds no segments any more",
                           slot->path);
    return QSF_OK;
}

/* A drainer does not take a slot over: a corrupt or unreplayable one keeps
 * its files and gets `.failed` with the reason, so no later scan adopts it
 * again, and the open fails with QSF_E_CORRUPT. If .failed cannot be written
 * the error is that one, so the slot is not counted as given up on and a
 * later scan tries again. `reason` may be err->msg. */
static int give_up_slot(const qsf_slot *slot, const char *reason, qsf_errinfo *err) {
    char why[QSF_ERRINFO_MSG_MAX];
    snprintf(why, sizeof why, "%s", reason);
    int rc = qsf_slot_write_failed(slot->dirfd, slot->path, why, err);
    if (rc != QSF_OK)
        return rc;
    return qsf_err_set(err, QSF_E_CORRUPT, 0, 0, "slot %s: %s; marked .failed", slot->path, why);
}

int qsf_slot_open_formed(const char *sf_dir, const char *sender_id, int durability,
                         uint64_t segment_bytes, int wm_form, bool adopt, qsf_slot_recovered *out,
                         qsf_errinfo *err) {
    memset(out, 0, sizeof *out);
    handles_init(out);
    out->wm_form = wm_form;
    /* Gone since the scan: acquiring it would create it again. */
    if (adopt && !slot_dir_exists(sf_dir, sender_id))
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "slot %s/%s is gone", sf_dir, sender_id);
    int rc = qsf_slot_acquire(sf_dir, sender_id, &out->slot, err);
    if (rc != QSF_OK)
        return rc;
    rc = adopt ? still_an_orphan(&out->slot, err) : QSF_OK;
    if (rc == QSF_OK)
        rc = qsf_rc_recover_slot(out, durability, segment_bytes, err);
    if (rc == QSF_OK && out->data_loss)
        rc = adopt ? give_up_slot(&out->slot, out->data_loss_reason, err)
                   : quarantine_and_restart(out, segment_bytes, err);
    else if (rc == QSF_E_CORRUPT && adopt)
        rc = give_up_slot(&out->slot, err ? err->msg : "corrupt", err);
    qsf_slot_unlock_logical(&out->slot);
    if (rc != QSF_OK)
        qsf_slot_release(out);
    return rc;
}

int qsf_slot_open_sized(const char *sf_dir, const char *sender_id, int durability,
                        uint64_t segment_bytes, qsf_slot_recovered *out, qsf_errinfo *err) {
    return qsf_slot_open_formed(sf_dir, sender_id, durability, segment_bytes, QSF_WM_JAVA16, false,
                                out, err);
}

int qsf_slot_adopt_sized(const char *sf_dir, const char *sender_id, int durability,
                         uint64_t segment_bytes, qsf_slot_recovered *out, qsf_errinfo *err) {
    return qsf_slot_open_formed(sf_dir, sender_id, durability, segment_bytes, QSF_WM_JAVA16, true,
                                out, err);
}

int qsf_slot_open(const char *sf_dir, const char *sender_id, int durability,
                  qsf_slot_recovered *out, qsf_errinfo *err) {
    return qsf_slot_open_sized(sf_dir, sender_id, durability, QSF_SLOT_DEFAULT_SEGMENT_BYTES, out,
                               err);
}

void qsf_slot_release(qsf_slot_recovered *r) {
    qsf_watermark_close(&r->watermark);
    qsf_manifest_close(&r->manifest);
    qsf_symdict_destroy(&r->symdict);
    free_results(r);
    qsf_slot_close(&r->slot);
}
