/* Strict parser of OK / error / durable-ack responses (docs/PROTOCOL.md §6). */
#include "qwp/response.h"

#include "bytes.h"
#include "qwp/utf8.h"

#include <stdio.h>
#include <string.h>

#define TABLE_ENTRY_MIN 11u /* u16 nameLen + 1-byte name + i64 seqTxn */

static int fail(char *why, size_t cap, const char *fmt, size_t a, size_t b) {
    if (why && cap)
        snprintf(why, cap, fmt, a, b);
    return -1;
}

/* Validates `count` table entries starting at p; they must end exactly at end.
 * The count is held against the bytes there before any entry is read, so a
 * count that cannot fit costs nothing; every entry is then read once. */
static int check_tables(const uint8_t *p, const uint8_t *end, uint16_t count, char *why,
                        size_t cap) {
    if (count > (size_t) (end - p) / TABLE_ENTRY_MIN)
        return fail(why, cap, "table count %zu cannot fit in %zu bytes", count, (size_t) (end - p));
    for (size_t i = 0; i < count; i++) {
        if ((size_t) (end - p) < TABLE_ENTRY_MIN)
            return fail(why, cap, "table entry %zu truncated (%zu bytes left)", i,
                        (size_t) (end - p));
        uint16_t nlen = qsf_get_u16(p);
        if (nlen == 0)
            return fail(why, cap, "table entry %zu has an empty name%.0zu", i, 0);
        if ((size_t) (end - p) < 2u + nlen + 8u)
            return fail(why, cap, "table entry %zu truncated (name length %zu)", i, nlen);
        if (!qsf_utf8_valid((const char *) p + 2, nlen))
            return fail(why, cap, "table entry %zu name is not valid UTF-8%.0zu", i, 0);
        p += 2u + nlen + 8u;
    }
    if (p != end)
        return fail(why, cap, "%zu trailing bytes after %zu table entries", (size_t) (end - p),
                    count);
    return 0;
}

static int parse_ok(const uint8_t *b, size_t len, qsf_response *out, char *why, size_t cap) {
    if (len < 11)
        return fail(why, cap, "OK response of %zu bytes, at least %zu required", len, 11);
    out->kind = QSF_RESP_OK;
    out->sequence = qsf_get_i64(b + 1);
    out->table_count = qsf_get_u16(b + 9);
    out->tables = b + 11;
    out->tables_len = len - 11;
    return check_tables(b + 11, b + len, out->table_count, why, cap);
}

static int parse_durable(const uint8_t *b, size_t len, qsf_response *out, char *why, size_t cap) {
    if (len < 3)
        return fail(why, cap, "durable ack of %zu bytes, at least %zu required", len, 3);
    out->kind = QSF_RESP_DURABLE;
    out->table_count = qsf_get_u16(b + 1);
    out->tables = b + 3;
    out->tables_len = len - 3;
    return check_tables(b + 3, b + len, out->table_count, why, cap);
}

static int parse_error(const uint8_t *b, size_t len, qsf_response *out, char *why, size_t cap) {
    if (len < 11)
        return fail(why, cap, "error response of %zu bytes, at least %zu required", len, 11);
    out->kind = QSF_RESP_ERROR;
    out->sequence = qsf_get_i64(b + 1);
    out->msg_len = qsf_get_u16(b + 9);
    out->msg = (const char *) b + 11;
    if (out->msg_len > QSF_RESP_MSG_MAX)
        return fail(why, cap, "error message length %zu exceeds %zu", out->msg_len,
                    QSF_RESP_MSG_MAX);
    if (len != 11u + out->msg_len)
        return fail(why, cap, "error response of %zu bytes, message length says %zu", len,
                    11u + out->msg_len);
    return 0;
}

int qsf_response_parse(const uint8_t *buf, size_t len, qsf_response *out, char *why, size_t cap) {
    memset(out, 0, sizeof *out);
    out->sequence = -1;
    if (len == 0)
        return fail(why, cap, "empty response%.0zu%.0zu", 0, 0);
    out->status = buf[0];
    switch (buf[0]) {
    case QSF_RESP_STATUS_OK:
        return parse_ok(buf, len, out, why, cap);
    case QSF_RESP_STATUS_DURABLE:
        return parse_durable(buf, len, out, why, cap);
    case QSF_RESP_STATUS_SERVER_INFO:
    case QSF_RESP_STATUS_LOCAL_DUR:
        out->kind = QSF_RESP_IGNORED;
        return 0;
    default:
        return parse_error(buf, len, out, why, cap);
    }
}

bool qsf_response_table(const qsf_response *r, size_t *pos, qsf_resp_table *t) {
    if (*pos >= r->tables_len)
        return false;
    const uint8_t *p = r->tables + *pos;
    t->name_len = qsf_get_u16(p);
    t->name = (const char *) p + 2;
    t->seq_txn = qsf_get_i64(p + 2 + t->name_len);
    *pos += 2u + t->name_len + 8u;
    return true;
}
