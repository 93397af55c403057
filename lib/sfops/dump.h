/* Read-only walk over the frames of a slot, for the operator tools (`qsf slot
 * dump`, `qsf slot inspect`): every FSN of the chain in order, as recovery
 * sees it (the same scan and plan as sfops/inspect.h, in dry run), with what an
 * open would do with it, and the symbol dictionary the frames are read with.
 * Nothing is locked or changed: safe next to a running sender (a segment it
 * trims meanwhile ends the walk with QSF_E_IO). */
#ifndef QSF_DUMP_H
#define QSF_DUMP_H

#include "qsf.h"
#include "sfops/inspect.h"

#include <stdbool.h>
#include <stdint.h>

/* What an open does with a frame. */
enum qsf_frame_state {
    QSF_FRAME_ACKED = 0,   /* at or below ackedFsn: acknowledged, never sent again */
    QSF_FRAME_PENDING = 1, /* will be sent */
    QSF_FRAME_RETIRED = 2, /* in a flush given up (damaged, or set aside): never sent */
    QSF_FRAME_CUT = 3,     /* in the interrupted flush at the end: an open removes it */
};

/* The name of a state: "acked", "pending", "retired", "cut". */
const char *qsf_frame_state_name(int state);

typedef struct qsf_dump_frame {
    int64_t fsn;
    int state;              /* enum qsf_frame_state */
    bool intact;            /* false: destroyed bytes (an open stores a placeholder) */
    const char *segment;    /* the segment file's name */
    uint64_t offset;        /* of the frame's envelope; of the damage when destroyed */
    uint32_t len;           /* payload bytes (intact) */
    uint32_t crc;           /* stored CRC (intact) */
    const uint8_t *payload; /* intact, when asked for: valid during the callback only */
    bool qwp;               /* the payload starts with a QWP header */
    uint8_t flags;          /* its flags */
    uint16_t tables;        /* its table count */
    bool placeholder;       /* deferred, table-less: stands for a frame given up */
    bool empty_commit;      /* committing, table-less: a given-up flush's commit */
} qsf_dump_frame;

/* When data arrived, from the segments (a frame carries no time of its own). */
typedef struct qsf_slot_times {
    /* createdMicros of the segment holding the first pending frame: that
     * frame was written at or after it (-1: nothing pending) */
    int64_t oldest_pending_us;
    /* modification time of the segment holding the last frame (-1: none) */
    int64_t newest_write_us;
} qsf_slot_times;

typedef struct qsf_walk_opts {
    int64_t from, to;  /* FSNs, inclusive; clamped to the chain (from -1: its start) */
    uint64_t limit;    /* at most this many frames (0: no limit) */
    bool pending_only; /* start after ackedFsn (from, when lower, is ignored) */
    bool payloads;     /* read each intact frame's payload */
    /* Each known dictionary entry first (ids 0.., .symbol-dict then the entries
     * recovery learns from the frames' delta sections); NULL to skip. */
    int (*dict)(void *user, uint32_t id, const char *s, uint32_t len);
    /* Each frame; a non-zero return ends the walk (returned as QSF_E_INTERNAL
     * unless it is a QSF_E_* code). */
    int (*frame)(void *user, const qsf_dump_frame *f);
    void *user;
} qsf_walk_opts;

/* Inspects the slot (as qsf_slot_inspect, into *in: free it with
 * qsf_slot_inspection_free) and, when it forms a chain, walks it. *times may
 * be NULL. Errors: those of qsf_slot_inspect; QSF_E_IO when a file changed
 * under the walk (a payload no longer matches its CRC); QSF_E_NOMEM. */
int qsf_slot_walk(const char *slot_path, const qsf_walk_opts *o, qsf_slot_inspection *in,
                  qsf_slot_times *times, qsf_errinfo *err);

#endif
