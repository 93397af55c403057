/* Fuzz target: one input describes a whole slot directory, which is then
 * recovered (the chain across segments, their numbering, the manifest, the ack
 * watermark and the .symbol-dict against several segments). No crash, and
 * whatever recovery returns must be self-consistent.
 *
 *   byte 0       bits 0-1  segment files - 1 (1..4)
 *                bit 2     sf-manifest.bin present
 *                bit 3     .ack-watermark present
 *                bit 4     .symbol-dict present
 *                bit 5     the first segment is sf-initial.sfa (else sf-...01)
 *                bit 6     manifest and watermark as raw bytes (else records)
 *   per segment  u8 fix    bit 0: rewrite the CRC of every whole frame, except
 *                          frame (fix >> 2) - 1 when fix >> 2 > 0, which keeps
 *                          its bytes (bit 1 clear) or gets a valid CRC and
 *                          then its length's top bit set (bit 1 set)
 *                u16 len, len bytes (the file; cut short at the input's end)
 *   manifest     raw: u16 len + bytes; records: u8 which (bit 0: A, bit 1: B),
 *                then per record i64 generation, headBase, activeBase
 *   watermark    raw: u16 len + bytes; records: u8 which, per record
 *                i64 generation, fsn
 *   dict         u16 len + bytes
 * Integers are little-endian. Records go into an 8192-byte file at 0 (A) and
 * 4096 (B) with a valid CRC, so the values reach recovery's checks. */
#include "slot_fixture.h"

#include "bytes.h"
#include "sf/segfmt.h"
#include "sf/sidefile.h"

#include <stdio.h>
#include <string.h>

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static uint64_t take(input *in, size_t k) {
    uint64_t v = 0;
    for (size_t i = 0; i < k && in->n; i++, in->p++, in->n--)
        v |= (uint64_t) in->p[0] << (8 * i);
    return v;
}

static size_t take_chunk(input *in, const uint8_t **at) {
    size_t len = (size_t) take(in, 2);
    if (len > in->n)
        len = in->n;
    *at = in->p;
    in->p += len;
    in->n -= len;
    return len;
}

/* Valid CRCs let the fuzzer past the frame check into numbering and flushes;
 * one frame left damaged (bad CRC, or a bad length: a gap of unknown count
 * between intact frames) reaches salvage. */
static void fix_crcs(uint8_t *f, size_t len, uint8_t fix) {
    uint32_t skip = fix >> 2, k = 0;
    uint8_t *bad = NULL;
    for (size_t off = QSF_SFA_HEADER_SIZE; off + QSF_SFA_FRAME_OVERHEAD <= len; k++) {
        uint32_t plen = qsf_sfa_frame_len(f + off);
        if (plen >> 31 || plen > len - off - QSF_SFA_FRAME_OVERHEAD ||
            (plen == 0 && qsf_sfa_frame_stored_crc(f + off) == 0)) /* the zero fill */
            break;
        if (k + 1 != skip || (fix & 2))
            qsf_put_u32(f + off, qsf_sfa_frame_crc(f + off + QSF_SFA_FRAME_OVERHEAD, plen));
        if (k + 1 == skip)
            bad = f + off;
        off += QSF_SFA_FRAME_OVERHEAD + plen;
    }
    if (bad && (fix & 2))
        qsf_put_u32(bad + QSF_SFA_FRAME_AT_LEN, qsf_sfa_frame_len(bad) | 0x80000000u);
}

static void put_segment(const char *slot, input *in, uint32_t i, int initial) {
    static uint8_t buf[65536];
    uint8_t fix = (uint8_t) take(in, 1);
    const uint8_t *at;
    size_t len = take_chunk(in, &at);
    memcpy(buf, at, len);
    if (fix & 1)
        fix_crcs(buf, len, fix);
    char name[QSF_SEG_NAME_MAX];
    qsf_seg_name(initial && i == 0 ? 0 : i + 1, name);
    qsf_fz_write_file(slot, name, buf, len);
}

static void put_raw(const char *slot, const char *name, input *in) {
    const uint8_t *at;
    size_t len = take_chunk(in, &at);
    qsf_fz_write_file(slot, name, at, len);
}

static void put_records(const char *slot, const char *name, input *in, int manifest) {
    static uint8_t img[8192];
    memset(img, 0, sizeof img);
    uint8_t which = (uint8_t) take(in, 1);
    for (int half = 0; half < 2; half++) {
        if (!(which & (1 << half)))
            continue;
        int64_t gen = (int64_t) take(in, 8), a = (int64_t) take(in, 8);
        if (manifest)
            qsf_sfm_encode(img + 4096 * half, gen, a, (int64_t) take(in, 8));
        else
            qsf_akw_encode(img + 4096 * half, gen, a);
    }
    qsf_fz_write_file(slot, name, img, sizeof img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    char slot[320];
    const char *sfdir = qsf_fz_fresh_slot(slot);
    input in = {data + 1, size - 1};
    uint8_t h = data[0];
    for (uint32_t i = 0; i < (uint32_t) (h & 3) + 1; i++)
        put_segment(slot, &in, i, h & 32);
    if (h & 4) {
        if (h & 64)
            put_raw(slot, "sf-manifest.bin", &in);
        else
            put_records(slot, "sf-manifest.bin", &in, 1);
    }
    if (h & 8) {
        if (h & 64)
            put_raw(slot, ".ack-watermark", &in);
        else
            put_records(slot, ".ack-watermark", &in, 0);
    }
    if (h & 16)
        put_raw(slot, ".symbol-dict", &in);
    qsf_fz_open_and_check(sfdir);
    return 0;
}
