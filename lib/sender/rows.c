/* The public row API: thin wrappers over the codec's row buffer, each behind the
 * producer guard and the latched terminal error. */
#include "sender/internal.h"

#include "qwp/batch_put.h"
#include "qwp/utf8.h"

/* Each public row call is two functions: the fast path (the owner thread, no
 * terminal error: the batch call between plain stores), and the full path
 * out of line, reached by a tail call (refusals, the terminal error, a thread
 * that is not the guard's owner). Kept apart so that the fast path saves no
 * registers for the slow one: with one body, every call pushed and popped six
 * registers around the guard (about a tenth of a narrow row's CPU). */
#define QSF_ROW_API(name, params, args, call)                                                      \
    static __attribute__((noinline, cold)) int name##_slow params {                                \
        int rc_ = qsf_sender_enter(s, err);                                                        \
        if (rc_ != QSF_OK)                                                                         \
            return rc_;                                                                            \
        rc_ = (call);                                                                              \
        qsf_sender_leave(s);                                                                       \
        return rc_;                                                                                \
    }                                                                                              \
    QSF_API int name params {                                                                      \
        if (!qsf_sender_enter_fast(s))                                                             \
            return name##_slow args;                                                               \
        int rc_ = (call);                                                                          \
        qsf_sender_leave_fast();                                                                   \
        return rc_;                                                                                \
    }

/* The common fixed-width columns run the row buffer's fast path here, inlined
 * (qwp/batch_put.h), and call the typed function only when it declines. */
#define FIXED64(type, x, full)                                                                     \
    (qsf_batch_put_u64_fast(s->batch, col, col_len, (type), (x)) ? QSF_OK : (full))
#define FIXED32(type, x, full)                                                                     \
    (qsf_batch_put_u32_fast(s->batch, col, col_len, (type), (x)) ? QSF_OK : (full))
#define FIXED16(type, x, full)                                                                     \
    (qsf_batch_put_u16_fast(s->batch, col, col_len, (type), (x)) ? QSF_OK : (full))
#define FIXED8(type, x, full)                                                                      \
    (qsf_batch_put_u8_fast(s->batch, col, col_len, (type), (x)) ? QSF_OK : (full))

/* VARCHAR and SYMBOL values are checked here and then take the row buffer's
 * fast path inline; whatever fails a check or declines goes to the typed call,
 * which checks again and reports. */
static inline bool utf8_ok(const char *v, size_t n) {
    return qsf_utf8_error_offset(v, n) == n;
}

static inline int col_varchar(qsf_sender *s, const char *col, size_t col_len, const char *v,
                              size_t v_len, qsf_errinfo *err) {
    int rc = v && v_len <= QSF_BATCH_MAX_VAR_LEN && utf8_ok(v, v_len)
                 ? qsf_batch_put_var_checked(s->batch, col, col_len, QSF_QWP_VARCHAR, v, v_len)
                 : QSF_BATCH_SLOW;
    return rc != QSF_BATCH_SLOW ? rc
                                : qsf_qwp_batch_col_varchar(s->batch, col, col_len, v, v_len, err);
}

static inline int col_symbol(qsf_sender *s, const char *col, size_t col_len, const char *v,
                             size_t v_len, qsf_errinfo *err) {
    int rc = v && v_len <= QSF_BATCH_MAX_SYMBOL_LEN && utf8_ok(v, v_len)
                 ? qsf_batch_put_symbol_checked(s->batch, col, col_len, v, v_len, err)
                 : QSF_BATCH_SLOW;
    return rc != QSF_BATCH_SLOW ? rc : qsf_qwp_batch_symbol(s->batch, col, col_len, v, v_len, err);
}

/* A call that ended a row lets auto-flush run, still inside the guard; most
 * rows of a fast stream need not even ask. */
static inline int row_ended(qsf_sender *s, int rc, qsf_errinfo *err) {
    if (rc != QSF_OK || qsf_sender_row_quiet(s, s->batch->rows))
        return rc;
    return qsf_sender_after_row(s, err);
}

