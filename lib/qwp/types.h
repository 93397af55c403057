/* QWP wire constants: type codes, header flags, limits and response statuses
 * (reference: docs/PROTOCOL.md §3, §5.2, §6.5, §7). Shared by the encoder, the
 * decoder, the row buffer and the test server. */
#ifndef QSF_QWP_TYPES_H
#define QSF_QWP_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Message header (12 bytes):
 *
 *   0        4        5       6             8                 12
 *   +--------+--------+-------+-------------+-----------------+
 *   | "QWP1" | ver 01 | flags | table_count | payload_length  |
 *   +--------+--------+-------+-------------+-----------------+
 *                               u16 LE        u32 LE (bytes after the header)
 */
#define QSF_QWP_MAGIC      0x31505751u /* "QWP1" read as u32 LE */
#define QSF_QWP_VERSION    1
#define QSF_QWP_HEADER_LEN 12

/* Header flags (docs/PROTOCOL.md §3.2). */
#define QSF_QWP_FLAG_DEFER_COMMIT      0x01
#define QSF_QWP_FLAG_DURABLE_ACK_POLL  0x02 /* never sent by qsf */
#define QSF_QWP_FLAG_GORILLA           0x04
#define QSF_QWP_FLAG_DELTA_SYMBOL_DICT 0x08
#define QSF_QWP_FLAG_ZSTD              0x10 /* egress only */
/* Bits a client may send on ingress; everything else is reserved. */
#define QSF_QWP_FLAGS_INGRESS                                                                      \
    (QSF_QWP_FLAG_DEFER_COMMIT | QSF_QWP_FLAG_GORILLA | QSF_QWP_FLAG_DELTA_SYMBOL_DICT)

/* Column type codes (docs/PROTOCOL.md §5.2). 0x08 is unassigned (formerly STRING). */
enum qsf_qwp_type {
    QSF_QWP_BOOLEAN = 0x01,
    QSF_QWP_BYTE = 0x02,
    QSF_QWP_SHORT = 0x03,
    QSF_QWP_INT = 0x04,
    QSF_QWP_LONG = 0x05,
    QSF_QWP_FLOAT = 0x06,
    QSF_QWP_DOUBLE = 0x07,
    QSF_QWP_SYMBOL = 0x09,
    QSF_QWP_TIMESTAMP = 0x0A,
    QSF_QWP_DATE = 0x0B,
    QSF_QWP_UUID = 0x0C,
    QSF_QWP_LONG256 = 0x0D,
    QSF_QWP_GEOHASH = 0x0E,
    QSF_QWP_VARCHAR = 0x0F,
    QSF_QWP_TIMESTAMP_NANOS = 0x10,
    QSF_QWP_DOUBLE_ARRAY = 0x11,
    QSF_QWP_LONG_ARRAY = 0x12,
    QSF_QWP_DECIMAL64 = 0x13,
    QSF_QWP_DECIMAL128 = 0x14,
    QSF_QWP_DECIMAL256 = 0x15,
    QSF_QWP_CHAR = 0x16,
    QSF_QWP_BINARY = 0x17,
    QSF_QWP_IPV4 = 0x18,
};
#define QSF_QWP_TYPE_MAX 0x18

/* Timestamp column encoding byte (present only with FLAG_GORILLA, docs/PROTOCOL.md §5.8). */
#define QSF_QWP_TS_RAW     0x00
#define QSF_QWP_TS_GORILLA 0x01

/* Limits (docs/PROTOCOL.md §7). */
#define QSF_QWP_MAX_NAME_LEN       127       /* table and column names, UTF-8 bytes */
#define QSF_QWP_MAX_COLUMNS        2048      /* columns per table block */
#define QSF_QWP_MAX_ROWS_PER_TABLE 1000000u  /* rows per table block */
#define QSF_QWP_MAX_SYMBOLS        2000000u  /* dictionary entries per connection / column */
#define QSF_QWP_MAX_PAYLOAD        16777216u /* payload_length cap (16 MiB) */
#define QSF_QWP_MAX_ARRAY_RANK     32
#define QSF_QWP_MAX_GEOHASH_BITS   60
#define QSF_QWP_MAX_SCALE64        18
#define QSF_QWP_MAX_SCALE128       38
#define QSF_QWP_MAX_SCALE256       76
#define QSF_QWP_DEFAULT_MAX_BATCH  2097138u /* the server's default X-QWP-Max-Batch-Size */
#define QSF_QWP_CATCHUP_CHUNK      65536u   /* catch-up frame size when no cap is advertised */

/* Response status bytes the codec produces or tests against (docs/PROTOCOL.md §6.5). */
#define QSF_QWP_STATUS_OK             0x00
#define QSF_QWP_STATUS_PARSE_ERROR    0x05
#define QSF_QWP_STATUS_DICTIONARY_GAP 0x0D

/* "BOOLEAN", "TIMESTAMP_NANOS", ...; "UNKNOWN(0xNN)" style names are not built:
 * an unassigned code returns "?". */
const char *qsf_qwp_type_name(int type);

/* True for the 23 assigned codes 0x01..0x18 except 0x08. */
bool qsf_qwp_type_valid(int type);

/* Bytes per value on the wire for fixed-width types (BYTE 1 ... LONG256 32,
 * DECIMAL* 8/16/32, TIMESTAMP* and DATE 8); 0 for BOOLEAN (bit-packed) and the
 * variable-width types (SYMBOL, GEOHASH, VARCHAR, BINARY, arrays). */
size_t qsf_qwp_type_width(int type);

/* Maximum decimal scale of DECIMAL64/128/256 (18/38/76); -1 for other types. */
int qsf_qwp_decimal_max_scale(int type);

#endif
