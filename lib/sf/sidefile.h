/* Dual-slot record files: .ack-watermark (AKW1) and sf-manifest.bin (SFM1),
 * docs/FORMAT.md §3.
 *
 *   file, exactly 8192 bytes:
 *   0                 64           4096              4160          8192
 *   +-----------------+----- 0 ----+-----------------+----- 0 -----+
 *   | record, slot A  |            | record, slot B  |             |
 *   +-----------------+------------+-----------------+-------------+
 *
 *   record, 64 bytes, little-endian:
 *   0      4         8             16                         60     64
 *   +------+---------+-------------+--------------------------+------+
 *   | magic| ver = 1 | generation  | payload (zero padded)    | crc  |
 *   +------+---------+-------------+--------------------------+------+
 *   AKW1 payload: i64 fsn at 16 (>= -1)
 *   SFM1 payload: i64 headBase at 16 (>= 0), i64 activeBase at 24 (>= headBase)
 *   crc = CRC-32C of bytes [0, 60); generation > 0.
 *
 * Write: next = generation + 1 goes to offset (next & 1) * 4096, so the older
 * record survives a torn write of the newer one. Read: validate both slots, take
 * the valid one with the larger generation; none valid = absent.
 *
 * Handles keep the descriptor and the current generation. write() is one
 * positioned write of a record; sync() is the fsync. They are separate so the
 * runtime can order barriers (docs/DURABILITY.md §7: watermark write, sync, dir
 * fsync, manifest write + sync, unlink). A handle with fd < 0 is closed/absent.
 *
 * Threads: a handle is used by one thread at a time (the owner serialises).
 */
#ifndef QSF_SIDEFILE_H
#define QSF_SIDEFILE_H

#include "qsf.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- pure record codec (used by the handles, tests and fuzzers) ---- */

/* Encodes a 64-byte AKW1 record. */
void qsf_akw_encode(uint8_t rec[64], int64_t generation, int64_t fsn);
/* Validates a 64-byte AKW1 record: 0 and the fields if valid, -1 if not. */
int qsf_akw_decode(const uint8_t rec[64], int64_t *generation, int64_t *fsn);

/* The 16-byte .ack-watermark of the Java client 1.3.x, docs/FORMAT.md §3.2:
 *
 *   0      4          8                    16
 *   +------+----------+--------------------+
 *   | AKW1 | 00000000 | fsn i64            |
 *   +------+----------+--------------------+
 *
 * No generation and no CRC: one 16-byte write inside one sector, so a torn
 * value cannot occur; recovery clamps it like the dual-slot form's value. A
 * file without the magic (created, never written) holds no value. */
#define QSF_AKW_COMPACT_SIZE 16

/* Encodes the 16-byte form. */
void qsf_akw_compact_encode(uint8_t out[QSF_AKW_COMPACT_SIZE], int64_t fsn);
/* 0 and the fsn when the 16 bytes hold a value (magic, zero reserved bytes,
 * fsn >= -1), -1 when not. */
int qsf_akw_compact_decode(const uint8_t in[QSF_AKW_COMPACT_SIZE], int64_t *fsn);

/* Reads a whole .ack-watermark of `size` bytes in either form (img holds them;
 * 16 or 8192): 0 with the value (generation 0 for the 16-byte form), -1 when
 * the size is neither or no value is valid. */
int qsf_akw_read_image(const uint8_t *img, uint64_t size, int64_t *generation, int64_t *fsn);

/* Encodes a 64-byte SFM1 record. */
void qsf_sfm_encode(uint8_t rec[64], int64_t generation, int64_t head_base, int64_t active_base);
/* Validates a 64-byte SFM1 record (incl. headBase >= 0, activeBase >= headBase). */
int qsf_sfm_decode(const uint8_t rec[64], int64_t *generation, int64_t *head_base,
                   int64_t *active_base);

/* Picks the winning record from a whole 8192-byte AKW1 image: returns 0 with the
 * generation and fsn, or -1 when neither slot is valid ("absent"). */
int qsf_akw_pick(const uint8_t file[8192], int64_t *generation, int64_t *fsn);
/* Same for SFM1. */
int qsf_sfm_pick(const uint8_t file[8192], int64_t *generation, int64_t *head_base,
                 int64_t *active_base);

/* ---- .ack-watermark handle ---- */

/* Form of a .ack-watermark qsf creates (connect-string key
 * sf_ack_watermark_form, docs/FORMAT.md §3.2); a file that has a form keeps it.
 * JAVA16 is the default (0): the 16-byte form the Java client 1.3.x reads. */
enum qsf_wm_form { QSF_WM_JAVA16 = 0, QSF_WM_DUAL = 1 };

typedef struct qsf_watermark {
    int fd;             /* -1 when closed */
    int64_t generation; /* of the last record read or written; 0 = none yet */
    int64_t fsn;        /* value of that record; -1 when none */
    bool present;       /* a valid record was found at open */
    bool reset;         /* open found a file of neither size and reset it */
    bool compact;       /* the file is the 16-byte form: written in that form */
    char dir[1024];     /* slot directory, for messages */
} qsf_watermark;

/* Recovering slot: opens <slot>/.ack-watermark (O_NOFOLLOW). Missing file: the
 * handle stays closed (fd -1, present false) and QSF_OK. A 16-byte file (the
 * Java client's form) is read and kept: compact = true, and every later write
 * is a 16-byte write, so that client can take the slot back. A file of any
 * other size than 8192 or 16 is reset (truncated, preallocated to the zero
 * bytes of `form`, an enum qsf_wm_form, synced) and treated as absent
 * (reset = true). A record at generation INT64_MAX is
 * renumbered to generation 2 with the same value (two synced record writes) so
 * later writes can advance. Errors: QSF_E_IO / QSF_E_NOSPC / QSF_E_DURABILITY
 * with the path (operational: a read error is never "absent"). */
