/* What an open reports as given up (docs/FORMAT.md §6.14), from the plan's
 * flushes: the loss entries a repair records before it changes anything
 * (recover_repair.c), the retired spans handed to the I/O thread, and the one
 * loss of a slot set aside as unreplayable (recover_handover.c). */
#include "recover_int.h"

#include "err.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int qsf_rc_publish_retired(rc_state *st, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    free(out->retired);
    out->retired = NULL;
    out->n_retired = 0;
    const rc_plan *p = &st->plan;
    if (p->nspans == 0)
        return QSF_OK;
    out->retired = calloc(p->nspans, sizeof *out->retired);
    if (!out->retired)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the retired spans");
    for (uint32_t i = 0; i < p->nspans; i++) {
        const rc_span *sp = &p->spans[i];
        uint32_t n = out->n_retired;
        if (n > 0 && out->retired[n - 1].to + 1 == sp->from)
            out->retired[n - 1].to = sp->to; /* adjacent flushes: one span */
        else
            out->retired[out->n_retired++] = (qsf_fsn_span){sp->from, sp->to};
    }
    return QSF_OK;
}

static int add_loss(rc_state *st, const rc_span *sp, qsf_errinfo *err) {
    rc_carry *c = st->carry;
    qsf_recovery_loss *n = realloc(c->losses, (c->nlosses + 1) * sizeof *n);
    if (!n)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the recovery report");
    c->losses = n;
    qsf_recovery_loss *l = &n[c->nlosses++];
    memset(l, 0, sizeof *l);
    l->from_fsn = sp->from;
    l->to_fsn = sp->to;
    l->frames_destroyed = sp->destroyed;
    l->destroyed_exact = sp->exact;
    l->frames_retired = sp->retired;
    l->rows = sp->rows;
    l->frames_uncounted = sp->uncounted;
    snprintf(l->file, sizeof l->file, "%s", sp->seg->info.name);
    l->offset = sp->off;
    snprintf(l->what, sizeof l->what, "%s", sp->what);
    QSF_LOGE("data loss in slot %s: %s: %s; %s%llu damaged frames and %llu intact frames of the "
             "same flushes (%llu rows%s; %llu of them need lost symbols) are given up, FSN "
             "%lld..%lld",
             st->out->slot.path, l->file, l->what, sp->exact ? "" : "at most ",
             (unsigned long long) l->frames_destroyed, (unsigned long long) l->frames_retired,
             (unsigned long long) l->rows, l->frames_uncounted ? " counted" : "",
             (unsigned long long) sp->unknown, (long long) l->from_fsn, (long long) l->to_fsn);
    return QSF_OK;
}

static bool is_loss(const rc_span *sp) {
    return sp->destroyed > 0 || sp->unknown > 0;
}

/* The flushes after damage that are given up only because they need the
 * symbols it destroyed belong to that loss: one entry, not one per flush. */
static bool extends(const rc_span *loss, const rc_span *sp) {
    return sp->destroyed == 0 && sp->unknown > 0 && loss->to + 1 == sp->from;
}

static void merge_into(rc_span *loss, const rc_span *sp) {
    loss->to = sp->to;
    loss->retired += sp->retired;
    loss->rows += sp->rows;
    loss->uncounted += sp->uncounted;
    loss->unknown += sp->unknown;
}

int qsf_rc_record_losses(rc_state *st, qsf_errinfo *err) {
    int rc = QSF_OK;
    rc_span cur = {.from = 0, .to = -1};
    const rc_plan *p = &st->plan;
    for (uint32_t i = 0; rc == QSF_OK && i <= p->nspans; i++) {
        /* the interrupted flush had not returned: only damage in it is a loss */
        const rc_span *sp = i < p->nspans                                  ? &p->spans[i]
                            : p->cut.from <= p->cut.to && p->cut.destroyed ? &p->cut
                                                                           : NULL;
        if (sp && !is_loss(sp))
            continue;
        if (sp && cur.from <= cur.to && extends(&cur, sp)) {
            merge_into(&cur, sp);
            continue;
        }
        if (cur.from <= cur.to)
            rc = add_loss(st, &cur, err);
        cur = sp ? *sp : (rc_span){.from = 0, .to = -1};
    }
    if (rc == QSF_OK && cur.from <= cur.to)
        rc = add_loss(st, &cur, err);
    return rc;
}

/* ---- a slot set aside ---- */

/* Rows of the intact frames a set-aside gives up that no earlier loss of
 * this open counted: not placeholders, not in a flush this pass gives up
 * (an earlier pass counted those when it gave them up). */
typedef struct aside {
    const rc_plan *p;
    rc_span sp;
} aside;

static int on_set_aside(rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err) {
    aside *a = user;
    return s->intact && !qsf_rc_given_up_in(a->p, s->fsn) ? qsf_rc_count_frame(r, s, &a->sp, err)
                                                          : QSF_OK;
}

int qsf_rc_set_aside_loss(rc_state *st, qsf_errinfo *err) {
    const qsf_slot_recovered *out = st->out;
    rc_carry *c = st->carry;
    aside a = {.p = &st->plan,
               .sp = {.from = out->acked_fsn + 1, .to = out->published_fsn, .exact = true}};
    rc_span *sp = &a.sp;
    if (sp->from > sp->to)
        return QSF_OK; /* nothing unacknowledged: nothing more is given up */
    int rc = qsf_rc_walk_chain(&out->slot, st->buf, a.p, sp->from, sp->to, on_set_aside, &a, err);
    if (rc != QSF_OK)
        return rc;
    uint64_t frames = (uint64_t) (sp->to - sp->from + 1);
    sp->destroyed = 0;
    for (uint32_t i = 0; i < c->nlosses; i++) { /* what earlier passes found is in it */
        sp->destroyed += c->losses[i].frames_destroyed;
        sp->exact &= c->losses[i].destroyed_exact;
        sp->rows += c->losses[i].rows;
        sp->uncounted += c->losses[i].frames_uncounted;
    }
    sp->destroyed = sp->destroyed < frames ? sp->destroyed : frames;
    sp->retired = frames - sp->destroyed;
    sp->seg = st->plan.active;
    snprintf(sp->what, sizeof sp->what, "slot set aside, %.140s", out->data_loss_reason);
    c->nlosses = 0; /* one loss: everything the slot gave up */
    return add_loss(st, sp, err);
}
