/* A string -> dense id map in first-insert order (ids 0, 1, 2, ...), with lookup
 * of an entry by id and LIFO truncation (undo of the newest inserts). Used by
 * the symbol table and by the row buffer for table and column names.
 *
 * Each string is copied into one growing arena as a record that also holds its
 * id and length, 8-byte aligned:
 *
 *   off (multiple of 8)
 *   +0   u32  id
 *   +4   u32  len
 *   +8   len bytes, then zeros up to the next multiple of 8
 *
 * Lookup is open addressing with linear probing over 64-bit slots
 * (hash << 32 | off / 8 + 1; 0 is empty), kept at most half full, so a probe
 * rarely touches a record whose hash differs and 10^6 distinct strings stay
 * O(1) per operation. A slot leads straight to the record, so a lookup in a
 * table too large for the cache misses twice (slot, record), not three times
 * through an entry array. The entry array (id -> record offset, hash) serves
 * lookups by id and truncation. The slot's 32 bits of offset bound the arena
 * at 32 GiB: an add beyond fails like an allocation. */
#ifndef QSF_QWP_STRMAP_H
#define QSF_QWP_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct qsf_strmap_entry {
    uint64_t off;    /* offset of the record in the arena */
    uint32_t hash;   /* cached hash */
    uint32_t linked; /* 1 when findable (0: a duplicate kept by id only) */
} qsf_strmap_entry;

typedef struct qsf_strmap {
    char *arena;
    uint64_t arena_len, arena_cap;
    qsf_strmap_entry *entries;
    uint32_t count, entries_cap;
    uint64_t *slots; /* slot_mask + 1 slots */
    uint32_t slot_mask, linked;
} qsf_strmap;

static inline uint64_t qsf_strmap_load64(const char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t qsf_strmap_load32(const char *p) {
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

/* The last word of s[0..len), len >= 1, as one integer: the final 8 bytes when
 * len > 8 (overlapping the previous word; the caller covered bytes below), two
 * overlapping 4-byte loads for 4..8, and the first, middle and last byte for
 * 1..3. Names and symbols are short, so a tail of one to three loads instead
 * of a loop byte by byte is most of their hashing and comparing. */
static inline uint64_t qsf_strmap_tail(const char *s, size_t len) {
    if (len > 8)
        return qsf_strmap_load64(s + len - 8);
    if (len >= 4)
        return qsf_strmap_load32(s) | qsf_strmap_load32(s + len - 4) << 32;
    return (uint64_t) (unsigned char) s[0] | (uint64_t) (unsigned char) s[len / 2] << 8 |
           (uint64_t) (unsigned char) s[len - 1] << 16;
}

/* Byte equality over the same loads as the tail above, each pair compared on
 * its own: packing a short tail into one integer, as the hash must, cost a
 * name check on the row path five more instructions than comparing the bytes
 * (scripts/bench-rows-ir, wide rows). Without a libc call a caller's fast path
 * needs no stack frame. */
static inline bool qsf_bytes_eq(const char *a, const char *b, size_t len) {
    if (len > 8) {
        for (size_t i = 0; i + 8 < len; i += 8)
            if (qsf_strmap_load64(a + i) != qsf_strmap_load64(b + i))
                return false;
        return qsf_strmap_load64(a + len - 8) == qsf_strmap_load64(b + len - 8);
    }
    if (len >= 4)
        return qsf_strmap_load32(a) == qsf_strmap_load32(b) &&
               qsf_strmap_load32(a + len - 4) == qsf_strmap_load32(b + len - 4);
    return len == 0 || (a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1]);
}

/* Hash used by the map (exposed so callers can hash once and reuse): the
 * length, every 8-byte word before the tail, then the tail, each mixed by a
 * multiply and a shift. Not stored anywhere: it may change between versions. */
static inline uint32_t qsf_strmap_hash(const char *s, size_t len) {
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = 0x243F6A8885A308D3ull ^ (len * k);
    for (size_t i = 0; i + 8 < len; i += 8) {
        h = (h ^ qsf_strmap_load64(s + i)) * k;
        h ^= h >> 31;
    }
    h = (h ^ (len ? qsf_strmap_tail(s, len) : 0)) * k;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (uint32_t) h;
}

/* Initialises an empty map (no allocation until the first insert). */
void qsf_strmap_init(qsf_strmap *m);
void qsf_strmap_destroy(qsf_strmap *m);

/* Id of s, or -1 when absent. Inline: a symbol column looks one up per row. */
static inline int64_t qsf_strmap_find(const qsf_strmap *m, const char *s, size_t len,
                                      uint32_t hash) {
    if (!m->slots)
        return -1;
    for (uint32_t i = hash & m->slot_mask;; i = (i + 1) & m->slot_mask) {
        uint64_t slot = m->slots[i];
        if (!slot)
            return -1;
        if ((uint32_t) (slot >> 32) != hash)
            continue;
        const char *rec = m->arena + ((uint64_t) (uint32_t) slot - 1) * 8;
        if (qsf_strmap_load32(rec + 4) == len && qsf_bytes_eq(rec + 8, s, len))
            return (int64_t) qsf_strmap_load32(rec);
    }
}

/* Appends s (not already present; the caller checked with find) and returns its id
 * (= the previous count), or -1 when memory ran out (the map is unchanged). */
int64_t qsf_strmap_add(qsf_strmap *m, const char *s, size_t len, uint32_t hash);

/* Appends s with the next id without making it findable (a duplicate of an earlier
 * entry: lookups keep returning the earlier id). -1 when memory ran out. */
int64_t qsf_strmap_add_unlinked(qsf_strmap *m, const char *s, size_t len, uint32_t hash);

/* Bytes and length of entry id (id < count). The pointer stays valid until the
 * next add (the arena may move). */
static inline const char *qsf_strmap_str(const qsf_strmap *m, uint32_t id, size_t *len) {
    const char *rec = m->arena + m->entries[id].off;
    *len = (size_t) qsf_strmap_load32(rec + 4);
    return rec + 8;
}

/* Removes the newest entries so that `count` remain (count <= current count). */
void qsf_strmap_truncate(qsf_strmap *m, uint32_t count);

/* Removes everything; keeps the allocations for reuse. */
void qsf_strmap_clear(qsf_strmap *m);

#endif
