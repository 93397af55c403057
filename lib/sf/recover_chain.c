/* Recovery steps 5-8 (docs/FORMAT.md §6.5-§6.8): decide, from the scanned files
 * and the manifest, which segments form the chain, which one is active, and
 * which files are leftovers. Chain errors name the FSNs and files involved.
 *
 * The chain's members are the valid segments with intact frames plus, in a
 * manifest slot, the empty segments whose baseSeq lies between headBase and
 * activeBase (a sealed segment that lost every frame in a host crash). Each
 * sealed member's FSN count is fixed by the next member's baseSeq
 * (recover_number.c). The manifest is checked against the data: it must not
 * make recovery delete frames above the watermark, nor hide a segment that
 * continues the chain (docs/FORMAT.md, "Manifest against the data"). */
#include "recover_int.h"

#include "err.h"
#include "log.h"
#include "qsf_assert.h"

#include <stdlib.h>
#include <string.h>

static bool is_data(const rc_seg *s) {
    return !s->corrupt && s->intact > 0;
}

static bool is_empty_valid(const rc_seg *s) {
    return !s->corrupt && s->intact == 0;
}

static int64_t last_fsn(const rc_seg *s) {
    return s->info.base_seq + (int64_t) s->info.frame_count - 1;
}

static int by_base(const void *a, const void *b) {
    const rc_seg *x = *(rc_seg *const *) a, *y = *(rc_seg *const *) b;
    if (x->info.base_seq != y->info.base_seq)
        return x->info.base_seq < y->info.base_seq ? -1 : 1;
    return strcmp(x->info.name, y->info.name);
}

/* Data segments (valid, with frames), sorted by baseSeq: O(N log N). */
static int collect_data(const rc_found *f, rc_plan *p, qsf_errinfo *err) {
    p->data = calloc(f->nsegs ? f->nsegs : 1, sizeof *p->data);
    if (!p->data)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the segment chain");
    p->ndata = 0;
    for (uint32_t i = 0; i < f->nsegs; i++)
        if (is_data(&f->segs[i]))
            p->data[p->ndata++] = &f->segs[i];
    qsort(p->data, p->ndata, sizeof *p->data, by_base);
    return QSF_OK;
}

static int gap_error(const qsf_slot_recovered *out, int64_t expected, int64_t got, const char *name,
                     qsf_errinfo *err) {
    return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                       "FSN gap in recovered segments: expected %lld but got %lld (segment %s/%s)",
                       (long long) expected, (long long) got, out->slot.path, name);
}

/* Each sealed member's FSN count from the next member's baseSeq (the active
 * segment's for the last): damaged frames and lost tails become placeholder
 * slots, or the gap is an error (recover_number.c). */
static int number_chain(const qsf_slot_recovered *out, rc_plan *p, qsf_errinfo *err) {
    uint32_t sealed = p->ndata;
    if (sealed > 0 && p->data[sealed - 1] == p->active)
        sealed--;
    for (uint32_t i = 0; i < sealed; i++) {
        int64_t next = i + 1 < sealed ? p->data[i + 1]->info.base_seq : p->active->info.base_seq;
        int rc = qsf_rc_number_sealed(out->slot.path, p->data[i], next, err);
        if (rc != QSF_OK)
            return rc;
    }
    return QSF_OK;
}

/* Every valid file that is neither active nor a kept data segment: a clean
 * empty spare is deleted, a torn empty one quarantined. Corrupt files are
 * quarantined. */
static void assign_extras(rc_found *f, const rc_plan *p) {
    for (uint32_t i = 0; i < f->nsegs; i++) {
        rc_seg *s = &f->segs[i];
        if (s == p->active || s->fate != RC_KEEP || is_data(s) || s->member)
            continue;
        s->fate = s->debris                           ? RC_DEBRIS
                  : (s->corrupt || s->torn_bytes > 0) ? RC_QUARANTINE
                                                      : RC_DELETE;
    }
}

