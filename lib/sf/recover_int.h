/* Internal state shared by the recovery modules, by phase (recover.c draws
 * how each hands its result to the next):
 *   READ   recover_scan.c      list the slot, scan each *.sfa with pread, read the watermark
 *          recover_salvage.c   past a bad frame: find intact frames, count the destroyed ones
 *   PLAN   recover_chain.c     classify, legacy/manifest chains, the active one
 *          recover_number.c    FSN slots of damaged segments and of gaps (sealed counts)
 *          recover_mark.c      the active segment numbered by the published mark
 *          recover_walk.c      the chain's FSNs in order: intact frames and destroyed slots
 *          recover_groups.c    ackedFsn; flushes: given-up groups, losses, the cut
 *          recover_dict.c      dictionary rebuild, riding on the flush walk
 *   WRITE  recover_clean.c     zeroing, deletes, quarantine, the migration stamp, baseline
 *          recover_repair.c    rewrites with placeholders, the cut, manifest corrections
 *          recover_losses.c    what is given up: loss entries, retired spans
 *          recover_handover.c  nothing left to repair: the slot handed to the runtime
 *          recover_fresh.c     fresh start, create barriers
 *          recover.c           the driver: passes, phases, the report
 * and, around them:
 *   slot_open.c       qsf_slot_open / _adopt / _release: lock, recover, unreplayable slots
 *   slot_drained.c    the drained-close cleanup
 */
#ifndef QSF_RECOVER_INT_H
#define QSF_RECOVER_INT_H

#include "qwp/peek.h"
#include "sf/recover.h"

/* The smallest frame any client stores: 8-byte envelope + the 14-byte
 * table-less message (every client sets FLAG_DELTA_SYMBOL_DICT, so a message
 * is at least 12 + 2 bytes). A placeholder has exactly this size, so as many
 * placeholders as frames were destroyed always fit where those frames were. */
#define RC_MIN_FRAME 22

/* At most this many damaged regions are tracked per segment; past them the
 * rest of the file is left unsalvaged (kept in the quarantined copy). */
#define RC_MAX_GAPS 4096

/* What recovery decided to do with one scanned file. */
enum rc_fate {
    RC_KEEP = 0,       /* live: sealed or active */
    RC_DELETE = 1,     /* clean empty spare, or wholly acknowledged leftover */
    RC_QUARANTINE = 2, /* corrupt file or torn empty extra: renamed to .corrupt */
    RC_DEBRIS = 3,     /* holds no data (empty, or all zero): removed */
};

/* One stretch of a segment file, in file order: a run of intact frames, or a
 * gap of damaged bytes between two intact frames. */
enum rc_piece_kind { RC_RUN = 0, RC_GAP = 1 };
typedef struct rc_piece {
    uint64_t off, end; /* bytes [off, end) of the file */
    uint64_t frames;   /* FSN slots: intact frames, or destroyed frames */
    uint64_t ub;       /* RC_GAP: most frames the bytes can have held, (end - off) / 22 */
    uint8_t kind;      /* enum rc_piece_kind */
    bool exact;        /* RC_GAP: `frames` is known, not assumed */
    bool chained;      /* RC_GAP: the count came from the unverified length fields */
    bool bad_len;      /* RC_GAP: the first bad frame had an impossible length */
} rc_piece;

/* One scanned file. READ fills what the file holds; PLAN adds what is done
 * with it and how its FSN slots are numbered (the decision sits next to the
 * facts, one record per file, for the operator tools that show both); WRITE
 * records only what it changed on disk. */
