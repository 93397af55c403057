/* Flushes (docs/FORMAT.md, "Whole flushes only"). A flush may be several
 * frames, FLAG_DEFER_COMMIT on all but the last; a group is the frames after
 * one committing frame up to and including the next committing frame:
 *
 *   ... C | D D C | C | D D ...
 *           group   group  interrupted flush (no committing frame after it)
 *
 * A group with a destroyed frame, or with a stored placeholder (qsf stores a
 * deferred table-less frame only as a placeholder), above ackedFsn is given up
 * whole: it is never partly delivered. A destroyed frame's flags are unknown,
 * so its group runs on to the next intact committing frame. Frames after the
 * last committing frame, above ackedFsn, are an interrupted flush: they are
 * cut (recover_repair.c). One walk finds all of it (and feeds the dictionary
 * rebuild, recover_dict.c); a second one, over what is given up only,
 * counts its rows. */
#include "recover_int.h"

#include "err.h"
#include "log.h"
#include "qsf_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct group {
    int64_t start; /* first FSN of the open group */
    rc_span cur;   /* damage found in it so far */
    bool damaged;
} group;

/* The one walk over the chain: the plan it fills, the group open in it. */
typedef struct flush_walk {
    rc_plan *p;
    group g;
} flush_walk;

static int64_t chain_first(const rc_plan *p) {
    return p->ndata > 0 ? p->data[0]->info.base_seq : p->active->info.base_seq;
}

static int64_t chain_last(const rc_plan *p) {
    return p->active->info.base_seq + (int64_t) p->active->info.frame_count - 1;
}

static void describe(const rc_slot *s, rc_span *sp) {
    const rc_seg *g = s->seg;
    if (!s->piece && g->marked) {
        int64_t from = g->info.base_seq + (int64_t) (g->info.frame_count - g->fill);
        snprintf(sp->what, sizeof sp->what,
                 "FSN %lld..%lld were published but are damaged or cut after offset %llu",
                 (long long) from, (long long) (from + (int64_t) g->fill - 1),
                 (unsigned long long) g->info.last_good);
        sp->off = g->info.last_good;
    } else if (!s->piece) {
        int64_t from = g->info.base_seq + (int64_t) (g->info.frame_count - g->fill);
        snprintf(sp->what, sizeof sp->what,
                 "FSN gap: FSN %lld..%lld missing after offset %llu (lost with the unsynced tail "
                 "in a host crash)",
                 (long long) from, (long long) (from + (int64_t) g->fill - 1),
                 (unsigned long long) g->info.last_good);
        sp->off = g->info.last_good;
    } else {
        snprintf(sp->what, sizeof sp->what, "%s at offset %llu",
                 s->piece->bad_len ? "impossible frame length" : "CRC mismatch",
                 (unsigned long long) s->piece->off);
        sp->off = s->piece->off;
    }
    sp->seg = s->seg;
}

static void note_destroyed(int64_t acked, group *g, const rc_slot *s) {
    if (s->fsn < s->seg->first_destroyed)
        s->seg->first_destroyed = s->fsn;
    if (s->fsn <= acked)
        return;
    if (g->cur.destroyed == 0 && (!g->cur.seg || g->cur.unknown > 0))
        describe(s, &g->cur); /* the damage is what the loss is named for */
    g->cur.destroyed++;
    g->cur.exact &= s->piece ? s->piece->exact : s->seg->fill_exact;
    g->damaged = true;
}

/* Spans come in FSN order, disjoint, above ackedFsn (out->retired relies on it). */
static int push_span(rc_plan *p, const rc_span *sp, qsf_errinfo *err) {
    qsf_assert(sp->from > p->acked && sp->from <= sp->to);
    qsf_assert(p->nspans == 0 || p->spans[p->nspans - 1].to < sp->from);
    if (p->nspans % 16 == 0) {
        rc_span *n = realloc(p->spans, (p->nspans + 16) * sizeof *n);
        if (!n)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the given-up flushes");
        p->spans = n;
    }
    p->spans[p->nspans++] = *sp;
    return QSF_OK;
}

static void group_reset(group *g, int64_t start) {
    memset(g, 0, sizeof *g);
    g->start = start;
    g->cur.exact = true;
}

/* After the last FSN of a segment whose end is in doubt: frames may be
 * missing here, so the flush open after this point is damaged. */
