/* Dictionary catch-up frames and their sizing (docs/PROTOCOL.md §4.4):
 *
 *   header (flags 0x09, table_count 0) | varint start | varint count | entries
 *
 * Frames are packed greedily in id order; an entry is never split. */
#include "qwp/enc_int.h"

#include "bytes.h"
#include "err.h"

#include <string.h>

#define CATCHUP_FLAGS (QSF_QWP_FLAG_DEFER_COMMIT | QSF_QWP_FLAG_DELTA_SYMBOL_DICT)

static size_t entry_bytes(size_t len) {
    return qsf_varint_len(len) + len;
}

/* Bytes of a frame holding only entry `id` of `len` bytes. */
static size_t single_frame(uint32_t id, size_t len) {
    return QSF_QWP_HEADER_LEN + qsf_varint_len(id) + 1 + entry_bytes(len);
}

static int get_entry(qsf_qwp_entry_fn get, void *gu, uint32_t id, const char **s, size_t *len,
                     qsf_errinfo *err) {
    int rc = get(gu, id, s, len);
    if (rc != QSF_OK)
        return qsf_err_set(err, rc, 0, 0, "catch-up: dictionary entry %u is not available", id);
    return QSF_OK;
}

static int check_entries(uint32_t count, qsf_qwp_entry_fn get, void *gu, size_t cap,
                         qsf_errinfo *err) {
    for (uint32_t id = 0; id < count; id++) {
        const char *s;
        size_t len;
        int rc = get_entry(get, gu, id, &s, &len, err);
        if (rc != QSF_OK)
            return rc;
        if (single_frame(id, len) > cap)
            return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                               "catch-up cap gap: symbol id %u needs %zu bytes, frame cap %zu", id,
                               single_frame(id, len), cap);
    }
    return QSF_OK;
}

/* Builds the frame starting at `start` into e->frame; *next receives the first id
 * it does not hold. */
static int build(qsf_qwp_encoder *e, uint32_t start, uint32_t count, qsf_qwp_entry_fn get, void *gu,
                 size_t cap, uint32_t *next, qsf_errinfo *err) {
    size_t body = 0;
    uint32_t id = start;
    uint8_t *p = e->frame.p + QSF_QWP_HEADER_LEN + QSF_VARINT_MAX * 2;
    for (; id < count; id++) {
        const char *s;
        size_t len;
        int rc = get_entry(get, gu, id, &s, &len, err);
        if (rc != QSF_OK)
            return rc;
        size_t head = QSF_QWP_HEADER_LEN + qsf_varint_len(start) + qsf_varint_len(id - start + 1);
        if (head + body + entry_bytes(len) > cap)
            break;
        p += qsf_put_varint(p, len);
        memcpy(p, s, len);
        p += len;
        body += entry_bytes(len);
    }
    /* move the entries right behind the exact-size delta header */
    uint8_t *q = e->frame.p + QSF_QWP_HEADER_LEN;
    q += qsf_put_varint(q, start);
    q += qsf_put_varint(q, id - start);
    memmove(q, e->frame.p + QSF_QWP_HEADER_LEN + QSF_VARINT_MAX * 2, body);
    e->frame.len = (size_t) (q - e->frame.p) + body;
    qsf_enc_header(e->frame.p, CATCHUP_FLAGS, 0, (uint32_t) (e->frame.len - QSF_QWP_HEADER_LEN));
    *next = id;
    return QSF_OK;
}

int qsf_qwp_catchup(qsf_qwp_encoder *e, uint32_t count, qsf_qwp_entry_fn get, void *get_user,
                    size_t max_frame, qsf_qwp_emit_fn emit, void *user, size_t *frames,
                    qsf_errinfo *err) {
    size_t cap = max_frame ? max_frame : QSF_QWP_CATCHUP_CHUNK, n = 0;
    if (cap > QSF_QWP_HEADER_LEN + QSF_QWP_MAX_PAYLOAD)
        cap = QSF_QWP_HEADER_LEN + QSF_QWP_MAX_PAYLOAD;
    if (frames)
        *frames = 0;
    int rc = check_entries(count, get, get_user, cap, err);
    e->frame.len = 0;
    if (rc == QSF_OK && qsf_buf_reserve(&e->frame, cap + QSF_VARINT_MAX * 2) != 0)
        rc = qsf_err_set(err, QSF_E_NOMEM, 0, 0, "catch-up: out of memory");
    for (uint32_t id = 0; rc == QSF_OK && id < count;) {
        uint32_t next;
        rc = build(e, id, count, get, get_user, cap, &next, err);
        if (rc == QSF_OK)
            rc = emit(user, e->frame.p, e->frame.len, next == count, err);
        if (rc == QSF_OK && frames)
            *frames = ++n;
        id = next;
    }
    return rc;
}
