/* String -> dense id map (see strmap.h). Entries are inserted at the head of their
 * bucket chain, so truncating the newest entries only ever pops chain heads. */
#include "qwp/strmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NIL      UINT32_MAX
#define UNLINKED (UINT32_MAX - 1) /* entry kept by id only (a duplicate string) */

uint32_t qsf_strmap_hash(const char *s, size_t len) {
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = 0x243F6A8885A308D3ull ^ (len * k);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 31;
    }
    uint64_t t = 0;
    for (size_t j = 0; i + j < len; j++)
        t |= (uint64_t) (unsigned char) s[i + j] << (8 * j);
    h = (h ^ t) * k;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (uint32_t) h;
}

void qsf_strmap_init(qsf_strmap *m) {
    memset(m, 0, sizeof *m);
}

void qsf_strmap_destroy(qsf_strmap *m) {
    free(m->arena);
    free(m->entries);
    free(m->buckets);
    qsf_strmap_init(m);
}

int64_t qsf_strmap_find(const qsf_strmap *m, const char *s, size_t len, uint32_t hash) {
    if (!m->buckets)
        return -1;
    for (uint32_t id = m->buckets[hash & m->bucket_mask]; id != NIL; id = m->entries[id].next) {
        const qsf_strmap_entry *e = &m->entries[id];
        if (e->hash == hash && e->len == len && memcmp(m->arena + e->off, s, len) == 0)
            return id;
    }
    return -1;
}

/* Doubles the bucket array and relinks every entry (oldest first, so chains stay
 * newest-first and truncation keeps popping heads). */
static int rehash(qsf_strmap *m) {
    uint32_t n = m->buckets ? (m->bucket_mask + 1) * 2 : 16;
    uint32_t *b = malloc((size_t) n * sizeof *b);
    if (!b)
        return -1;
    memset(b, 0xff, (size_t) n * sizeof *b);
    for (uint32_t id = 0; id < m->count; id++) {
        if (m->entries[id].next == UNLINKED)
            continue;
        uint32_t slot = m->entries[id].hash & (n - 1);
        m->entries[id].next = b[slot];
        b[slot] = id;
    }
    free(m->buckets);
    m->buckets = b;
    m->bucket_mask = n - 1;
    return 0;
}

static int reserve(qsf_strmap *m, size_t len) {
    if (m->count == m->entries_cap) {
        uint32_t n = m->entries_cap ? m->entries_cap * 2 : 16;
        qsf_strmap_entry *e = realloc(m->entries, (size_t) n * sizeof *e);
        if (!e)
            return -1;
        m->entries = e;
        m->entries_cap = n;
    }
    if (m->arena_len + len > m->arena_cap) {
        uint64_t n = m->arena_cap ? m->arena_cap * 2 : 256;
        while (n < m->arena_len + len)
            n *= 2;
        char *a = realloc(m->arena, n);
        if (!a)
            return -1;
        m->arena = a;
        m->arena_cap = n;
    }
    if (!m->buckets || m->count + 1 > m->bucket_mask + 1)
        return rehash(m);
    return 0;
}

static int64_t append(qsf_strmap *m, const char *s, size_t len, uint32_t hash, bool link) {
    if (len > UINT32_MAX || m->count >= UNLINKED - 1 || reserve(m, len) != 0)
        return -1;
    uint32_t id = m->count++;
    qsf_strmap_entry *e = &m->entries[id];
    e->off = m->arena_len;
    e->len = (uint32_t) len;
    e->hash = hash;
    if (len)
        memcpy(m->arena + m->arena_len, s, len);
    m->arena_len += len;
    if (!link) {
        e->next = UNLINKED;
        return id;
    }
    uint32_t slot = hash & m->bucket_mask;
    e->next = m->buckets[slot];
    m->buckets[slot] = id;
    return id;
}

int64_t qsf_strmap_add(qsf_strmap *m, const char *s, size_t len, uint32_t hash) {
    return append(m, s, len, hash, true);
}

int64_t qsf_strmap_add_unlinked(qsf_strmap *m, const char *s, size_t len, uint32_t hash) {
    return append(m, s, len, hash, false);
}

void qsf_strmap_truncate(qsf_strmap *m, uint32_t count) {
    while (m->count > count) {
        uint32_t id = --m->count;
        qsf_strmap_entry *e = &m->entries[id];
        if (e->next != UNLINKED)
            m->buckets[e->hash & m->bucket_mask] = e->next;
        m->arena_len = e->off;
    }
}

void qsf_strmap_clear(qsf_strmap *m) {
    if (m->buckets)
        memset(m->buckets, 0xff, ((size_t) m->bucket_mask + 1) * sizeof *m->buckets);
    m->count = 0;
    m->arena_len = 0;
}
