/* Setting frames aside (`qsf slot set-aside`): the operator's explicit way
 * past a frame the server rejects terminally, which would otherwise stay at
 * the head of the slot and block it forever. Nothing is ever dropped: the
 * frames go to <slot>/.rejected with an audit line (sfops/rejected.h), and only
 * then are they replaced in the slot the way recovery replaces a flush it
 * gives up (placeholders, the committing member the empty commit;
 * docs/FORMAT.md, "Whole flushes only"), so every later open of any client
 * retires them: never sent, acknowledged locally.
 *
 * The steps, each durable before the next:
 *   1. lock the slot and recover it like any open (repairs, the dictionary
 *      completed and synced, every segment fdatasynced)
 *   2. check the span: above ackedFsn, up to publishedFsn, whole flushes,
 *      nothing of it already given up; the placeholders must fit
 *   3. a SET_ASIDE record with the frames: .rejected.tmp, fsync, rename, dir
 *      fsync
 *   4. each segment holding part of the span rewritten, in chain order:
 *      <name>.tmp, fsync, rename, dir fsync
 *   5. a DONE record, the same way
 * A crash before 3 completes changes nothing; between 3 and 4 the frames are
 * in both places and a set-aside of the same span finishes the job without a
 * second copy; within 4, once a segment is rewritten, its placeholders make
 * every open give up the whole flushes (chain order: the first member of a
 * flush that crosses segments is replaced first, and it is deferred); after
 * 4 only the DONE record is missing, which running it again adds. */
#ifndef QSF_SETASIDE_H
#define QSF_SETASIDE_H

#include "qsf.h"
#include "sfops/rejected.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct qsf_setaside_req {
    int64_t from, to;   /* FSNs, inclusive */
    const char *reason; /* why (required): one line of printable UTF-8, <= 1000 bytes */
    const char *detail; /* what the frames hold, e.g. the tables and rows (may be NULL) */
} qsf_setaside_req;

typedef struct qsf_setaside_result {
    uint32_t frames;
    uint64_t bytes; /* the frames' bytes as stored, envelopes included */
    uint64_t rows;  /* rows counted (frames of one table) */
    uint32_t uncounted;
    bool resumed;       /* an interrupted set-aside of the same span was finished */
    uint32_t rewritten; /* segments rewritten */
    char audit[QSF_RJR_AUDIT_MAX + 1];
} qsf_setaside_result;

/* Sets FSNs req->from..req->to of the slot at slot_path aside (the steps
 * above). Errors: QSF_E_LOCKED (another process holds the slot: its pid),
 * QSF_E_INVAL (the span: acknowledged, beyond the last frame, not whole
 * flushes with the span that would be, given up already; a bad reason; a
 * directory that is no slot), QSF_E_CORRUPT (the slot cannot be replayed or
 * opened; .rejected is damaged), QSF_E_IO, QSF_E_NOSPC, QSF_E_DURABILITY,
 * QSF_E_NOMEM. The message names the slot, the FSNs and the file. */
int qsf_slot_set_aside(const char *slot_path, const qsf_setaside_req *req, qsf_setaside_result *res,
                       qsf_errinfo *err);

#endif
