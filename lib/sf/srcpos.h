/* .source-positions (SPL1): the application's source positions, each tied to
 * the flush it was committed with: the FSN of that flush's committing frame
 * and the CRC-32C that frame is stored with (docs/FORMAT.md §4a;
 * docs/DURABILITY.md §9a).
 *
 *   offset 0   header, 16 bytes
 *     0  u32  magic "SPL1" (53 50 4C 31 = 0x314C5053)
 *     4  u32  version 2 (version 1 is read, and rewritten as 2 at open)
 *     8  u64  reserved, 0
 *   offset 16  records, back to back, oldest first
 *   then       zeros to the end of the file: room kept ahead of the records
 *              (written, grown in 64 KiB steps), so a record overwrites
 *              blocks the file already has
 *     0  u32  len, 1..256
 *     4  i64  fsn: the last FSN of the flush (for a flush without frames,
 *             publishedFsn when it was committed; -1 after a drained close)
 *    12  u32  frame CRC: the stored CRC-32C of the frame at fsn, when flags
 *             bit 0 is set; 0 otherwise
 *    16  u32  flags: bit 0 (QSF_SRCPOS_F_FRAME) the frame CRC is known; the
 *             other bits 0
 *    20  len  the position's bytes, opaque
 *  20+len u32 CRC-32C of bytes [0, 20 + len) of the record
 *   (version 1 records have neither the frame CRC nor the flags: len, fsn,
 *    bytes, CRC of [0, 12 + len); they are read as records without a frame CRC)
 *
 * The log ends at the first record that does not validate (the zeros ahead,
 * a torn write, or the zeros an aborted flush's record was overwritten with);
 * a non-zero byte after it is a torn tail, rewritten at open. A record counts
 * only if its flush survived: its fsn is at or below the last FSN recovery
 * kept, outside every FSN span it gave up, and (the newest such record) the
 * frame recovery kept at that FSN is stored with the record's frame CRC: a
 * host crash can leave a frame of another flush at that FSN (salvage numbers
 * the frames after a damaged region with an upper bound, docs/FORMAT.md §6.15).
 *
 * One producer appends, retracts and compacts; the data barriers (producer in
 * append mode, manager in periodic mode) sync. `mu` orders them. In memory
 * mode (no slot directory) fd is -1 and only the in-memory records exist. */
#ifndef QSF_SRCPOS_H
#define QSF_SRCPOS_H

#include "qsf.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define QSF_SRCPOS_MAGIC       0x314C5053u /* "SPL1" */
#define QSF_SRCPOS_VERSION     2u
#define QSF_SRCPOS_VERSION_1   1u /* no frame CRC: read, never written */
#define QSF_SRCPOS_HEADER_SIZE 16
#define QSF_SRCPOS_MAX         256 /* QSF_SOURCE_POSITION_MAX */
#define QSF_SRCPOS_REC_FIXED   24  /* len + fsn + frame CRC + flags + CRC */
#define QSF_SRCPOS_F_FRAME     1u  /* flags: frame_crc names the frame at fsn */
#define QSF_NAME_SRCPOS        ".source-positions"

typedef struct qsf_srcpos_rec {
    int64_t fsn;
    uint32_t frame_crc; /* the stored CRC-32C of the frame at fsn, if has_frame */
    bool has_frame;     /* false: no frame to check (none at fsn, or a version 1 record) */
    uint32_t len;
    uint8_t bytes[QSF_SRCPOS_MAX];
} qsf_srcpos_rec;

typedef struct qsf_srcpos_log {
    pthread_mutex_t mu;
    int fd;    /* -1: memory only */
    int dirfd; /* the slot directory (not owned) */
    char dir[1024];
    uint64_t end;           /* file offset after the last record */
    uint64_t size;          /* file length: the records, then zeros (room ahead) */
    uint64_t compacted_end; /* end right after the last compaction */
    bool dirty;             /* written since the last sync */
    qsf_srcpos_rec *recs;   /* oldest first */
    uint32_t n, cap;
    uint32_t dropped; /* records dropped at open (their flushes did not survive) */
} qsf_srcpos_log;

/* Encodes one record into out (QSF_SRCPOS_REC_FIXED + rec->len bytes). */
size_t qsf_srcpos_encode(uint8_t *out, const qsf_srcpos_rec *rec);

/* Parses the record at p (avail bytes) of a file of `version`: its size, or
 * 0 if none validates. */
size_t qsf_srcpos_decode(const uint8_t *p, size_t avail, uint32_t version, qsf_srcpos_rec *out);

/* Walks a whole file image (version 1 or 2): 0 and the records through fn
 * (in order), or -1 if the header is wrong. *valid_end gets the end of the
 * last valid record. */
typedef void (*qsf_srcpos_fn)(void *user, const qsf_srcpos_rec *rec);
int qsf_srcpos_parse(const uint8_t *img, size_t len, qsf_srcpos_fn fn, void *user,
                     uint64_t *valid_end);

/* The bytes after valid_end up to the last non-zero byte of the image: a torn
 * tail (0: only the zeros kept ahead of the records follow them). */
uint64_t qsf_srcpos_torn_bytes(const uint8_t *img, size_t len, uint64_t valid_end);

