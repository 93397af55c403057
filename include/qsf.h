/*
 * qsf.h - store-and-forward ingest client for QuestDB (QWP over WebSocket).
 *
 * Rules that hold for every call in this header
 * ---------------------------------------------
 * Threads.   A qsf_sender is used by one producer thread at a time. qsf detects
 *            overlapping calls from two threads with a cheap latch and fails the
 *            second with QSF_E_BUSY; unordered concurrent use is still undefined.
 *            Calls marked "any thread" (stats, published/acked FSN, poll_error) may
 *            be made from any thread while the sender is alive. qsf runs its own
 *            threads (one I/O thread, one manager thread, dispatchers); error and
 *            event handlers run on a dispatcher, never on the I/O thread, and none
 *            runs after qsf_close returns. The log handler is the exception: it
 *            runs on the thread that logs. docs/THREADING.md has the whole map.
 * Ownership. qsf copies every string and buffer it keeps. Pointers handed out by
 *            qsf stay owned by qsf unless the call says otherwise. Every *_free /
 *            close function accepts NULL and does nothing.
 * Strings.   Names and values are (pointer, length) pairs unless a parameter is
 *            documented as NUL-terminated. A NULL pointer with length 0 is an empty
 *            string; a NULL pointer with a non-zero length is QSF_E_INVAL.
 * Errors.    Fallible calls return int: QSF_OK (0) or a negative QSF_E_* code. The
 *            list of codes is append-only. Each such call takes an optional
 *            caller-owned qsf_errinfo * (may be NULL) that qsf fills without
 *            allocating: the code, flags (retriable / in-doubt / fatal), the errno
 *            behind it if any, and a message that names the thing that is wrong
 *            (the key and byte position in a connect string, the file and offset in
 *            a slot, the FSN span of a rejected frame, the PID holding a lock).
 *            A fatal error sticks on the sender: every later producer call and
 *            qsf_close() return it, every time (seeing it in an error handler or
 *            in qsf_poll_error does not change that).
 * Secrets.   Passwords and tokens never appear in any message, log line or dump.
 */
#ifndef QSF_H
#define QSF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define QSF_API
#elif defined(QSF_BUILDING)
#define QSF_API __attribute__((visibility("default")))
#else
#define QSF_API
#endif

#define QSF_VERSION_MAJOR  0
#define QSF_VERSION_MINOR  1
#define QSF_VERSION_PATCH  0
#define QSF_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------- */
/* Errors                                                                    */
/* ------------------------------------------------------------------------- */

/* Error codes. Append-only: a released value never changes meaning. */
enum {
    QSF_OK = 0,
    QSF_E_INVAL = -1,            /* an argument is invalid (NULL, out of range, bad call) */
    QSF_E_CONF = -2,             /* the connect string is invalid */
    QSF_E_NOMEM = -3,            /* out of memory */
    QSF_E_IO = -4,               /* an operating-system I/O call failed */
    QSF_E_NOSPC = -5,            /* no space left on the device holding the slot */
    QSF_E_LOCKED = -6,           /* the slot is held by another live sender */
    QSF_E_CORRUPT = -7,          /* slot files are inconsistent (FSN gap, manifest) */
    QSF_E_FULL = -8,             /* the ring stayed full until the append deadline */
    QSF_E_TOO_LARGE = -9,        /* a frame or row cannot fit one segment or batch */
    QSF_E_TIMEOUT = -10,         /* a wait ran out of time without progress */
    QSF_E_CONNECT = -11,         /* no endpoint could be reached */
    QSF_E_AUTH = -12,            /* the server rejected the credentials (401/403) */
    QSF_E_SERVER = -13,          /* the server rejected a frame with a terminal status */
    QSF_E_PROTOCOL = -14,        /* the peer violated the protocol / poisoned frame */
    QSF_E_CLOSED = -15,          /* qsf_wait: qsf_close stopped the I/O thread meanwhile */
    QSF_E_BUSY = -16,            /* another thread is inside a call on this sender */
    QSF_E_STATE = -17,           /* the call is not valid in the current row state */
    QSF_E_VALUE = -18,           /* a row value or name is invalid */
    QSF_E_DICT_FULL = -19,       /* the symbol dictionary reached its entry limit */
    QSF_E_RESEND_REQUIRED = -20, /* a recovered dictionary is incomplete */
    QSF_E_DATA_LOSS = -21,       /* accepted data was given up (the message says what) */
    QSF_E_TLS = -22,             /* TLS setup or verification failed */
    QSF_E_UNSUPPORTED = -23,     /* an unsupported file version or feature */
    QSF_E_DURABILITY = -24,      /* a durability barrier (fsync/msync) failed */
    QSF_E_INTERNAL = -25,        /* a bug in qsf; please report it */
};

/* Flags of qsf_errinfo.flags. */
#define QSF_ERRF_RETRIABLE 0x1u /* the same call may succeed later */
#define QSF_ERRF_IN_DOUBT  0x2u /* part of the work may have happened (e.g. frames published) */
#define QSF_ERRF_FATAL     0x4u /* latched: the sender is unusable except for close */

#define QSF_ERRINFO_MSG_MAX 512

/* Caller-owned error detail; filled without allocating. */
typedef struct qsf_errinfo {
    int code;                      /* same as the return value */
    unsigned flags;                /* QSF_ERRF_* */
    int sys_errno;                 /* errno behind the error, 0 if none */
    char msg[QSF_ERRINFO_MSG_MAX]; /* NUL-terminated, truncated if longer */
} qsf_errinfo;

/* Static name of a code, e.g. "QSF_E_FULL"; "QSF_E_UNKNOWN" for other values.
 * Any thread. */
QSF_API const char *qsf_err_name(int code);

/* Short static description of a code, e.g. "ring full". Any thread. */
QSF_API const char *qsf_err_str(int code);

/* Library version as "major.minor.patch". Any thread. */
QSF_API const char *qsf_version(void);

/* ------------------------------------------------------------------------- */
/* Configuration (connect string)                                            */
/* ------------------------------------------------------------------------- */

typedef struct qsf_conf qsf_conf;

/* Parses a connect string such as "ws::addr=localhost:9000;sf_dir=/d;".
 * `s` need not be NUL-terminated; `len` is its length in bytes. Every key, its
 * type, default and range: docs/CONFIGURATION.md.
 * On success *out owns a new configuration (free with qsf_conf_free); on failure
 * *out is NULL. Errors: QSF_E_CONF (the message names the key, the 0-based byte
 * position in `s` and the reason; secret values are never shown), QSF_E_NOMEM,
 * QSF_E_INVAL (out is NULL, or s is NULL with len > 0). Any thread. */
QSF_API int qsf_conf_parse(const char *s, size_t len, qsf_conf **out, qsf_errinfo *err);

/* Same as qsf_conf_parse on the value of the environment variable
 * QDB_CLIENT_CONF (messages start with "QDB_CLIENT_CONF: "). QSF_E_CONF when
 * the variable is unset or empty. Any thread (reads the environment). */
QSF_API int qsf_conf_from_env(qsf_conf **out, qsf_errinfo *err);

/* Frees a configuration (secret values are wiped first). NULL is a no-op. */
QSF_API void qsf_conf_free(qsf_conf *conf);

/* Writes the effective configuration into buf (NUL-terminated, truncated to cap;
 * buf may be NULL when cap is 0): a "schema=ws|wss  (set)" line, then one line
 * per key in documentation order, "key=value  (set)" or "key=value  (default)",
 * where a value a rule derived carries a note, e.g.
 * "sf_max_total_bytes=10g  (default; SF-mode default 10g)". Unset keys show
 * "<unset>", secrets "***", sizes their shortest exact form ("4m").
 * Returns the number of bytes the whole dump needs, excluding the NUL (like
 * snprintf); 0 for a NULL conf. Any thread. */
QSF_API size_t qsf_conf_dump(const qsf_conf *conf, char *buf, size_t cap);

/* ------------------------------------------------------------------------- */
/* Sender lifecycle                                                          */
/* ------------------------------------------------------------------------- */

typedef struct qsf_sender qsf_sender;

