/* Batch -> QWP messages ("frames"), catch-up frames and the empty commit frame
 * (docs/PROTOCOL.md §3-§5, §13).
 *
 * One encode turns every complete row of a batch into one message, or several when
 * it does not fit in max_frame bytes:
 *
 *   header  QWP1 01 flags table_count payload_length       (12 bytes)
 *   delta   varint start, varint count, count x (varint len, bytes)
 *   block   per table: name, row_count, column_count, column defs (name, type),
 *           then per column: null_flag (00 / 01 + bitmap) and the values (docs/PROTOCOL.md §5)
 *
 * Flags: 0x08 always, | 0x04 when opts.gorilla, | 0x01 on every frame of a split
 * except the last (and on the last too with opts.defer_last). Timestamps (TIMESTAMP /
 * TIMESTAMP_NANOS columns and the designated timestamp, written last with an empty name) use
 * Gorilla when enabled, there are >= 3 non-null values and every delta-of-delta fits i32; otherwise
 * the encoding byte 0x00 and raw values. DATE is never Gorilla and has no encoding byte.
 *
 * Splitting: rows keep their order within each table; tables follow their first
 * appearance in the batch; a table with more rows than fit (or more than 1,000,000)
 * continues in the next frame. Nothing is lost or duplicated.
 *
 * Symbols (delta mode): a frame's delta section carries the ids from the symbol
 * table's published watermark up to the highest id the frame references (+1), or
 * from 0 in self-sufficient mode. Before emitting a frame that references ids at
 * or beyond the persisted watermark, on_new_symbols is called for exactly those ids
 * (the sender appends them to .symbol-dict: write-ahead), and persisted moves up.
 * After emit succeeds, published moves up to the end of the frame's delta section.
 *
 * Threads: an encoder is used by one thread at a time; use one per thread. */
#ifndef QSF_QWP_ENCODER_H
#define QSF_QWP_ENCODER_H

#include "qsf.h"
#include "qwp/batch.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Write-ahead hook: ids [first_id, first_id + count) are about to be referenced by
 * a frame for the first time. strs[i] / lens[i] is entry first_id + i (not
 * NUL-terminated; valid only during the call). Return QSF_OK, or an error code
 * (fill err) to stop the encode before that frame: nothing of it is emitted. */
typedef int (*qsf_qwp_on_new_symbols_fn)(void *user, uint32_t first_id, uint32_t count,
                                         const char *const *strs, const size_t *lens,
                                         qsf_errinfo *err);

/* Receives one complete frame (header included; valid only during the call).
 * is_last is true for the final frame of this encode (the one without
 * FLAG_DEFER_COMMIT; for catch-up: the last catch-up frame). Return QSF_OK, or an
 * error code (fill err): the encode stops, that frame counts as not emitted. */
typedef int (*qsf_qwp_emit_fn)(void *user, const uint8_t *frame, size_t len, bool is_last,
                               qsf_errinfo *err);

/* Frames built in place (optional, qsf_qwp_encode_placed): where the frames
 * end up (the ring) lends the encoder room for each one, so that no frame is
 * built in the encoder's buffer and then copied there.
 * - place(user, cap): room for a frame of up to cap bytes, or NULL; then this
 *   frame is built in the encoder's buffer and handed to emit as usual.
 * - seal(user, len, is_last): the frame of len bytes (<= cap) written there is
 *   complete and emitted; it cannot fail (place checked everything).
 * - unplace(user, cap): the frame placed last is not emitted after all (it
 *   could not be built): its room, which may hold part of it, is given back
 *   zeroed.
 * A frame's new symbols are written ahead (on_new_symbols) before its room is
 * asked for: a crash during the write-ahead leaves none of its bytes there. */
typedef struct qsf_qwp_placer {
    uint8_t *(*place)(void *user, size_t cap);
    void (*seal)(void *user, size_t len, bool is_last);
    void (*unplace)(void *user, size_t cap);
} qsf_qwp_placer;

/* Returns entry `id` of a dictionary for catch-up frames: 0 and *s / *len, or a
 * negative QSF_E_* to abort. qsf_symtab_entry_cb (symtab.h) fits this type. */
typedef int (*qsf_qwp_entry_fn)(void *user, uint32_t id, const char **s, size_t *len);

typedef struct qsf_qwp_enc_opts {
    size_t max_frame;     /* cap on a whole frame in bytes, header included: the sender
                             passes min(90% of X-QWP-Max-Batch-Size (1.9 MiB when not
                             advertised), segment payload cap). 0 = 1.9 MiB. Values
                             above 12 + 16 MiB are clamped. */
    bool gorilla;         /* FLAG_GORILLA and Gorilla timestamps (default true) */
    bool self_sufficient; /* delta section from id 0 in every frame (no side file) */
    size_t row_frame_max; /* a row larger than max_frame still goes out, alone in a frame
                             of up to this many bytes (0 = max_frame): rows accepted
                             under a larger cap can always be flushed */
    bool keep_rows;       /* on success leave the consumed rows in the batch (the caller
                             resets it once the frames are published, or rewinds it) */
    bool defer_last;      /* the last frame carries FLAG_DEFER_COMMIT too: the rows are
                             staged in an open transaction (transaction=on) that a later
                             frame commits */
} qsf_qwp_enc_opts;