static void note_doubt(int64_t acked, group *g, const rc_slot *s) {
    const rc_seg *seg = s->seg;
    if (!seg->tail_doubt || s->fsn != seg->info.base_seq + (int64_t) seg->info.frame_count - 1 ||
        s->fsn < acked)
        return;
    if (g->cur.destroyed == 0 && !g->cur.seg) {
        snprintf(g->cur.what, sizeof g->cur.what,
                 "up to %llu frames may be missing after offset %llu (with damage earlier in the "
                 "segment)",
                 (unsigned long long) seg->tail_doubt, (unsigned long long) seg->info.last_good);
        g->cur.seg = s->seg;
        g->cur.off = seg->info.last_good;
    }
    g->cur.destroyed += seg->tail_doubt;
    g->cur.exact = false;
    g->damaged = true;
}

/* An intact frame above acked whose delta section needs symbol ids nobody
 * can supply any more (they were defined only by destroyed frames or by the
 * lost end of .symbol-dict): it cannot be replayed, so its flush is given up
 * like one with a destroyed member; the frames before it are unaffected. */
static void note_unknown(int64_t acked, group *g, const rc_slot *s, const rc_unknown_syms *u) {
    if (!u->found || s->fsn <= acked)
        return;
    if (g->cur.destroyed == 0 && !g->cur.seg) {
        snprintf(g->cur.what, sizeof g->cur.what,
                 "frame FSN %lld needs symbol ids from %llu but only %u are known (defined only "
                 "by lost frames or a lost end of %s)",
                 (long long) s->fsn, (unsigned long long) u->start, u->known, QSF_NAME_SYMDICT);
        g->cur.seg = s->seg;
        g->cur.off = s->off;
    }
    g->cur.unknown++;
    g->damaged = true;
}

static int on_intact(rc_plan *p, rc_reader *r, const rc_slot *s, group *g, qsf_errinfo *err) {
    rc_frame_kind k;
    int rc = qsf_rc_frame_kind_of(r, s, &k, err);
    if (rc != QSF_OK)
        return rc;
    rc_unknown_syms u;
    rc = qsf_rc_dict_frame(p->dict, r, s, &k, &u, err);
    if (rc != QSF_OK)
        return rc;
    note_unknown(p->acked, g, s, &u);
    if (k.placeholder && s->fsn > p->acked)
        g->damaged = true;
    if (!k.commits)
        return QSF_OK;
    if (g->damaged) {
        g->cur.from = g->start > p->acked ? g->start : p->acked + 1;
        g->cur.to = s->fsn;
        rc = push_span(p, &g->cur, err);
    }
    group_reset(g, s->fsn + 1);
    return rc;
}

static int on_slot(rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err) {
    flush_walk *fw = user;
    int rc = QSF_OK;
    if (s->intact)
        rc = on_intact(fw->p, r, s, &fw->g, err);
    else
        note_destroyed(fw->p->acked, &fw->g, s);
    if (rc == QSF_OK)
        note_doubt(fw->p->acked, &fw->g, s);
    return rc;
}

int qsf_rc_count_frame(rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err) {
    rc_span *sp = user;
    if (!s->intact)
        return QSF_OK;
    rc_frame_kind k;
    int rc = qsf_rc_frame_kind_of(r, s, &k, err);
    if (rc != QSF_OK || k.placeholder)
        return rc;
    uint64_t rows;
    bool countable;
    rc = qsf_rc_frame_rows(r, s, &rows, &countable, err);
    sp->retired++;
    sp->rows += rows;
    sp->uncounted += countable ? 0 : 1;
    return rc;
}

static int count_span(const qsf_slot *slot, uint8_t *buf, const rc_plan *p, rc_span *sp,
                      qsf_errinfo *err) {
    sp->retired = sp->rows = sp->uncounted = 0;
    return qsf_rc_walk_chain(slot, buf, p, sp->from, sp->to, qsf_rc_count_frame, sp, err);
}

/* A segment holding a frame given up for unknown symbols is rewritten with
 * placeholders although nothing in it is damaged: left intact, that frame's
 * section would later meet the ids the next sender assigns from the same
 * positions, and a later open would find a redefinition instead of a flush
 * given up. (Below the cut only: the cut removes the rest.) */