int qsf_watermark_open(int slot_dirfd, const char *slot_path, int form, qsf_watermark *wm,
                       qsf_errinfo *err);

/* Fresh slot (or a slot that has none): removes a stale file, creates a new one
 * with O_EXCL in `form` (an enum qsf_wm_form): 16 zero bytes (the Java client's
 * "no value yet"; compact = true) or 8192, fsynced; no value yet (generation 0,
 * fsn -1). The caller fsyncs the directory. Errors: QSF_E_NOSPC, QSF_E_IO,
 * QSF_E_UNSUPPORTED, QSF_E_DURABILITY (fsync); no partial file is left. */
int qsf_watermark_create(int slot_dirfd, const char *slot_path, int form, qsf_watermark *wm,
                         qsf_errinfo *err);

/* Record write of fsn (>= -1) with generation + 1 (no fsync); in the 16-byte
 * form the whole file is rewritten at offset 0. Not clamped: a
 * watermark found above publishedFsn must be repairable downwards. Writes even
 * when fsn is unchanged. On success the handle adopts the new generation.
 * Fault point QSF_FP_WATERMARK_WRITTEN fires after the write. Errors: QSF_E_IO,
 * QSF_E_NOSPC, QSF_E_INVAL (closed handle, fsn < -1). */
int qsf_watermark_write(qsf_watermark *wm, int64_t fsn, qsf_errinfo *err);

/* fsync of the watermark file. QSF_E_DURABILITY on failure. */
int qsf_watermark_sync(qsf_watermark *wm, qsf_errinfo *err);

/* Closes the descriptor (idempotent). */
void qsf_watermark_close(qsf_watermark *wm);

/* ---- sf-manifest.bin handle ---- */

typedef struct qsf_manifest {
    int fd;             /* -1 when absent/closed */
    int64_t generation; /* current generation (>= 1 when open) */
    int64_t head_base;  /* baseSeq of the oldest live segment */
    int64_t active_base;
    bool renamed_corrupt; /* open found debris and set it aside as .corrupt */
    bool resync;          /* the last sync failed: the next write rewrites and syncs it */
    char dir[1024];       /* slot directory, for messages */
} qsf_manifest;

/* Recovering slot: opens <slot>/sf-manifest.bin if present (O_NOFOLLOW). Missing:
 * fd -1 and QSF_OK. Wrong size or no valid record: set aside with
 * qsf_slot_quarantine_file (sf-manifest.bin.corrupt, or .corrupt-<N> when that
 * is taken; removed if the rename fails; dir fsynced) and treated as absent
 * (renamed_corrupt = true). A record at generation INT64_MAX is renumbered like
 * the watermark's. Errors: QSF_E_IO (read failure, symlink, rename and unlink
 * both failing, every quarantine name taken), QSF_E_DURABILITY (renumbering). */
int qsf_manifest_open(int slot_dirfd, const char *slot_path, qsf_manifest *m, qsf_errinfo *err);

/* Creates sf-manifest.bin: O_EXCL, preallocated to 8192, record generation 1
 * (head_base, active_base) at offset 4096, fsync, then dir fsync (docs/DURABILITY.md §4 step 5).
 * Errors: QSF_E_NOSPC/QSF_E_IO/QSF_E_UNSUPPORTED/QSF_E_INVAL, QSF_E_DURABILITY
 * (file fsync); no partial file left. */
int qsf_manifest_create(int slot_dirfd, const char *slot_path, int64_t head_base,
                        int64_t active_base, qsf_manifest *m, qsf_errinfo *err);

/* Record write moving the boundaries forward only: each value is clamped to at
 * least its current value (activeBase also to at least headBase). An update that
 * changes nothing writes nothing (*written = false), unless the last
 * qsf_manifest_sync failed: then the current generation is first written again
 * in its own slot and synced (see manifest_resync). Otherwise no fsync: call
 * qsf_manifest_sync. Fault point QSF_FP_MANIFEST_WRITTEN fires after a write.
 * written may be NULL. Errors: QSF_E_IO, QSF_E_NOSPC, QSF_E_INVAL (closed),
 * QSF_E_DURABILITY (the resync's fsync). On failure the handle keeps its
 * previous state. */
int qsf_manifest_write(qsf_manifest *m, int64_t head_base, int64_t active_base, bool *written,
                       qsf_errinfo *err);

/* Writes bounds that move in either direction: recovery's corrections from the
 * segments on disk (headBase lowered to unacknowledged data below it,
 * activeBase raised to a segment that continues the chain, or moved back over
 * the segments of a cut interrupted flush), and the runtime's undoing of the
 * rotations of a flush that was never published (ring_txn.c). In both cases
 * the segments above a backward activeBase hold no frame any more (zeroed
 * first), so every state a crash can leave is a valid slot (docs/FORMAT.md).
 * Everything else uses qsf_manifest_write, which only moves forward. Record
 * write + fsync; unchanged bounds write nothing. Errors as for
 * qsf_manifest_write, QSF_E_INVAL for bounds that are not 0 <= head <= active;
 * on failure the handle keeps its previous values. */
int qsf_manifest_correct(qsf_manifest *m, int64_t head_base, int64_t active_base, qsf_errinfo *err);

/* fsync of the manifest. QSF_E_DURABILITY on failure. */
int qsf_manifest_sync(qsf_manifest *m, qsf_errinfo *err);

/* Closes the descriptor (idempotent). */
void qsf_manifest_close(qsf_manifest *m);

#endif