/* Creates a sender from a connect string (same contract as qsf_conf_parse).
 * Recovers the slot (SF mode), starts the manager and I/O threads and connects
 * according to initial_connect_retry. Errors: QSF_E_CONF, QSF_E_LOCKED (names the
 * holder PID), QSF_E_CORRUPT, QSF_E_UNSUPPORTED (a slot file of an unknown version
 * or flag, a filesystem that cannot preallocate), QSF_E_IO, QSF_E_NOSPC,
 * QSF_E_CONNECT, QSF_E_AUTH, QSF_E_TLS, QSF_E_NOMEM, QSF_E_INVAL (out is NULL).
 * Nothing is left locked or running on failure. */
QSF_API int qsf_sender_new(const char *conf, size_t len, qsf_sender **out, qsf_errinfo *err);

/* Same, from a parsed configuration (the sender keeps its own copy). */
QSF_API int qsf_sender_from_conf(const qsf_conf *conf, qsf_sender **out, qsf_errinfo *err);

/* Same, from QDB_CLIENT_CONF. */
QSF_API int qsf_sender_from_env(qsf_sender **out, qsf_errinfo *err);

/* What qsf_close_report found when it closed a sender. The caller sets
 * struct_size to sizeof(qsf_close_info) as it knows it; qsf fills the fields
 * both know (fields are only ever appended) and sets struct_size to the bytes
 * it filled. */
typedef struct qsf_close_info {
    size_t struct_size;
    uint64_t frames_unacked;   /* published frames the server had not acknowledged */
    uint64_t bytes_unacked;    /* their bytes */
    int kept_on_disk;          /* 1: SF mode, they stay in the slot for the next sender;
                                  0: memory mode, they are lost (counted in frames_lost) */
    uint64_t rows_unpublished; /* buffered rows close could not publish: dropped */
    uint64_t frames_lost;      /* frames given up during the sender's life: damaged slot
                                  contents found at creation, unacknowledged frames of a
                                  memory-mode close */
    uint64_t rows_lost;        /* rows of those frames, where they could be counted */
    /* orphan adoption (drain_orphans=on): what stays in other slots */
    uint64_t orphan_slots_left;        /* slots whose drainer close stopped before they were
                                          drained (close_flush_timeout_millis ran out) */
    uint64_t orphan_frames_left;       /* their unacknowledged frames, kept on disk */
    uint64_t orphan_bytes_left;        /* their bytes */
    uint64_t orphan_slots_not_started; /* orphan slots no drainer had taken when close began:
                                          untouched, for the next adopting sender */
    uint64_t txn_rows_uncommitted;     /* transaction=on: rows of the transaction open at close
                                          (staged and buffered), aborted: never sent */
} qsf_close_info;

/* Flushes buffered rows, waits up to close_flush_timeout_millis for everything
 * published to be acknowledged, stops every thread, keeps the unacknowledged tail
 * on disk (SF mode) and releases the slot lock. With drain_orphans=on, orphan
 * drainers at work go on within the same close_flush_timeout_millis (none when
 * it is 0 or -1) and no new one starts. Always frees the sender; no callback of
 * it runs after it returns.
 * Returns QSF_OK only when every frame published was acknowledged, nothing
 * buffered was dropped and nothing was lost. Otherwise, in this order:
 *  - the latched terminal error (QSF_ERRF_FATAL), every time, even if a producer
 *    call or an error handler already reported it;
 *  - QSF_E_DATA_LOSS: data the sender accepted was given up: buffered rows close
 *    could not publish (the ring stayed full, a latched error), unacknowledged
 *    frames of a memory-mode close, damaged slot contents found when the
 *    sender was created, or (transaction=on) the rows of a transaction still
 *    open: close never commits one, it aborts it (txn_rows_uncommitted); the
 *    message says which, with counts;
 *  - QSF_E_TIMEOUT: SF mode, some published frames were not acknowledged within
 *    close_flush_timeout_millis (or it was 0/-1); they stay on disk for the next
 *    sender on the slot. Likewise when a drainer had not drained its orphan
 *    slot by then, or an adopted orphan slot was never started: its frames
 *    stay in that slot (orphan_* in qsf_close_info);
 *  - the ring's own close failed (SF mode: the final checkpoint, the manifest or
 *    watermark, removing a drained slot's files), with that step's code, or
 *    QSF_E_TIMEOUT when its threads did not stop within 5 s (docs/ERRORS.md §7).
 * The message of err always carries the counts (a message longer than
 * QSF_ERRINFO_MSG_MAX is cut in the causes after them, and ends with
 * " [...]"); qsf_close_report returns them as numbers. Producer thread.
 * Two exceptions, which do not free the sender: called from an error or
 * event handler (of any sender: close waits for the closed sender's
 * handlers, so two handlers closing each other's sender would wait for each
 * other forever), from the log handler (on any thread, for any sender), or
 * from a callback of the stream (or of its batches) that
 * qsf_send_arrow_stream is publishing into it, it returns QSF_E_STATE and
 * changes nothing (close it from an application thread once the handler or
 * the call has returned); in a process forked after the sender was created,
 * see docs/THREADING.md "fork()". So QSF_E_STATE, and only QSF_E_STATE,
 * means the sender was not freed (a child's second close is refused again
 * and changes nothing). */
QSF_API int qsf_close(qsf_sender *sender, qsf_errinfo *err);

/* qsf_close, and fills *info (may be NULL) with what it found. */
QSF_API int qsf_close_report(qsf_sender *sender, qsf_close_info *info, qsf_errinfo *err);

/* ------------------------------------------------------------------------- */
/* Rows                                                                      */
/* ------------------------------------------------------------------------- */
/* A row is: qsf_table, then columns in any order (each at most once), then one of
 * qsf_at_micros / qsf_at_nanos / qsf_at_now. A failed call leaves the buffer as it
 * was before the row started only if you call qsf_row_cancel; otherwise the row
 * stays open and you may retry the column. Columns missing from a row are NULL.
 * All row calls: producer thread; errors QSF_E_VALUE (bad name/value, message says
 * which), QSF_E_STATE (call out of order), QSF_E_TOO_LARGE, QSF_E_DICT_FULL,
 * QSF_E_BUSY, plus a latched fatal error. Auto-flush may run inside qsf_at_*:
 * when it fails, qsf_at_* returns its error (as qsf_flush: QSF_E_FULL,
 * QSF_E_NOSPC, ...; the message begins "auto-flush failed; this row was not
 * buffered") and takes the row back. The rule: a row whose qsf_at_* returned
 * an error is left out and never sent (retry the whole row, or give it up;
 * there is nothing to cancel); a row whose qsf_at_* returned QSF_OK is
 * buffered (qsf_buffered_rows counts it) until a flush publishes it or
 * qsf_close reports it dropped. One answer per row, the one an application
 * already acts on: "OK for the row, the flush failure reported aside" would
 * make the usual "retry the row on error" send it twice. With transaction=on
 * a failure that aborts the transaction takes the row with it (qsf_flush).
 * auto_flush_interval is never early, and at most one coarse clock tick late
 * (clock_getres(CLOCK_MONOTONIC_COARSE), 4 ms at HZ=250, 10 ms at most) while
 * fewer than 128 rows are buffered, at most 20 ms late from then on (the I/O
 * thread compares the clock for a fast stream; docs/CONFIGURATION.md).
 *
 * Names (`name`, `col`: pointer and length, no NUL needed) are 1..max_name_len
 * bytes of valid UTF-8 (the connect string's max_name_len, 127 by default and
 * at most), without control characters, U+FEFF or any of ? , ' " \ / : ( ) + *
 * % ~; a column name also without . or -, a table name not starting or
 * ending with . and without "..". Anything else is QSF_E_VALUE naming the
 * name (its first 64 bytes) and the rule, e.g. "column name "..." is
 * invalid: 128 bytes, longer than max_name_len=127". */

QSF_API int qsf_table(qsf_sender *s, const char *name, size_t len, qsf_errinfo *err);
/* SYMBOL: valid UTF-8, at most 1 MiB (1,048,576 bytes); longer is QSF_E_VALUE
 * naming the table, the column and both lengths. */
QSF_API int qsf_symbol(qsf_sender *s, const char *col, size_t col_len, const char *val,
                       size_t val_len, qsf_errinfo *err);
