/* qsf_slot_open: lock, recover (sf-format.md §8) or start fresh (§8.13), and
 * hand the runtime everything it needs; plus release and the drained-close
 * cleanup (§9.5 steps 4-6). The steps live in recover_*.c (see recover_int.h). */
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

/* Drops everything one recovery pass produced, keeping the slot and its locks. */
static void drop_pass(qsf_slot_recovered *out) {
    qsf_watermark_close(&out->watermark);
    qsf_manifest_close(&out->manifest);
    qsf_symdict_destroy(&out->symdict);
    free_results(out);
    qsf_slot s = out->slot;
    memset(out, 0, sizeof *out);
    out->slot = s;
    handles_init(out);
}

static void state_free(rc_state *st) {
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
    rep->losses = c->nlosses;
    rep->frames_lost = 0;
    for (uint32_t i = 0; i < c->nlosses; i++)
        rep->frames_lost += c->losses[i].frames_destroyed + c->losses[i].frames_retired;
    rep->aborted_frames_cut = c->aborted_frames;
    rep->aborted_from_fsn = c->aborted_frames ? c->aborted_from : -1;
    rep->aborted_to_fsn = c->aborted_frames ? c->aborted_to : -1;
    rep->aborted_rows_cut = c->aborted_rows;
    rep->manifest_repaired = c->manifest_repaired;
}

/* ---- §8.7 migration ---- */

/* Creates the manifest for a slot that had none, then stamps MANIFEST_REQUIRED
 * into every live segment (the manifest is durable first, as in §9.1). */
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

/* ---- §8.10 ---- */

int64_t qsf_rc_seed_acked(int64_t lowest_base, int64_t published, int64_t watermark,
                          bool *ignored) {
    int64_t cand = lowest_base - 1 > watermark ? lowest_base - 1 : watermark;
    *ignored = cand > published;
    return *ignored ? lowest_base - 1 : cand;
}

