/* Recovery of a locked slot (docs/FORMAT.md §6), pass after pass until one
 * finds nothing to repair. A pass runs three phases, each once and in this
 * order, each taking the result of the one before:
 *
 *   READ   list the slot; scan every *.sfa with pread; past a bad frame,
 *          find the intact frames and count what lies between them; the
 *          watermark and the manifest as they are on disk
 *          recover_scan.c, recover_salvage.c: docs/FORMAT.md §6.2-§6.4, §6.15
 *     |
 *     |  rc_found: segs[] (header, runs and gaps of frames, torn tail,
 *     |            residue), *.sfa.tmp leftovers, highest generation, wm
 *     v
 *   PLAN   the chain (manifest or legacy) and each file's fate; each sealed
 *          member's FSN slots from the next baseSeq, the active one's from
 *          the published mark
 *          recover_chain.c, recover_number.c, recover_mark.c:
 *          docs/FORMAT.md §6.5-§6.8, §6.17, §6.19, §5.7
 *          ackedFsn, then one walk over every FSN of the chain: the flushes
 *          given up, the interrupted flush to cut, the dictionary rebuilt
 *          recover_groups.c, recover_walk.c, recover_dict.c:
 *          docs/FORMAT.md §6.9, §6.12, §6.16
 *     |
 *     |  rc_plan: data[] (the chain), active, legacy, manifest corrections,
 *     |           rerun (sealed residue to zero), acked, spans[], cut, dict;
 *     |           per segment its fate, FSN slots and whether it is rewritten
 *     v
 *   WRITE  sealed residue zeroed; then one of three:
 *          - the plan repairs: its losses recorded, then the manifest
 *            corrected, segments rewritten with placeholders, the
 *            interrupted flush cut; the pass runs again
 *            recover_losses.c, recover_repair.c: docs/FORMAT.md §6.10, §6.18
 *          - nothing to repair: leftovers deleted and quarantined, a legacy
 *            slot migrated, the runtime's view (segments, ackedFsn, retired
 *            spans, dictionary), the baseline
 *            recover_handover.c, recover_clean.c, recover_losses.c:
 *            docs/FORMAT.md §6.7, §6.11-§6.14
 *          - no chain: a fresh slot
 *            recover_handover.c, recover_fresh.c: docs/FORMAT.md §6.5, §6.21
 *
 *        rc_done: files removed and quarantined, for the report
 *
 * The rules the phases rely on: READ and PLAN write nothing (an I/O error
 * there leaves every file as it was; an inspection runs them alone, dry_run);
 * WRITE makes each change durable before the next, so that a crash between
 * two leaves a slot the next open repairs the same way; a pass that repaired
 * anything is proven by one that finds nothing (at most 4 passes). Opening
 * and releasing a slot are in slot_open.c. */
#include "recover_int.h"

#include "err.h"
#include "qsf_assert.h"
#include "log.h"
#include "sf/sfa.h"

#include <stdlib.h>
#include <string.h>

void qsf_rc_state_free(rc_state *st) {
    qsf_rc_dict_free(st);
    free(st->buf);
    for (uint32_t i = 0; i < st->found.nsegs; i++)
        free(st->found.segs[i].pieces);
    free(st->found.segs);
    free(st->found.tmp);
    free(st->plan.data);
    free(st->plan.spans);
    memset(st, 0, sizeof *st);
}

void qsf_rc_report_losses(qsf_recovery_report *rep, const qsf_recovery_loss *l, uint32_t n) {
    rep->losses = n;
    rep->frames_lost = 0;
    for (uint32_t i = 0; i < n; i++)
        rep->frames_lost += l[i].frames_destroyed + l[i].frames_retired;
}

/* What the pass that handed the slot over found, with what the passes
 * before it did (st->carry). */