typedef struct rc_seg {
    /* READ (recover_scan.c, recover_salvage.c) */
    qsf_seg_info info;    /* frame_count = FSN slots (intact + destroyed + fill) */
    bool corrupt;         /* header invalid: contents unknown */
    bool debris;          /* no valid header and nothing but zeros: holds no data */
    uint64_t torn_bytes;  /* fileSize - lastGood when the suffix has a non-zero byte */
    uint64_t residue_end; /* offset after the last non-zero byte beyond lastGood (0 once zeroed) */
    rc_piece *pieces;     /* runs and gaps from offset 24, in file order */
    uint32_t npieces;
    uint32_t ngaps;
    uint64_t intact; /* intact frames */
    bool unsalvaged; /* the search stopped early: what follows was not looked at */
    /* PLAN: the chain (recover_chain.c) */
    int fate;    /* enum rc_fate */
    bool member; /* an empty segment taken into the chain (it lost all frames) */
    /* PLAN: the numbering (recover_number.c, recover_mark.c) */
    uint64_t fill;    /* FSN slots lost after the last intact frame (sealed segment) */
    uint64_t fill_ub; /* most frames the bytes after the last intact frame can hold */
    bool fill_exact;  /* fill is the exact count (fixed by the next segment's base) */
    /* frames may be missing after the last intact frame although no slot is
     * there (the count went to earlier gaps of unknown count): at most this
     * many. The group analysis treats the segment's end as damaged. */
    uint64_t tail_doubt;
    bool marked; /* the active segment, numbered by the published mark */
    /* PLAN: the flushes (recover_groups.c) */
    bool rewrite;            /* recovery rewrites it with placeholders */
    bool unknown_only;       /* ...only for frames that need lost symbols: nothing damaged */
    int64_t first_destroyed; /* lowest destroyed FSN above acked in it (INT64_MAX: none) */
    /* WRITE (recover_repair.c) */
    char copy[64]; /* name of its quarantined copy, once made */
} rc_seg;

/* A bounded pread window over one file (never a mapping). */
typedef struct rc_reader {
    int fd;
    const char *dir;
    const char *name;
    uint64_t size;
    uint8_t *buf; /* QSF_RECOVER_BUF bytes */
    uint64_t win_off;
    size_t win_len;
} rc_reader;

/* A flush (group) recovery gives up: FSNs [from, to], with what it found. */
typedef struct rc_span {
    int64_t from, to;
    uint64_t destroyed, retired, rows, uncounted;
    uint64_t unknown; /* intact frames in it whose delta section needs lost symbol ids */
    bool exact;       /* every destroyed count in it is known */
    bool cut;         /* the interrupted flush at the end: cut, not retired */
    rc_seg *seg;      /* where the first damage is (NULL: only stored placeholders) */
    uint64_t off;     /* its offset */
    char what[160];   /* what the damage is */
} rc_span;

/* What earlier passes of one open did, reported by the last one. */
typedef struct rc_carry {
    qsf_recovery_loss *losses;
    uint32_t nlosses;
    uint64_t aborted_frames, aborted_rows;
    int64_t aborted_from, aborted_to;
    uint32_t debris, quarantined;
    uint64_t torn_bytes;
    bool manifest_repaired;
} rc_carry;

/* ---- the phases' results (recover.c draws how they flow) ---- */

/* READ (recover_scan.c): what the slot directory holds, file by file, and
 * the watermark as it is on disk. Nothing is written. */
#define RC_READ_FIELDS                                                                             \
    rc_seg *segs; /* every *.sfa found */                                                          \
    uint32_t nsegs;                                                                                \
    uint32_t corrupt; /* files with an invalid header */                                           \
    uint64_t max_gen; /* highest "sf-<gen>.sfa" seen, 0 if none */                                 \
    bool any_gen;                                                                                  \
    char(*tmp)[256]; /* "<segment>.tmp" left by an interrupted rewrite */                          \
    uint32_t ntmp;                                                                                 \
    int64_t wm; /* the watermark value as read (never repaired here); -1 when absent */
typedef struct rc_found {
    RC_READ_FIELDS
} rc_found;

/* PLAN, from an rc_found: the chain (recover_chain.c, recover_number.c,
 * recover_mark.c), then the flushes against ackedFsn (recover_groups.c, with
 * the dictionary rebuild of recover_dict.c riding on its walk). What it
 * decides to change on disk is for WRITE to do; it writes nothing. */
#define RC_PLAN_FIELDS                                                                             \
    rc_seg **data; /* chain members (valid segments with FSN slots), sorted by baseSeq */          \
    uint32_t ndata;                                                                                \
    rc_seg *active; /* chosen active segment */                                                    \
    bool legacy;    /* migrate a slot without manifest */                                          \
    /* sealed members' residue is zeroed first (WRITE), then the pass runs again */                \
    bool rerun;                                                                                    \
    int64_t new_head, new_active; /* manifest corrections the data prove (-1: none) */             \
    int64_t acked;                /* ackedFsn the flushes are planned against */                   \
    rc_span *spans;               /* flushes given up, sorted, all above acked */                  \
    uint32_t nspans;                                                                               \
    rc_span cut;          /* the interrupted flush at the end; cut.from > cut.to: none */          \
    struct rc_dict *dict; /* the dictionary rebuild riding on the walk (NULL: none) */
