/* Segment header and frame envelope codec (see segfmt.h for the layout). */
#include "sf/segfmt.h"

#include "bytes.h"
#include "crc32c.h"

#include <string.h>

void qsf_sfa_header_encode(uint8_t out[QSF_SFA_HEADER_SIZE], uint8_t flags, int64_t base_seq,
                           int64_t created_micros) {
    qsf_put_u32(out, QSF_SFA_MAGIC);
    out[4] = QSF_SFA_VERSION;
    out[5] = flags;
    qsf_put_u16(out + 6, 0);
    qsf_put_i64(out + 8, base_seq);
    qsf_put_i64(out + 16, created_micros);
}

int qsf_sfa_header_decode(const uint8_t in[QSF_SFA_HEADER_SIZE], qsf_sfa_header *h) {
    h->version = in[4];
    h->flags = in[5];
    h->base_seq = qsf_get_i64(in + 8);
    h->created_micros = qsf_get_i64(in + 16);
    if (qsf_get_u32(in) != QSF_SFA_MAGIC)
        return QSF_SFA_CORRUPT;
    /* Version and flag bits are checked before baseSeq: an unknown format must
     * stop recovery with the file untouched rather than be quarantined. */
    if (h->version != QSF_SFA_VERSION || (h->flags & ~QSF_SFA_FLAG_MANIFEST_REQUIRED) != 0)
        return QSF_SFA_UNSUPPORTED;
    if (h->base_seq < 0)
        return QSF_SFA_CORRUPT;
    return QSF_SFA_OK;
}

uint32_t qsf_sfa_frame_crc(const void *payload, uint32_t len) {
    uint8_t lenb[4];
    qsf_put_u32(lenb, len);
    uint32_t s = qsf_crc32c_update(qsf_crc32c_begin(), lenb, 4);
    s = qsf_crc32c_update(s, payload, len);
    return qsf_crc32c_end(s);
}

void qsf_sfa_frame_encode(uint8_t *out, const void *payload, uint32_t len) {
    qsf_put_u32(out + 4, len);
    if (len)
        memcpy(out + 8, payload, len);
    qsf_put_u32(out, qsf_sfa_frame_crc(payload, len));
}
