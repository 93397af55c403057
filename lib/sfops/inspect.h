/* Read-only inspection of a slot directory, for tools (`qsf slot inspect`,
 * `qsf slot verify`): the same scan and chain rules as recovery
 * (docs/FORMAT.md §6.2-§6.9, §6.11, §6.12) without taking the lock and without changing any
 * file. It reports what an open would find, and what it would fail on or
 * change. */
#ifndef QSF_INSPECT_H
#define QSF_INSPECT_H

#include "qsf.h"
#include "sf/recover.h"
#include "sf/recover_view.h"
#include "sf/srcpos.h"

#include <stdbool.h>
#include <stdint.h>

/* One *.sfa file as scanned. */
typedef struct qsf_inspect_file {
    qsf_seg_info info;   /* active = the segment an open would append to */
    bool corrupt;        /* bad magic, short header or negative baseSeq */
    bool live;           /* part of the chain (sealed or active) */
    uint64_t torn_bytes; /* suffix after lastGood with a non-zero byte */
} qsf_inspect_file;

enum { QSF_INSPECT_MAX_NOTES = 32 };

typedef struct qsf_slot_inspection {
    qsf_inspect_file *files; /* every *.sfa, live ones first in chain order */
    uint32_t nfiles;
    uint32_t live; /* live segments */
    uint64_t frames, bytes, torn_bytes;
    int64_t first_fsn, last_fsn; /* of the live chain; last < first when empty */
    int64_t commit_boundary_fsn;
    bool manifest_present, manifest_valid;
    int64_t manifest_generation, head_base, active_base;
    bool watermark_present;  /* a file exists */
    uint64_t watermark_size; /* 8192, 16 (the Java client's form) or damaged */
    bool watermark_valid;
    int64_t watermark_generation, watermark_fsn;
    int64_t acked_fsn; /* what an open would seed */
    bool dict_present, dict_usable;
    uint32_t dict_entries, dict_chunks;
    uint64_t dict_bytes, dict_torn_bytes;
    bool unreplayable;
    /* .source-positions as an open would report them (sfops/srcpos_view.h);
     * srcpos_rc: QSF_OK, or why they could not be read (srcpos_msg). */
    qsf_srcpos_view srcpos;
    int srcpos_rc;
    char srcpos_msg[QSF_ERRINFO_MSG_MAX];
    /* What an open would repair or give up (each also a problem line). */
    uint32_t losses;         /* damaged regions (qsf_recovery_loss entries) */
    uint64_t frames_lost;    /* FSNs an open would give up: destroyed + retired */
    uint32_t rewrites;       /* segments an open would rewrite with placeholders */
    uint32_t retired_spans;  /* given-up flushes (retired FSN spans) */
    uint64_t aborted_frames; /* frames of an interrupted flush an open would cut */
    uint32_t debris;         /* files an open would remove as holding no data */
    bool manifest_mismatch;  /* the manifest's bounds contradict the segments */
    /* What the directory is (enum qsf_dir_kind, sfops/slotdir.h); a group root or
     * a directory without slot files is no slot: verdict QSF_E_INVAL, nothing
     * else filled in. group_slots: the slots under a group root. */
    int dir_kind;
    uint32_t group_slots;
    /* The verdict: QSF_OK, or the code and message an open would fail with. */
    int verdict;
    char verdict_msg[QSF_ERRINFO_MSG_MAX];
    /* Problems an open would repair (quarantine, zero, reset, cut); and notes
     * (migration, spares or leftovers deleted). One line each. */
    uint32_t nproblems, nnotes;
    char problems[QSF_INSPECT_MAX_NOTES][200];
    char notes[QSF_INSPECT_MAX_NOTES][200];
} qsf_slot_inspection;

/* Inspects the slot directory at `slot_path` (not locked: a live sender may be
 * writing it). Errors are returned only when the directory cannot be listed or
 * read (QSF_E_IO) or memory runs out; everything about the slot's contents,
 * including an unsupported segment version, is in out->verdict. */
int qsf_slot_inspect(const char *slot_path, qsf_slot_inspection *out, qsf_errinfo *err);

/* The same, then fn with recovery's dry-run plan of the slot (sf/recover_view.h:
 * the chain, the flushes given up, the interrupted one, the dictionary rebuilt
 * so far) and the slot's handles before they are freed: for read-only walks
 * over the frames (sfops/dump.h). fn is not called when the directory is no
 * slot; its error is returned. */
typedef int (*qsf_inspect_visit_fn)(qsf_rv *v, const qsf_slot *slot, qsf_slot_inspection *in,
                                    void *user, qsf_errinfo *err);
int qsf_slot_inspect_with(const char *slot_path, qsf_slot_inspection *in, qsf_inspect_visit_fn fn,
                          void *user, qsf_errinfo *err);

/* Frees what qsf_slot_inspect allocated. Idempotent. */
void qsf_slot_inspection_free(qsf_slot_inspection *in);

#endif
