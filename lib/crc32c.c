/* isa-l wrapper. isa-l's crc32_iscsi neither inverts its seed nor its result, and
 * takes an int length, so large buffers are fed in pieces. */
#include "crc32c.h"

#include <isa-l/crc.h>
#include <limits.h>

#define PIECE ((size_t) 1 << 30)

#if defined(__x86_64__)
/* isa-l's AVX-512 kernel (crc32_iscsi_by16_10) returns with the upper halves
 * of the vector registers still dirty: it has no vzeroupper. Every legacy SSE
 * instruction the thread runs afterwards (the codec's int/double moves) then
 * pays a state-transition penalty, which made rows built after the first SF
 * append about 3x slower (bench_rows: the encode floor went from 70 to 240
 * ns/row once a sender had run). Clearing the upper halves costs a cycle. */
__attribute__((target("avx"))) static void clear_upper(void) {
    __asm__ volatile("vzeroupper");
}
static void after_kernel(void) {
    if (__builtin_cpu_supports("avx"))
        clear_upper();
}
#else
static void after_kernel(void) {}
#endif

uint32_t qsf_crc32c_update(uint32_t state, const void *buf, size_t len) {
    const unsigned char *p = buf;
    while (len > 0) {
        size_t n = len < PIECE ? len : PIECE;
        state = crc32_iscsi((unsigned char *) p, (int) n, state);
        p += n;
        len -= n;
    }
    after_kernel();
    return state;
}

uint32_t qsf_crc32c(const void *buf, size_t len) {
    return qsf_crc32c_end(qsf_crc32c_update(qsf_crc32c_begin(), buf, len));
}
