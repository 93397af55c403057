/* Recovery as the operator tooling sees it (lib/sfops: `qsf slot inspect`,
 * `dump`, `set-aside`): recovery's scan and plan of one slot run in dry run
 * (decide, never write), their result read through plain structs, the chain
 * walked FSN by FSN, and the one write a set-aside needs (a span given up,
 * its segments rewritten with placeholders).
 *
 * This header is the only way into recovery from outside lib/sf: the tooling
 * never sees recovery's internal state (sf/recover_int.h). Its implementation,
 * sf/recover_view.c, is built into the operator library, not into libqsf.
 *
 * The order of the calls is the order of an open's recovery:
 *
 *   qsf_rv_open ─▶ qsf_rv_scan ─▶ qsf_rv_chain ─▶ qsf_rv_plan ─▶ qsf_rv_publish
 *                  (list, scan     (chain,         (acked, the    (out->segments,
 *                   each *.sfa)     active one)     flushes)       publishedFsn)
 *        any time after qsf_rv_scan: qsf_rv_findings; after qsf_rv_plan:
 *        qsf_rv_walk, qsf_rv_given_up, qsf_rv_give_up + qsf_rv_rewrite
 *   ... qsf_rv_close
 *
 * One thread at a time; a view belongs to its caller. */
#ifndef QSF_RECOVER_VIEW_H
#define QSF_RECOVER_VIEW_H

#include "qsf.h"
#include "sf/recover.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The smallest frame a placeholder takes (envelope + the table-less message):
 * a frame smaller than this grows when it is replaced. */
#define QSF_RV_PLACEHOLDER_BYTES 22

/* A recovery plan of one slot, made without changing it. Opaque. */
typedef struct qsf_rv qsf_rv;

/* What recovery would do with a scanned file (qsf_rv_file.fate). */
enum qsf_rv_fate {
    QSF_RV_KEEP = 0,       /* live: sealed or active */
    QSF_RV_DELETE = 1,     /* clean empty spare, or wholly acknowledged leftover */
    QSF_RV_QUARANTINE = 2, /* corrupt file or torn empty extra: renamed .corrupt */
    QSF_RV_DEBRIS = 3,     /* holds no data (empty, or all zero): removed */
};

/* One *.sfa file as scanned. */
typedef struct qsf_rv_file {
    qsf_seg_info info;    /* frame_count = FSN slots (intact + destroyed) */
    bool corrupt;         /* header invalid: contents unknown */
    int fate;             /* enum qsf_rv_fate */
    uint64_t torn_bytes;  /* file size - lastGood, when the suffix has a non-zero byte */
    uint64_t residue_end; /* offset after the last non-zero byte beyond lastGood */
    bool rewrite;         /* the plan rewrites it with placeholders */
    bool unsalvaged;      /* part of it could not be searched for intact frames */
} qsf_rv_file;

/* A flush the plan gives up (never sent), or the interrupted one at the end
 * that an open cuts: FSNs [from, to]. */
typedef struct qsf_rv_span {
    int64_t from, to;
    uint64_t destroyed;  /* frames destroyed in it */
    uint64_t retired;    /* intact frames in it */
    uint64_t rows;       /* rows of the intact frames that could be counted */
    uint64_t uncounted;  /* intact frames whose rows could not be counted */
    bool exact;          /* every destroyed count in it is known */
    const char *segment; /* where its first damage is (NULL: only stored placeholders) */
    const char *what;    /* what that damage is */
} qsf_rv_span;

/* What the scan and the plan found so far. Arrays are owned by the view and
 * valid until the next qsf_rv_findings or qsf_rv_close. */
typedef struct qsf_rv_result {
    const qsf_rv_file *files; /* every *.sfa found, in scan order */
    uint32_t nfiles;
    int32_t active;        /* index in files of the active segment; -1: none */
    const uint32_t *chain; /* indices in files: sealed oldest first, the active last */
    uint32_t nchain;
    const char (*tmp)[256]; /* "<segment>.tmp" files left by an interrupted rewrite */
    uint32_t ntmp;
    bool legacy;              /* no manifest: an open migrates the slot */
    bool rerun;               /* a sealed segment has residue: an open zeroes it and runs again */
    int64_t new_head;         /* manifest headBase the data prove (-1: no correction) */
    int64_t new_active;       /* manifest activeBase the data prove (-1: no correction) */
    int64_t acked;            /* ackedFsn the plan is made against (after qsf_rv_plan) */
    const qsf_rv_span *spans; /* flushes given up, sorted, disjoint */
    uint32_t nspans;
    qsf_rv_span cut; /* the interrupted flush at the end; cut.from > cut.to: none */
    bool repairs;    /* the plan changes something on disk */
} qsf_rv_result;

/* Starts a dry-run plan of the slot out->slot (its dirfd open; locked or
 * not). out is the caller's and stays so: the chain rules read out->manifest,
 * the dictionary rebuild uses out->symdict, qsf_rv_publish fills
 * out->segments. Errors: QSF_E_NOMEM. */
int qsf_rv_open(qsf_rv **v, qsf_slot_recovered *out, qsf_errinfo *err);

/* Frees the view (not out). NULL is a no-op. */
void qsf_rv_close(qsf_rv *v);

/* Lists the slot and scans every *.sfa (docs/FORMAT.md §6.2, §6.3). Errors:
 * QSF_E_IO (the directory or a file cannot be read), QSF_E_UNSUPPORTED (a
 * segment of a version this build cannot read), QSF_E_NOMEM. */
int qsf_rv_scan(qsf_rv *v, qsf_errinfo *err);

