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
static int collect_data(rc_state *st, qsf_errinfo *err) {
    st->data = calloc(st->nsegs ? st->nsegs : 1, sizeof *st->data);
    if (!st->data)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the segment chain");
    st->ndata = 0;
    for (uint32_t i = 0; i < st->nsegs; i++)
        if (is_data(&st->segs[i]))
            st->data[st->ndata++] = &st->segs[i];
    qsort(st->data, st->ndata, sizeof *st->data, by_base);
    return QSF_OK;
}

static int gap_error(rc_state *st, int64_t expected, int64_t got, const char *name,
                     qsf_errinfo *err) {
    return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                       "FSN gap in recovered segments: expected %lld but got %lld (segment %s/%s)",
                       (long long) expected, (long long) got, st->out->slot.path, name);
}

/* Each sealed member's FSN count from the next member's baseSeq (the active
 * segment's for the last): damaged frames and lost tails become placeholder
 * slots, or the gap is an error (recover_number.c). */
static int number_chain(rc_state *st, qsf_errinfo *err) {
    uint32_t sealed = st->ndata;
    if (sealed > 0 && st->data[sealed - 1] == st->active)
        sealed--;
    for (uint32_t i = 0; i < sealed; i++) {
        int64_t next = i + 1 < sealed ? st->data[i + 1]->info.base_seq : st->active->info.base_seq;
        int rc = qsf_rc_number_sealed(st, st->data[i], next, err);
        if (rc != QSF_OK)
            return rc;
    }
    return QSF_OK;
}

/* Every valid file that is neither active nor a kept data segment: a clean
 * empty spare is deleted, a torn empty one quarantined. Corrupt files are
 * quarantined. */
static void assign_extras(rc_state *st) {
    for (uint32_t i = 0; i < st->nsegs; i++) {
        rc_seg *s = &st->segs[i];
        if (s == st->active || s->fate != RC_KEEP || is_data(s) || s->member)
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

static int no_valid(rc_state *st, bool *empty, qsf_errinfo *err) {
    const qsf_manifest *m = &st->out->manifest;
    bool have_mf = m->fd >= 0;
    if (st->corrupt > 0 && have_mf)
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "manifest references durable data but no segment in %s has a valid "
                           "header (%u corrupt files)",
                           st->out->slot.path, st->corrupt);
    if (!st->corrupt && have_mf && m->head_base != m->active_base)
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "manifest references durable data but no segment files exist in %s "
                           "(headBase %lld, activeBase %lld)",
                           st->out->slot.path, (long long) m->head_base,
                           (long long) m->active_base);
    for (uint32_t i = 0; i < st->nsegs; i++)
        st->segs[i].fate = st->segs[i].debris ? RC_DEBRIS : RC_QUARANTINE;
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

static rc_seg *pick_empty(rc_state *st, bool any_base, int64_t base) {
    rc_seg *best = NULL;
    for (uint32_t i = 0; i < st->nsegs; i++) {
        rc_seg *s = &st->segs[i];
        if (!is_empty_valid(s) || (!any_base && s->info.base_seq != base))
            continue;
        if (better_empty(s, best))
            best = s;
    }
    return best;
}

/* Refuse to migrate when a rejected file could be the missing head. */
static int check_no_lost_head(rc_state *st, qsf_errinfo *err) {
    for (uint32_t i = 0; i < st->nsegs; i++) {
        const rc_seg *s = &st->segs[i];
        bool below = st->ndata > 0 && s->info.base_seq < st->data[0]->info.base_seq;
        if ((s->corrupt && !s->debris) || (is_empty_valid(s) && s->torn_bytes > 0 && below))
            return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                               "cannot migrate slot %s without manifest: %s is %s and could be "
                               "the missing head of the chain",
                               st->out->slot.path, s->info.name,
                               s->corrupt ? "corrupt" : "torn without valid frames");
    }
    return QSF_OK;
}

static int legacy_chain(rc_state *st, qsf_errinfo *err) {
    int rc = check_no_lost_head(st, err);
    if (rc != QSF_OK)
        return rc;
    st->active = st->ndata > 0 ? st->data[st->ndata - 1] : pick_empty(st, true, 0);
    st->legacy = true;
    rc = number_chain(st, err);
    if (rc != QSF_OK)
        return rc;
    assign_extras(st);
    return QSF_OK; /* residue is zeroed, and the pass goes on (WRITE) */
}

/* ---- docs/FORMAT.md §6.8: slot with a manifest ---- */