typedef struct rc_plan {
    RC_PLAN_FIELDS
} rc_plan;

/* WRITE, from an rc_plan (recover_repair.c, recover_clean.c,
 * recover_fresh.c): what it removed, for the report. */
#define RC_DONE_FIELDS                                                                             \
    uint32_t quarantined; /* files renamed to .corrupt (or removed) */                             \
    uint32_t debris;      /* files removed as holding no data */
typedef struct rc_done {
    RC_DONE_FIELDS
} rc_done;

/* One pass: what every phase is given, and the three results. Each result
 * is also reachable by its fields' own names (st->segs is st->found.segs) for
 * the operator tools that name them so (inspect.c, dump.c, setaside.c);
 * recovery itself goes through found, plan and done. */
typedef struct rc_state {
    qsf_slot_recovered *out;
    rc_carry *carry;
    uint8_t *buf; /* QSF_RECOVER_BUF scratch, shared by every reader */
    bool dry_run; /* inspection: decide, never write (no zeroing, no dictionary append) */
    union {
        rc_found found;
        struct {
            RC_READ_FIELDS
        };
    };
    union {
        rc_plan plan;
        struct {
            RC_PLAN_FIELDS
        };
    };
    union {
        rc_done done;
        struct {
            RC_DONE_FIELDS
        };
    };
} rc_state;

/* ---- READ ---- */

/* recover_scan.c, READ: lists the slot, scans every *.sfa in it and reads
 * the watermark as it is, into *f. Writes nothing. */
int qsf_rc_read_slot(const qsf_slot *slot, uint8_t *buf, rc_found *f, qsf_errinfo *err);
/* Its first two steps alone, into st->found (the operator tools read the
 * watermark their own way). */
int qsf_rc_enumerate(rc_state *st, qsf_errinfo *err);
int qsf_rc_scan_all(rc_state *st, qsf_errinfo *err);
/* Returns a pointer to up to `want` bytes at off (fewer near the end of file)
 * and their count in *got; QSF_E_IO on a read error. */
int qsf_rc_read(rc_reader *r, uint64_t off, size_t want, const uint8_t **p, size_t *got,
                qsf_errinfo *err);
int qsf_rc_reader_open(rc_reader *r, const qsf_slot *slot, const char *name, uint8_t *buf,
                       int flags, qsf_errinfo *err);
void qsf_rc_reader_close(rc_reader *r);
/* The first offset at or after pos that may hold data (SEEK_DATA): a hole
 * reads as zeros, so the scans skip it; r->size when only a hole is left. */
uint64_t qsf_rc_next_data(const rc_reader *r, uint64_t pos);
/* CRC of the frame at off (length len, stored crc want); *ok = it matches. */
int qsf_rc_frame_crc_ok(rc_reader *r, uint64_t off, uint32_t len, uint32_t want, bool *ok,
                        qsf_errinfo *err);
/* Adds a piece to s (QSF_E_NOMEM). */
int qsf_rc_add_piece(rc_seg *s, const rc_piece *p, qsf_errinfo *err);

/* recover_salvage.c: the offset of the first intact frame at or after `from`
 * (past a bad frame; *found = false when none). A candidate must look like a
 * stored QWP message before its CRC is computed; *budget bounds the CRC bytes
 * spent on candidates that fail (*out_of_budget when it ran out). */
int qsf_rc_salvage_next(rc_reader *r, uint64_t from, uint64_t *next, bool *found, uint64_t *budget,
                        bool *out_of_budget, qsf_errinfo *err);
/* Whether the bytes at off look like a stored QWP message: a possible
 * length, "QWP1", version 1 and payload_length = length - 12 (no CRC check). */
