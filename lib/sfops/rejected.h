/* <slot>/.rejected: frames an operator set aside (`qsf slot set-aside`), kept
 * with an audit line each (docs/FORMAT.md §10). The file is
 * never changed in place: a new image (the records there are, then the new
 * one) is written to .rejected.tmp, fsynced, renamed over .rejected and the
 * directory fsynced, so a crash leaves either the old file or the new one.
 *
 *   file:    0      4    5          8
 *            +------+----+----------+----------+----------+----
 *            | RJF1 | 01 | 00 00 00 | record 0 | record 1 | ...
 *            +------+----+----------+----------+----------+----
 *
 *   record:  0      4    5          8            16           24           32
 *            +------+----+----------+------------+------------+------------+
 *            | RJR1 |kind| 00 00 00 | recordLen  | fromFsn    | toFsn      |
 *            +------+----+----------+------------+------------+------------+
 *            32           40          48         52           56           60     64
 *            | atMicros   | rows      | frames   | uncounted  | auditLen   | 0000 |
 *            +------------+-----------+----------+------------+------------+------+
 *            64: the audit line, auditLen bytes of UTF-8 ending in '\n'
 *            then `frames` frames exactly as stored in their segment:
 *                crc32c u32 | payloadLen u32 | payload
 *            last 4 bytes: crc32c of every byte of the record before them
 *
 *   kind 1  SET_ASIDE  fromFsn..toFsn, copied before anything in the slot
 *                      changed; rows = the rows counted in them, uncounted =
 *                      frames whose rows could not be counted
 *   kind 2  DONE       the SET_ASIDE record of the same span before it took
 *                      effect: in the slot those FSNs hold placeholders. No
 *                      frames.
 *
 * All integers little-endian (lib/bytes.h); recordLen counts the whole record.
 * A SET_ASIDE without its DONE is a set-aside interrupted before the slot
 * changed (or right after): running it again finishes it, and adds no second
 * copy. A file that is not RJF1 version 1, or whose records do not all
 * validate, is never written to: QSF_E_CORRUPT names it and the offset. */
#ifndef QSF_REJECTED_H
#define QSF_REJECTED_H

#include "qsf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QSF_NAME_REJECTED     ".rejected"
#define QSF_NAME_REJECTED_TMP ".rejected.tmp"
#define QSF_RJF_MAGIC         0x31464A52u /* "RJF1" */
#define QSF_RJR_MAGIC         0x31524A52u /* "RJR1" */
#define QSF_RJF_VERSION       1
#define QSF_RJF_HEADER_SIZE   8
#define QSF_RJR_HEADER_SIZE   64
#define QSF_RJR_AUDIT_MAX     4096

/* Field offsets of a record header (the drawing above). */
#define QSF_RJR_AT_MAGIC     0
#define QSF_RJR_AT_KIND      4
#define QSF_RJR_AT_LEN       8
#define QSF_RJR_AT_FROM      16
#define QSF_RJR_AT_TO        24
#define QSF_RJR_AT_TIME      32
#define QSF_RJR_AT_ROWS      40
#define QSF_RJR_AT_FRAMES    48
#define QSF_RJR_AT_UNCOUNTED 52
#define QSF_RJR_AT_AUDIT_LEN 56

enum qsf_rjr_kind { QSF_RJR_SET_ASIDE = 1, QSF_RJR_DONE = 2 };

/* One record as read (the audit line copied, cut at QSF_RJR_AUDIT_MAX). */
typedef struct qsf_rejected_rec {
    int kind;
    int64_t from, to, at_us;
    uint64_t rows;
    uint32_t frames, uncounted;
    char audit[QSF_RJR_AUDIT_MAX + 1];
    uint64_t offset, len; /* where the record is in the file */
    uint64_t frames_off;  /* offset of its first frame */
    bool done;            /* SET_ASIDE: a DONE of the same span follows it */
} qsf_rejected_rec;

typedef struct qsf_rejected_list {
    bool present;        /* the file exists */
    qsf_rejected_rec *v; /* malloc'd */
    uint32_t n;
} qsf_rejected_list;

/* Reads <slot>/.rejected (absent: QSF_OK, present false). QSF_E_CORRUPT when
 * it is not RJF1 version 1 or a record does not validate (the message names
 * the offset), QSF_E_IO, QSF_E_NOMEM. */
int qsf_rejected_read(int slot_dirfd, const char *slot_path, qsf_rejected_list *out,
                      qsf_errinfo *err);
void qsf_rejected_list_free(qsf_rejected_list *l);

/* Calls fn with each frame of a SET_ASIDE record (payload and its stored CRC),
 * after checking the CRC. fn's non-zero return stops and is returned. */
typedef int (*qsf_rejected_frame_fn)(void *user, uint32_t crc, const uint8_t *payload,
                                     uint32_t len);
int qsf_rejected_frames(int slot_dirfd, const char *slot_path, const qsf_rejected_rec *rec,
                        qsf_rejected_frame_fn fn, void *user, qsf_errinfo *err);

/* A record to add. frames_bytes: the bytes the frames take (envelopes
 * included); write_frames puts exactly those through qsf_rejected_put. */
typedef struct qsf_rejected_writer qsf_rejected_writer;
typedef struct qsf_rejected_new {
    int kind;
    int64_t from, to, at_us;
    uint64_t rows;
    uint32_t frames, uncounted;
    const char *audit; /* one line, '\n' included; at most QSF_RJR_AUDIT_MAX bytes */
    uint64_t frames_bytes;
    int (*write_frames)(void *user, qsf_rejected_writer *w, qsf_errinfo *err);
    void *user;
} qsf_rejected_new;

int qsf_rejected_put(qsf_rejected_writer *w, const void *p, size_t n, qsf_errinfo *err);

/* Adds the record: the new image through .rejected.tmp, fsync, rename, dir
 * fsync (the slot lock held by the caller). Errors: QSF_E_CORRUPT (the file
 * is damaged or not ours: nothing written), QSF_E_IO, QSF_E_NOSPC,
 * QSF_E_DURABILITY, QSF_E_INVAL (a bad record: audit too long or without its
 * '\n', frames_bytes not what was written). On error .rejected is unchanged. */
int qsf_rejected_append(int slot_dirfd, const char *slot_path, const qsf_rejected_new *r,
                        qsf_errinfo *err);

#endif