/* Data below headBase. Trim persists the watermark (record + sync) before it
 * moves headBase, so a segment wholly below the head whose frames are all at
 * or below the watermark is an acknowledged leftover (deleted), and any other
 * segment below the head (a frame above the watermark, or straddling the
 * head) proves the manifest wrong: it is kept and the head is lowered to it. */
static void apply_head(rc_state *st) {
    const qsf_manifest *m = &st->out->manifest;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < st->ndata; i++) {
        rc_seg *s = st->data[i];
        /* a segment ends before the next one begins (the count of a damaged
         * one is only provisional here) */
        int64_t last = last_fsn(s);
        if (i + 1 < st->ndata && st->data[i + 1]->info.base_seq - 1 < last)
            last = st->data[i + 1]->info.base_seq - 1;
        if (last < m->head_base && last <= st->wm) {
            QSF_LOGI("deleting %s/%s: FSN %lld..%lld lies wholly below headBase %lld and is "
                     "acknowledged",
                     st->out->slot.path, s->info.name, (long long) s->info.base_seq,
                     (long long) last, (long long) m->head_base);
            s->fate = RC_DELETE;
            continue;
        }
        if (s->info.base_seq < m->head_base && st->new_head < 0) {
            QSF_LOGW("slot %s: manifest headBase %lld lies above %s (FSN %lld..%lld), which holds "
                     "frames the watermark (%lld) says were never acknowledged: the manifest is "
                     "wrong; keeping the segment and lowering headBase to %lld",
                     st->out->slot.path, (long long) m->head_base, s->info.name,
                     (long long) s->info.base_seq, (long long) last_fsn(s), (long long) st->wm,
                     (long long) s->info.base_seq);
            st->new_head = s->info.base_seq;
        }
        st->data[kept++] = s;
    }
    st->ndata = kept;
}

static int64_t head_of(const rc_state *st) {
    return st->new_head >= 0 ? st->new_head : st->out->manifest.head_base;
}

