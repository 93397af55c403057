/* The seam between the sink and the QWP message decoder.
 *
 * conn.c hands each complete binary frame to msg_decode() and gets back either
 * a status byte (docs/PROTOCOL.md §6.5) with a message, or the decoded tables as
 * msg_table values whose cells point into the frame or the decoder's memory
 * (valid until the next msg_decode on the same context). The symbol dictionary
 * of a connection lives in its msg_ctx. */
#ifndef QSINK_MSG_H
#define QSINK_MSG_H

#include <stddef.h>
#include <stdint.h>

/* QWP column type codes (docs/PROTOCOL.md §5.2). */
enum {
    QT_BOOLEAN = 0x01,
    QT_BYTE = 0x02,
    QT_SHORT = 0x03,
    QT_INT = 0x04,
    QT_LONG = 0x05,
    QT_FLOAT = 0x06,
    QT_DOUBLE = 0x07,
    QT_SYMBOL = 0x09,
    QT_TIMESTAMP = 0x0A,
    QT_DATE = 0x0B,
    QT_UUID = 0x0C,
    QT_LONG256 = 0x0D,
    QT_GEOHASH = 0x0E,
    QT_VARCHAR = 0x0F,
    QT_TIMESTAMP_NANOS = 0x10,
    QT_DOUBLE_ARRAY = 0x11,
    QT_LONG_ARRAY = 0x12,
    QT_DECIMAL64 = 0x13,
    QT_DECIMAL128 = 0x14,
    QT_DECIMAL256 = 0x15,
    QT_CHAR = 0x16,
    QT_BINARY = 0x17,
    QT_IPV4 = 0x18,
};

/* Message flags (docs/PROTOCOL.md §3.2) and response statuses (docs/PROTOCOL.md §6.5). */
enum { QF_DEFER_COMMIT = 0x01, QF_DURABLE_POLL = 0x02, QF_GORILLA = 0x04, QF_DELTA_DICT = 0x08 };
enum {
    QS_OK = 0x00,
    QS_DURABLE_ACK = 0x02,
    QS_SCHEMA_MISMATCH = 0x03,
    QS_PARSE_ERROR = 0x05,
    QS_INTERNAL_ERROR = 0x06,
    QS_WRITE_ERROR = 0x09,
    QS_DICTIONARY_GAP = 0x0D,
};

#define QWP_HEADER_LEN  12
#define QWP_MAX_PAYLOAD (16u * 1024 * 1024)

/* How a value of each type is held: as an integer, a double, or bytes. */
enum { MSG_I64, MSG_F64, MSG_BYTES };

static inline int msg_value_kind(uint8_t type) {
    switch (type) {
    case QT_FLOAT:
    case QT_DOUBLE:
        return MSG_F64;
    case QT_SYMBOL:
    case QT_VARCHAR:
    case QT_BINARY:
    case QT_UUID:
    case QT_LONG256:
    case QT_DECIMAL128:
    case QT_DECIMAL256:
    case QT_DOUBLE_ARRAY:
    case QT_LONG_ARRAY:
        return MSG_BYTES;
    default:
        return MSG_I64;
    }
}

/* One value (msg_value_kind says which field). Integer-like types use i (BOOLEAN 0/1, CHAR the code
 * unit, IPv4 the u32, GEOHASH the bits, DECIMAL64 the unscaled value), FLOAT/DOUBLE use d, the rest
 * p/n: SYMBOL/VARCHAR/BINARY the string or bytes, UUID/LONG256/ DECIMAL128/256 the raw
 * little-endian bytes, arrays n_dims, dims and values. */
struct msg_cell {
    uint8_t null;
    int64_t i;
    double d;
    const uint8_t *p;
    uint32_t n;
};

struct msg_col {
    const char *name; /* not NUL-terminated; empty = designated timestamp */
    size_t name_len;
    uint8_t type;
    struct msg_cell *cells; /* rows entries, NULL when values are not wanted */
};

struct msg_table {
    const char *name;
    size_t name_len;
    uint32_t rows, ncols;
    struct msg_col *cols;
};

struct msg_decoded {
    uint8_t flags;
    uint16_t ntables;
    struct msg_table *tables;
};

struct msg_ctx;

/* want_values = 0: tables and columns only, msg_col.cells is NULL (the sink
 * counts rows without keeping values and skips the per-cell work) except for
 * the column named only_column (may be NULL). */
struct msg_ctx *msg_ctx_new(int want_values, const char *only_column);
void msg_ctx_free(struct msg_ctx *ctx);

/* qsink_opts.ack_only: msg_decode reads a message of at most one table only
 * as far as its table's name and row count (tables without columns). */
void msg_ctx_set_ack_only(struct msg_ctx *ctx, int on);

/* Decodes one message against the connection's dictionary. Returns QS_OK with
 * *out filled, or an error status with a message in err (NUL-terminated). A
 * failed message leaves the dictionary as it was. */
int msg_decode(struct msg_ctx *ctx, const uint8_t *msg, size_t len, uint8_t version,
               struct msg_decoded *out, char *err, size_t errcap);

#endif
