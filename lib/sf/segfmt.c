/* Segment header, frame envelope and segment names (see segfmt.h for the
 * layout). */
#include "sf/segfmt.h"

#include "bytes.h"
#include "crc32c.h"

#include <stdio.h>
#include <string.h>

void qsf_sfa_header_encode(uint8_t out[QSF_SFA_HEADER_SIZE], uint8_t flags, int64_t base_seq,
                           int64_t created_micros) {
    qsf_put_u32(out + QSF_SFA_AT_MAGIC, QSF_SFA_MAGIC);
    out[QSF_SFA_AT_VERSION] = QSF_SFA_VERSION;
    out[QSF_SFA_AT_FLAGS] = flags;
    qsf_put_u16(out + QSF_SFA_AT_RESERVED, 0);
    qsf_put_i64(out + QSF_SFA_AT_BASE_SEQ, base_seq);
    qsf_put_i64(out + QSF_SFA_AT_CREATED, created_micros);
}

int qsf_sfa_header_decode(const uint8_t in[QSF_SFA_HEADER_SIZE], qsf_sfa_header *h) {
    h->version = in[QSF_SFA_AT_VERSION];
    h->flags = in[QSF_SFA_AT_FLAGS];
    h->base_seq = qsf_get_i64(in + QSF_SFA_AT_BASE_SEQ);
    h->created_micros = qsf_get_i64(in + QSF_SFA_AT_CREATED);
    if (qsf_get_u32(in + QSF_SFA_AT_MAGIC) != QSF_SFA_MAGIC)
        return QSF_SFA_CORRUPT;
    /* Version and flag bits are checked before baseSeq: an unknown format must
     * stop recovery with the file untouched rather than be quarantined. */
    if (h->version != QSF_SFA_VERSION || (h->flags & ~QSF_SFA_FLAG_MANIFEST_REQUIRED) != 0)
        return QSF_SFA_UNSUPPORTED;
    if (h->base_seq < 0)
        return QSF_SFA_CORRUPT;
    return QSF_SFA_OK;
}

uint32_t qsf_sfa_frame_crc_begin(uint32_t len) {
    uint8_t lenb[4];
    qsf_put_u32(lenb, len);
    return qsf_crc32c_update(qsf_crc32c_begin(), lenb, sizeof lenb);
}

uint32_t qsf_sfa_frame_crc(const void *payload, uint32_t len) {
    return qsf_crc32c_end(qsf_crc32c_update(qsf_sfa_frame_crc_begin(len), payload, len));
}

void qsf_sfa_frame_encode(uint8_t *out, const void *payload, uint32_t len) {
    qsf_put_u32(out + QSF_SFA_FRAME_AT_LEN, len);
    if (len)
        memcpy(out + QSF_SFA_FRAME_AT_PAYLOAD, payload, len);
    qsf_put_u32(out + QSF_SFA_FRAME_AT_CRC, qsf_sfa_frame_crc(payload, len));
}

/* ---- names (docs/FORMAT.md §2.1) ---- */

#define NAME_PREFIX  "sf-"
#define NAME_SUFFIX  ".sfa"
#define NAME_DIGITS  16
#define NAME_HEX_LEN (sizeof NAME_PREFIX - 1 + NAME_DIGITS + sizeof NAME_SUFFIX - 1)

void qsf_seg_name(uint64_t gen, char out[QSF_SEG_NAME_MAX]) {
    if (gen == 0)
        snprintf(out, QSF_SEG_NAME_MAX, "%s", QSF_NAME_INITIAL);
    else
        snprintf(out, QSF_SEG_NAME_MAX, NAME_PREFIX "%016llx" NAME_SUFFIX,
                 (unsigned long long) gen);
}

int qsf_seg_name_parse(const char *name, uint64_t *gen) {
    const size_t pre = sizeof NAME_PREFIX - 1, digits_end = pre + NAME_DIGITS;
    if (strlen(name) != NAME_HEX_LEN || strncmp(name, NAME_PREFIX, pre) != 0 ||
        strcmp(name + digits_end, NAME_SUFFIX) != 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = pre; i < digits_end; i++) {
        char c = name[i];
        int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        v = (v << 4) | (uint64_t) d;
    }
    *gen = v;
    return 0;
}

bool qsf_seg_name_is_candidate(const char *name) {
    size_t n = strlen(name), k = sizeof NAME_SUFFIX - 1;
    return n >= k && strcmp(name + n - k, NAME_SUFFIX) == 0;
}