/* Whether an empty segment's baseSeq lies inside the FSNs of a data member. */
static bool inside_data(const rc_state *st, const rc_seg *e) {
    for (uint32_t i = 0; i < st->ndata; i++) {
        const rc_seg *d = st->data[i];
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
static void add_lost_members(rc_state *st, int64_t active_base) {
    uint32_t ndata = st->ndata;
    for (uint32_t i = 0; i < st->nsegs; i++) {
        rc_seg *s = &st->segs[i];
        int64_t b = s->info.base_seq;
        if (!is_empty_valid(s) || s->fate != RC_KEEP || b < head_of(st) || b >= active_base ||
            inside_data(st, s))
            continue;
        rc_seg *same = NULL;
        for (uint32_t k = ndata; k < st->ndata; k++)
            if (st->data[k]->info.base_seq == b)
                same = st->data[k];
        if (same && !better_empty(s, same))
            continue;
        if (same)
            same->member = false;
        s->member = true;
        if (!same)
            st->data[st->ndata++] = s;
        else
            for (uint32_t k = ndata; k < st->ndata; k++)
                if (st->data[k] == same)
                    st->data[k] = s;
    }
    qsort(st->data, st->ndata, sizeof *st->data, by_base);
}

/* The segment at activeBase: frames first, then a torn empty, then a clean empty. */
static rc_seg *pick_active(rc_state *st, int64_t base) {
    for (uint32_t i = 0; i < st->ndata; i++)
        if (!st->data[i]->member && st->data[i]->info.base_seq == base)
            return st->data[i];
    rc_seg *torn = NULL, *clean = NULL;
    for (uint32_t i = 0; i < st->nsegs; i++) {
        rc_seg *s = &st->segs[i];
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
static bool drained_leftovers(rc_state *st) {
    const qsf_manifest *m = &st->out->manifest;
    if (st->ndata > 0 || st->corrupt > 0 || m->head_base != m->active_base)
        return false;
    for (uint32_t i = 0; i < st->nsegs; i++) {
        const rc_seg *s = &st->segs[i];
        if (s->fate == RC_KEEP && !s->debris && s->info.base_seq < m->active_base)
            return false;
    }
    assign_extras(st);
    return true;
}

/* Data members above activeBase: the manifest missed a rotation if they
 * continue the chain exactly from the segment at activeBase (the data decide:
 * activeBase is raised); otherwise the open fails. */
static int check_above_active(rc_state *st, qsf_errinfo *err) {
    const qsf_manifest *m = &st->out->manifest;
    rc_seg *top = st->ndata > 0 ? st->data[st->ndata - 1] : NULL;
    if (!top || top->info.base_seq <= m->active_base)
        return QSF_OK;
    rc_seg *prev = pick_active(st, m->active_base);
    bool continues = prev != NULL;
    for (uint32_t i = 0; i < st->ndata && continues; i++) {
        rc_seg *s = st->data[i];
        if (s->info.base_seq <= m->active_base)
            continue;
        continues =
            prev->ngaps == 0 && prev->info.base_seq + (int64_t) prev->intact == s->info.base_seq;
        prev = s;
    }
    if (!continues) {
        for (uint32_t i = 0; i < st->ndata; i++)
            if (st->data[i]->info.base_seq > m->active_base)
                top = st->data[i];
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "segment %s/%s (FSN %lld..%lld) lies above manifest activeBase %lld and "
                           "does not continue the chain from it",
                           st->out->slot.path, top->info.name, (long long) top->info.base_seq,
                           (long long) last_fsn(top), (long long) m->active_base);
    }
    QSF_LOGW("slot %s: %s (FSN %lld..) lies above manifest activeBase %lld and continues the "
             "chain: the manifest missed a rotation; activeBase raised to %lld",
             st->out->slot.path, top->info.name, (long long) top->info.base_seq,
             (long long) m->active_base, (long long) top->info.base_seq);
    st->new_active = top->info.base_seq;
    return QSF_OK;
}

static int64_t active_of(const rc_state *st) {
    return st->new_active >= 0 ? st->new_active : st->out->manifest.active_base;
}

static int manifest_chain(rc_state *st, bool *empty, qsf_errinfo *err) {
    apply_head(st);
    int rc = check_above_active(st, err);
    if (rc != QSF_OK)
        return rc;
    add_lost_members(st, active_of(st));
    st->active = pick_active(st, active_of(st));
    if (!st->active && drained_leftovers(st)) {
        QSF_LOGW("slot %s: only spares left by an interrupted drained close; starting empty",
                 st->out->slot.path);
        *empty = true;
        return QSF_OK;
    }
    if (!st->active)
        return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                           "manifest activeBase %lld names no segment in %s (manifest references "
                           "missing data)",
                           (long long) active_of(st), st->out->slot.path);
    /* The chain starts at headBase: nothing can fill FSNs before its first segment. */
    int64_t first = st->ndata > 0 ? st->data[0]->info.base_seq : st->active->info.base_seq;
    if (first != head_of(st))
        return gap_error(st, head_of(st), first,
                         st->ndata > 0 ? st->data[0]->info.name : st->active->info.name, err);
    rc = number_chain(st, err);
    if (rc != QSF_OK)
        return rc;
    assign_extras(st);
    st->rerun = any_residue_to_zero(&st->plan); /* zeroed, then the pass runs again (WRITE) */
    return QSF_OK;
}

int qsf_rc_publish_chain(rc_state *st, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    bool active_is_data = st->ndata > 0 && st->data[st->ndata - 1] == st->active;
    uint32_t n = st->ndata + (active_is_data ? 0 : 1);
    out->segments = calloc(n, sizeof *out->segments);
    if (!out->segments)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the segment list");
    for (uint32_t i = 0; i < st->ndata; i++)
        out->segments[i] = st->data[i]->info;
    out->segments[n - 1] = st->active->info;
    out->segments[n - 1].active = true;
    out->segment_count = n;
    out->active_index = n - 1;
    const qsf_seg_info *a = &out->segments[n - 1];
    out->published_fsn = a->base_seq + (int64_t) a->frame_count - 1;
    return QSF_OK;
}

int qsf_rc_build_chain(rc_state *st, bool *empty, qsf_errinfo *err) {
    *empty = false;
    bool any_valid = false;
    for (uint32_t i = 0; i < st->nsegs; i++)
        any_valid |= !st->segs[i].corrupt;
    if (!any_valid)
        return no_valid(st, empty, err);
    int rc = collect_data(st, err);
    if (rc != QSF_OK)
        return rc;
    bool have_mf = st->out->manifest.fd >= 0;
    for (uint32_t i = 0; i < st->nsegs && !have_mf; i++) {
        const rc_seg *s = &st->segs[i];
        if (!s->corrupt && (s->info.flags & QSF_SFA_FLAG_MANIFEST_REQUIRED))
            return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                               "segment %s/%s requires sf-manifest.bin (MANIFEST_REQUIRED) but the "
                               "manifest is missing",
                               st->out->slot.path, s->info.name);
    }
    rc = have_mf ? manifest_chain(st, empty, err) : legacy_chain(st, err);
    /* every reader of the chain (an open, an inspection, a set-aside) counts
     * the active segment the same way */
    if (rc == QSF_OK && !*empty && !st->rerun && st->active)
        rc = qsf_rc_apply_mark(st, err);
    return rc;
}