/* The chain rules (docs/FORMAT.md §6.5-§6.8): decides each file's fate and the
 * active segment. *empty: no live segment (an open starts a fresh slot).
 * Errors: what an open would fail with (QSF_E_CORRUPT, ...), QSF_E_NOMEM. */
int qsf_rv_chain(qsf_rv *v, bool *empty, qsf_errinfo *err);

/* Seeds ackedFsn from the chain and watermark_fsn (-1: none), starts the
 * dictionary rebuild over out->symdict (open it first) and plans the flushes:
 * the commit boundary, those given up, the interrupted one. Errors: as an open. */
int qsf_rv_plan(qsf_rv *v, int64_t watermark_fsn, qsf_errinfo *err);

/* Fills out->segments (sealed oldest first, active last) and
 * out->published_fsn from the chain. Errors: QSF_E_NOMEM. */
int qsf_rv_publish(qsf_rv *v, qsf_errinfo *err);

/* The ackedFsn an open would seed from the lowest baseSeq, publishedFsn and
 * the watermark the plan was made with; *ignored when that watermark lies
 * above publishedFsn and is not used. */
int64_t qsf_rv_seed_acked(const qsf_rv *v, int64_t lowest_base, int64_t published, bool *ignored);

/* The watermark the plan was made with (qsf_rv_plan's watermark_fsn). */
int64_t qsf_rv_watermark(const qsf_rv *v);

/* Ends the dictionary rebuild: sets out->data_loss and its reason when the
 * frames redefine a known symbol id (the slot is unreplayable). Writes nothing. */
int qsf_rv_dict_finish(qsf_rv *v, qsf_errinfo *err);

/* The dictionary entries known so far (.symbol-dict, then those learned from
 * the frames) and entry id (< known; NULL otherwise, *len unset). */
uint32_t qsf_rv_dict_known(const qsf_rv *v);
const char *qsf_rv_dict_entry(const qsf_rv *v, uint32_t id, uint32_t *len);

/* The scan's and plan's findings (see qsf_rv_result); NULL when out of memory. */
const qsf_rv_result *qsf_rv_findings(qsf_rv *v);

/* Whether fsn lies in a flush the plan gives up. */
bool qsf_rv_given_up(const qsf_rv *v, int64_t fsn);

/* ---- walking the chain ---- */

/* Where one FSN of the chain stands. The reads below take it; it is valid
 * during the walk's callback only. */
struct qsf_rv_pos;
typedef struct qsf_rv_frame {
    int64_t fsn;
    bool intact;         /* false: destroyed bytes (an open stores a placeholder) */
    const char *segment; /* the segment file's name */
    uint64_t off;        /* of the frame's envelope; of the damage when destroyed */
    uint32_t len;        /* payload bytes (intact) */
    int fd;              /* the segment, open for reading (pread) */
    const char *dir;     /* the slot's path, for messages */
    const struct qsf_rv_pos *pos;
} qsf_rv_frame;

/* Calls fn for every FSN of the chain in [from, to], in order (after
 * qsf_rv_plan). fn returns QSF_OK to go on; anything else ends the walk and is
 * returned as it is (a positive value is the caller's "enough"). */
typedef int (*qsf_rv_walk_fn)(qsf_rv *v, const qsf_rv_frame *f, void *user, qsf_errinfo *err);
int qsf_rv_walk(qsf_rv *v, int64_t from, int64_t to, qsf_rv_walk_fn fn, void *user,
                qsf_errinfo *err);

/* What a stored frame's QWP header says. */
typedef struct qsf_rv_kind {
    bool qwp;         /* a QWP message (else opaque: committing) */
    bool commits;     /* FLAG_DEFER_COMMIT clear (or opaque) */
    bool placeholder; /* deferred and table-less */
    uint16_t tables;
    uint8_t flags;
} qsf_rv_kind;

/* Of an intact frame: its kind. Errors: QSF_E_IO. */
int qsf_rv_frame_kind(const qsf_rv_frame *f, qsf_rv_kind *k, qsf_errinfo *err);

/* Of an intact frame: up to QSF_SFA_FRAME_OVERHEAD bytes of its envelope
 * (*got of them; fewer at the end of the file), valid until the next read of
 * the walk. Errors: QSF_E_IO. */
int qsf_rv_envelope(const qsf_rv_frame *f, const uint8_t **p, size_t *got, qsf_errinfo *err);

/* Of an intact frame: its rows; *countable false for opaque frames and frames
 * of more than one table. Errors: QSF_E_IO. */
int qsf_rv_frame_rows(const qsf_rv_frame *f, uint64_t *rows, bool *countable, qsf_errinfo *err);

/* Of an intact frame with a delta symbol section: the section's first id and
 * entry count; *bad when the section is malformed. Errors: QSF_E_IO. */
int qsf_rv_delta(const qsf_rv_frame *f, uint64_t *start, uint64_t *count, bool *bad,
                 qsf_errinfo *err);

/* ---- the one write: giving a span up (a set-aside) ---- */

/* Adds FSNs [from, to] to the flushes the plan gives up (spans wholly inside
 * it are folded into it), so that qsf_rv_rewrite replaces them. Errors:
 * QSF_E_NOMEM. */
int qsf_rv_give_up(qsf_rv *v, int64_t from, int64_t to, qsf_errinfo *err);

/* Rewrites files[file] (an index of qsf_rv_result.files) crash-safely: each FSN
 * given up a placeholder, the rest copied ("<name>.tmp", fsync, rename, dir
 * fsync). Errors: QSF_E_IO, QSF_E_NOSPC, QSF_E_NOMEM. */
int qsf_rv_rewrite(qsf_rv *v, uint32_t file, qsf_errinfo *err);

#endif
