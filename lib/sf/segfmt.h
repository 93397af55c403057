/* Segment file (*.sfa) header and frame envelope (docs/FORMAT.md §2): the one
 * place their layout is drawn, their field offsets are named and their bytes
 * are encoded and decoded. Segment names (docs/FORMAT.md §2.1) are formatted and parsed here
 * too.
 *
 * Pure functions over byte buffers: no I/O. Recovery (recover_scan.c) decodes with
 * them, the fresh-start path encodes the first header with them, and the
 * runtime segment code (segment.c) uses them for headers, rebasing and frames.
 *
 *   header, QSF_SFA_HEADER_SIZE = 24 bytes, all little-endian:
 *   0      4   5   6      8                16                24
 *   +------+---+---+------+-----------------+-----------------+
 *   | SF01 | v | f | 0000 | baseSeq (i64)   | createdMicros   |
 *   +------+---+---+------+-----------------+-----------------+
 *   v = 1; f bit 0 = MANIFEST_REQUIRED, other bits must be 0.
 *
 *   frame, packed from offset 24, no padding (QSF_SFA_FRAME_OVERHEAD = 8):
 *   0             4                 8
 *   +-------------+-----------------+----------------------+
 *   | crc32c u32  | payloadLen i32  | payload (payloadLen) |
 *   +-------------+-----------------+----------------------+
 *   crc covers the 4 payloadLen bytes followed by the payload; written last.
 *   While a frame is written its crc field holds QSF_SFA_FRAME_WRITING and its
 *   payloadLen is already the frame's (docs/FORMAT.md §2.4).
 *
 *   names: "sf-initial.sfa" (generation 0), "sf-<16 lowercase hex>.sfa".
 */
#ifndef QSF_SEGFMT_H
#define QSF_SEGFMT_H

#include "bytes.h"
#include "sf/sfa.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Field offsets of the header (the drawing above). */
#define QSF_SFA_AT_MAGIC    0
#define QSF_SFA_AT_VERSION  4
#define QSF_SFA_AT_FLAGS    5
#define QSF_SFA_AT_RESERVED 6
#define QSF_SFA_AT_BASE_SEQ 8
#define QSF_SFA_AT_CREATED  16

/* Field offsets of a frame envelope, from the frame's first byte. */
#define QSF_SFA_FRAME_AT_CRC     0
#define QSF_SFA_FRAME_AT_LEN     4
#define QSF_SFA_FRAME_AT_PAYLOAD 8

/* The crc field of a frame being written ("WRIT"): stored with the frame's
 * length before its payload, replaced by the CRC last. In a frame that does
 * not validate it says the frame was torn while being written, so nothing
 * inside its payloadLen bytes is a frame (recovery's salvage skips them). */
#define QSF_SFA_FRAME_WRITING 0x54495257u

/* Longest segment name plus its NUL ("sf-" + 16 hex + ".sfa" is 23 bytes). */
#define QSF_SEG_NAME_MAX 32

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

/* The header field rewritten in place (rebasing, reuse). */
static inline void qsf_sfa_set_base_seq(uint8_t *header, int64_t base_seq) {
    qsf_put_i64(header + QSF_SFA_AT_BASE_SEQ, base_seq);
}

/* The stored fields of the frame envelope at f (at least 8 readable bytes). */
static inline uint32_t qsf_sfa_frame_len(const uint8_t *f) {
    return qsf_get_u32(f + QSF_SFA_FRAME_AT_LEN);
}

static inline uint32_t qsf_sfa_frame_stored_crc(const uint8_t *f) {
    return qsf_get_u32(f + QSF_SFA_FRAME_AT_CRC);
}

/* CRC-32C of a frame: over the 4 little-endian length bytes, then the payload. */
uint32_t qsf_sfa_frame_crc(const void *payload, uint32_t len);

/* The same in pieces, for payloads read in parts: the running state after the
 * length bytes; feed the payload with qsf_crc32c_update, finish with
 * qsf_crc32c_end. */
uint32_t qsf_sfa_frame_crc_begin(uint32_t len);

/* Writes one whole frame (envelope + payload, 8 + len bytes) into out. For
 * buffers and tests; the runtime writes the CRC last through its mapping. */
void qsf_sfa_frame_encode(uint8_t *out, const void *payload, uint32_t len);

/* Formats a segment's file name: "sf-initial.sfa" for generation 0,
 * "sf-<16 lowercase hex>.sfa" otherwise. */
void qsf_seg_name(uint64_t gen, char out[QSF_SEG_NAME_MAX]);

/* Parses a name of exactly "sf-" + 16 lowercase hex + ".sfa": returns 0 and the
 * generation, -1 otherwise (sf-initial.sfa and other names). */
int qsf_seg_name_parse(const char *name, uint64_t *gen);

/* True if name ends in ".sfa" (a segment candidate). */
bool qsf_seg_name_is_candidate(const char *name);

#endif
