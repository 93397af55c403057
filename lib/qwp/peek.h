/* Reading the start of a stored QWP message without decoding it
 * (docs/PROTOCOL.md §3, §4.1, §5.1): the 12-byte header, the delta symbol section
 * and the first table block's name and row count. Recovery reads stored frames
 * with it; it is the one reader of those bytes outside the full decoder.
 *
 *   0      4     5      6             8                 12
 *   +------+-----+------+-------------+-----------------+-------------------
 *   | QWP1 | ver | flags| table_count | payload_length  | payload ...
 *   +------+-----+------+-------------+-----------------+-------------------
 *   payload (flags & 0x08): start varint, count varint,
 *                           count x (len varint, len UTF-8 bytes),
 *                           then table_count table blocks:
 *                           name (len varint, bytes), row_count varint, ...
 *
 * Every function is pure, allocates nothing and never reads outside
 * [buf, buf + len). `len` may be shorter than the message (a prefix read
 * through a window): a function that runs out of bytes says QSF_QWP_PEEK_SHORT
 * and how far it needs to see, so the caller can read more and call it again.
 * Parsing never goes past the message end (12 + payload_length) either: what
 * lies beyond it makes a field QSF_QWP_PEEK_BAD. */
#ifndef QSF_QWP_PEEK_H
#define QSF_QWP_PEEK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum qsf_qwp_peek_result {
    QSF_QWP_PEEK_OK = 0,
    QSF_QWP_PEEK_SHORT = 1, /* buf ends first: more bytes are needed */
    QSF_QWP_PEEK_BAD = 2,   /* malformed (or not a QWP message at all) */
};

typedef struct qsf_qwp_hdr {
    uint8_t version;
    uint8_t flags;
    uint16_t table_count;
    uint32_t payload_length;
} qsf_qwp_hdr;

/* The 12-byte header: OK (magic QWP1, any version), SHORT (len < 12) or BAD
 * (no magic). *h is filled on OK. */
int qsf_qwp_peek_header(const uint8_t *buf, size_t len, qsf_qwp_hdr *h);

/* Whether a header can belong to a stored message of `msg_len` bytes: version 1
 * and payload_length == msg_len - 12 (the header agrees with its envelope). */
bool qsf_qwp_peek_consistent(const qsf_qwp_hdr *h, uint64_t msg_len);

/* A placeholder: a deferred (FLAG_DEFER_COMMIT) message without tables. qsf
 * never stores such a message otherwise (catch-up frames are sent, not
 * stored), so in a slot it marks a frame recovery gave up on (sf FORMAT.md). */
bool qsf_qwp_peek_is_placeholder(const qsf_qwp_hdr *h);

/* The delta section's start, count and where its entries begin (offset in
 * the message). OK; SHORT (*need = bytes of the message needed); BAD when the
 * flag 0x08 is clear, a varint is malformed, or count cannot fit. */
typedef struct qsf_qwp_delta_info {
    uint64_t start;
    uint64_t count;
    size_t entries; /* offset of the first entry */
} qsf_qwp_delta_info;
int qsf_qwp_peek_delta(const uint8_t *buf, size_t len, const qsf_qwp_hdr *h, qsf_qwp_delta_info *d,
                       size_t *need);

/* One entry at message offset *pos, with buf holding the message bytes from
 * offset `at` (0 for a buffer that starts with the message; a caller reading
 * through a window passes the window's offset). OK (*str = message offset of
 * the entry's bytes, *str_len, *pos moved past the entry); SHORT when the
 * varint or the bytes are not all in buf (*need = bytes of buf needed, counted
 * from buf[0]; str and str_len still set when the varint was complete, so a
 * caller can read a long string in pieces); BAD when the entry runs past the
 * message end or *pos lies before buf. The caller counts entries (d.count) and
 * validates UTF-8 itself. */
int qsf_qwp_peek_delta_entry(const uint8_t *buf, size_t len, uint64_t at, const qsf_qwp_hdr *h,
                             uint64_t *pos, uint64_t *str, uint64_t *str_len, size_t *need);

/* Offset of the first table block: 12 without a delta section, else after
 * the last entry. OK, SHORT (*need) or BAD. */
int qsf_qwp_peek_tables(const uint8_t *buf, size_t len, const qsf_qwp_hdr *h, size_t *off,
                        size_t *need);

/* The table block at message offset `off` (buf from offset `at`, as above):
 * name (message offset and length) and row count. OK, SHORT (*need) or BAD
 * (empty or over-long name, bad varint). */
typedef struct qsf_qwp_table_info {
    uint64_t name;
    uint32_t name_len;
    uint64_t rows;
} qsf_qwp_table_info;
int qsf_qwp_peek_table_at(const uint8_t *buf, size_t len, uint64_t at, const qsf_qwp_hdr *h,
                          uint64_t off, qsf_qwp_table_info *t, size_t *need);

/* The first table of a whole message in buf: header, delta section skipped,
 * first block. OK, BAD (malformed, no table, or buf shorter than the message:
 * a whole message is expected here). */
int qsf_qwp_peek_first_table(const uint8_t *buf, size_t len, qsf_qwp_table_info *t);

#endif