QSF_API int qsf_col_bool(qsf_sender *s, const char *col, size_t col_len, bool v, qsf_errinfo *err);
QSF_API int qsf_col_i8(qsf_sender *s, const char *col, size_t col_len, int8_t v, qsf_errinfo *err);
QSF_API int qsf_col_i16(qsf_sender *s, const char *col, size_t col_len, int16_t v,
                        qsf_errinfo *err);
QSF_API int qsf_col_i32(qsf_sender *s, const char *col, size_t col_len, int32_t v,
                        qsf_errinfo *err);
QSF_API int qsf_col_i64(qsf_sender *s, const char *col, size_t col_len, int64_t v,
                        qsf_errinfo *err);
QSF_API int qsf_col_f32(qsf_sender *s, const char *col, size_t col_len, float v, qsf_errinfo *err);
QSF_API int qsf_col_f64(qsf_sender *s, const char *col, size_t col_len, double v, qsf_errinfo *err);
/* TIMESTAMP (µs), TIMESTAMP_NANOS (ns) and DATE (ms) columns. */
QSF_API int qsf_col_ts_micros(qsf_sender *s, const char *col, size_t col_len, int64_t v,
                              qsf_errinfo *err);
QSF_API int qsf_col_ts_nanos(qsf_sender *s, const char *col, size_t col_len, int64_t v,
                             qsf_errinfo *err);
QSF_API int qsf_col_date(qsf_sender *s, const char *col, size_t col_len, int64_t millis,
                         qsf_errinfo *err);
/* UUID as two 64-bit halves: lo = least significant 64 bits. */
QSF_API int qsf_col_uuid(qsf_sender *s, const char *col, size_t col_len, uint64_t lo, uint64_t hi,
                         qsf_errinfo *err);
/* LONG256 as four 64-bit words, least significant first. */
QSF_API int qsf_col_long256(qsf_sender *s, const char *col, size_t col_len, const uint64_t words[4],
                            qsf_errinfo *err);
/* GEOHASH: the low `precision_bits` (1..60) bits of `bits`. */
QSF_API int qsf_col_geohash(qsf_sender *s, const char *col, size_t col_len, uint64_t bits,
                            int precision_bits, qsf_errinfo *err);
/* VARCHAR (valid UTF-8) and BINARY: at most 2^31-1 bytes (2,147,483,647);
 * longer is QSF_E_VALUE naming the table, the column and both lengths, before
 * a byte is read. Long before that, the value must fit the row buffer
 * (max_buf_size, 100 MiB by default: QSF_E_TOO_LARGE at this call) and its
 * row one frame (at most a segment's payload, sf_max_segment_bytes: 4 MiB by
 * default; QSF_E_TOO_LARGE from the flush). */
QSF_API int qsf_col_varchar(qsf_sender *s, const char *col, size_t col_len, const char *v,
                            size_t v_len, qsf_errinfo *err);
QSF_API int qsf_col_binary(qsf_sender *s, const char *col, size_t col_len, const void *v,
                           size_t v_len, qsf_errinfo *err);
/* CHAR: one UTF-16 code unit. */
QSF_API int qsf_col_char(qsf_sender *s, const char *col, size_t col_len, uint16_t v,
                         qsf_errinfo *err);
/* IPv4 in host order: 192.168.1.42 is 0xC0A8012A. 0 (0.0.0.0) is invalid. */
QSF_API int qsf_col_ipv4(qsf_sender *s, const char *col, size_t col_len, uint32_t v,
                         qsf_errinfo *err);
/* DECIMAL64/128/256: unscaled two's-complement value (128/256: little-endian bytes)
 * and a scale (0..18 / 0..38 / 0..76), fixed per column within a batch. */
QSF_API int qsf_col_decimal64(qsf_sender *s, const char *col, size_t col_len, int64_t unscaled,
                              int scale, qsf_errinfo *err);
QSF_API int qsf_col_decimal128(qsf_sender *s, const char *col, size_t col_len,
                               const uint8_t unscaled_le[16], int scale, qsf_errinfo *err);
QSF_API int qsf_col_decimal256(qsf_sender *s, const char *col, size_t col_len,
                               const uint8_t unscaled_le[32], int scale, qsf_errinfo *err);
/* N-dimensional arrays, row-major: rank 1..32, shape[i] >= 0, product fits int32. */
QSF_API int qsf_col_f64_array(qsf_sender *s, const char *col, size_t col_len, int rank,
                              const int32_t *shape, const double *values, qsf_errinfo *err);
/* LONG[]: encoded and sent as QWP defines it, but today's QuestDB server refuses
 * the whole frame with SCHEMA_MISMATCH ("long arrays are not supported, only
 * double arrays"), for a new table as well; store such values as DOUBLE[]. */
QSF_API int qsf_col_i64_array(qsf_sender *s, const char *col, size_t col_len, int rank,
                              const int32_t *shape, const int64_t *values, qsf_errinfo *err);

/* End the row with a designated timestamp (µs or ns since the epoch), or let the
 * server assign the time. */
QSF_API int qsf_at_micros(qsf_sender *s, int64_t ts, qsf_errinfo *err);
QSF_API int qsf_at_nanos(qsf_sender *s, int64_t ts, qsf_errinfo *err);
QSF_API int qsf_at_now(qsf_sender *s, qsf_errinfo *err);

/* Drops the row being built (if any); the buffer returns to the last complete row.
 * Never fails; does nothing while another thread is inside a call on the sender.
 * Producer thread. */
QSF_API void qsf_row_cancel(qsf_sender *s);

/* Number of complete rows buffered and not yet flushed: every one had QSF_OK
 * from its qsf_at_* (a row whose auto-flush failed is not counted). Producer
 * thread. */
QSF_API size_t qsf_buffered_rows(const qsf_sender *s);

/* Drops every buffered row (and the row being built): the application gives
 * them up explicitly, for example after qsf_flush failed with QSF_E_TOO_LARGE.
 * With transaction=on it abandons the open transaction: its rows already
 * staged by auto-flushes go too, nothing of it is ever sent (this is the
 * abort of a transaction). Returns the number of complete rows dropped,
 * staged ones included (0 for a NULL sender, or when another thread is inside
 * a call on the sender). Producer thread. */
QSF_API size_t qsf_buffer_clear(qsf_sender *s);

/* transaction=on: rows of the open transaction, i.e. added since the last
 * qsf_flush that returned QSF_OK: staged in the ring by auto-flushes plus
 * those buffered (without transaction=on: the buffered rows). Producer
 * thread. */
QSF_API uint64_t qsf_txn_rows(const qsf_sender *s);

/* ------------------------------------------------------------------------- */
/* Flush, wait, progress                                                     */
/* ------------------------------------------------------------------------- */

/* Encodes every buffered row and publishes the frames into the ring, all or
 * nothing: when it returns QSF_OK every row is published (and, with
 * sf_durability=append, on stable storage); when it fails nothing is published,
 * nothing of it will ever be delivered, and every row stays buffered for the
 * next flush. A flush larger than the server's batch size is split into
 * several frames that the server commits together. Returns at once otherwise:
 * it never waits for acknowledgements. *fsn_out (may be NULL) receives the FSN
 * of the last frame published, or the current published FSN for an empty flush
 * (-1 if nothing was ever published).
 * Errors: QSF_E_FULL (retriable: the ring stayed full until
 * sf_append_deadline_millis; the message names the cause); QSF_E_TOO_LARGE (not
 * retriable: the rows need more of the ring than sf_max_total_bytes allows;
 * the message gives the sizes; flush fewer rows at a time, or give these up
 * with qsf_buffer_clear); QSF_E_DURABILITY (append mode: the barrier failed
 * and the flush was undone; QSF_ERRF_IN_DOUBT only when even undoing the
 * frames could not be made durable, so a host crash could still bring them
 * back; periodic mode, retriable: a periodic checkpoint failed and no flush
 * publishes until the manager's retry of it succeeds; frames published before
 * stay published); QSF_E_NOSPC or
 * QSF_E_IO (append mode, retriable: a frame could not be written to its
 * segment file, which the message names); a latched fatal error.
 * A process that dies inside qsf_flush delivers all of that flush or none of it.
 * transaction=on: every row added since the last successful qsf_flush is one
 * transaction. Auto-flushes (auto_flush_rows / _bytes / _interval) only stage
 * rows in the ring as deferred frames (FLAG_DEFER_COMMIT), invisible to the
 * server; qsf_flush publishes them with the committing frame, so the server
 * commits the whole transaction at once per table (up to its
 * qwp.max.uncommitted.rows, 1,000,000 by default, past which a server
 * force-commits). The ring holds the whole transaction until it is
 * acknowledged: one that needs more than sf_max_total_bytes fails with
 * QSF_E_TOO_LARGE. Once rows are staged, QSF_E_FULL from an auto-flush (in
 * qsf_at_*) or from qsf_flush is retriable as ever: that call's frames are
 * taken back, its rows are buffered again and the transaction stays open
 * (retry qsf_flush, or go on adding rows). Any other failure aborts the whole
 * transaction: the message begins "transaction aborted, nothing of it was
 * committed" with the row count, QSF_ERRF_RETRIABLE is cleared, no row of it
 * stays buffered, and nothing of it is ever delivered; send it again. A process that dies with a
 * transaction open delivers none of it. qsf_buffer_clear abandons it;
 * qsf_close aborts it (QSF_E_DATA_LOSS, txn_rows_uncommitted). Delivery of a
 * committed transaction is at least once: when a connection is lost or found
 * dead with its committing frame sent and not acknowledged, the server may
 * have committed it and it is sent again, so it may be committed twice unless
 * the table has DEDUP (the CONNECTION error record and its line say so, with
 * the FSN span; a frozen server is waited for, frozen_server_timeout_millis).
 * Producer thread. */
