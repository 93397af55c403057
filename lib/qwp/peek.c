/* Reading the start of a stored QWP message (see peek.h for the layout). */
#include "qwp/peek.h"

#include "bytes.h"
#include "qwp/types.h"

/* End of the message (12 + payload_length). */
static uint64_t msg_end(const qsf_qwp_hdr *h) {
    return QSF_QWP_HEADER_LEN + (uint64_t) h->payload_length;
}

/* End (message offset) of the message bytes present in buf, which holds the
 * message from offset `at`. */
static uint64_t avail(size_t len, uint64_t at, const qsf_qwp_hdr *h) {
    uint64_t end = msg_end(h);
    return at + len < end ? at + len : end;
}

/* A varint at message offset pos: OK, SHORT (the bytes present all continue
 * and the message goes on past buf) or BAD (overlong, cut by the message end,
 * or pos before buf). */
static int varint_at(const uint8_t *buf, size_t len, uint64_t at, const qsf_qwp_hdr *h,
                     uint64_t pos, uint64_t *v, size_t *n, size_t *need) {
    uint64_t a = avail(len, at, h);
    if (pos < at)
        return QSF_QWP_PEEK_BAD;
    if (pos < a) {
        *n = qsf_get_varint(buf + (pos - at), buf + (a - at), v);
        if (*n > 0)
            return QSF_QWP_PEEK_OK;
        if (a - pos >= QSF_VARINT_MAX)
            return QSF_QWP_PEEK_BAD; /* ten bytes and no end: overlong */
    }
    uint64_t end = msg_end(h);
    if (a >= end)
        return QSF_QWP_PEEK_BAD;
    uint64_t want = pos + QSF_VARINT_MAX;
    *need = (size_t) ((want < end ? want : end) - at);
    return QSF_QWP_PEEK_SHORT;
}

int qsf_qwp_peek_header(const uint8_t *buf, size_t len, qsf_qwp_hdr *h) {
    if (len < QSF_QWP_HEADER_LEN)
        return QSF_QWP_PEEK_SHORT;
    if (qsf_get_u32(buf) != QSF_QWP_MAGIC)
        return QSF_QWP_PEEK_BAD;
    h->version = buf[4];
    h->flags = buf[5];
    h->table_count = qsf_get_u16(buf + 6);
    h->payload_length = qsf_get_u32(buf + 8);
    return QSF_QWP_PEEK_OK;
}

bool qsf_qwp_peek_consistent(const qsf_qwp_hdr *h, uint64_t msg_len) {
    return h->version == QSF_QWP_VERSION && msg_len >= QSF_QWP_HEADER_LEN &&
           h->payload_length == msg_len - QSF_QWP_HEADER_LEN;
}

bool qsf_qwp_peek_is_placeholder(const qsf_qwp_hdr *h) {
    return (h->flags & QSF_QWP_FLAG_DEFER_COMMIT) && h->table_count == 0;
}

int qsf_qwp_peek_delta(const uint8_t *buf, size_t len, const qsf_qwp_hdr *h, qsf_qwp_delta_info *d,
                       size_t *need) {
    if (!(h->flags & QSF_QWP_FLAG_DELTA_SYMBOL_DICT))
        return QSF_QWP_PEEK_BAD;
    size_t pos = QSF_QWP_HEADER_LEN, n;
    int rc = varint_at(buf, len, 0, h, pos, &d->start, &n, need);
    if (rc != QSF_QWP_PEEK_OK)
        return rc;
    pos += n;
    rc = varint_at(buf, len, 0, h, pos, &d->count, &n, need);
    if (rc != QSF_QWP_PEEK_OK)
        return rc;
    pos += n;
    /* every entry takes at least its one-byte length */
    if (d->count > msg_end(h) - pos)
        return QSF_QWP_PEEK_BAD;
    d->entries = pos;
    return QSF_QWP_PEEK_OK;
}

int qsf_qwp_peek_delta_entry(const uint8_t *buf, size_t len, uint64_t at, const qsf_qwp_hdr *h,
                             uint64_t *pos, uint64_t *str, uint64_t *str_len, size_t *need) {
    size_t n;
    int rc = varint_at(buf, len, at, h, *pos, str_len, &n, need);
    if (rc != QSF_QWP_PEEK_OK)
        return rc;
    *str = *pos + n;
    if (*str_len > msg_end(h) - *str)
        return QSF_QWP_PEEK_BAD;
    uint64_t end = *str + *str_len;
    if (end > at + len) {
        *need = (size_t) (end - at);
        return QSF_QWP_PEEK_SHORT;
    }
    *pos = end;
    return QSF_QWP_PEEK_OK;
}

int qsf_qwp_peek_tables(const uint8_t *buf, size_t len, const qsf_qwp_hdr *h, size_t *off,
                        size_t *need) {
    if (!(h->flags & QSF_QWP_FLAG_DELTA_SYMBOL_DICT)) {
        *off = QSF_QWP_HEADER_LEN;
        return QSF_QWP_PEEK_OK;
    }
    qsf_qwp_delta_info d;
    int rc = qsf_qwp_peek_delta(buf, len, h, &d, need);
    uint64_t pos = d.entries, str, slen;
    for (uint64_t i = 0; rc == QSF_QWP_PEEK_OK && i < d.count; i++)
        rc = qsf_qwp_peek_delta_entry(buf, len, 0, h, &pos, &str, &slen, need);
    if (rc == QSF_QWP_PEEK_OK)
        *off = (size_t) pos;
    return rc;
}

int qsf_qwp_peek_table_at(const uint8_t *buf, size_t len, uint64_t at, const qsf_qwp_hdr *h,
                          uint64_t off, qsf_qwp_table_info *t, size_t *need) {
    size_t n;
    uint64_t name_len;
    int rc = varint_at(buf, len, at, h, off, &name_len, &n, need);
    if (rc != QSF_QWP_PEEK_OK)
        return rc;
    if (name_len == 0 || name_len > QSF_QWP_MAX_NAME_LEN || name_len > msg_end(h) - off - n)
        return QSF_QWP_PEEK_BAD;
    uint64_t name = off + n, pos = name + name_len;
    rc = varint_at(buf, len, at, h, pos, &t->rows, &n, need);
    if (rc != QSF_QWP_PEEK_OK)
        return rc;
    t->name = name;
    t->name_len = (uint32_t) name_len;
    return QSF_QWP_PEEK_OK;
}

int qsf_qwp_peek_first_table(const uint8_t *buf, size_t len, qsf_qwp_table_info *t) {
    qsf_qwp_hdr h;
    size_t off, need;
    if (qsf_qwp_peek_header(buf, len, &h) != QSF_QWP_PEEK_OK || h.table_count == 0 ||
        len < msg_end(&h))
        return QSF_QWP_PEEK_BAD;
    int rc = qsf_qwp_peek_tables(buf, len, &h, &off, &need);
    if (rc == QSF_QWP_PEEK_OK)
        rc = qsf_qwp_peek_table_at(buf, len, 0, &h, off, t, &need);
    return rc == QSF_QWP_PEEK_OK ? rc : QSF_QWP_PEEK_BAD;
}