QSF_ROW_API(qsf_table, (qsf_sender * s, const char *name, size_t len, qsf_errinfo *err),
            (s, name, len, err), qsf_qwp_batch_table(s->batch, name, len, err))
QSF_ROW_API(qsf_symbol,
            (qsf_sender * s, const char *col, size_t col_len, const char *val, size_t val_len,
             qsf_errinfo *err),
            (s, col, col_len, val, val_len, err), col_symbol(s, col, col_len, val, val_len, err))
QSF_ROW_API(qsf_col_bool,
            (qsf_sender * s, const char *col, size_t col_len, bool v, qsf_errinfo *err),
            (s, col, col_len, v, err), qsf_qwp_batch_col_bool(s->batch, col, col_len, v, err))
QSF_ROW_API(qsf_col_i8,
            (qsf_sender * s, const char *col, size_t col_len, int8_t v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED8(QSF_QWP_BYTE, (uint8_t) v, qsf_qwp_batch_col_i8(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_i16,
            (qsf_sender * s, const char *col, size_t col_len, int16_t v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED16(QSF_QWP_SHORT, (uint16_t) v,
                    qsf_qwp_batch_col_i16(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_i32,
            (qsf_sender * s, const char *col, size_t col_len, int32_t v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED32(QSF_QWP_INT, (uint32_t) v,
                    qsf_qwp_batch_col_i32(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_i64,
            (qsf_sender * s, const char *col, size_t col_len, int64_t v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED64(QSF_QWP_LONG, (uint64_t) v,
                    qsf_qwp_batch_col_i64(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_f32,
            (qsf_sender * s, const char *col, size_t col_len, float v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED32(QSF_QWP_FLOAT, qsf_f32_bits(v),
                    qsf_qwp_batch_col_f32(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_f64,
            (qsf_sender * s, const char *col, size_t col_len, double v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED64(QSF_QWP_DOUBLE, qsf_f64_bits(v),
                    qsf_qwp_batch_col_f64(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_ts_micros,
            (qsf_sender * s, const char *col, size_t col_len, int64_t v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED64(QSF_QWP_TIMESTAMP, (uint64_t) v,
                    qsf_qwp_batch_col_ts_micros(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_ts_nanos,
            (qsf_sender * s, const char *col, size_t col_len, int64_t v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED64(QSF_QWP_TIMESTAMP_NANOS, (uint64_t) v,
                    qsf_qwp_batch_col_ts_nanos(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_date,
            (qsf_sender * s, const char *col, size_t col_len, int64_t millis, qsf_errinfo *err),
            (s, col, col_len, millis, err),
            FIXED64(QSF_QWP_DATE, (uint64_t) millis,
                    qsf_qwp_batch_col_date(s->batch, col, col_len, millis, err)))
QSF_ROW_API(qsf_col_uuid,
            (qsf_sender * s, const char *col, size_t col_len, uint64_t lo, uint64_t hi,
             qsf_errinfo *err),
            (s, col, col_len, lo, hi, err),
            qsf_qwp_batch_col_uuid(s->batch, col, col_len, lo, hi, err))
QSF_ROW_API(qsf_col_long256,
            (qsf_sender * s, const char *col, size_t col_len, const uint64_t words[4],
             qsf_errinfo *err),
            (s, col, col_len, words, err),
            qsf_qwp_batch_col_long256(s->batch, col, col_len, words, err))
QSF_ROW_API(qsf_col_geohash,
            (qsf_sender * s, const char *col, size_t col_len, uint64_t bits, int precision_bits,
             qsf_errinfo *err),
            (s, col, col_len, bits, precision_bits, err),
            qsf_qwp_batch_col_geohash(s->batch, col, col_len, bits, precision_bits, err))
QSF_ROW_API(qsf_col_varchar,
            (qsf_sender * s, const char *col, size_t col_len, const char *v, size_t v_len,
             qsf_errinfo *err),
            (s, col, col_len, v, v_len, err), col_varchar(s, col, col_len, v, v_len, err))
QSF_ROW_API(qsf_col_binary,
            (qsf_sender * s, const char *col, size_t col_len, const void *v, size_t v_len,
             qsf_errinfo *err),
            (s, col, col_len, v, v_len, err),
            qsf_qwp_batch_col_binary(s->batch, col, col_len, v, v_len, err))
QSF_ROW_API(qsf_col_char,
            (qsf_sender * s, const char *col, size_t col_len, uint16_t v, qsf_errinfo *err),
            (s, col, col_len, v, err),
            FIXED16(QSF_QWP_CHAR, v, qsf_qwp_batch_col_char(s->batch, col, col_len, v, err)))
QSF_ROW_API(qsf_col_ipv4,
            (qsf_sender * s, const char *col, size_t col_len, uint32_t v, qsf_errinfo *err),
            (s, col, col_len, v, err), qsf_qwp_batch_col_ipv4(s->batch, col, col_len, v, err))
QSF_ROW_API(qsf_col_decimal64,
            (qsf_sender * s, const char *col, size_t col_len, int64_t unscaled, int scale,
             qsf_errinfo *err),
            (s, col, col_len, unscaled, scale, err),
            qsf_qwp_batch_col_decimal64(s->batch, col, col_len, unscaled, scale, err))
QSF_ROW_API(qsf_col_decimal128,
            (qsf_sender * s, const char *col, size_t col_len, const uint8_t unscaled_le[16],
             int scale, qsf_errinfo *err),
            (s, col, col_len, unscaled_le, scale, err),
            qsf_qwp_batch_col_decimal128(s->batch, col, col_len, unscaled_le, scale, err))
QSF_ROW_API(qsf_col_decimal256,
            (qsf_sender * s, const char *col, size_t col_len, const uint8_t unscaled_le[32],
             int scale, qsf_errinfo *err),
            (s, col, col_len, unscaled_le, scale, err),
            qsf_qwp_batch_col_decimal256(s->batch, col, col_len, unscaled_le, scale, err))
QSF_ROW_API(qsf_col_f64_array,
            (qsf_sender * s, const char *col, size_t col_len, int rank, const int32_t *shape,
             const double *values, qsf_errinfo *err),
            (s, col, col_len, rank, shape, values, err),
            qsf_qwp_batch_col_f64_array(s->batch, col, col_len, rank, shape, values, err))
QSF_ROW_API(qsf_col_i64_array,
            (qsf_sender * s, const char *col, size_t col_len, int rank, const int32_t *shape,
             const int64_t *values, qsf_errinfo *err),
            (s, col, col_len, rank, shape, values, err),
            qsf_qwp_batch_col_i64_array(s->batch, col, col_len, rank, shape, values, err))
QSF_ROW_API(qsf_at_micros, (qsf_sender * s, int64_t ts, qsf_errinfo *err), (s, ts, err),
            row_ended(s, qsf_qwp_batch_at_micros(s->batch, ts, err), err))
QSF_ROW_API(qsf_at_nanos, (qsf_sender * s, int64_t ts, qsf_errinfo *err), (s, ts, err),
            row_ended(s, qsf_qwp_batch_at_nanos(s->batch, ts, err), err))
QSF_ROW_API(qsf_at_now, (qsf_sender * s, qsf_errinfo *err), (s, err),
            row_ended(s, qsf_qwp_batch_at_now(s->batch, err), err))

QSF_API void qsf_row_cancel(qsf_sender *s) {
    if (s && qsf_guard_enter(&s->guard)) {
        qsf_qwp_batch_row_cancel(s->batch);
        qsf_guard_leave(&s->guard);
    }
}

QSF_API size_t qsf_buffered_rows(const qsf_sender *s) {
    return qsf_sender_own(s) ? qsf_qwp_batch_rows(s->batch) : 0;
}

QSF_API size_t qsf_buffer_clear(qsf_sender *s) {
    if (!s || !qsf_guard_enter(&s->guard))
        return 0;
    size_t n = (size_t) qsf_sender_txn_abandon(s); /* an open transaction goes with them */
    qsf_guard_leave(&s->guard);
    return n;
}