bool qsf_rc_residue_to_zero(const rc_plan *p, const rc_seg *s) {
    /* a damaged member is rewritten whole instead (recover_repair.c) */
    return s != p->active && s->fate == RC_KEEP && s->residue_end > 0 && s->ngaps == 0 &&
           s->fill == 0;
}

static bool any_residue_to_zero(const rc_plan *p) {
    for (uint32_t i = 0; i < p->ndata; i++)
        if (qsf_rc_residue_to_zero(p, p->data[i]))
            return true;
    return false;
}

/* ---- docs/FORMAT.md §6.5: no segment with a valid header ---- */

static int no_valid(const qsf_slot_recovered *out, rc_found *f, bool *empty, qsf_errinfo *err) {
    const qsf_manifest *m = &out->manifest;
    bool have_mf = m->fd >= 0;
    if (f->corrupt > 0 && have_mf)
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "manifest references durable data but no segment in %s has a valid "
                           "header (%u corrupt files)",
                           out->slot.path, f->corrupt);
    if (!f->corrupt && have_mf && m->head_base != m->active_base)
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "manifest references durable data but no segment files exist in %s "
                           "(headBase %lld, activeBase %lld)",
                           out->slot.path, (long long) m->head_base, (long long) m->active_base);
    for (uint32_t i = 0; i < f->nsegs; i++)
        f->segs[i].fate = f->segs[i].debris ? RC_DEBRIS : RC_QUARANTINE;
    *empty = true;
    return QSF_OK;
}

/* ---- docs/FORMAT.md §6.7: slot without a manifest ---- */

/* Rank of an empty segment as the reused active one: sf-initial.sfa first. */
static int empty_rank(const rc_seg *s) {
    bool initial = strcmp(s->info.name, QSF_NAME_INITIAL) == 0;
    if (s->torn_bytes == 0)
        return initial ? 0 : 1;
    return 2;
}

/* Deterministic preference between two empty candidates: rank, then name
 * (the lower generation was provisioned first). */
static bool better_empty(const rc_seg *a, const rc_seg *b) {
    if (!b || empty_rank(a) != empty_rank(b))
        return !b || empty_rank(a) < empty_rank(b);
    return strcmp(a->info.name, b->info.name) < 0;
}

static rc_seg *pick_empty(rc_found *f, bool any_base, int64_t base) {
    rc_seg *best = NULL;
    for (uint32_t i = 0; i < f->nsegs; i++) {
        rc_seg *s = &f->segs[i];
        if (!is_empty_valid(s) || (!any_base && s->info.base_seq != base))
            continue;
        if (better_empty(s, best))
            best = s;
    }
    return best;
}

/* Refuse to migrate when a rejected file could be the missing head. */
static int check_no_lost_head(const qsf_slot_recovered *out, const rc_found *f, const rc_plan *p,
                              qsf_errinfo *err) {
    for (uint32_t i = 0; i < f->nsegs; i++) {
        const rc_seg *s = &f->segs[i];
        bool below = p->ndata > 0 && s->info.base_seq < p->data[0]->info.base_seq;
        if ((s->corrupt && !s->debris) || (is_empty_valid(s) && s->torn_bytes > 0 && below))
            return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                               "cannot migrate slot %s without manifest: %s is %s and could be "
                               "the missing head of the chain",
                               out->slot.path, s->info.name,
                               s->corrupt ? "corrupt" : "torn without valid frames");
    }
    return QSF_OK;
}

static int legacy_chain(const qsf_slot_recovered *out, rc_found *f, rc_plan *p, qsf_errinfo *err) {
    int rc = check_no_lost_head(out, f, p, err);
    if (rc != QSF_OK)
        return rc;
    p->active = p->ndata > 0 ? p->data[p->ndata - 1] : pick_empty(f, true, 0);
    p->legacy = true;
    rc = number_chain(out, p, err);
    if (rc != QSF_OK)
        return rc;
    assign_extras(f, p);
    return QSF_OK; /* residue is zeroed, and the pass goes on (WRITE) */
}

/* ---- docs/FORMAT.md §6.8: slot with a manifest ---- */