int qsf_rc_looks_stored_at(rc_reader *r, uint64_t off, bool *looks, qsf_errinfo *err);
/* The gap [off, end) before an intact frame: its count from the length fields
 * when they chain exactly onto `end`, else the upper bound (bytes / 22). */
int qsf_rc_count_gap(rc_reader *r, rc_piece *g, qsf_errinfo *err);

/* ---- PLAN ---- */

/* recover_chain.c, PLAN's first half: from READ's result *f and the manifest
 * (out->manifest), the chain into *p (its fates and FSN counts into the
 * segments of *f). QSF_OK with p->active set (numbered by the published mark
 * when one applies: qsf_rc_apply_mark), or a chain error. Sets *empty
 * (p->active NULL) when the slot must start fresh: docs/FORMAT.md §6.5, or
 * only the spares of an interrupted drained close are left under a collapsed
 * manifest. Writes nothing. */
int qsf_rc_chain(const qsf_slot_recovered *out, rc_found *f, rc_plan *p, bool *empty,
                 qsf_errinfo *err);
/* The same on st->found into st->plan. */
int qsf_rc_build_chain(rc_state *st, bool *empty, qsf_errinfo *err);

/* Whether WRITE zeroes the residue after the last frame of chain member s
 * (a sealed one, not damaged: a damaged one is rewritten whole). In a
 * manifest slot the pass then runs again (plan.rerun). */
bool qsf_rc_residue_to_zero(const rc_plan *p, const rc_seg *s);

/* Fills out->segments (sealed oldest first, active last) and publishedFsn. */
int qsf_rc_publish_chain(rc_state *st, qsf_errinfo *err);

/* recover_number.c: the FSN slots of each sealed member, from the next
 * member's baseSeq (its count is fixed): destroyed frames in gaps and after
 * the last intact frame. QSF_E_CORRUPT when they cannot fit ("FSN gap ...")
 * or the segment holds more frames than its FSN range. */
int qsf_rc_number_sealed(const char *slot_path, rc_seg *s, int64_t next_base, qsf_errinfo *err);
/* The active segment numbered like a sealed one whose next baseSeq is
 * next_base, its frames all within [24, end_off): the published mark of the
 * last close (recover_mark.c). False, nothing changed, when the data do not
 * fit that count (a later writer went on, or the mark is of another time). */
bool qsf_rc_number_marked(rc_seg *s, int64_t next_base, uint64_t end_off);
/* recover_mark.c: applies the published mark (slot_published.c) to the
 * active segment: its gaps get their exact count and the frames cut after
 * its last intact frame, below the mark, become destroyed slots (a loss)
 * instead of a torn tail. */
int qsf_rc_apply_mark(const qsf_slot *sl, rc_seg *active, qsf_errinfo *err);
/* Sum of a segment's FSN slots (pieces + fill) into info.frame_count. */
void qsf_rc_count_slots(rc_seg *s);

/* recover_walk.c: calls fn for every FSN of the chain p in [from, to], in
 * order: an intact frame (payload at off, len bytes) or a destroyed slot
 * (intact false), read from the slot's files through buf
 * (QSF_RECOVER_BUF). fn returns QSF_OK to go on, or an error to stop. */
typedef struct rc_slot {
    int64_t fsn;
    rc_seg *seg;
    bool intact;
    uint64_t off; /* intact: offset of the frame's envelope */
    uint32_t len; /* intact: payload length */
    const rc_piece *piece;
} rc_slot;
typedef int (*rc_chain_fn)(rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err);
int qsf_rc_walk_chain(const qsf_slot *slot, uint8_t *buf, const rc_plan *p, int64_t from,
                      int64_t to, rc_chain_fn fn, void *user, qsf_errinfo *err);
/* The same over st->plan, fn given the pass (the operator tools' walks). */
typedef int (*rc_walk_fn)(rc_state *st, rc_reader *r, const rc_slot *s, void *user,
                          qsf_errinfo *err);
int qsf_rc_walk(rc_state *st, int64_t from, int64_t to, rc_walk_fn fn, void *user,
                qsf_errinfo *err);

