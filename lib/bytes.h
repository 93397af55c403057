/* Little-endian put/get and LEB128 varints. Every on-disk and on-wire integer in
 * qsf goes through these; structs are never copied to or from bytes. */
#ifndef QSF_BYTES_H
#define QSF_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The IEEE-754 bit patterns (NaN and infinities pass unchanged). */
static inline uint64_t qsf_f64_bits(double v) {
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}
static inline uint32_t qsf_f32_bits(float v) {
    uint32_t b;
    memcpy(&b, &v, 4);
    return b;
}

static inline void qsf_put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}
static inline void qsf_put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}
static inline void qsf_put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}
static inline void qsf_put_i64(uint8_t *p, int64_t v) {
    qsf_put_u64(p, (uint64_t) v);
}
static inline uint16_t qsf_get_u16(const uint8_t *p) {
    return (uint16_t) (p[0] | (p[1] << 8));
}
static inline uint32_t qsf_get_u32(const uint8_t *p) {
    return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
           ((uint32_t) p[3] << 24);
}
static inline uint64_t qsf_get_u64(const uint8_t *p) {
    return (uint64_t) qsf_get_u32(p) | ((uint64_t) qsf_get_u32(p + 4) << 32);
}
static inline int64_t qsf_get_i64(const uint8_t *p) {
    return (int64_t) qsf_get_u64(p);
}

#define QSF_VARINT_MAX 10

/* Writes v as unsigned LEB128; returns the number of bytes (1..10). */
static inline size_t qsf_put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t) (v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t) v;
    return n;
}

/* Bytes qsf_put_varint would write for v. */
static inline size_t qsf_varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Reads an unsigned LEB128 from [p, end). Returns bytes consumed, or 0 when the
 * varint is truncated or overflows 64 bits (10th byte payload > 1). */
static inline size_t qsf_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (size_t i = 0; i < QSF_VARINT_MAX; i++) {
        if (p + i >= end)
            return 0;
        uint8_t b = p[i];
        if (i == 9 && b > 1)
            return 0;
        v |= (uint64_t) (b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

#endif