/* Data below headBase. Trim persists the watermark (record + sync) before it
 * moves headBase, so a segment wholly below the head whose frames are all at
 * or below the watermark is an acknowledged leftover (deleted), and any other
 * segment below the head (a frame above the watermark, or straddling the
 * head) proves the manifest wrong: it is kept and the head is lowered to it. */
static void apply_head(const qsf_slot_recovered *out, const rc_found *f, rc_plan *p) {
    const qsf_manifest *m = &out->manifest;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < p->ndata; i++) {
        rc_seg *s = p->data[i];
        /* a segment ends before the next one begins (the count of a damaged
         * one is only provisional here) */
        int64_t last = last_fsn(s);
        if (i + 1 < p->ndata && p->data[i + 1]->info.base_seq - 1 < last)
            last = p->data[i + 1]->info.base_seq - 1;
        if (last < m->head_base && last <= f->wm) {
            QSF_LOGI("deleting %s/%s: FSN %lld..%lld lies wholly below headBase %lld and is "
                     "acknowledged",
                     out->slot.path, s->info.name, (long long) s->info.base_seq, (long long) last,
                     (long long) m->head_base);
            s->fate = RC_DELETE;
            continue;
        }
        if (s->info.base_seq < m->head_base && p->new_head < 0) {
            QSF_LOGW("slot %s: manifest headBase %lld lies above %s (FSN %lld..%lld), which holds "
                     "frames the watermark (%lld) says were never acknowledged: the manifest is "
                     "wrong; keeping the segment and lowering headBase to %lld",
                     out->slot.path, (long long) m->head_base, s->info.name,
                     (long long) s->info.base_seq, (long long) last_fsn(s), (long long) f->wm,
                     (long long) s->info.base_seq);
            p->new_head = s->info.base_seq;
        }
        p->data[kept++] = s;
    }
    p->ndata = kept;
}

static int64_t head_of(const qsf_slot_recovered *out, const rc_plan *p) {
    return p->new_head >= 0 ? p->new_head : out->manifest.head_base;
}

/* Whether an empty segment's baseSeq lies inside the FSNs of a data member. */
static bool inside_data(const rc_plan *p, const rc_seg *e) {
    for (uint32_t i = 0; i < p->ndata; i++) {
        const rc_seg *d = p->data[i];
        if (d->member)
            continue;
        if (e->info.base_seq >= d->info.base_seq && e->info.base_seq <= last_fsn(d))
            return true;
    }
    return false;
}

/* Empty segments with baseSeq in [headBase, activeBase): sealed segments that
 * lost every frame (spares always start at or above activeBase). One per
 * baseSeq, the better one (pick_empty's order). */
static void add_lost_members(const qsf_slot_recovered *out, rc_found *f, rc_plan *p,
                             int64_t active_base) {
    uint32_t ndata = p->ndata;
    for (uint32_t i = 0; i < f->nsegs; i++) {
        rc_seg *s = &f->segs[i];
        int64_t b = s->info.base_seq;
        if (!is_empty_valid(s) || s->fate != RC_KEEP || b < head_of(out, p) || b >= active_base ||
            inside_data(p, s))
            continue;
        rc_seg *same = NULL;
        for (uint32_t k = ndata; k < p->ndata; k++)
            if (p->data[k]->info.base_seq == b)
                same = p->data[k];
        if (same && !better_empty(s, same))
            continue;
        if (same)
            same->member = false;
        s->member = true;
        if (!same)
            p->data[p->ndata++] = s;
        else
            for (uint32_t k = ndata; k < p->ndata; k++)
                if (p->data[k] == same)
                    p->data[k] = s;
    }
    qsort(p->data, p->ndata, sizeof *p->data, by_base);
}