static int seed_watermark(qsf_slot_recovered *out, qsf_errinfo *err) {
    qsf_slot *s = &out->slot;
    int rc = qsf_watermark_open(s->dirfd, s->path, &out->watermark, err);
    if (rc == QSF_OK && out->watermark.fd < 0) { /* none yet: trim needs one */
        rc = qsf_watermark_create(s->dirfd, s->path, &out->watermark, err);
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

/* §8.5 "no valid segment": quarantined debris is gone; a collapsed manifest
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
    if (rc == QSF_OK && !out->data_loss)
        rc = qsf_rc_baseline(st, durability, err);
    fill_report(st);
    return rc;
}

/* The .ack-watermark value as it is on disk, without repairing anything (the
 * handle is opened later): -1 when the file is absent, has the wrong size or
 * no valid record. */
static int read_watermark(const qsf_slot *s, int64_t *wm, qsf_errinfo *err) {
    *wm = -1;
    uint64_t size = 0;
    int fd = qsf_open_regular(s->dirfd, QSF_NAME_WATERMARK, O_RDONLY, &size);
    if (fd < 0)
        return errno == ENOENT
                   ? QSF_OK
                   : qsf_file_err(err, errno, "cannot open", s->path, QSF_NAME_WATERMARK);
    uint8_t img[QSF_DUAL_FILE_SIZE];
    int rc = size == QSF_DUAL_FILE_SIZE
                 ? qsf_read_at(fd, img, sizeof img, 0, s->path, QSF_NAME_WATERMARK, err)
                 : QSF_OK;
    int64_t g, v;
    if (rc == QSF_OK && size == QSF_DUAL_FILE_SIZE && qsf_akw_pick(img, &g, &v) == 0)
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
    if (st->cut.from <= st->cut.to) {
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
    state_free(&st);
    return rc;
}

#define RC_MAX_PASSES 4

/* Repairs (zeroed sealed residue, rewrites, the cut, manifest corrections)
 * are proven by a clean re-run (qsf rule). */
static int recover_slot(qsf_slot_recovered *out, int durability, uint64_t seg_bytes,
                        qsf_errinfo *err) {
    rc_carry carry = {.aborted_from = -1, .aborted_to = -1};
    int rc = QSF_OK;
    bool rerun = true;
    for (int pass = 0; rc == QSF_OK && rerun && pass < RC_MAX_PASSES; pass++) {
        if (pass > 0) {
            drop_pass(out);
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

/* §7.4 + §12.3: set the unreplayable slot aside and start fresh under its name. */
static int quarantine_and_restart(qsf_slot_recovered *out, uint64_t seg_bytes, qsf_errinfo *err) {
    char reason[sizeof out->data_loss_reason], path[sizeof out->report.quarantined_slot];
    snprintf(reason, sizeof reason, "%s", out->data_loss_reason);
    qsf_recovery_loss *losses = out->losses; /* what was found before: still reported */
    uint32_t nlosses = out->n_losses;
    out->losses = NULL;
    drop_pass(out);
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

static int open_slot(const char *sf_dir, const char *sender_id, int durability,
                     uint64_t segment_bytes, bool adopt, qsf_slot_recovered *out,
                     qsf_errinfo *err) {
    memset(out, 0, sizeof *out);
    handles_init(out);
    /* Gone since the scan: acquiring it would create it again. */
    if (adopt && !slot_dir_exists(sf_dir, sender_id))
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "slot %s/%s is gone", sf_dir, sender_id);
    int rc = qsf_slot_acquire(sf_dir, sender_id, &out->slot, err);
    if (rc != QSF_OK)
        return rc;
    rc = adopt ? still_an_orphan(&out->slot, err) : QSF_OK;
    if (rc == QSF_OK)
        rc = recover_slot(out, durability, segment_bytes, err);
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
    return open_slot(sf_dir, sender_id, durability, segment_bytes, false, out, err);
}

int qsf_slot_adopt_sized(const char *sf_dir, const char *sender_id, int durability,
                         uint64_t segment_bytes, qsf_slot_recovered *out, qsf_errinfo *err) {
    return open_slot(sf_dir, sender_id, durability, segment_bytes, true, out, err);
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

/* ---- §9.5 drained close ---- */

int qsf_slot_unlink_segments(qsf_slot *s, const char *const *names, uint32_t n, qsf_errinfo *err) {
    for (uint32_t i = 0; i < n; i++) {
        int rc = qsf_unlink_quiet(s->dirfd, s->path, names[i], err);
        if (rc == QSF_OK)
            rc = qsf_fault_check(QSF_FP_SEGMENT_UNLINKED, err);
        if (rc != QSF_OK)
            return rc;
    }
    return qsf_fsync_dir(s->dirfd, s->path, err);
}

/* Unlinks <sf_dir>/.slot-locks/<slot>.lock and .pid (only while holding it). */
static int remove_logical_lock(qsf_slot *s, qsf_errinfo *err) {
    int fd = QSF_OS->openat(s->sf_dirfd, QSF_NAME_SLOT_LOCKS,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0)
        return qsf_file_err(err, errno, "cannot open", s->sf_dir, QSF_NAME_SLOT_LOCKS);
    char name[QSF_SLOT_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s.lock", s->name);
    int rc = qsf_unlink_quiet(fd, s->sf_dir, name, err);
    snprintf(name, sizeof name, "%s.lock.pid", s->name);
    if (rc == QSF_OK)
        rc = qsf_unlink_quiet(fd, s->sf_dir, name, err);
    QSF_OS->close(fd);
    return rc;
}

int qsf_slot_remove_sidefiles(qsf_slot_recovered *r, qsf_errinfo *err) {
    qsf_slot *s = &r->slot;
    qsf_errinfo lock_err;
    bool have_logical = qsf_slot_lock_logical(s, &lock_err) == QSF_OK;
    qsf_manifest_close(&r->manifest);
    qsf_symdict_close(&r->symdict);
    qsf_watermark_close(&r->watermark);
    /* The watermark goes last: a crash before it still covers what is left. */
    static const char *const order[] = {QSF_NAME_MANIFEST, QSF_NAME_SYMDICT, QSF_NAME_WATERMARK};
    int rc = QSF_OK;
    for (int i = 0; i < 3 && rc == QSF_OK; i++)
        rc = qsf_unlink_quiet(s->dirfd, s->path, order[i], err);
    if (rc == QSF_OK && have_logical)
        rc = remove_logical_lock(s, err);
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(s->dirfd, s->path, err);
    qsf_slot_unlock_logical(s);
    return rc;
}