static void fill_report(rc_state *st) {
    qsf_slot_recovered *out = st->out;
    qsf_recovery_report *rep = &out->report;
    const rc_carry *c = st->carry;
    rep->segments = out->segment_count;
    for (uint32_t i = 0; i < out->segment_count; i++) {
        rep->frames += out->segments[i].frame_count;
        rep->bytes += out->segments[i].last_good - QSF_SFA_HEADER_SIZE;
    }
    for (uint32_t i = 0; i < st->found.nsegs; i++)
        rep->torn_bytes += st->found.segs[i].torn_bytes;
    if (c->torn_bytes > rep->torn_bytes) /* an earlier pass rewrote what was torn */
        rep->torn_bytes = c->torn_bytes;
    rep->quarantined_files = c->quarantined + st->done.quarantined;
    rep->debris_removed = c->debris + st->done.debris;
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

/* ---- one pass ---- */

/* READ: the files as they are. */
static int read_phase(rc_state *st, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    int rc = qsf_rc_read_slot(&out->slot, st->buf, &st->found, err);
    if (rc == QSF_OK)
        rc = qsf_manifest_open(out->slot.dirfd, out->slot.path, &out->manifest, err);
    return rc;
}

/* PLAN, from READ's result: the chain (*empty: none, the slot starts
 * fresh); then, unless sealed residue is zeroed first, the flushes with the
 * dictionary rebuild. */
static int plan_phase(rc_state *st, bool *empty, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    int rc = qsf_rc_chain(out, &st->found, &st->plan, empty, err);
    if (rc != QSF_OK || *empty || st->plan.rerun)
        return rc;
    rc = qsf_symdict_open(&out->symdict, out->slot.dirfd, out->slot.path, err);
    if (rc == QSF_OK)
        rc = qsf_rc_dict_begin(st, err);
    if (rc == QSF_OK)
        rc = qsf_rc_plan_flushes(&out->slot, st->buf, &st->found, &st->plan, err);
    return rc;
}

/* WRITE: the zeroing the plan asks for first, then one of three: repair
 * (*rerun), hand the recovered slot over, or start a fresh one. */
static int write_phase(rc_state *st, bool empty, int durability, uint64_t seg_bytes, bool *rerun,
                       qsf_errinfo *err) {
    qsf_assert(!st->dry_run);
    qsf_assert(empty || st->plan.active != NULL);
    int rc = empty ? QSF_OK : qsf_rc_zero_sealed(st, err);
    *rerun = st->plan.rerun || (!empty && qsf_rc_plan_repairs(st));
    if (rc != QSF_OK || st->plan.rerun)
        return rc;
    if (*rerun)
        return qsf_rc_repair(st, err);
    if (empty) {
        rc = qsf_rc_apply_fates(st, err);
        if (rc == QSF_OK)
            rc = qsf_rc_start_empty(st, seg_bytes, err);
        if (rc == QSF_OK)
            fill_report(st);
        return rc;
    }
    rc = qsf_rc_hand_over(st, durability, err);
    fill_report(st);
    return rc;
}

static int recovery_pass(qsf_slot_recovered *out, rc_carry *carry, int durability,
                         uint64_t seg_bytes, bool *rerun, qsf_errinfo *err) {
    rc_state st = {.out = out, .carry = carry, .new_head = -1, .new_active = -1};
    st.buf = malloc(QSF_RECOVER_BUF);
    if (!st.buf)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the recovery buffer");
    bool empty = false;
    *rerun = false;
    int rc = read_phase(&st, err);
    if (rc == QSF_OK)
        rc = plan_phase(&st, &empty, err);
    if (rc == QSF_OK)
        rc = write_phase(&st, empty, durability, seg_bytes, rerun, err);
    carry->debris += *rerun ? st.done.debris : 0;
    carry->quarantined += *rerun ? st.done.quarantined : 0;
    out->next_generation = st.found.any_gen && st.found.max_gen + 1 > 1 ? st.found.max_gen + 1 : 1;
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
