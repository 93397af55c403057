/* Internal state shared by the recovery modules:
 *   recover_scan.c    enumerate the slot, scan each *.sfa with pread (§8.2-8.3)
 *   recover_chain.c   classify, legacy/manifest chain rules, active selection (§8.5-8.8)
 *   recover_clean.c   deletes, quarantine, residue zeroing, durability baseline (§8.9, §8.12)
 *   recover_frames.c  commit boundary and dictionary rebuild (§8.11)
 *   recover_fresh.c   fresh start and the create barriers (§8.13, §9.1)
 *   recover.c         qsf_slot_open orchestration, watermark seeding (§8.10), release
 */
#ifndef QSF_RECOVER_INT_H
#define QSF_RECOVER_INT_H

#include "sf/recover.h"

/* What recovery decided to do with one scanned file. */
enum rc_fate {
    RC_KEEP = 0,       /* live: sealed or active */
    RC_DELETE = 1,     /* clean empty spare, or wholly acknowledged leftover */
    RC_QUARANTINE = 2, /* corrupt file or torn empty extra: renamed to .corrupt */
};

typedef struct rc_seg {
    qsf_seg_info info;
    bool corrupt;         /* header invalid: contents unknown */
    uint64_t torn_bytes;  /* fileSize - lastGood when the suffix has a non-zero byte */
    uint64_t residue_end; /* offset after the last non-zero byte beyond lastGood */
    int fate;             /* enum rc_fate */
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

typedef struct rc_state {
    qsf_slot_recovered *out;
    uint8_t *buf; /* QSF_RECOVER_BUF scratch, shared by every reader */
    rc_seg *segs; /* every *.sfa found */
    uint32_t nsegs;
    uint32_t corrupt; /* files with an invalid header */
    uint64_t max_gen; /* highest "sf-<gen>.sfa" seen, 0 if none */
    bool any_gen;
    rc_seg **data; /* valid segments with frames, sorted by baseSeq */
    uint32_t ndata;
    rc_seg *active;       /* chosen active segment */
    bool rerun;           /* sealed residue was zeroed: run recovery again (once) */
    bool legacy;          /* migrate a slot without manifest */
    bool dry_run;         /* inspection: decide, never write (no zeroing, no dictionary append) */
    uint32_t quarantined; /* files renamed to .corrupt (or removed) */
} rc_state;

/* recover_scan.c */
int rc_enumerate(rc_state *st, qsf_errinfo *err);
int rc_scan_all(rc_state *st, qsf_errinfo *err);
/* Returns a pointer to up to `want` bytes at off (fewer near the end of file)
 * and their count in *got; QSF_E_IO on a read error. */
int rc_read(rc_reader *r, uint64_t off, size_t want, const uint8_t **p, size_t *got,
            qsf_errinfo *err);
int rc_reader_open(rc_reader *r, const qsf_slot *slot, const char *name, uint8_t *buf, int flags,
                   qsf_errinfo *err);
void rc_reader_close(rc_reader *r);

/* recover_chain.c: returns QSF_OK with st->active set, or a chain error. Sets
 * *empty (st->active NULL) when the slot must start fresh: §8.5, or only the
 * spares of an interrupted drained close are left under a collapsed manifest. */
int rc_build_chain(rc_state *st, bool *empty, qsf_errinfo *err);

/* Fills out->segments (sealed oldest first, active last) and publishedFsn. */
int rc_publish_chain(rc_state *st, qsf_errinfo *err);

/* recover.c: ackedFsn = max(lowestBase - 1, watermark), or lowestBase - 1 when
 * that is above publishedFsn (*ignored set). watermark = -1 when absent. */
int64_t rc_seed_acked(int64_t lowest_base, int64_t published, int64_t watermark, bool *ignored);

/* recover_clean.c */
int rc_zero_residue(rc_state *st, rc_seg *s, qsf_errinfo *err);
int rc_apply_fates(rc_state *st, qsf_errinfo *err);
int rc_stamp_flag(rc_state *st, rc_seg *s, qsf_errinfo *err);
int rc_baseline(rc_state *st, int durability, qsf_errinfo *err);

/* recover_frames.c: commit boundary + dictionary rebuild; sets out->data_loss
 * and out->data_loss_reason when the slot is unreplayable. */
int rc_analyse_frames(rc_state *st, qsf_errinfo *err);

/* recover_fresh.c */
int rc_fresh_start(qsf_slot_recovered *out, uint64_t segment_bytes, qsf_errinfo *err);

#endif