/* Memory mode: an empty log without a file. */
void qsf_srcpos_init_memory(qsf_srcpos_log *l);

/* Whether the flush of `rec` survived recovery: false when its fsn lies in a
 * span recovery gave up or, with `check_frame`, when the frame kept at its
 * fsn is not the one it was committed with. An open implements it over the
 * ring (ring_srcpos.c), the tooling over recovery's dry run
 * (lib/sfops/srcpos_view.c). */
typedef bool (*qsf_srcpos_survived_fn)(void *user, const qsf_srcpos_rec *rec, bool check_frame);

/* The rule an open applies, and the one the operator tooling shows (one
 * function, so both tell the same): drops from recs[0, *n) (oldest first) the
 * records whose fsn is above `limit`, the last FSN recovery kept, then those
 * `survived` (NULL: all) refuses, asked newest first, with check_frame until
 * one is accepted, then without (the frames below the newest one that
 * matches kept their FSNs). The kept ones stay in order in recs[0, *n).
 * Returns how many were dropped. */
uint32_t qsf_srcpos_select(qsf_srcpos_rec *recs, uint32_t *n, int64_t limit,
                           qsf_srcpos_survived_fn survived, void *user);

/* Opens the slot's log, if there is one (the first append creates it), and
 * keeps the records qsf_srcpos_select keeps with `limit` and `survived`. If
 * any record was dropped, the tail was torn or the file is of version 1, the
 * file is rewritten durably (compact) before anything new is appended, so a
 * later flush reusing those FSNs can never be matched with an old position. */
int qsf_srcpos_open(qsf_srcpos_log *l, int slot_dirfd, const char *slot_path, int64_t limit,
                    qsf_srcpos_survived_fn survived, void *user, qsf_errinfo *err);
void qsf_srcpos_close(qsf_srcpos_log *l);

/* Appends a record (a write, no sync). *mark gets what qsf_srcpos_retract
 * needs to take it back. Then the numbered fault point QSF_FP_SRCPOS_WRITTEN. */
int qsf_srcpos_append(qsf_srcpos_log *l, const qsf_srcpos_rec *rec, uint64_t *mark,
                      qsf_errinfo *err);
/* Takes back the record appended at mark (its flush was aborted): zeroed in
 * the file, durably when `sync`, and dropped from memory. */
int qsf_srcpos_retract(qsf_srcpos_log *l, uint64_t mark, bool sync, qsf_errinfo *err);

/* fdatasync of the log if it was written since the last sync. */
int qsf_srcpos_sync(qsf_srcpos_log *l, qsf_errinfo *err);

/* The newest record with fsn <= limit, or NULL. */
const qsf_srcpos_rec *qsf_srcpos_find(const qsf_srcpos_log *l, int64_t limit);

/* Rewrites the log (temporary file, fsync, rename, directory sync) keeping
 * the newest record at or below `acked` and every record above it; with
 * `final`, only the newest record, renumbered to FSN -1 (a drained close: the
 * next FSNs may start anew). Without a file, only the memory is trimmed. */
int qsf_srcpos_compact(qsf_srcpos_log *l, int64_t acked, bool final, qsf_errinfo *err);

/* Whether the file has grown enough since the last compaction to compact. */
bool qsf_srcpos_wants_compaction(const qsf_srcpos_log *l, int64_t acked);

/* What `qsf slot inspect` and `dump` show (read-only: no lock, nothing
 * changed): the records an open keeps (qsf_srcpos_select). */
typedef struct qsf_srcpos_view {
    bool present;             /* the file exists */
    bool valid;               /* its header is SPL1 version 1 or 2 */
    uint64_t size, valid_end; /* bytes, and the end of the last valid record */
    uint64_t torn;            /* bytes after it up to the last non-zero one */
    uint32_t records;         /* valid records */
    uint32_t dropped;         /* of them, those an open drops (qsf_srcpos_select) */
    bool has_published, has_acked;
    qsf_srcpos_rec published, acked; /* newest kept at or below published / acked */
    qsf_srcpos_rec *recs;            /* the kept records, oldest first */
    uint32_t n, cap;
    bool nomem; /* (while reading) a record found no memory */
} qsf_srcpos_view;

/* Reads <slot_path>/.source-positions read-only, its records through fn.
 * QSF_OK with *present false when there is none; *valid: its header is
 * SPL1 version 1 or 2; *torn: qsf_srcpos_torn_bytes of it. */
int qsf_srcpos_read_slot(const char *slot_path, qsf_srcpos_fn fn, void *user, bool *present,
                         bool *valid, uint64_t *size, uint64_t *valid_end, uint64_t *torn,
                         qsf_errinfo *err);

/* Reads <slot_path>/.source-positions and selects its records as an open
 * would (qsf_srcpos_select with `published` as the limit and `survived`, the
 * tooling's view of recovery). QSF_OK with v->present false when there is
 * none; QSF_E_IO when it cannot be read (the message names it), QSF_E_NOMEM.
 * Free with qsf_srcpos_view_free. */
int qsf_srcpos_view_slot(const char *slot_path, int64_t published, int64_t acked,
                         qsf_srcpos_survived_fn survived, void *user, qsf_srcpos_view *v,
                         qsf_errinfo *err);
void qsf_srcpos_view_free(qsf_srcpos_view *v);

#endif
