/* FSN slots of damaged segments (docs/FORMAT.md, "Salvage"). Destroyed
 * frames keep their FSNs, so every intact frame after them keeps (at least)
 * its own: a frame that was never acknowledged must never look acknowledged.
 *
 * A sealed segment's frame count is fixed by the next segment's baseSeq:
 *
 *   T = next.baseSeq - baseSeq = intact + destroyed in gaps + lost at the end
 *
 * Gaps whose count is known keep it; the others (at least 1, at most bytes /
 * 22 each) take as many as they can, oldest first, so the frames after them
 * get the highest FSNs the bytes allow (never lower than their real ones);
 * what is left was lost after the last intact frame (a host crash loses a
 * sealed segment's unsynced tail while the next segment's header, synced at
 * rotation, survives). Those go to the end as placeholders, where the lost
 * frames were. When the gaps took every missing FSN but the end could have
 * held some of them, the end is "in doubt": the flushes on both sides of it
 * must not be joined (recover_groups.c). In the active segment nothing fixes
 * the count, unless the sender that closed the slot left a mark of what it
 * had published (qsf_rc_number_marked): without one, a gap of unknown count
 * takes its upper bound. */
#include "recover_int.h"

#include "err.h"
#include "qsf_assert.h"
#include "sf/sfa.h"

#include <stdio.h>

void qsf_rc_count_slots(rc_seg *s) {
    uint64_t n = s->fill;
    for (uint32_t i = 0; i < s->npieces; i++)
        n += s->pieces[i].frames;
    s->info.frame_count = n;
}

typedef struct bounds {
    uint64_t known;   /* intact frames + gaps with a known count */
    uint64_t unknown; /* gaps with an assumed count */
    uint64_t ub;      /* sum of the assumed gaps' upper bounds */
} bounds;

static uint64_t gap_ub(const rc_piece *g) {
    return g->ub > 0 ? g->ub : 1;
}

static bounds measure(const rc_seg *s) {
    bounds b = {0};
    for (uint32_t i = 0; i < s->npieces; i++) {
        const rc_piece *p = &s->pieces[i];
        if (p->kind == RC_RUN || p->exact)
            b.known += p->frames;
        else {
            b.unknown++;
            b.ub += gap_ub(p);
        }
    }
    return b;
}

static int no_room(const char *slot_path, rc_seg *s, int64_t next_base, uint64_t missing,
                   uint64_t room, qsf_errinfo *err) {
    return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                       "FSN gap in recovered segments: expected %lld but got %lld (segment "
                       "%s/%s): the %llu missing frames do not fit as placeholders in its free "
                       "space (room for %llu); a segment was removed or a baseSeq is wrong",
                       (long long) (s->info.base_seq + (int64_t) s->info.frame_count),
                       (long long) next_base, slot_path, s->info.name, (unsigned long long) missing,
                       (unsigned long long) room);
}

static int overlap(const char *slot_path, rc_seg *s, int64_t next_base, uint64_t least,
                   qsf_errinfo *err) {
    return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                       "FSN gap in recovered segments: expected %lld but got %lld (segment %s/%s "
                       "holds at least %llu frames)",
                       (long long) (s->info.base_seq + (int64_t) least), (long long) next_base,
                       slot_path, s->info.name, (unsigned long long) least);
}

/* Spreads `total` FSN slots over the gaps of unknown count (oldest first,
 * each up to its bound) and the end; the counts must fit (checked before). */
static void number(rc_seg *s, const bounds *b, uint64_t total) {
    uint64_t rem = total - b->known, later = b->unknown;
    for (uint32_t i = 0; i < s->npieces; i++) {
        rc_piece *p = &s->pieces[i];
        if (p->kind != RC_GAP || p->exact)
            continue;
        later--;
        p->frames = gap_ub(p) < rem - later ? gap_ub(p) : rem - later;
        rem -= p->frames;
        /* the only unknown, and it took every missing FSN: the count of frames
         * destroyed in the segment is exact (where they were, only bounded) */
        p->exact = b->unknown == 1 && rem == 0;
    }
    s->fill = rem;
    qsf_assert(s->fill <= s->fill_ub); /* lost frames fit after the last intact one */
    s->fill_exact = b->unknown == 0;
    /* Where the frames beyond one per unknown gap were is not known: if some
     * could have been after the last intact frame, a flush may end there
     * unseen (the FSNs above stay safe, the flushes must not be joined). */
    uint64_t slack = total - b->known - b->unknown;
    s->tail_doubt = b->unknown > 0 && s->fill == 0 && s->fill_ub > 0 ? slack : 0;
    qsf_rc_count_slots(s);
}

int qsf_rc_number_sealed(const char *slot_path, rc_seg *s, int64_t next_base, qsf_errinfo *err) {
    bounds b = measure(s);
    uint64_t last = s->info.last_good;
    s->fill_ub = (s->info.file_size - last) / RC_MIN_FRAME;
    if (next_base < s->info.base_seq ||
        (uint64_t) (next_base - s->info.base_seq) < b.known + b.unknown)
        return overlap(slot_path, s, next_base, b.known + b.unknown, err);
    uint64_t total = (uint64_t) (next_base - s->info.base_seq);
    if (total > b.known + b.ub + s->fill_ub)
        return no_room(slot_path, s, next_base, total - b.known, b.ub + s->fill_ub, err);
    number(s, &b, total);
    qsf_assert(s->info.frame_count == total); /* the next member's baseSeq fixed the count */
    return QSF_OK;
}

bool qsf_rc_number_marked(rc_seg *s, int64_t next_base, uint64_t end_off) {
    bounds b = measure(s);
    if (s->info.last_good > end_off || end_off > s->info.file_size || next_base < s->info.base_seq)
        return false;
    uint64_t total = (uint64_t) (next_base - s->info.base_seq);
    uint64_t tail_ub = (end_off - s->info.last_good) / RC_MIN_FRAME;
    if (total < b.known + b.unknown || total > b.known + b.ub + tail_ub)
        return false; /* not what this segment held when the mark was written */
    s->fill_ub = tail_ub;
    number(s, &b, total);
    return true;
}