/* The segment at activeBase: frames first, then a torn empty, then a clean empty. */
static rc_seg *pick_active(rc_found *f, const rc_plan *p, int64_t base) {
    for (uint32_t i = 0; i < p->ndata; i++)
        if (!p->data[i]->member && p->data[i]->info.base_seq == base)
            return p->data[i];
    rc_seg *torn = NULL, *clean = NULL;
    for (uint32_t i = 0; i < f->nsegs; i++) {
        rc_seg *s = &f->segs[i];
        if (!is_empty_valid(s) || s->info.base_seq != base)
            continue;
        if (s->torn_bytes > 0 && better_empty(s, torn))
            torn = s;
        else if (s->torn_bytes == 0 && better_empty(s, clean))
            clean = s;
    }
    return torn ? torn : clean;
}

/* docs/DURABILITY.md §12 step 4 unlinks the active segment, then the spares. A crash in between
 * leaves a collapsed manifest (headBase == activeBase: everything acknowledged),
 * no data, no corrupt file and only empty spares above activeBase. That is the
 * collapsed case of docs/FORMAT.md §6.8: empties are deleted (clean) or
 * quarantined (torn) and the slot starts empty. */
static bool drained_leftovers(const qsf_slot_recovered *out, rc_found *f, const rc_plan *p) {
    const qsf_manifest *m = &out->manifest;
    if (p->ndata > 0 || f->corrupt > 0 || m->head_base != m->active_base)
        return false;
    for (uint32_t i = 0; i < f->nsegs; i++) {
        const rc_seg *s = &f->segs[i];
        if (s->fate == RC_KEEP && !s->debris && s->info.base_seq < m->active_base)
            return false;
    }
    assign_extras(f, p);
    return true;
}

/* Data members above activeBase: the manifest missed a rotation if they
 * continue the chain exactly from the segment at activeBase (the data decide:
 * activeBase is raised); otherwise the open fails. */
static int check_above_active(const qsf_slot_recovered *out, rc_found *f, rc_plan *p,
                              qsf_errinfo *err) {
    const qsf_manifest *m = &out->manifest;
    rc_seg *top = p->ndata > 0 ? p->data[p->ndata - 1] : NULL;
    if (!top || top->info.base_seq <= m->active_base)
        return QSF_OK;
    rc_seg *prev = pick_active(f, p, m->active_base);
    bool continues = prev != NULL;
    for (uint32_t i = 0; i < p->ndata && continues; i++) {
        rc_seg *s = p->data[i];
        if (s->info.base_seq <= m->active_base)
            continue;
        continues =
            prev->ngaps == 0 && prev->info.base_seq + (int64_t) prev->intact == s->info.base_seq;
        prev = s;
    }
    if (!continues) {
        for (uint32_t i = 0; i < p->ndata; i++)
            if (p->data[i]->info.base_seq > m->active_base)
                top = p->data[i];
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "segment %s/%s (FSN %lld..%lld) lies above manifest activeBase %lld and "
                           "does not continue the chain from it",
                           out->slot.path, top->info.name, (long long) top->info.base_seq,
                           (long long) last_fsn(top), (long long) m->active_base);
    }
    QSF_LOGW("slot %s: %s (FSN %lld..) lies above manifest activeBase %lld and continues the "
             "chain: the manifest missed a rotation; activeBase raised to %lld",
             out->slot.path, top->info.name, (long long) top->info.base_seq,
             (long long) m->active_base, (long long) top->info.base_seq);
    p->new_active = top->info.base_seq;
    return QSF_OK;
}

static int64_t active_of(const qsf_slot_recovered *out, const rc_plan *p) {
    return p->new_active >= 0 ? p->new_active : out->manifest.active_base;
}