static uint32_t first_span_to_or_after(const rc_plan *p, int64_t fsn) {
    uint32_t lo = 0, hi = p->nspans;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->spans[mid].to < fsn)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void mark_unknown_rewrites(rc_found *f, const rc_plan *p, int64_t cut_from) {
    for (uint32_t j = 0; j < f->nsegs; j++) {
        rc_seg *g = &f->segs[j];
        if (g->fate != RC_KEEP || g->info.frame_count == 0 || g->rewrite ||
            g->info.base_seq >= cut_from)
            continue;
        int64_t last = g->info.base_seq + (int64_t) g->info.frame_count - 1;
        for (uint32_t i = first_span_to_or_after(p, g->info.base_seq);
             i < p->nspans && p->spans[i].from <= last && !g->rewrite; i++)
            g->rewrite = g->unknown_only = p->spans[i].unknown > 0;
    }
}

/* Walks the chain once, finds the flushes given up (a destroyed frame or a
 * stored placeholder above acked) and the interrupted flush at the end, and
 * counts their rows. */
static int plan_groups(const qsf_slot *slot, uint8_t *buf, rc_found *f, rc_plan *p,
                       qsf_errinfo *err) {
    p->cut = (rc_span){.from = 0, .to = -1};
    for (uint32_t i = 0; i < f->nsegs; i++)
        f->segs[i].first_destroyed = INT64_MAX;
    int64_t first = chain_first(p), last = chain_last(p);
    flush_walk fw = {.p = p};
    group_reset(&fw.g, first);
    int rc = qsf_rc_walk_chain(slot, buf, p, first, last, on_slot, &fw, err);
    if (rc == QSF_OK && fw.g.start <= last && last > p->acked) {
        p->cut = fw.g.cur;
        p->cut.from = fw.g.start > p->acked ? fw.g.start : p->acked + 1;
        p->cut.to = last;
        p->cut.cut = true;
    }
    /* the interrupted flush comes after every flush given up */
    qsf_assert(p->cut.from > p->cut.to || p->nspans == 0 ||
               p->spans[p->nspans - 1].to < p->cut.from);
    for (uint32_t i = 0; rc == QSF_OK && i < p->nspans; i++)
        rc = count_span(slot, buf, p, &p->spans[i], err);
    if (rc == QSF_OK && p->cut.from <= p->cut.to)
        rc = count_span(slot, buf, p, &p->cut, err);
    int64_t cut_from = p->cut.from <= p->cut.to ? p->cut.from : INT64_MAX;
    for (uint32_t i = 0; i < f->nsegs; i++)
        f->segs[i].rewrite = f->segs[i].first_destroyed < cut_from;
    mark_unknown_rewrites(f, p, cut_from);
    return rc;
}

/* ---- docs/FORMAT.md §6.12: ackedFsn, then the flushes ---- */

int64_t qsf_rc_seed_acked(int64_t lowest_base, int64_t published, int64_t watermark,
                          bool *ignored) {
    int64_t cand = lowest_base - 1 > watermark ? lowest_base - 1 : watermark;
    *ignored = cand > published;
    return *ignored ? lowest_base - 1 : cand;
}

int qsf_rc_plan_flushes(const qsf_slot *slot, uint8_t *buf, rc_found *f, rc_plan *p,
                        qsf_errinfo *err) {
    qsf_assert(p->active != NULL && !p->rerun);
    int64_t lowest = p->ndata > 0 ? p->data[0]->info.base_seq : p->active->info.base_seq;
    int64_t published = p->active->info.base_seq + (int64_t) p->active->info.frame_count - 1;
    bool ignored;
    p->acked = qsf_rc_seed_acked(lowest, published, f->wm, &ignored);
    qsf_assert(p->acked >= lowest - 1 && p->acked <= published);
    return plan_groups(slot, buf, f, p, err);
}

int qsf_rc_plan(rc_state *st, qsf_errinfo *err) {
    return qsf_rc_plan_flushes(&st->out->slot, st->buf, &st->found, &st->plan, err);
}

bool qsf_rc_given_up_in(const rc_plan *p, int64_t fsn) {
    uint32_t lo = first_span_to_or_after(p, fsn);
    return lo < p->nspans && p->spans[lo].from <= fsn;
}

bool qsf_rc_plan_repairs(const rc_state *st) {
    const rc_plan *p = &st->plan;
    if (p->new_head >= 0 || p->new_active >= 0 || p->cut.from <= p->cut.to)
        return true;
    for (uint32_t i = 0; i < st->found.nsegs; i++)
        if (st->found.segs[i].rewrite)
            return true;
    return false;
}

bool qsf_rc_given_up(const rc_state *st, int64_t fsn) {
    return qsf_rc_given_up_in(&st->plan, fsn);
}