/* What recovery needs of a stored frame's QWP header. */
typedef struct rc_frame_kind {
    bool qwp;         /* a QWP message (else opaque: committing) */
    bool commits;     /* FLAG_DEFER_COMMIT clear (or opaque) */
    bool placeholder; /* deferred and table-less */
    uint16_t tables;
    uint8_t flags;
} rc_frame_kind;
int qsf_rc_frame_kind_of(rc_reader *r, const rc_slot *s, rc_frame_kind *k, qsf_errinfo *err);
/* The delta section of an intact frame, entry by entry through the window:
 * *bad when it is malformed (the caller logs it and treats the frame as having
 * none). qsf_rc_delta_next gives the file offset and length of the next entry's
 * bytes (read them with qsf_rc_read; a string may be longer than the window). */
typedef struct rc_delta {
    qsf_qwp_hdr h;
    uint64_t base; /* file offset of the message */
    uint64_t start, count, i;
    uint64_t pos; /* message offset of the next entry */
} rc_delta;
int qsf_rc_delta_open(rc_reader *r, const rc_slot *s, rc_delta *d, bool *bad, qsf_errinfo *err);
int qsf_rc_delta_next(rc_reader *r, rc_delta *d, uint64_t *str, uint64_t *len, bool *bad,
                      qsf_errinfo *err);
/* Rows of an intact frame: *countable false for opaque frames and frames with
 * more than one table (their row counts sit behind the first table's data). */
int qsf_rc_frame_rows(rc_reader *r, const rc_slot *s, uint64_t *rows, bool *countable,
                      qsf_errinfo *err);

/* recover_groups.c, PLAN's second half: seeds p->acked from the chain and
 * the watermark as read (f->wm), then walks the chain once: the flushes given
 * up (a destroyed frame or a stored placeholder above acked) and the
 * interrupted flush at the end, with their rows, each frame's delta section
 * fed to the dictionary rebuild (p->dict, when begun). Writes nothing. */
int qsf_rc_plan_flushes(const qsf_slot *slot, uint8_t *buf, rc_found *f, rc_plan *p,
                        qsf_errinfo *err);
/* The same on st->found into st->plan. */
int qsf_rc_plan(rc_state *st, qsf_errinfo *err);

/* Whether fsn lies in a given-up flush (binary search). */
bool qsf_rc_given_up_in(const rc_plan *p, int64_t fsn);
bool qsf_rc_given_up(const rc_state *st, int64_t fsn);
/* A walk callback (user: an rc_span): counts an intact frame that is not a
 * placeholder into the span's retired frames and rows (uncounted when its
 * rows cannot be read). */
int qsf_rc_count_frame(rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err);
/* recover_groups.c: whether the plan changes anything on disk. */
bool qsf_rc_plan_repairs(const rc_state *st);
/* recover_groups.c: ackedFsn = max(lowestBase - 1, watermark), or lowestBase - 1 when
 * that is above publishedFsn (*ignored set). watermark = -1 when absent. */
int64_t qsf_rc_seed_acked(int64_t lowest_base, int64_t published, int64_t watermark, bool *ignored);

/* recover_dict.c: the dictionary rebuild, fed by the flush walk (qsf_rc_plan_flushes):
 * begin after out->symdict is open, each intact frame goes through
 * qsf_rc_dict_frame, finish once the walk is over (sets out->data_loss and
 * out->data_loss_reason when a section redefines a known id with another
 * string: the slot is unreplayable; appends the learned entries unless
 * dry_run). A section that starts past the known ids is reported in *unknown
 * and adds nothing: the frame cannot be replayed (recover_groups.c). */
typedef struct rc_unknown_syms {
    bool found;
    uint64_t start; /* the section's first id */
    uint32_t known; /* ids known at that point */
} rc_unknown_syms;
int qsf_rc_dict_begin(rc_state *st, qsf_errinfo *err);
int qsf_rc_dict_frame(struct rc_dict *d, rc_reader *r, const rc_slot *s, const rc_frame_kind *k,
                      rc_unknown_syms *unknown, qsf_errinfo *err);
int qsf_rc_dict_finish(rc_state *st, qsf_errinfo *err);
void qsf_rc_dict_free(rc_state *st);
/* The entries known so far (.symbol-dict, then those learned from frames) and
 * entry id (< known; NULL otherwise), for read-only walks (recover_view.h). */
uint32_t qsf_rc_dict_known(const rc_state *st);
const char *qsf_rc_dict_entry(const rc_state *st, uint32_t id, uint32_t *len);