/* The frame cap rule of docs/PROTOCOL.md §3.5: min(90% of the advertised
 * X-QWP-Max-Batch-Size, or 1.9 MiB when none was advertised (0), and the segment's
 * payload capacity (0 = no segment limit, memory mode)). Never below 14 bytes. */
size_t qsf_qwp_max_frame(size_t advertised_max_batch, size_t segment_payload_cap);

/* Defaults: max_frame 0 (1.9 MiB), gorilla on, delta mode. */
void qsf_qwp_enc_opts_default(qsf_qwp_enc_opts *o);

typedef struct qsf_qwp_encoder qsf_qwp_encoder;

/* Creates an encoder (owns a reusable frame buffer). Errors: QSF_E_NOMEM. */
int qsf_qwp_encoder_new(qsf_qwp_encoder **out, qsf_errinfo *err);
void qsf_qwp_encoder_free(qsf_qwp_encoder *e);

typedef struct qsf_qwp_encode_result {
    size_t frames;        /* frames emitted successfully */
    size_t rows_consumed; /* rows carried by emitted frames (removed from the batch) */
    size_t rows_left;     /* complete rows still buffered after the call */
    size_t bytes;         /* total bytes emitted */
} qsf_qwp_encode_result;

/* Encodes every complete row of `b` (which must have no open row) and hands each
 * frame to emit(user, ...). Frames hold at most max_frame bytes, except that a
 * row which does not fit alone goes out in a frame of its own of up to
 * row_frame_max bytes. on_new_symbols may be NULL (self-sufficient mode or no
 * side file). `res` may be NULL.
 * On success every row was emitted and the batch is reset (qsf_qwp_batch_reset);
 * an empty batch emits nothing. On error: frames already emitted stay emitted (the
 * error is then in-doubt: QSF_ERRF_IN_DOUBT is set in err->flags when res->frames >
 * 0), their rows are removed from the batch, the rest stay buffered for the next
 * encode, and the symbol table's published watermark covers only emitted frames.
 * Errors: whatever emit / on_new_symbols returned; QSF_E_TOO_LARGE (a single row
 * cannot fit in max_frame; message names the table and the row's size; nothing is
 * emitted when this is detected before the first frame, which is the case unless
 * the limit changed while rows were buffered); QSF_E_STATE (row open);
 * QSF_E_NOMEM. */
int qsf_qwp_encode(qsf_qwp_encoder *e, qsf_qwp_batch *b, const qsf_qwp_enc_opts *opts,
                   qsf_qwp_on_new_symbols_fn on_new_symbols, qsf_qwp_emit_fn emit, void *user,
                   qsf_qwp_encode_result *res, qsf_errinfo *err);

/* qsf_qwp_encode, each frame built where placer->place lends room when it
 * does (see qsf_qwp_placer), else in the encoder's buffer and given to emit.
 * The bytes of every frame and the order of the calls are the same. */
int qsf_qwp_encode_placed(qsf_qwp_encoder *e, qsf_qwp_batch *b, const qsf_qwp_enc_opts *opts,
                          qsf_qwp_on_new_symbols_fn on_new_symbols, qsf_qwp_emit_fn emit,
                          const qsf_qwp_placer *placer, void *user, qsf_qwp_encode_result *res,
                          qsf_errinfo *err);

/* Dictionary catch-up (docs/PROTOCOL.md §4.4): emits table-less frames with flags 0x09 that
 * re-register ids [0, count) in order, the first with delta_start 0 and each next one
 * continuing where the previous stopped. Each frame is <= max_frame bytes (0 = not
 * advertised: 64 KiB chunks); an entry is never split across frames. count == 0
 * emits nothing. Every entry is checked before the first frame is emitted: an entry
 * that cannot fit in one frame fails with QSF_E_TOO_LARGE and the message
 * "catch-up cap gap: symbol id <id> needs <n> bytes, frame cap <m>", nothing emitted.
 * Other errors: those of get / emit (frames already emitted stay emitted),
 * QSF_E_NOMEM. `frames` (may be NULL) receives the number emitted. */
int qsf_qwp_catchup(qsf_qwp_encoder *e, uint32_t count, qsf_qwp_entry_fn get, void *get_user,
                    size_t max_frame, qsf_qwp_emit_fn emit, void *user, size_t *frames,
                    qsf_errinfo *err);

/* Writes the 14-byte empty commit frame (flags 0x08, no tables, delta 00 00) into
 * out and returns 14. It commits a deferred group left open on the server. */
#define QSF_QWP_EMPTY_COMMIT_LEN 14
size_t qsf_qwp_empty_commit(uint8_t out[QSF_QWP_EMPTY_COMMIT_LEN]);

/* Writes the 14-byte placeholder (flags 0x09: deferred, no tables, delta 00 00),
 * 51 57 50 31 01 09 00 00 02 00 00 00 00 00, into out and returns 14. Recovery
 * stores it in place of a frame it gave up on: it carries nothing, and being
 * deferred it commits nothing (docs/FORMAT.md, "Salvage"). */
#define QSF_QWP_PLACEHOLDER_LEN 14
size_t qsf_qwp_placeholder(uint8_t out[QSF_QWP_PLACEHOLDER_LEN]);

#endif
