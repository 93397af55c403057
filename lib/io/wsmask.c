/* Client frame header and 8-bytes-at-a-time masking (see wsmask.h). */
#include "io/wsmask.h"

#include <string.h>

size_t qsf_ws_put_header(uint8_t *end, uint64_t len, const uint8_t key[4]) {
    size_t ext = len <= 125 ? 0 : len <= 0xFFFF ? 2 : 8;
    size_t n = 2 + ext + 4;
    uint8_t *h = end - n;
    h[0] = 0x82;
    h[1] = (uint8_t) (0x80 | (ext == 0 ? len : ext == 2 ? 126 : 127));
    for (size_t i = 0; i < ext; i++)
        h[2 + i] = (uint8_t) (len >> (8 * (ext - 1 - i)));
    memcpy(h + 2 + ext, key, 4);
    return n;
}

/* The word loop below is vectorised by the compiler; on x86-64 an AVX2 clone,
 * picked at load time where the CPU has it, moves 32 bytes per step instead of
 * 16 (the copy-and-mask pass is on the I/O thread's path for every frame).
 * Sanitizer builds skip the clone: its ifunc resolver runs during relocation,
 * before the sanitizer runtime is initialised, and crashes there. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
void qsf_ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t n, const uint8_t key[4]) {
    uint8_t k8[8];
    for (int i = 0; i < 8; i++)
        k8[i] = key[i & 3];
    uint64_t k;
    memcpy(&k, k8, 8); /* same byte order as the payload words */
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, src + i, 8);
        w ^= k;
        memcpy(dst + i, &w, 8);
    }
    for (; i < n; i++)
        dst[i] = src[i] ^ key[i & 3];
}

void qsf_ws_mask(uint8_t *p, size_t n, const uint8_t key[4]) {
    qsf_ws_mask_copy(p, p, n, key);
}
