/* Segment file (*.sfa) header and frame envelope codec (sf-format.md §3).
 *
 * Pure functions over byte buffers: no I/O. Recovery (recover_scan.c) decodes with
 * them, the fresh-start path encodes the first header with them, and the
 * runtime segment code (segment.c) may use them for spares, rebasing and frames.
 *
 *   header, 24 bytes, all little-endian:
 *   0      4   5   6      8                16                24
 *   +------+---+---+------+-----------------+-----------------+
 *   | SF01 | v | f | 0000 | baseSeq (i64)   | createdMicros   |
 *   +------+---+---+------+-----------------+-----------------+
 *   v = 1; f bit 0 = MANIFEST_REQUIRED, other bits must be 0.
 *
 *   frame, packed from offset 24, no padding:
 *   +-------------+-----------------+----------------------+
 *   | crc32c u32  | payloadLen i32  | payload (payloadLen) |
 *   +-------------+-----------------+----------------------+
 *   crc covers the 4 payloadLen bytes followed by the payload; written last.
 */
#ifndef QSF_SEGFMT_H
#define QSF_SEGFMT_H

#include "sf/sfa.h"

#include <stddef.h>
#include <stdint.h>

typedef struct qsf_sfa_header {
    uint8_t version;
    uint8_t flags;
    int64_t base_seq;
    int64_t created_micros;
} qsf_sfa_header;

/* Result of qsf_sfa_header_decode: how the reader must treat the file. */
enum qsf_sfa_verdict {
    QSF_SFA_OK = 0,
    QSF_SFA_CORRUPT = 1,     /* bad magic or baseSeq < 0: quarantine later */
    QSF_SFA_UNSUPPORTED = 2, /* version != 1 or unknown flag bits: operational */
};

/* Writes the 24-byte header for (flags, base_seq, created_micros), version 1. */
void qsf_sfa_header_encode(uint8_t out[QSF_SFA_HEADER_SIZE], uint8_t flags, int64_t base_seq,
                           int64_t created_micros);

/* Decodes 24 header bytes into *h (always filled) and classifies them. */
int qsf_sfa_header_decode(const uint8_t in[QSF_SFA_HEADER_SIZE], qsf_sfa_header *h);

/* CRC-32C of a frame: over the 4 little-endian length bytes, then the payload. */
uint32_t qsf_sfa_frame_crc(const void *payload, uint32_t len);

/* Writes one whole frame (envelope + payload, 8 + len bytes) into out. For
 * buffers and tests; the runtime writes the CRC last through its mapping. */
void qsf_sfa_frame_encode(uint8_t *out, const void *payload, uint32_t len);

#endif
