/* String -> dense id map (see strmap.h). */
#include "qwp/strmap.h"

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

#define SLOT(hash, id) (((uint64_t) (hash) << 32) | ((uint64_t) (id) + 1))

static void slot_put(uint64_t *slots, uint32_t mask, uint32_t hash, uint32_t id) {
    uint32_t i = hash & mask;
    while (slots[i])
        i = (i + 1) & mask;
    slots[i] = SLOT(hash, id);
}

/* Doubles the slot array and re-inserts every linked entry. */
static int rehash(qsf_strmap *m) {
    uint32_t n = m->slots ? (m->slot_mask + 1) * 2 : 32;
    uint64_t *sl = calloc(n, sizeof *sl);
    if (!sl)
        return -1;
    for (uint32_t id = 0; id < m->count; id++)
        if (m->entries[id].linked)
            slot_put(sl, n - 1, m->entries[id].hash, id);
    free(m->slots);
    m->slots = sl;
    m->slot_mask = n - 1;
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
    if (!m->slots || 2 * ((uint64_t) m->linked + 1) > (uint64_t) m->slot_mask + 1)
        return rehash(m);
    return 0;
}

static int64_t append(qsf_strmap *m, const char *s, size_t len, uint32_t hash, bool link) {
    if (len > UINT32_MAX || m->count >= UINT32_MAX - 1 || reserve(m, len) != 0)
        return -1;
    uint32_t id = m->count++;
    qsf_strmap_entry *e = &m->entries[id];
    e->off = m->arena_len;
    e->len = (uint32_t) len;
    e->hash = hash;
    e->linked = link;
    if (len)
        memcpy(m->arena + m->arena_len, s, len);
    m->arena_len += len;
    if (link) {
        slot_put(m->slots, m->slot_mask, hash, id);
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

/* Removes the slot of id and shifts the following cluster back so that every
 * remaining key stays reachable from its home slot (linear-probing deletion). */
static void slot_remove(qsf_strmap *m, uint32_t hash, uint32_t id) {
    uint32_t mask = m->slot_mask, i = hash & mask;
    while (m->slots[i] != SLOT(hash, id))
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
            slot_remove(m, e->hash, id);
            m->linked--;
        }
        m->arena_len = e->off;
    }
}

void qsf_strmap_clear(qsf_strmap *m) {
    if (m->slots)
        memset(m->slots, 0, ((size_t) m->slot_mask + 1) * sizeof *m->slots);
    m->count = m->linked = 0;
    m->arena_len = 0;
}