QSF_API int qsf_flush(qsf_sender *s, int64_t *fsn_out, qsf_errinfo *err);

/* ------------------------------------------------------------------------- */
/* Resuming your source: positions committed with a flush                    */
/* ------------------------------------------------------------------------- */
/* A source position is the application's own bookmark in its input (a file
 * offset, a Kafka offset, a sequence number, a cursor): 1 to
 * QSF_SOURCE_POSITION_MAX opaque bytes, copied. qsf persists it with a flush,
 * atomically: after a crash (SIGKILL, or a power loss in append mode) the
 * position qsf_source_position reports is that of the last flush whose frames
 * all survived in the slot, never that of a flush that was cut. Recipe:
 * after opening, read the position and resume the input after it; then, for
 * every batch, add its rows, qsf_set_source_position(end of the batch),
 * qsf_flush. docs/DURABILITY.md §9a says what each sf_durability keeps after
 * a power loss; README "Resuming your source" has the recipe. */
#define QSF_SOURCE_POSITION_MAX 256

/* Sets the position the next commit carries: the next qsf_flush or
 * qsf_flush_chunk that succeeds (an automatic flush too; with
 * transaction=on, the qsf_flush that commits the transaction). It must cover
 * only rows added before the call: every row added until then goes in with
 * that commit or an earlier one. A failed flush keeps it for the retry; a
 * newer call replaces it; qsf_buffer_clear and an aborted transaction drop it
 * (it covered rows that are gone). qsf_flush with no rows still commits it,
 * at the published FSN. Errors: QSF_E_INVAL (NULL, 0 or more than
 * QSF_SOURCE_POSITION_MAX bytes). Producer thread. */
QSF_API int qsf_set_source_position(qsf_sender *s, const void *pos, size_t len, qsf_errinfo *err);

/* The position of the last published flush that carried one, and *fsn the
 * last FSN of that flush (-1 for a position kept across a drained close).
 * Right after qsf_sender_new it is the one that survived in the slot (or, in
 * memory mode, none). No position: QSF_OK with *len 0 and *fsn -1. cap too
 * small: QSF_E_INVAL, *len says how many bytes it needs. Producer thread. */
QSF_API int qsf_source_position(qsf_sender *s, void *buf, size_t cap, size_t *len, int64_t *fsn,
                                qsf_errinfo *err);

/* As qsf_source_position, for the last flush the server acknowledged: the
 * input before it can be released upstream. It survives close and reopen
 * like the acknowledged FSN does (a host loss may take it back a little: the
 * watermark is synced lazily, docs/DURABILITY.md §10). Producer thread. */
QSF_API int qsf_acked_source_position(qsf_sender *s, void *buf, size_t cap, size_t *len,
                                      int64_t *fsn, qsf_errinfo *err);

/* ------------------------------------------------------------------------- */
/* Columns in: chunks                                                        */
/* ------------------------------------------------------------------------- */
/* A chunk is N rows of one table given column by column, in the memory layout
 * of the Apache Arrow columnar format, so data that is already columnar (Arrow
 * record batches, NumPy arrays, a program's own struct-of-arrays) goes in with
 * one call per column and no copy. It is caller-owned, built on any thread (one
 * thread at a time), reusable after qsf_chunk_clear, and published with
 * qsf_flush_chunk on the sender's producer thread.
 *
 * Borrowed buffers. A chunk does not copy column data: it keeps the pointers.
 * Every buffer passed to a qsf_chunk_* call must stay valid and unchanged until
 * qsf_flush_chunk has returned (whatever it returned) or the chunk is cleared
 * or freed. Names are copied.
 *
 * Rows and offsets. Every column call takes `offset` and `rows` as Arrow does:
 * row i of the call is element offset + i of `values` (bit offset + i of a
 * bitmap), so an Arrow array is passed with its own offset and NumPy data with
 * offset 0. The first column (or the designated timestamp) fixes the chunk's
 * row count; a later column with another count is refused with QSF_E_VALUE
 * naming both columns and counts. Naming a column twice (names compare
 * ignoring ASCII case, as QuestDB's do) is QSF_E_VALUE. A call that fails
 * leaves the chunk as it was before the call.
 *
 * Nulls. `validity` is an Arrow validity bitmap (LSB-first, bit set = value
 * present) read at bit offset + i, or NULL when every value is present. Null
 * rows are sent as QuestDB NULLs exactly as the row API sends a missing column
 * (BOOLEAN, BYTE and SHORT have no NULL in QuestDB: such a row reads back as
 * false / 0).
 *
 * Names: the row API's rules (see qsf_table). A chunk belongs to no sender,
 * so its calls check 127 bytes; qsf_flush_chunk then checks the sender's
 * max_name_len and refuses the chunk (QSF_E_VALUE, nothing published) when a
 * name is longer. Every column call copies its name.
 *
 * Errors of every qsf_chunk_* call: QSF_E_INVAL (NULL chunk or buffer, rows
 * larger than the buffers can be), QSF_E_VALUE (bad name, a value QuestDB
 * cannot hold: the message names the column and the row), QSF_E_NOMEM. */

typedef struct qsf_chunk qsf_chunk;

/* A new empty chunk for `table` ((pointer, length); 1..127 bytes, the row
 * API's rules, see qsf_table). *out owns it. Errors: QSF_E_INVAL, QSF_E_VALUE
 * (bad table name), QSF_E_NOMEM. Any thread. */
QSF_API int qsf_chunk_new(const char *table, size_t table_len, qsf_chunk **out, qsf_errinfo *err);
/* Forgets every column, the row count and the designated timestamp (buffers
 * are released to the caller); keeps the table and the memory for reuse. */
QSF_API void qsf_chunk_clear(qsf_chunk *c);
/* Frees the chunk. NULL is a no-op. */
QSF_API void qsf_chunk_free(qsf_chunk *c);
/* The chunk's row count (0 before the first column). */
QSF_API size_t qsf_chunk_rows(const qsf_chunk *c);

/* Fixed-width columns: BYTE, SHORT, INT, LONG, FLOAT, DOUBLE. Unsigned inputs
 * are widened to the next signed QuestDB type (u8 -> SHORT, u16 -> INT,
 * u32 -> LONG); u64 goes to LONG and a value above INT64_MAX is QSF_E_VALUE
 * naming the row. Values are sent as given, as the row API sends them: an INT
 * of INT32_MIN, a LONG of INT64_MIN and a NaN FLOAT or DOUBLE are QuestDB's
 * own NULL markers and read back as NULL. */
