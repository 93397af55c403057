/* CRC-32C (Castagnoli), the standard form: init 0xFFFFFFFF, reflected, final xor
 * 0xFFFFFFFF. qsf_crc32c("123456789") == 0xE3069283. Backed by isa-l. */
#ifndef QSF_CRC32C_H
#define QSF_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Standard CRC-32C of one buffer of any length. */
uint32_t qsf_crc32c(const void *buf, size_t len);

/* Streaming form: state = qsf_crc32c_begin(); state = qsf_crc32c_update(state, ...)
 * for each piece; crc = qsf_crc32c_end(state). */
static inline uint32_t qsf_crc32c_begin(void) {
    return 0xFFFFFFFFu;
}
uint32_t qsf_crc32c_update(uint32_t state, const void *buf, size_t len);
static inline uint32_t qsf_crc32c_end(uint32_t state) {
    return state ^ 0xFFFFFFFFu;
}

#endif
