/* String -> dense id map (see strmap.h). */
#include "qwp/strmap.h"
#include "qsf_assert.h"
#include "grow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void qsf_strmap_init(qsf_strmap *m) {
    memset(m, 0, sizeof *m);
}

void qsf_strmap_destroy(qsf_strmap *m) {
    free(m->arena);
    free(m->entries);
    free(m->slots);
    qsf_strmap_init(m);
}

/* The slot of the record at arena offset off (a multiple of 8). */
#define SLOT(hash, off) (((uint64_t) (hash) << 32) | ((off) / 8 + 1))

/* Arena offsets a slot can name: (off / 8 + 1) must fit its 32 bits. */
#define ARENA_MAX ((uint64_t) (UINT32_MAX - 1) * 8)

/* Record bytes for a string of len bytes: id, len, the bytes, padding to 8. */
static uint64_t record_size(size_t len) {
    return 8 + (((uint64_t) len + 7) & ~(uint64_t) 7);
}

static void slot_put(uint64_t *slots, uint32_t mask, uint32_t hash, uint64_t off) {
    uint32_t i = hash & mask;
    while (slots[i])
        i = (i + 1) & mask;
    slots[i] = SLOT(hash, off);
}

/* Doubles the slot array and re-inserts every linked entry. */
static int rehash(qsf_strmap *m) {
    uint32_t n = m->slots ? (m->slot_mask + 1) * 2 : 32;
    uint64_t *sl = calloc(n, sizeof *sl);
    if (!sl)
        return -1;
    for (uint32_t id = 0; id < m->count; id++)
        if (m->entries[id].linked)
            slot_put(sl, n - 1, m->entries[id].hash, m->entries[id].off);
    free(m->slots);
    m->slots = sl;
    m->slot_mask = n - 1;
    return 0;
}

/* Room for one more entry and a record of rec bytes. */
static int reserve(qsf_strmap *m, uint64_t rec) {
    if (m->count == m->entries_cap) {
        qsf_strmap_entry *e = qsf_grow(m->entries, &m->entries_cap, 16);
        if (!e)
            return -1;
        m->entries = e;
    }
    if (m->arena_len + rec > ARENA_MAX)
        return -1;
    if (m->arena_len + rec > m->arena_cap) {
        uint64_t n = m->arena_cap ? m->arena_cap * 2 : 256;
        while (n < m->arena_len + rec)
            n *= 2;
        char *a = realloc(m->arena, n);
        if (!a)
            return -1;
        m->arena = a;
        m->arena_cap = n;
    }
    if (!m->slots || 2 * ((uint64_t) m->linked + 1) > (uint64_t) m->slot_mask + 1)
        return rehash(m);
    return 0;
}

static int64_t append(qsf_strmap *m, const char *s, size_t len, uint32_t hash, bool link) {
    uint64_t rec = record_size(len);
    if (len > UINT32_MAX || m->count >= UINT32_MAX - 1 || reserve(m, rec) != 0)
        return -1;
    uint32_t id = m->count++, len32 = (uint32_t) len;
    qsf_assert(m->count <= m->entries_cap && m->arena_len + rec <= m->arena_cap); /* reserved */
    qsf_strmap_entry *e = &m->entries[id];
    e->off = m->arena_len;
    e->hash = hash;
    e->linked = link;
    char *r = m->arena + e->off;
    memset(r + rec - 8, 0, 8); /* the padding: the last word, before what goes in it */
    memcpy(r, &id, 4);
    memcpy(r + 4, &len32, 4);
    if (len)
        memcpy(r + 8, s, len);
    m->arena_len += rec;
    if (link) {
        /* at most half full, so a probe always ends at an empty slot */
        qsf_assert(2 * ((uint64_t) m->linked + 1) <= (uint64_t) m->slot_mask + 1);
        slot_put(m->slots, m->slot_mask, hash, e->off);
        m->linked++;
    }
    return id;
}

int64_t qsf_strmap_add(qsf_strmap *m, const char *s, size_t len, uint32_t hash) {
    return append(m, s, len, hash, true);
}

int64_t qsf_strmap_add_unlinked(qsf_strmap *m, const char *s, size_t len, uint32_t hash) {
    return append(m, s, len, hash, false);
}

/* Removes the slot of the record at off and shifts the following cluster back
 * so that every remaining key stays reachable from its home slot
 * (linear-probing deletion). */
static void slot_remove(qsf_strmap *m, uint32_t hash, uint64_t off) {
    uint32_t mask = m->slot_mask, i = hash & mask;
    while (m->slots[i] != SLOT(hash, off))
        i = (i + 1) & mask;
    for (uint32_t j = (i + 1) & mask; m->slots[j]; j = (j + 1) & mask) {
        uint32_t home = (uint32_t) (m->slots[j] >> 32) & mask;
        /* move j into the hole at i unless its home lies cyclically in (i, j] */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i] = 0;
}

void qsf_strmap_truncate(qsf_strmap *m, uint32_t count) {
    while (m->count > count) {
        uint32_t id = --m->count;
        qsf_strmap_entry *e = &m->entries[id];
        if (e->linked) {
            slot_remove(m, e->hash, e->off);
            m->linked--;
        }
        m->arena_len = e->off;
    }
    qsf_assert(m->linked <= m->count); /* LIFO: only the newest entries went */
}

void qsf_strmap_clear(qsf_strmap *m) {
    if (m->slots)
        memset(m->slots, 0, ((size_t) m->slot_mask + 1) * sizeof *m->slots);
    m->count = m->linked = 0;
    m->arena_len = 0;
}
