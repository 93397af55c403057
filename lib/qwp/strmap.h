/* A string -> dense id map in first-insert order (ids 0, 1, 2, ...), with lookup
 * of an entry by id and LIFO truncation (undo of the newest inserts). Strings are
 * copied into one growing arena; ids index an entry array. Lookup is a chained
 * hash (bucket heads + per-entry next links); the table doubles at load 1 so
 * 10^6 distinct strings stay O(1) per operation.
 * Used by the symbol table and by the row buffer for table and column names. */
#ifndef QSF_QWP_STRMAP_H
#define QSF_QWP_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct qsf_strmap_entry {
    uint64_t off;  /* offset of the bytes in the arena */
    uint32_t len;  /* bytes */
    uint32_t hash; /* cached hash */
    uint32_t next; /* next id in the same bucket, UINT32_MAX at the end */
} qsf_strmap_entry;

typedef struct qsf_strmap {
    char *arena;
    uint64_t arena_len, arena_cap;
    qsf_strmap_entry *entries;
    uint32_t count, entries_cap;
    uint32_t *buckets; /* heads, UINT32_MAX when empty; bucket_mask + 1 entries */
    uint32_t bucket_mask;
} qsf_strmap;

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
