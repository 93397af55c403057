/* A growable byte buffer used for connection input and output queues.
 *
 *   p                 p+off            p+len          p+cap
 *   |  consumed bytes  |  live bytes    |  free space  |
 *
 * Writers append at p+len; readers consume from p+off. buf_compact() moves the
 * live bytes back to p when the consumed prefix gets large. */
#ifndef QSINK_BUF_H
#define QSINK_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct buf {
    uint8_t *p;
    size_t off, len, cap;
};

/* Ensures room for `extra` more bytes after p+len. Returns 0, or -1 on OOM. */
static inline int buf_reserve(struct buf *b, size_t extra) {
    if (b->len + extra <= b->cap)
        return 0;
    if (b->off > 0 && b->len - b->off + extra <= b->cap) {
        memmove(b->p, b->p + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        return 0;
    }
    size_t ncap = b->cap ? b->cap : 4096;
    while (ncap < b->len + extra)
        ncap *= 2;
    uint8_t *np = realloc(b->p, ncap);
    if (!np)
        return -1;
    b->p = np;
    b->cap = ncap;
    return 0;
}

static inline int buf_append(struct buf *b, const void *src, size_t n) {
    if (buf_reserve(b, n) != 0)
        return -1;
    if (n)
        memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

static inline size_t buf_live(const struct buf *b) {
    return b->len - b->off;
}

static inline uint8_t *buf_head(const struct buf *b) {
    return b->p + b->off;
}

static inline void buf_consume(struct buf *b, size_t n) {
    b->off += n;
    if (b->off == b->len)
        b->off = b->len = 0;
}

static inline void buf_compact(struct buf *b) {
    if (b->off == 0)
        return;
    memmove(b->p, b->p + b->off, b->len - b->off);
    b->len -= b->off;
    b->off = 0;
}

static inline void buf_free(struct buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

#endif
