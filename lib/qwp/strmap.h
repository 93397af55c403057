/* A string -> dense id map in first-insert order (ids 0, 1, 2, ...), with lookup
 * of an entry by id and LIFO truncation (undo of the newest inserts). Strings are
 * copied into one growing arena; ids index an entry array. Lookup is open
 * addressing with linear probing over 64-bit slots (hash << 32 | id + 1; 0 is
 * empty), kept at most half full, so a probe rarely touches an entry whose hash
 * differs and 10^6 distinct strings stay O(1) per operation.
 * Used by the symbol table and by the row buffer for table and column names. */
#ifndef QSF_QWP_STRMAP_H
#define QSF_QWP_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct qsf_strmap_entry {
    uint64_t off;    /* offset of the bytes in the arena */
    uint32_t len;    /* bytes */
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

/* Byte equality, word by word: names and symbols are short, and without a
 * libc call a caller's fast path needs no stack frame. */
static inline bool qsf_bytes_eq(const char *a, const char *b, size_t len) {
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            return false;
    }
    for (; i < len; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Hash used by the map (exposed so callers can hash once and reuse). */
uint32_t qsf_strmap_hash(const char *s, size_t len);

/* Initialises an empty map (no allocation until the first insert). */
void qsf_strmap_init(qsf_strmap *m);
void qsf_strmap_destroy(qsf_strmap *m);

/* Id of s, or -1 when absent. */
int64_t qsf_strmap_find(const qsf_strmap *m, const char *s, size_t len, uint32_t hash);

/* Appends s (not already present; the caller checked with find) and returns its id
 * (= the previous count), or -1 when memory ran out (the map is unchanged). */
int64_t qsf_strmap_add(qsf_strmap *m, const char *s, size_t len, uint32_t hash);

/* Appends s with the next id without making it findable (a duplicate of an earlier
 * entry: lookups keep returning the earlier id). -1 when memory ran out. */
int64_t qsf_strmap_add_unlinked(qsf_strmap *m, const char *s, size_t len, uint32_t hash);

/* Bytes and length of entry id (id < count). The pointer stays valid until the
 * next add (the arena may move). */
static inline const char *qsf_strmap_str(const qsf_strmap *m, uint32_t id, size_t *len) {
    *len = m->entries[id].len;
    return m->arena + m->entries[id].off;
}

/* Removes the newest entries so that `count` remain (count <= current count). */
void qsf_strmap_truncate(qsf_strmap *m, uint32_t count);

/* Removes everything; keeps the allocations for reuse. */
void qsf_strmap_clear(qsf_strmap *m);

#endif