/* ---- WRITE ---- */

/* recover_clean.c: durable zeroing, deletes and quarantines, the
 * MANIFEST_REQUIRED stamp, the baseline sync. qsf_rc_zero_sealed zeroes
 * the residue the plan names (qsf_rc_residue_to_zero), first in WRITE. */
int qsf_rc_zero_sealed(rc_state *st, qsf_errinfo *err);
int qsf_rc_zero_range(rc_state *st, rc_seg *s, uint64_t from, uint64_t to, qsf_errinfo *err);
int qsf_rc_zero_residue(rc_state *st, rc_seg *s, qsf_errinfo *err);
int qsf_rc_apply_fates(rc_state *st, qsf_errinfo *err);
int qsf_rc_stamp_flag(rc_state *st, rc_seg *s, qsf_errinfo *err);
int qsf_rc_baseline(rc_state *st, int durability, qsf_errinfo *err);

/* recover_repair.c: records what the plan gives up (st->carry), then
 * carries it out (manifest, rewrites, cut), durably. The pass runs again. */
int qsf_rc_repair(rc_state *st, qsf_errinfo *err);
/* Rewrites segment s crash-safely: its FSNs up to limit - 1, each copied or,
 * when destroyed or in a flush given up (st->spans), a placeholder (the
 * flush's committing member the empty commit), into "<name>.tmp" (fsync),
 * renamed over it, dir fsync. keep_copy: first keep the original as
 * <name>.corrupt[-N] (s->copy). Also used by a set-aside (setaside.c). */
int qsf_rc_rewrite_segment(rc_state *st, rc_seg *s, int64_t limit, bool keep_copy,
                           qsf_errinfo *err);

/* recover_losses.c: fills out->retired from the given-up spans. */
int qsf_rc_publish_retired(rc_state *st, qsf_errinfo *err);
/* recover_losses.c: the loss entries of this pass (into st->carry). */
int qsf_rc_record_losses(rc_state *st, qsf_errinfo *err);
/* recover_losses.c: an unreplayable slot gives up everything above ackedFsn: its losses become
 * one, FSN acked + 1..published, counting every frame (those earlier passes
 * found destroyed and the rest) and the rows that can be counted, so that
 * the record of the set-aside and its loss are all there is to report. */
int qsf_rc_set_aside_loss(rc_state *st, qsf_errinfo *err);

/* recover_handover.c, WRITE when nothing is left to repair: deletes and
 * quarantines, migration, out->segments, ackedFsn, retired spans, the
 * dictionary, the baseline (or the set-aside loss of an unreplayable slot). */
int qsf_rc_hand_over(rc_state *st, int durability, qsf_errinfo *err);
/* ...or, no chain: a collapsed manifest removed, then a fresh slot. */
int qsf_rc_start_empty(rc_state *st, uint64_t seg_bytes, qsf_errinfo *err);

/* recover_fresh.c: a fresh slot (docs/FORMAT.md §6.21 and the create barriers). */
int qsf_rc_fresh_start(qsf_slot_recovered *out, uint64_t segment_bytes, qsf_errinfo *err);

/* ---- the driver ---- */

/* recover.c: recovers the slot out->slot (locked, logical lock held) into
 * *out, pass after pass until a pass repairs nothing (at most 4). An
 * unreplayable slot is not an error here: out->data_loss says so and the
 * caller decides. */
int qsf_rc_recover_slot(qsf_slot_recovered *out, int durability, uint64_t seg_bytes,
                        qsf_errinfo *err);

/* recover.c: the report's loss counts (losses, frames_lost) from the loss
 * entries, one place for recovery and for a slot set aside (slot_open.c). */
void qsf_rc_report_losses(qsf_recovery_report *rep, const qsf_recovery_loss *l, uint32_t n);
/* recover.c: frees what one pass's state holds (segments, chain, spans,
 * dictionary rebuild, the buffer) and zeroes it. */
void qsf_rc_state_free(rc_state *st);

/* slot_open.c: drops everything one recovery pass produced (handles, lists,
 * report), keeping the slot and its locks. */
void qsf_rc_drop_pass(qsf_slot_recovered *out);

#endif
