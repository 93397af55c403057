/* isa-l wrapper. isa-l's crc32_iscsi neither inverts its seed nor its result, and
 * takes an int length, so large buffers are fed in pieces. */
#include "crc32c.h"

#include <isa-l/crc.h>
#include <limits.h>

#define PIECE ((size_t) 1 << 30)

uint32_t qsf_crc32c_update(uint32_t state, const void *buf, size_t len) {
    const unsigned char *p = buf;
    while (len > 0) {
        size_t n = len < PIECE ? len : PIECE;
        state = crc32_iscsi((unsigned char *) p, (int) n, state);
        p += n;
        len -= n;
    }
    return state;
}

uint32_t qsf_crc32c(const void *buf, size_t len) {
    return qsf_crc32c_end(qsf_crc32c_update(qsf_crc32c_begin(), buf, len));
}