QSF_API int qsf_chunk_i8(qsf_chunk *c, const char *col, size_t col_len, const int8_t *values,
                         const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_i16(qsf_chunk *c, const char *col, size_t col_len, const int16_t *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_i32(qsf_chunk *c, const char *col, size_t col_len, const int32_t *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_i64(qsf_chunk *c, const char *col, size_t col_len, const int64_t *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_u8(qsf_chunk *c, const char *col, size_t col_len, const uint8_t *values,
                         const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_u16(qsf_chunk *c, const char *col, size_t col_len, const uint16_t *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_u32(qsf_chunk *c, const char *col, size_t col_len, const uint32_t *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_u64(qsf_chunk *c, const char *col, size_t col_len, const uint64_t *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_f32(qsf_chunk *c, const char *col, size_t col_len, const float *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_f64(qsf_chunk *c, const char *col, size_t col_len, const double *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);

/* BOOLEAN: `bits` is an Arrow boolean bitmap (LSB-first), read at bit
 * offset + i. qsf_chunk_bool_u8 takes one byte per value (0 = false, anything
 * else = true), as NumPy's bool arrays hold them. */
QSF_API int qsf_chunk_bool(qsf_chunk *c, const char *col, size_t col_len, const uint8_t *bits,
                           const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_bool_u8(qsf_chunk *c, const char *col, size_t col_len, const uint8_t *values,
                              const uint8_t *validity, size_t offset, size_t rows,
                              qsf_errinfo *err);

/* Time units of qsf_chunk_timestamp and qsf_chunk_at. */
#define QSF_UNIT_SECONDS 0
#define QSF_UNIT_MILLIS  1
#define QSF_UNIT_MICROS  2
#define QSF_UNIT_NANOS   3

/* TIMESTAMP from int64 counts of `unit` since the epoch: seconds, millis and
 * micros become a TIMESTAMP (µs) column, nanos a TIMESTAMP_NANOS column. A
 * value that overflows on the way to µs is QSF_E_VALUE naming the row. */
QSF_API int qsf_chunk_timestamp(qsf_chunk *c, const char *col, size_t col_len,
                                const int64_t *values, int unit, const uint8_t *validity,
                                size_t offset, size_t rows, qsf_errinfo *err);
/* DATE from int64 milliseconds (Arrow date64) or int32 days (Arrow date32). */
QSF_API int qsf_chunk_date_millis(qsf_chunk *c, const char *col, size_t col_len,
                                  const int64_t *values, const uint8_t *validity, size_t offset,
                                  size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_date_days(qsf_chunk *c, const char *col, size_t col_len,
                                const int32_t *values, const uint8_t *validity, size_t offset,
                                size_t rows, qsf_errinfo *err);
/* CHAR: one UTF-16 code unit per value. */
QSF_API int qsf_chunk_char(qsf_chunk *c, const char *col, size_t col_len, const uint16_t *values,
                           const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
/* IPv4 in host order (192.168.1.42 is 0xC0A8012A); 0 is QSF_E_VALUE. */
QSF_API int qsf_chunk_ipv4(qsf_chunk *c, const char *col, size_t col_len, const uint32_t *values,
                           const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
/* UUID: 16 bytes per value in RFC 4122 byte order (most significant byte
 * first), as Arrow's arrow.uuid extension and Python's uuid.bytes hold it. */
QSF_API int qsf_chunk_uuid(qsf_chunk *c, const char *col, size_t col_len, const uint8_t *values,
                           const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err);
/* LONG256: 32 bytes per value, little-endian (least significant byte first). */
QSF_API int qsf_chunk_long256(qsf_chunk *c, const char *col, size_t col_len, const uint8_t *values,
                              const uint8_t *validity, size_t offset, size_t rows,
                              qsf_errinfo *err);
/* GEOHASH: the low `precision_bits` (1..60) bits of each value. */
QSF_API int qsf_chunk_geohash(qsf_chunk *c, const char *col, size_t col_len, const uint64_t *values,
                              int precision_bits, const uint8_t *validity, size_t offset,
                              size_t rows, qsf_errinfo *err);
/* DECIMAL64/128/256: unscaled two's-complement values (8, 16 or 32 bytes each,
 * little-endian, as Arrow's decimal64/128/256 hold them) and one scale for the
 * column (0..18 / 0..38 / 0..76). */
QSF_API int qsf_chunk_decimal64(qsf_chunk *c, const char *col, size_t col_len,
                                const int64_t *values, int scale, const uint8_t *validity,
                                size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_decimal128(qsf_chunk *c, const char *col, size_t col_len,
                                 const uint8_t *values, int scale, const uint8_t *validity,
                                 size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_decimal256(qsf_chunk *c, const char *col, size_t col_len,
                                 const uint8_t *values, int scale, const uint8_t *validity,
                                 size_t offset, size_t rows, qsf_errinfo *err);

/* Variable-width values in Arrow's layout: value i is bytes
 * data[offsets[offset + i] .. offsets[offset + i + 1]). `offsets` holds
 * offset + rows + 1 entries of 32 bits (Arrow utf8/binary) or 64 bits (the
 * *64 calls: large_utf8/large_binary); they must not decrease. VARCHAR and
 * SYMBOL values must be valid UTF-8 (QSF_E_VALUE naming the column and row).
 * A VARCHAR or BINARY value is at most 2^31-1 bytes (2,147,483,647: every
 * value a 32-bit offset can span), a SYMBOL value at most 1 MiB (1,048,576
 * bytes); a longer one is QSF_E_VALUE naming the column, the row, its length
 * and the limit ("row 3: 1048577 long, more than the 1048576 allowed"). Its
 * row must also fit one frame (QSF_E_TOO_LARGE from qsf_flush_chunk). */
QSF_API int qsf_chunk_varchar(qsf_chunk *c, const char *col, size_t col_len, const int32_t *offsets,
                              const char *data, const uint8_t *validity, size_t offset, size_t rows,
                              qsf_errinfo *err);
QSF_API int qsf_chunk_varchar64(qsf_chunk *c, const char *col, size_t col_len,
                                const int64_t *offsets, const char *data, const uint8_t *validity,
                                size_t offset, size_t rows, qsf_errinfo *err);
QSF_API int qsf_chunk_binary(qsf_chunk *c, const char *col, size_t col_len, const int32_t *offsets,
                             const void *data, const uint8_t *validity, size_t offset, size_t rows,
                             qsf_errinfo *err);
QSF_API int qsf_chunk_binary64(qsf_chunk *c, const char *col, size_t col_len,
                               const int64_t *offsets, const void *data, const uint8_t *validity,
                               size_t offset, size_t rows, qsf_errinfo *err);
/* SYMBOL from plain strings (same layout as qsf_chunk_varchar). Symbols go
 * through the sender's delta dictionary and .symbol-dict like the row API's. */
QSF_API int qsf_chunk_symbol(qsf_chunk *c, const char *col, size_t col_len, const int32_t *offsets,
                             const char *data, const uint8_t *validity, size_t offset, size_t rows,
                             qsf_errinfo *err);
QSF_API int qsf_chunk_symbol64(qsf_chunk *c, const char *col, size_t col_len,
                               const int64_t *offsets, const char *data, const uint8_t *validity,
                               size_t offset, size_t rows, qsf_errinfo *err);
/* SYMBOL from dictionary codes (Arrow dictionary arrays, pandas categoricals):
 * `codes` holds signed integers of `code_bytes` (1, 2 or 4) bytes; code k names
 * entry k of a dictionary of `dict_len` strings in qsf_chunk_symbol's layout
 * (32-bit dict_offsets, dict_len + 1 of them, from 0). A code outside
 * 0..dict_len-1 in a valid row is QSF_E_VALUE naming the row and the code;
 * a dictionary entry over 1 MiB is QSF_E_VALUE naming the entry. */
QSF_API int qsf_chunk_symbol_dict(qsf_chunk *c, const char *col, size_t col_len, const void *codes,
                                  int code_bytes, const int32_t *dict_offsets,
                                  const char *dict_data, size_t dict_len, const uint8_t *validity,
                                  size_t offset, size_t rows, qsf_errinfo *err);

/* DOUBLE arrays. qsf_chunk_f64_list: one 1-dimensional array per row, Arrow's
 * List<Float64> layout (row i is values[list_offsets[offset + i] ..
 * list_offsets[offset + i + 1])). qsf_chunk_f64_tensor: every row has the same
 * shape (rank 1..32), its elements row-major and rows one after another
 * (element j of row i at values[(offset + i) * prod(shape) + j]), as a NumPy
 * array of shape (rows, *shape) holds them. */
QSF_API int qsf_chunk_f64_list(qsf_chunk *c, const char *col, size_t col_len,
                               const int32_t *list_offsets, const double *values,
                               const uint8_t *validity, size_t offset, size_t rows,
                               qsf_errinfo *err);
QSF_API int qsf_chunk_f64_tensor(qsf_chunk *c, const char *col, size_t col_len, int rank,
                                 const int32_t *shape, const double *values,
                                 const uint8_t *validity, size_t offset, size_t rows,
                                 qsf_errinfo *err);

/* The designated timestamp: int64 counts of `unit` (nanos give a
 * TIMESTAMP_NANOS designated column, the others µs). No row may be null or
 * negative (QSF_E_VALUE naming the row). Without this call, or after
 * qsf_chunk_at_now, the server stamps each row as with qsf_at_now. */
QSF_API int qsf_chunk_at(qsf_chunk *c, const int64_t *values, int unit, size_t offset, size_t rows,
                         qsf_errinfo *err);
QSF_API int qsf_chunk_at_now(qsf_chunk *c, qsf_errinfo *err);

/* Publishes the chunk's rows with exactly qsf_flush's contract: first every
 * complete row buffered by the row API, then the chunk, all or nothing, split
 * over as many frames as the frame and segment limits need and committed
 * together; with transaction=on the chunk joins the open transaction (staged
 * like an auto-flush) and this call commits it, as qsf_flush does. A chunk the
 * ring can never hold is QSF_E_TOO_LARGE with the sizes; QSF_E_FULL leaves
 * nothing published; errors as qsf_flush, plus QSF_E_STATE while a row of the
 * row API is open. The chunk itself is unchanged: clear it to reuse it.
 * *fsn_out as qsf_flush. Producer thread. */
QSF_API int qsf_flush_chunk(qsf_sender *s, qsf_chunk *c, int64_t *fsn_out, qsf_errinfo *err);

/* ------------------------------------------------------------------------- */
/* Columns in: Apache Arrow C Data Interface                                 */
/* ------------------------------------------------------------------------- */
/* The structs of the Arrow C Data Interface and C Stream Interface, under the
 * guards every Arrow producer uses, so this header composes with arrow/c/abi.h
 * and nanoarrow. Every Arrow format string qsf takes, and the QuestDB type it
 * becomes (or why it is refused): docs/ARROW.md.
 *
 * Ownership. qsf never calls an ArrowSchema's or ArrowArray's release
 * callback in the chunk calls: the caller keeps both and must keep the array
 * (its buffers are borrowed, see "Borrowed buffers") until qsf_flush_chunk has
 * returned or the chunk is cleared or freed; the schema may be released as
 * soon as the call returns. qsf_send_arrow_stream releases each batch it took
 * from the stream once that batch is published or refused, never the stream.
 * The only Arrow columns copied are the four formats no typed call takes as
 * they are (float16, decimal32, utf8_view, binary_view) and a dictionary asked
 * to become VARCHAR (decoded): converted into buffers the chunk owns until it
 * is cleared or freed.
 *
 * Errors: QSF_E_UNSUPPORTED (a format string qsf does not take), QSF_E_VALUE
 * (inconsistent buffers: lengths, offsets, null counts, invalid UTF-8, a
 * dictionary code out of range; the message names the column, the Arrow format
 * and the row), QSF_E_INVAL, QSF_E_NOMEM. A failed call adds no column. */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE           2
#define ARROW_FLAG_MAP_KEYS_SORTED    4

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* QuestDB types a column can be asked to become (qsf_chunk_arrow_type,
 * qsf_send_arrow_stream_typed). */
#define QSF_TYPE_AUTO    0 /* the default mapping of docs/ARROW.md */
#define QSF_TYPE_SYMBOL  1 /* utf8 / large_utf8 / utf8_view / dictionary<utf8> -> SYMBOL */
#define QSF_TYPE_VARCHAR 2 /* utf8 / large_utf8 / utf8_view / dictionary<utf8> -> VARCHAR */
#define QSF_TYPE_UUID    3 /* fixed_size_binary(16) -> UUID */
#define QSF_TYPE_LONG256 4 /* fixed_size_binary(32) -> LONG256 */
#define QSF_TYPE_CHAR    5 /* uint16 -> CHAR */
#define QSF_TYPE_IPV4    6 /* uint32 -> IPv4 */

/* Asks that the Arrow column named `col` become `qsf_type` (QSF_TYPE_*) in
 * every later qsf_chunk_arrow_* call on this chunk (kept across
 * qsf_chunk_clear). Field metadata "questdb.type" with the value "symbol",
 * "varchar", "uuid", "long256", "char" or "ipv4" asks the same per field, and
 * the extension arrow.uuid means UUID; this call wins over both. */
QSF_API int qsf_chunk_arrow_type(qsf_chunk *c, const char *col, size_t col_len, int qsf_type,
                                 qsf_errinfo *err);
/* Adds one Arrow array as column `col` ((pointer, length); NULL takes
 * schema->name). */
QSF_API int qsf_chunk_arrow_column(qsf_chunk *c, const char *col, size_t col_len,
                                   const struct ArrowSchema *schema, const struct ArrowArray *array,
                                   qsf_errinfo *err);
/* Adds every child of a record batch (a struct array, format "+s") as a
 * column; the child named `ts_col` (NUL-terminated; NULL: none, the server
 * stamps each row) becomes the designated timestamp (a timestamp in any unit,
 * with or without a time zone, never null). */
QSF_API int qsf_chunk_arrow_batch(qsf_chunk *c, const struct ArrowSchema *schema,
                                  const struct ArrowArray *array, const char *ts_col,
                                  qsf_errinfo *err);
/* Reads every batch of `stream` and publishes each with qsf_flush_chunk into
 * `table`, stopping at the first error (the batches published before it stay
 * published; *rows_out, may be NULL, counts their rows). `ts_col` as in
 * qsf_chunk_arrow_batch. The stream's callbacks run inside this call, on its
 * thread; qsf_close of `s` from one of them is refused (QSF_E_STATE).
 * Producer thread. */
QSF_API int qsf_send_arrow_stream(qsf_sender *s, const char *table, size_t table_len,
                                  struct ArrowArrayStream *stream, const char *ts_col,
                                  uint64_t *rows_out, qsf_errinfo *err);

/* One column of a stream asked to become a QuestDB type, as
 * qsf_chunk_arrow_type asks it of a chunk. */
typedef struct qsf_arrow_col_type {
    const char *col; /* NUL-terminated: a field of the stream's schema */
    int qsf_type;    /* QSF_TYPE_* */
} qsf_arrow_col_type;

/* qsf_send_arrow_stream, with columns asked to become the types of
 * `types` (n_types entries; NULL and 0 for none) in every batch: e.g.
 * {"venue", QSF_TYPE_SYMBOL} sends a utf8 field as SYMBOL. The entries win
 * over field metadata, as qsf_chunk_arrow_type does. Checked after
 * get_schema and before any batch is taken: a `col` that names no field of
 * the schema (ASCII case-insensitive) is QSF_E_VALUE naming it, an unknown
 * qsf_type QSF_E_INVAL; a type the field's format cannot become fails at
 * the first batch (QSF_E_UNSUPPORTED, nothing of it published). `types` is
 * read during the call only. Producer thread. */
QSF_API int qsf_send_arrow_stream_typed(qsf_sender *s, const char *table, size_t table_len,
                                        struct ArrowArrayStream *stream, const char *ts_col,
                                        const qsf_arrow_col_type *types, size_t n_types,
                                        uint64_t *rows_out, qsf_errinfo *err);

/* Highest FSN published / acknowledged (-1 if none). Any thread. */
QSF_API int64_t qsf_published_fsn(const qsf_sender *s);
QSF_API int64_t qsf_acked_fsn(const qsf_sender *s);

#define QSF_WAIT_OK      0 /* wait for a server OK (committed to the WAL) */
#define QSF_WAIT_DURABLE 1 /* wait for a durable ack (needs request_durable_ack=on) */

/* Waits until the watermark of `level` reaches `fsn`. Times out only when the
 * watermark did not advance for no_progress_timeout_ms (0 or less: checks once,
 * without waiting). Errors: QSF_E_TIMEOUT,
 * QSF_E_INVAL (fsn beyond published, or DURABLE without durable ack), a latched
 * fatal error (every time once latched, also for an FSN acknowledged before:
 * docs/ERRORS.md §4), QSF_E_CLOSED (qsf_close stopped the I/O thread meanwhile: it
 * returns only after every such wait has). Any thread. */
QSF_API int qsf_wait(qsf_sender *s, int64_t fsn, int level, int64_t no_progress_timeout_ms,
                     qsf_errinfo *err);

/* Deliberately idle the wire (planned server maintenance): the connection is closed
 * with 1000 and no attempts are made; publishing continues into the ring.
 * qsf_resume reconnects at once. Any thread. */
QSF_API int qsf_pause(qsf_sender *s);
QSF_API int qsf_resume(qsf_sender *s);

/* ------------------------------------------------------------------------- */
/* Observability                                                             */
/* ------------------------------------------------------------------------- */

/* A snapshot of a sender's counters and gauges (what each means exactly and
 * what to alert on: docs/METRICS.md). Extensible: fields are only ever appended, and
 * struct_size, set by qsf, says how many bytes of the struct it filled, so a
 * program built against a newer qsf.h than the library it runs with can tell
 * which fields are there. */
typedef struct qsf_stats {
    size_t struct_size; /* bytes qsf filled; fields past it were left as they were */
    /* counters, monotonic */
    uint64_t frames_sent;
    uint64_t frames_replayed; /* frames sent again (sent before by an earlier connection or
                                 process): possible duplicates at the server */
    uint64_t acks;
    uint64_t durable_acks;
    uint64_t durable_trim_advances;
    uint64_t server_errors;
    uint64_t reconnect_attempts;
    uint64_t reconnects_succeeded;
    uint64_t backpressure_stalls;
    uint64_t error_notifications_dropped;
    uint64_t error_notifications_delivered;
    /* gauges */
    int64_t published_fsn;
    int64_t acked_fsn;
    int64_t highest_ok_fsn;
    int connected; /* 1 while a connection is up */
    int paused;    /* 1 while qsf_pause is in effect */
    int ever_connected;
    uint64_t pending_frames; /* published - acked */
    uint64_t pending_bytes;  /* bytes of those frames in the ring, 8-byte envelopes included */
    int64_t oldest_unacked_age_ms; /* -1 when nothing is pending; for frames recovered from
                                      the slot, the age of the segment file holding the
                                      oldest (created at or before its first frame) */
    char current_host[262];        /* "host:port" or "" */
    int last_error_code;           /* QSF_E_* of the last reported error, 0 if none */
    /* orphan adoption (drain_orphans=on) */
    int active_drainers;         /* drainers working on a slot now */
    uint64_t drainers_succeeded; /* orphan slots fully drained (their files removed) */
    uint64_t drainers_failed;    /* orphan slots given up on (marked .failed) */
    /* liveness */
    uint64_t connections_lost;  /* connections that ended without an orderly close */
    uint64_t liveness_timeouts; /* of those, found dead by qsf: nothing received while an
                                   answer was owed, or no acknowledgement in time */
    /* data given up (the same counts qsf_close_info reports) */
    uint64_t data_losses; /* places where accepted data was given up: damaged slot contents
                             found at creation, a slot set aside as unreplayable */
    uint64_t frames_lost; /* frames of those, where they could be counted */
    uint64_t rows_lost;   /* rows of those frames, where they could be counted */
    /* orphan adoption, continued */
    int orphans_queued;      /* orphan slots found at creation that no drainer has taken yet */
    int failed_slots;        /* slots of sf_dir marked .failed: found by the scan at creation
                                (drain_orphans=on only) or given up on by a drainer since */
    int terminal_error_code; /* QSF_E_* of the latched terminal error (every producer call
                                fails with it), 0 while none */
    /* connection events (qsf_set_event_handler, qsf_poll_event; as qsf_event_counts) */
    uint64_t events_delivered; /* handed to the event handler */
    uint64_t events_dropped;   /* dropped: the event inbox was full, or closed undelivered */
} qsf_stats;

/* Fills *out with a consistent-enough snapshot: each field is read atomically,
 * not all of them at one instant. `size` is sizeof the struct as the caller
 * knows it; qsf fills min(size, its own) bytes, sets struct_size to that and
 * returns it (0 when out is NULL or size is too small to hold struct_size).
 * A NULL sender gives zeros, with -1 for the FSNs and the age. Any thread. */
QSF_API size_t qsf_stats_get_sized(const qsf_sender *s, qsf_stats *out, size_t size);

/* The usual call: the size is the one of the qsf.h the caller is built with. */
#define qsf_stats_get(s, out) ((void) qsf_stats_get_sized((s), (out), sizeof *(out)))

/* The same snapshot as one JSON object and a newline: {"sender_id":"...", then
 * every field of qsf_stats but struct_size under its own name, current_host
 * last}, numbers as JSON integers, strings escaped.
 * Written into buf (NUL-terminated, truncated to cap; buf may be NULL when cap
 * is 0); returns the bytes the whole text needs, excluding the NUL (like
 * snprintf). Any thread. */
QSF_API size_t qsf_stats_json(const qsf_sender *s, char *buf, size_t cap);

/* The same snapshot in the Prometheus text exposition format 0.0.4: a # HELP
 * and # TYPE line per metric, names qsf_..., counters ending in _total, every
 * sample labelled sender_id="...". The names and what to alert on:
 * docs/METRICS.md. Same buffer contract as qsf_stats_json. Any thread. */
QSF_API size_t qsf_metrics_prometheus(const qsf_sender *s, char *buf, size_t cap);

/* Error categories of qsf_error_record.category. */
enum {
    QSF_CAT_SCHEMA_MISMATCH = 3,
    QSF_CAT_PARSE_ERROR = 5,
    QSF_CAT_INTERNAL_ERROR = 6,
    QSF_CAT_SECURITY_ERROR = 8,
    QSF_CAT_WRITE_ERROR = 9,
    QSF_CAT_NOT_WRITABLE = 12,
    QSF_CAT_DICTIONARY_GAP = 13,
    QSF_CAT_UNKNOWN = 100,
    QSF_CAT_PROTOCOL_VIOLATION = 101,
    QSF_CAT_DATA_LOSS = 102,
    QSF_CAT_CONNECTION = 103, /* the connection failed: lost, dead, or no endpoint reachable */
};

/* Policies of qsf_error_record.policy. */
enum {
    QSF_POLICY_RETRIABLE = 1,
    QSF_POLICY_RETRIABLE_OTHER = 2,
    QSF_POLICY_TERMINAL = 3,
    QSF_POLICY_ABANDONED = 4,
};

/* Static name of a category without its prefix, e.g. "WRITE_ERROR" for
 * QSF_CAT_WRITE_ERROR, as log lines and docs/ERRORS.md §5 spell it; "UNKNOWN"
 * for QSF_CAT_UNKNOWN and for values qsf.h does not define. Any thread. */
QSF_API const char *qsf_category_name(int category);

/* Static name of a policy without its prefix, e.g. "RETRIABLE_OTHER";
 * "UNKNOWN" for values qsf.h does not define. Any thread. */
QSF_API const char *qsf_policy_name(int policy);

/* One error notification. Extensible like qsf_stats: fields are only ever
 * appended, and struct_size says how many bytes qsf filled. A handler built
 * against a newer qsf.h than the library reads no field past struct_size. */
typedef struct qsf_error_record {
    size_t struct_size; /* bytes qsf filled */
    int category;       /* QSF_CAT_* */
    int policy;         /* QSF_POLICY_* */
    int status;         /* server status byte, -1 if none */
    int64_t wire_seq;   /* -1 if none */
    int64_t from_fsn;   /* rejected frame or unacknowledged span */
    int64_t to_fsn;
    int64_t timestamp_us;       /* detection time, wall clock */
    char table[128];            /* table name when the frame held exactly one table */
    char endpoint[262];         /* "host:port" */
    char message[1100];         /* server text (<= 1024 bytes) or qsf's own */
    char quarantined_path[512]; /* DATA_LOSS only */
} qsf_error_record;

/* Takes the oldest queued error notification into *out: min(size, qsf's own)
 * bytes, struct_size set to that (size is sizeof the record as the caller
 * knows it). Returns 1 if one was taken, 0 if the inbox is empty or size is
 * too small to hold struct_size. Any thread. */
QSF_API int qsf_poll_error_sized(qsf_sender *s, qsf_error_record *out, size_t size);

/* The usual call: the size is the one of the qsf.h the caller is built with. */
#define qsf_poll_error(s, out) qsf_poll_error_sized((s), (out), sizeof *(out))

/* Registers a handler called on a dispatcher thread (never the I/O thread) for
 * each error notification; NULL unregisters. When it returns QSF_OK, the
 * handler it replaced is not running any more (unless it was called from
 * that handler). The handler cannot close its sender, nor any other:
 * qsf_close there returns QSF_E_STATE and changes nothing. It may replace or
 * remove itself; called from any other error or event handler (another
 * sender's, or its sender's event handler) qsf_set_error_handler returns
 * QSF_E_STATE, logs why and changes nothing: it would wait for this handler
 * to return, and two handlers that set each other's handler would wait for
 * each other forever. Returns QSF_OK, QSF_E_INVAL (s is NULL), QSF_E_STATE
 * (that, or a sender inherited through fork()) or QSF_E_INTERNAL (the
 * dispatcher thread cannot start). Producer thread, or the error handler
 * itself. */
typedef void (*qsf_error_handler)(void *user, const qsf_error_record *rec);
QSF_API int qsf_set_error_handler(qsf_sender *s, qsf_error_handler fn, void *user);

/* ------------------------------------------------------------------------- */
/* Log lines and connection events (docs/THREADING.md, docs/ERRORS.md)       */
/* ------------------------------------------------------------------------- */

/* Log levels. A line is written when its level is at most the threshold. */
enum {
    QSF_LOG_OFF = 0,
    QSF_LOG_ERROR = 1, /* the sender stopped, or data was given up */
    QSF_LOG_WARN = 2,  /* something failed and qsf is working around it */
    QSF_LOG_INFO = 3,  /* one line per state change (connected, replay done, ...) */
    QSF_LOG_DEBUG = 4,
};
#define QSF_LOG_DEFAULT (-1) /* qsf_set_log_handler: keep the threshold as it is */

/* Receives each log line: one line of visible text without a newline (text
 * from outside is escaped), valid only during the call. */
typedef void (*qsf_log_handler)(void *user, int level, const char *line);

/* Process-wide: routes every log line of every sender to fn (NULL: back to
 * stderr, as "qsf <LEVEL> <line>"), with the threshold `level` (QSF_LOG_*, or
 * QSF_LOG_DEFAULT to keep it). Without a call the threshold comes from the
 * environment variable QSF_LOG (off, error, warn, info or debug; default
 * warn), read once. The handler runs on the thread that logs, qsf's own
 * threads included (the I/O thread, the ring manager): keep it quick, and do
 * not call qsf from it, except qsf_set_log_handler to replace or remove
 * itself. qsf_close and qsf_close_report called from it, on any sender,
 * return QSF_E_STATE and change nothing (the handler may be running on that
 * sender's I/O thread, or inside its close). Calls are serialised (never
 * two at once); when qsf_set_log_handler returns, the handler it replaced is
 * not running any more (unless it was called from that handler) and is never
 * called again.
 * QSF_E_INVAL for a level out of range. Any thread. */
QSF_API int qsf_set_log_handler(int level, qsf_log_handler fn, void *user);

/* Kinds of qsf_event.kind. */
enum {
    QSF_EVENT_CONNECTED = 1,          /* the sender's first connection opened */
    QSF_EVENT_RECONNECTED = 2,        /* a later one opened, to the endpoint of the one before */
    QSF_EVENT_FAILED_OVER = 3,        /* a later one opened, to another endpoint */
    QSF_EVENT_DISCONNECTED = 4,       /* an open connection ended */
    QSF_EVENT_REPLAY_DONE = 5,        /* a new connection sent what was unacknowledged */
    QSF_EVENT_BACKPRESSURE_BEGIN = 6, /* the producer waits for room in the ring */
    QSF_EVENT_BACKPRESSURE_END = 7,   /* ... and no longer */
    QSF_EVENT_PAUSED = 8,             /* qsf_pause took effect: no connection, no attempts */
    QSF_EVENT_RESUMED = 9,            /* qsf_resume: connecting again */
    QSF_EVENT_NO_PROGRESS = 10,       /* frames wait and none was confirmed for duration_ms
                                         (from_fsn..to_fsn); repeated at growing intervals */
};

/* A connection event. Fields are only ever appended: the caller of
 * qsf_poll_event sets struct_size to sizeof(qsf_event) as it knows it, qsf
 * fills the fields both know and sets struct_size to the bytes it filled, as
 * for qsf_error_record; in a handler, struct_size is qsf's own size (a field
 * that does not end within it is not there). Fields that do not apply to a
 * kind are 0, "" or -1 (FSNs). */
typedef struct qsf_event {
    size_t struct_size;
    int kind;                    /* QSF_EVENT_* */
    int64_t timestamp_us;        /* when it happened, wall clock */
    char endpoint[262];          /* "host:port" of the connection it is about, "" if none */
    char previous_endpoint[262]; /* FAILED_OVER: the endpoint of the connection before */
    /* connected kinds: what the upgrade negotiated, and what it took */
    int qwp_version;         /* X-QWP-Version */
    int durable_ack;         /* 1: durable acknowledgements granted */
    int64_t max_batch_bytes; /* X-QWP-Max-Batch-Size, 0 when not advertised */
    uint64_t attempts;       /* attempts since the last connection ended (or since creation),
                                this one included */
    /* RECONNECTED / FAILED_OVER: how long no connection was open;
     * BACKPRESSURE_END: how long the producer waited */
    int64_t duration_ms;
    /* REPLAY_DONE: the frames replayed (from_fsn..to_fsn, given-up frames
     * skipped); BACKPRESSURE_END: the frames acknowledged while it waited */
    uint64_t frames;
    int64_t from_fsn, to_fsn;
    int64_t acked_fsn, published_fsn; /* the ring when it happened */
    /* DISCONNECTED: 0 when it ended in order (the server closed it with 1000
     * or 1001, qsf_pause, qsf_close), else the QSF_E_* of what ended it
     * (QSF_E_CONNECT: lost or found dead; QSF_E_SERVER: a frame was rejected;
     * or the latched terminal error). BACKPRESSURE_END: QSF_OK when room was
     * found, else what the append returned (QSF_E_FULL, a latched error). */
    int code;
    char cause[512]; /* DISCONNECTED: why; BACKPRESSURE_*: what the producer waits for */
} qsf_event;

/* Static name of a kind, e.g. "DISCONNECTED"; "UNKNOWN" for other values. */
QSF_API const char *qsf_event_name(int kind);

/* Events go into an inbox of connection_listener_inbox_capacity entries; on
 * overflow the oldest is dropped and counted. Registers a handler called on a
 * dispatcher thread (never the I/O thread, never the producer's) for each
 * event, in the order they happened; NULL unregisters. When it returns
 * QSF_OK, the handler it replaced is not running any more (unless it was
 * called from that handler). The handler cannot close its sender, nor any
 * other: qsf_close there returns QSF_E_STATE and changes nothing. It may
 * replace or remove itself; called from any other error or event handler
 * (another sender's, or its sender's error handler) qsf_set_event_handler
 * returns QSF_E_STATE, logs why and changes nothing, as qsf_set_error_handler
 * does. No handler runs after qsf_close returns. Returns QSF_OK, QSF_E_INVAL
 * (s is NULL), QSF_E_STATE or QSF_E_INTERNAL, as qsf_set_error_handler.
 * Any thread. */
typedef void (*qsf_event_handler)(void *user, const qsf_event *ev);
QSF_API int qsf_set_event_handler(qsf_sender *s, qsf_event_handler fn, void *user);

/* Takes the oldest queued event into *out (see qsf_event for struct_size).
 * Returns 1 if one was taken, 0 if the inbox is empty, QSF_E_INVAL when out
 * is NULL or its struct_size is too small to hold kind. Any thread. */
QSF_API int qsf_poll_event(qsf_sender *s, qsf_event *out);

/* Events handed to a handler, and events dropped (the inbox was full, or
 * still held undelivered events when the sender closed). Any thread; either
 * pointer may be NULL. */
QSF_API void qsf_event_counts(const qsf_sender *s, uint64_t *delivered, uint64_t *dropped);

#ifdef __cplusplus
}
#endif

#endif /* QSF_H */