static int manifest_chain(const qsf_slot_recovered *out, rc_found *f, rc_plan *p, bool *empty,
                          qsf_errinfo *err) {
    apply_head(out, f, p);
    int rc = check_above_active(out, f, p, err);
    if (rc != QSF_OK)
        return rc;
    add_lost_members(out, f, p, active_of(out, p));
    p->active = pick_active(f, p, active_of(out, p));
    if (!p->active && drained_leftovers(out, f, p)) {
        QSF_LOGW("slot %s: only spares left by an interrupted drained close; starting empty",
                 out->slot.path);
        *empty = true;
        return QSF_OK;
    }
    if (!p->active)
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "manifest activeBase %lld names no segment in %s (manifest references "
                           "missing data)",
                           (long long) active_of(out, p), out->slot.path);
    /* The chain starts at headBase: nothing can fill FSNs before its first segment. */
    int64_t first = p->ndata > 0 ? p->data[0]->info.base_seq : p->active->info.base_seq;
    if (first != head_of(out, p))
        return gap_error(out, head_of(out, p), first,
                         p->ndata > 0 ? p->data[0]->info.name : p->active->info.name, err);
    rc = number_chain(out, p, err);
    if (rc != QSF_OK)
        return rc;
    assign_extras(f, p);
    p->rerun = any_residue_to_zero(p); /* zeroed, then the pass runs again (WRITE) */
    return QSF_OK;
}

int qsf_rc_publish_chain(rc_state *st, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    const rc_plan *p = &st->plan;
    bool active_is_data = p->ndata > 0 && p->data[p->ndata - 1] == p->active;
    uint32_t n = p->ndata + (active_is_data ? 0 : 1);
    out->segments = calloc(n, sizeof *out->segments);
    if (!out->segments)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the segment list");
    for (uint32_t i = 0; i < p->ndata; i++)
        out->segments[i] = p->data[i]->info;
    out->segments[n - 1] = p->active->info;
    out->segments[n - 1].active = true;
    out->segment_count = n;
    out->active_index = n - 1;
    const qsf_seg_info *a = &out->segments[n - 1];
    out->published_fsn = a->base_seq + (int64_t) a->frame_count - 1;
    return QSF_OK;
}

/* What PLAN hands on once the chain is built: an active segment that is
 * kept, members in baseSeq order, and FSNs without a hole (docs/FORMAT.md
 * §6.17): each sealed member's slots end where the next member begins. */
static void check_chain(const rc_plan *p) {
    qsf_assert(p->active != NULL && p->active->fate == RC_KEEP && !p->active->corrupt);
    uint32_t sealed = p->ndata > 0 && p->data[p->ndata - 1] == p->active ? p->ndata - 1 : p->ndata;
    for (uint32_t i = 0; i < sealed; i++)
        qsf_assert(p->data[i]->info.base_seq + (int64_t) p->data[i]->info.frame_count ==
                   (i + 1 < sealed ? p->data[i + 1] : p->active)->info.base_seq);
}

int qsf_rc_chain(const qsf_slot_recovered *out, rc_found *f, rc_plan *p, bool *empty,
                 qsf_errinfo *err) {
    *empty = false;
    bool any_valid = false;
    for (uint32_t i = 0; i < f->nsegs; i++)
        any_valid |= !f->segs[i].corrupt;
    if (!any_valid)
        return no_valid(out, f, empty, err);
    int rc = collect_data(f, p, err);
    if (rc != QSF_OK)
        return rc;
    bool have_mf = out->manifest.fd >= 0;
    for (uint32_t i = 0; i < f->nsegs && !have_mf; i++) {
        const rc_seg *s = &f->segs[i];
        if (!s->corrupt && (s->info.flags & QSF_SFA_FLAG_MANIFEST_REQUIRED))
            return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                               "segment %s/%s requires sf-manifest.bin (MANIFEST_REQUIRED) but the "
                               "manifest is missing",
                               out->slot.path, s->info.name);
    }
    rc = have_mf ? manifest_chain(out, f, p, empty, err) : legacy_chain(out, f, p, err);
    /* every reader of the chain (an open, an inspection, a set-aside) counts
     * the active segment the same way */
    if (rc == QSF_OK && !*empty && !p->rerun && p->active)
        rc = qsf_rc_apply_mark(&out->slot, p->active, err);
    if (rc == QSF_OK && !*empty)
        check_chain(p);
    return rc;
}

int qsf_rc_build_chain(rc_state *st, bool *empty, qsf_errinfo *err) {
    return qsf_rc_chain(st->out, &st->found, &st->plan, empty, err);
}
