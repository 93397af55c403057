/* The string -> id map (qwp/strmap.h) and the symbol table on top of it
 * (qwp/symtab.h) against a reference model: long random sequences of adds,
 * duplicates, lookups by string and by id, truncations and clears, each step
 * checked against plain arrays, and at intervals everything at once: every
 * entry, every record of the arena as strmap.h diagrams it, every slot.
 *
 * Keys are 0..40 bytes, drawn so that many share a prefix or a suffix, hold
 * zero bytes, or differ from a stored key by one byte where the tail's
 * overlapping loads meet, or by one byte of length. The map takes its hash
 * from the caller (durack.c passes its own), so it also runs with hashes that
 * collide on purpose. The key a step hands to the code under test ends where
 * its own heap block ends, mostly at an odd address, so that a read past it
 * is out of bounds under ASan. Seeds are fixed; a failure names its seed, run,
 * step and operation. */
#include "testutil.h"

#include "qwp/strmap.h"
#include "qwp/symtab.h"
#include "qwp/types.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KMAX    40
#define NBUCKET (1u << 16)
#define NONE    UINT32_MAX

static const uint64_t seeds[] = {1, 2, 3, 0x5EED, 20261202, 0x9E3779B97F4A7C15ull};
#define NSEEDS (sizeof seeds / sizeof seeds[0])

/* ---- where a failure happened ---- */

static uint64_t g_seed, g_step;
static const char *g_run = "", *g_op = "";

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            fail_msg("seed %llu run %s step %llu op %s: %s (line %d)",                             \
                     (unsigned long long) g_seed, g_run, (unsigned long long) g_step, g_op, #c,    \
                     __LINE__);                                                                    \
    } while (0)

/* ---- random numbers (splitmix64) ---- */

static uint64_t rnd(uint64_t *r) {
    uint64_t z = (*r += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t below(uint64_t *r, uint32_t n) {
    return (uint32_t) (rnd(r) % n);
}

/* ---- the model: entries in id order, found by comparing bytes ---- */

typedef struct key {
    uint32_t len;
    char b[KMAX];
} key;

/* Entry id has key k[id]; linked[id] says whether it is the first with those
 * bytes. A chain per bucket of an FNV-1a hash (independent of the map's)
 * lists the ids newest first, so that a lookup in tens of thousands of
 * entries stays short; below 256 entries every lookup is also done by a
 * linear search over all of them and the two must agree. */
typedef struct model {
    key *k;
    uint32_t *next;
    uint8_t *linked;
    uint32_t n, cap, nlinked;
    uint32_t head[NBUCKET];
} model;

static model *model_new(void) {
    model *md = calloc(1, sizeof *md);
    assert_non_null(md);
    memset(md->head, 0xff, sizeof md->head);
    return md;
}

static void model_free(model *md) {
    free(md->k);
    free(md->next);
    free(md->linked);
    free(md);
}

static uint32_t bucket(const key *k) {
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < k->len; i++)
        h = (h ^ (unsigned char) k->b[i]) * 16777619u;
    return (h ^ k->len) & (NBUCKET - 1);
}

static bool key_eq(const key *a, const key *b) {
    return a->len == b->len && memcmp(a->b, b->b, a->len) == 0;
}

static int64_t linear_find(const model *md, const key *k) {
    for (uint32_t id = 0; id < md->n; id++)
        if (key_eq(&md->k[id], k))
            return id;
    return -1;
}

/* The first id holding k's bytes, or -1. */
static int64_t model_find(const model *md, const key *k) {
    int64_t found = -1;
    for (uint32_t id = md->head[bucket(k)]; id != NONE; id = md->next[id])
        if (key_eq(&md->k[id], k))
            found = id;
    if (md->n < 256)
        CHECK(found == linear_find(md, k));
    return found;
}

static void model_push(model *md, const key *k) {
    if (md->n == md->cap) {
        md->cap = md->cap ? md->cap * 2 : 1024;
        md->k = realloc(md->k, md->cap * sizeof *md->k);
        md->next = realloc(md->next, md->cap * sizeof *md->next);
        md->linked = realloc(md->linked, md->cap);
        assert_true(md->k && md->next && md->linked);
    }
    uint32_t id = md->n, b = bucket(k);
    md->linked[id] = model_find(md, k) < 0;
    md->nlinked += md->linked[id];
    md->k[id] = *k;
    md->next[id] = md->head[b];
    md->head[b] = id;
    md->n++;
}

static void model_truncate(model *md, uint32_t n) {
    while (md->n > n) {
        uint32_t id = --md->n;
        md->head[bucket(&md->k[id])] = md->next[id];
        md->nlinked -= md->linked[id];
    }
}

/* ---- keys ---- */

/* Stems that keys are cut from: all 'a', all zero, a small alphabet, any byte. */
static char stems[4][KMAX];
static const char alphabet[] = {0, 'a', 'A', ' ', 'b', (char) 0xff};

static char letter(uint64_t *r) {
    return alphabet[below(r, sizeof alphabet)];
}

static void make_stems(uint64_t *r) {
    memset(stems[0], 'a', KMAX);
    memset(stems[1], 0, KMAX);
    for (int i = 0; i < KMAX; i++) {
        stems[2][i] = letter(r);
        stems[3][i] = (char) rnd(r);
    }
}

/* One byte of k changed where a tail load starts or ends, or at random; or k
 * one byte longer (a zero or a letter) or shorter. */
static void tweak(uint64_t *r, key *k) {
    uint32_t what = below(r, 10);
    if (what == 0 && k->len < KMAX) {
        k->b[k->len++] = below(r, 2) ? 0 : letter(r);
        return;
    }
    if (what == 1 && k->len > 0) {
        k->len--;
        return;
    }
    if (k->len == 0)
        return;
    const uint32_t at[] = {0,          k->len / 2, k->len - 1, k->len - 4,
                           k->len - 5, k->len - 8, k->len - 9, below(r, k->len)};
    uint32_t i = at[below(r, 8)];
    static const unsigned char flips[] = {1, 0x20, 0x80, 0xff};
    if (i < k->len)
        k->b[i] ^= (char) flips[below(r, 4)];
}

static uint32_t short_or_any_len(uint64_t *r) {
    return below(r, 2) ? below(r, 10) : below(r, KMAX + 1);
}

/* A fresh key: a stem's prefix with 8 random bytes somewhere in it. */
static void fresh_key(uint64_t *r, key *k) {
    k->len = 8 + below(r, KMAX - 8 + 1);
    memcpy(k->b, stems[below(r, 4)], k->len);
    uint64_t v = rnd(r);
    memcpy(k->b + below(r, k->len - 7), &v, 8);
}

/* A key drawn from one of the shapes above (fresh with probability
 * fresh_pct %); *src is the entry it was copied from, or NONE. */
static void gen_key(uint64_t *r, const model *md, uint32_t fresh_pct, key *k, uint32_t *src) {
    uint32_t mode = below(r, 100) < fresh_pct ? 5 : below(r, 5);
    *src = NONE;
    if (mode <= 1 && md->n > 0) {
        *src = below(r, md->n);
        *k = md->k[*src];
        if (mode == 1)
            tweak(r, k);
        return;
    }
    const char *stem = stems[below(r, 4)];
    k->len = short_or_any_len(r);
    if (mode == 2)
        memcpy(k->b, stem, k->len);
    else if (mode == 3)
        memcpy(k->b, stem + KMAX - k->len, k->len);
    else if (mode == 4)
        for (uint32_t i = 0; i < k->len; i++)
            k->b[i] = letter(r);
    else
        fresh_key(r, k);
}

/* k's bytes at the end of a heap block of their own, starting 0..7 bytes
 * into it: a read past the key is out of bounds and most starts are
 * unaligned. Free *block after use. */
static const char *probe(uint64_t *r, const key *k, char **block) {
    size_t pad = below(r, 8);
    *block = malloc(pad + k->len ? pad + k->len : 1);
    assert_non_null(*block);
    memcpy(*block + pad, k->b, k->len);
    return *block + pad;
}

/* ---- the map under test ---- */

typedef uint32_t (*hash_fn)(const char *s, size_t len);

static uint32_t h_real(const char *s, size_t len) {
    return qsf_strmap_hash(s, len);
}

/* Ignores the last byte: "ab", "abc" and "abd" share a hash. */
static uint32_t h_but_last(const char *s, size_t len) {
    return qsf_strmap_hash(s, len ? len - 1 : 0);
}

/* Ignores bit 0x20 of every byte: 'a' and 'A', 0 and ' ' share a hash. */
static uint32_t h_fold(const char *s, size_t len) {
    char f[KMAX];
    for (size_t i = 0; i < len; i++)
        f[i] = (char) (s[i] | 0x20);
    return qsf_strmap_hash(f, len);
}

/* Sixteen hashes whose home is one of the last sixteen slots, whatever the
 * size: one cluster that wraps around the end of the slot array. */
static uint32_t h_wrap16(const char *s, size_t len) {
    return 0xFFFFFFF0u | (qsf_strmap_hash(s, len) & 15);
}

typedef struct sdrv {
    qsf_strmap m;
    model *md;
    hash_fn h;
    uint64_t r;
    const char *held; /* from qsf_strmap_str for entry held_id; must stay valid */
    uint32_t held_id;
} sdrv;

static uint64_t round8(uint64_t n) {
    return (n + 7) & ~(uint64_t) 7;
}

/* The records, as strmap.h draws them, one after the other in id order from
 * offset 0 (so that undone inserts leave no bytes behind), and arena_len
 * their end. */
static void check_records(const sdrv *d) {
    uint64_t end = 0;
    for (uint32_t id = 0; id < d->md->n; id++) {
        const key *k = &d->md->k[id];
        const qsf_strmap_entry *e = &d->m.entries[id];
        CHECK(e->off == end);
        CHECK(e->linked == d->md->linked[id]);
        const char *rec = d->m.arena + e->off;
        CHECK(qsf_strmap_load32(rec) == id);
        CHECK(qsf_strmap_load32(rec + 4) == k->len);
        CHECK(memcmp(rec + 8, k->b, k->len) == 0);
        for (uint64_t i = 8 + k->len; i < 8 + round8(k->len); i++)
            CHECK(rec[i] == 0);
        end += 8 + round8(k->len);
    }
    CHECK(d->m.arena_len == end);
    CHECK(d->m.arena_len <= d->m.arena_cap);
}

/* One slot per linked entry and no other, each naming its record and hash;
 * at most half of the slots in use. */
static void check_slots(const sdrv *d) {
    uint32_t used = 0;
    for (uint64_t i = 0; d->m.slots && i <= d->m.slot_mask; i++) {
        uint64_t s = d->m.slots[i];
        if (!s)
            continue;
        used++;
        uint64_t off = ((uint64_t) (uint32_t) s - 1) * 8;
        CHECK(off < d->m.arena_len);
        uint32_t id = qsf_strmap_load32(d->m.arena + off);
        CHECK(id < d->md->n && d->md->linked[id]);
        CHECK(d->m.entries[id].off == off);
        CHECK((uint32_t) (s >> 32) == d->m.entries[id].hash);
    }
    CHECK(used == d->md->nlinked);
    CHECK(d->m.linked == d->md->nlinked);
    CHECK(!d->m.slots || 2 * (uint64_t) used <= (uint64_t) d->m.slot_mask + 1);
}

/* Everything: counts, records, slots, every entry by id and by string. */
static void check_all(sdrv *d) {
    const char *op = g_op;
    g_op = "check_all";
    CHECK(d->m.count == d->md->n);
    check_records(d);
    check_slots(d);
    for (uint32_t id = 0; id < d->md->n; id++) {
        const key *k = &d->md->k[id];
        size_t len;
        const char *s = qsf_strmap_str(&d->m, id, &len);
        CHECK(len == k->len && memcmp(s, k->b, len) == 0);
        int64_t want = d->md->linked[id] ? id : model_find(d->md, k);
        CHECK(qsf_strmap_find(&d->m, k->b, k->len, d->h(k->b, k->len)) == want);
    }
    g_op = op;
}

/* Adds k: findable when new, by id only (a duplicate) when already there. */
static void s_insert(sdrv *d, const key *k) {
    g_op = "insert";
    char *block;
    const char *s = probe(&d->r, k, &block);
    uint32_t h = d->h(s, k->len);
    int64_t first = model_find(d->md, k);
    CHECK(qsf_strmap_find(&d->m, s, k->len, h) == first);
    int64_t id = first < 0 ? qsf_strmap_add(&d->m, s, k->len, h)
                           : qsf_strmap_add_unlinked(&d->m, s, k->len, h);
    CHECK(id == d->md->n);
    free(block);
    model_push(d->md, k);
    d->held_id = NONE; /* an add may move the arena */
}

/* Looks k up; compares it with the key it was made from, byte by byte. */
static void s_find(sdrv *d, const key *k, uint32_t src) {
    g_op = "find";
    char *block;
    const char *s = probe(&d->r, k, &block);
    CHECK(qsf_strmap_find(&d->m, s, k->len, d->h(s, k->len)) == model_find(d->md, k));
    CHECK(qsf_strmap_hash(s, k->len) == qsf_strmap_hash(k->b, k->len));
    if (src != NONE && d->md->k[src].len == k->len) {
        size_t len;
        const char *stored = qsf_strmap_str(&d->m, src, &len);
        bool same = memcmp(d->md->k[src].b, k->b, k->len) == 0;
        CHECK(qsf_bytes_eq(stored, s, len) == same);
        CHECK(qsf_bytes_eq(s, stored, len) == same);
    }
    free(block);
}

static void s_str(sdrv *d) {
    g_op = "str";
    if (d->md->n == 0)
        return;
    uint32_t id = below(&d->r, d->md->n);
    size_t len;
    const char *s = qsf_strmap_str(&d->m, id, &len);
    CHECK(len == d->md->k[id].len && memcmp(s, d->md->k[id].b, len) == 0);
    d->held = s;
    d->held_id = id;
}

static void s_truncate(sdrv *d, uint32_t n) {
    g_op = "truncate";
    qsf_strmap_truncate(&d->m, n);
    model_truncate(d->md, n);
    CHECK(d->m.count == n);
    if (d->held_id != NONE && d->held_id >= n)
        d->held_id = NONE;
}

static void s_clear(sdrv *d) {
    g_op = "clear";
    qsf_strmap_clear(&d->m);
    model_truncate(d->md, 0);
    d->held_id = NONE;
    check_all(d);
}

/* A pointer from qsf_strmap_str stays good until the next add. */
static void check_held(const sdrv *d) {
    if (d->held_id != NONE)
        CHECK(memcmp(d->held, d->md->k[d->held_id].b, d->md->k[d->held_id].len) == 0);
}

/* How many entries to keep: mostly a few undone (a cancelled row), sometimes
 * hundreds, sometimes any number, sometimes just around a power of two. */
static uint32_t truncate_to(uint64_t *r, uint32_t n, bool small_only) {
    uint32_t kind = small_only ? 0 : below(r, 20);
    if (kind < 12)
        return n - below(r, (n < 8 ? n : 8) + 1);
    if (kind < 17)
        return n - below(r, (n < 300 ? n : 300) + 1);
    if (kind < 19 || n < 8)
        return below(r, n + 1);
    uint32_t p = 8;
    while (p * 2 < n)
        p *= 2;
    uint32_t to = p - 2 + below(r, 5);
    return to < n ? to : n;
}

/* The odds of a step: percent of fresh keys, of adds and of truncations
 * (the rest looks up, half by string, half by id), and whether truncations
 * only undo a few entries. */
typedef struct mix {
    uint32_t fresh, add, trunc;
    bool small_truncs;
} mix;

static const mix growing = {80, 70, 5, true};
static const mix wandering_up = {30, 55, 5, true};
static const mix wandering_down = {10, 30, 10, false};

static void s_step(sdrv *d, const mix *x) {
    key k;
    uint32_t src, op = below(&d->r, 100);
    gen_key(&d->r, d->md, x->fresh, &k, &src);
    if (op < x->add)
        s_insert(d, &k);
    else if (op >= 100 - x->trunc)
        s_truncate(d, d->md->n ? truncate_to(&d->r, d->md->n, x->small_truncs) : 0);
    else if (op % 2)
        s_find(d, &k, src);
    else
        s_str(d);
    check_held(d);
    g_step++;
}

/* Small maps, every kind of step, a full check every 16 steps: the size
 * wanders toward a target redrawn every 512 steps in 0..max_n, so it
 * crosses the first rehash thresholds up and down. */
static void s_churn(sdrv *d, uint32_t steps, uint32_t max_n) {
    uint32_t target = 0;
    for (uint32_t i = 0; i < steps; i++) {
        if (i % 512 == 0)
            target = below(&d->r, max_n + 1);
        if (below(&d->r, 2000) == 0)
            s_clear(d);
        s_step(d, d->md->n < target ? &wandering_up : &wandering_down);
        if (i % 16 == 0)
            check_all(d);
    }
    check_all(d);
}

/* Grows to target entries with small undos on the way, checking everything
 * each time the count reaches a power of two (near where the slots are
 * rehashed: at half full). */
static void s_grow(sdrv *d, uint32_t target) {
    while (d->md->n < target) {
        uint32_t before = d->md->n;
        s_step(d, &growing);
        if (d->md->n > before && (d->md->n & (d->md->n - 1)) == 0)
            check_all(d);
    }
    check_all(d);
}

/* Cuts back across rehash boundaries (entries whose slots were placed by
 * different rehashes go), then grows again. */
static void s_cross(sdrv *d, int rounds, uint32_t target) {
    for (int i = 0; i < rounds; i++) {
        uint32_t n = d->md->n;
        s_truncate(d, truncate_to(&d->r, n, false) / (below(&d->r, 2) + 1));
        check_all(d);
        uint32_t again = d->md->n + below(&d->r, target / 4 + 1);
        s_grow(d, again < target ? again : target);
    }
}

static void run_map(uint64_t seed, const char *run, hash_fn h, uint32_t churn_n, uint32_t grow_n) {
    sdrv d = {.md = model_new(), .h = h, .r = seed, .held_id = NONE};
    g_seed = seed;
    g_run = run;
    g_step = 0;
    make_stems(&d.r);
    qsf_strmap_init(&d.m);
    s_churn(&d, 20000, churn_n);
    if (grow_n) {
        s_grow(&d, grow_n);
        s_cross(&d, 12, grow_n);
        s_clear(&d);
        s_grow(&d, 3000);
    }
    s_churn(&d, 5000, churn_n);
    qsf_strmap_destroy(&d.m);
    model_free(d.md);
}

static void strmap_matches_model(void **state) {
    (void) state;
    for (size_t i = 0; i < NSEEDS; i++)
        run_map(seeds[i], "h_real", h_real, 300, i % 2 ? 70000 : 20000);
}

static void strmap_matches_model_when_hashes_collide(void **state) {
    (void) state;
    for (size_t i = 0; i < NSEEDS; i++) {
        run_map(seeds[i], "h_but_last", h_but_last, 300, i < 2 ? 20000 : 0);
        run_map(seeds[i], "h_fold", h_fold, 300, i < 2 ? 20000 : 0);
        run_map(seeds[i], "h_wrap16", h_wrap16, 400, 0);
    }
}

/* ---- the symbol table ---- */

typedef struct tdrv {
    qsf_symtab *t;
    model *md;
    uint64_t r;
    uint32_t published, persisted, cap;
} tdrv;

static void t_check_all(tdrv *d) {
    const char *op = g_op;
    g_op = "check_all";
    CHECK(qsf_symtab_size(d->t) == d->md->n);
    CHECK(qsf_symtab_published(d->t) == d->published);
    CHECK(qsf_symtab_persisted(d->t) == d->persisted);
    CHECK(qsf_symtab_cap(d->t) == d->cap);
    for (uint32_t id = 0; id < d->md->n; id++) {
        const key *k = &d->md->k[id];
        const char *s;
        size_t len;
        CHECK(qsf_symtab_get(d->t, id, &s, &len) == QSF_OK);
        CHECK(len == k->len && memcmp(s, k->b, len) == 0);
        uint32_t found = NONE;
        CHECK(qsf_symtab_find(d->t, k->b, k->len, &found) == 1);
        CHECK(found == (d->md->linked[id] ? id : (uint32_t) model_find(d->md, k)));
    }
    g_op = op;
}

/* Interns k (intern = true) or seeds it as a recovered entry would be. */
static void t_add(tdrv *d, const key *k, bool intern) {
    g_op = intern ? "intern" : "seed";
    char *block;
    const char *s = probe(&d->r, k, &block);
    int64_t first = model_find(d->md, k);
    bool grows = !intern || first < 0;
    uint32_t id = NONE;
    int is_new = -1;
    int rc = intern ? qsf_symtab_intern(d->t, s, k->len, &id, &is_new, NULL)
                    : qsf_symtab_seed(d->t, s, k->len, NULL);
    free(block);
    if (grows && d->md->n >= d->cap) {
        CHECK(rc == QSF_E_DICT_FULL);
        return;
    }
    CHECK(rc == QSF_OK);
    if (intern) {
        CHECK(is_new == (first < 0));
        CHECK(id == (first < 0 ? d->md->n : (uint32_t) first));
    }
    if (grows)
        model_push(d->md, k);
}

static void t_find(tdrv *d, const key *k) {
    g_op = "find";
    char *block;
    const char *s = probe(&d->r, k, &block);
    int64_t first = model_find(d->md, k);
    uint32_t id = NONE;
    CHECK(qsf_symtab_find(d->t, s, k->len, &id) == (first >= 0));
    CHECK(first < 0 || id == (uint32_t) first);
    free(block);
}

static void t_get(tdrv *d) {
    g_op = "get";
    uint32_t id = below(&d->r, d->md->n + 2);
    const char *s;
    size_t len;
    int rc = below(&d->r, 2) ? qsf_symtab_get(d->t, id, &s, &len)
                             : qsf_symtab_entry_cb(d->t, id, &s, &len);
    if (id >= d->md->n) {
        CHECK(rc == QSF_E_INVAL);
        return;
    }
    CHECK(rc == QSF_OK);
    CHECK(len == d->md->k[id].len && memcmp(s, d->md->k[id].b, len) == 0);
}

/* Truncation never goes below the published or persisted watermark. */
static void t_truncate(tdrv *d, bool small_only) {
    g_op = "truncate";
    uint32_t to = d->md->n ? truncate_to(&d->r, d->md->n, small_only) : 0;
    uint32_t floor = d->published > d->persisted ? d->published : d->persisted;
    qsf_symtab_truncate(d->t, to);
    model_truncate(d->md, to > floor ? to : floor);
    CHECK(qsf_symtab_size(d->t) == d->md->n);
}

/* Moves a watermark (clamped to size) or the cap (ignored outside
 * 1..QSF_QWP_MAX_SYMBOLS). */
static void t_limits(tdrv *d) {
    g_op = "limits";
    uint32_t n = d->md->n, v = below(&d->r, n + 3), what = below(&d->r, 8);
    if (what < 3) {
        qsf_symtab_set_published(d->t, v);
        d->published = v < n ? v : n;
    } else if (what < 6) {
        qsf_symtab_set_persisted(d->t, v);
        d->persisted = v < n ? v : n;
    } else {
        bool lower = what == 6 && below(&d->r, 4) == 0;
        uint32_t cap = lower ? v : QSF_QWP_MAX_SYMBOLS + below(&d->r, 2);
        qsf_symtab_set_cap(d->t, cap);
        if (cap >= 1 && cap <= QSF_QWP_MAX_SYMBOLS)
            d->cap = cap;
    }
}

/* As s_step; an add is an intern four times in five, else a seed; one step
 * in twenty moves a watermark or the cap. */
static void t_step(tdrv *d, const mix *x) {
    key k;
    uint32_t src, op = below(&d->r, 100);
    gen_key(&d->r, d->md, x->fresh, &k, &src);
    if (op < x->add)
        t_add(d, &k, op % 5 != 0);
    else if (op >= 100 - x->trunc)
        t_truncate(d, x->small_truncs);
    else if (op % 10 == 0)
        t_limits(d);
    else if (op % 2)
        t_find(d, &k);
    else
        t_get(d);
    g_step++;
}

/* grow_steps random steps toward max_n entries, then wander_steps toward a
 * size redrawn every 512 steps in 0..max_n. */
static void run_symtab(uint64_t seed, uint32_t grow_steps, uint32_t wander_steps, uint32_t max_n) {
    tdrv d = {.md = model_new(), .r = seed, .cap = QSF_QWP_MAX_SYMBOLS};
    g_seed = seed;
    g_run = grow_steps ? "symtab_grow" : "symtab";
    g_step = 0;
    make_stems(&d.r);
    assert_int_equal(qsf_symtab_new(&d.t, NULL), QSF_OK);
    uint32_t target = max_n;
    for (uint32_t i = 0; i < grow_steps + wander_steps; i++) {
        if (i >= grow_steps && i % 512 == 0)
            target = below(&d.r, max_n + 1);
        t_step(&d, d.md->n >= target ? &wandering_down : i < grow_steps ? &growing : &wandering_up);
        if (i % (d.md->n < 512 ? 16 : 4096) == 0)
            t_check_all(&d);
    }
    t_check_all(&d);
    qsf_symtab_free(d.t);
    model_free(d.md);
}

static void symtab_matches_model(void **state) {
    (void) state;
    for (size_t i = 0; i < NSEEDS; i++) {
        run_symtab(seeds[i], 0, 20000, 300);
        if (i % 2)
            run_symtab(seeds[i] ^ 0xA5A5, 90000, 20000, 60000);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strmap_matches_model),
        cmocka_unit_test(strmap_matches_model_when_hashes_collide),
        cmocka_unit_test(symtab_matches_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
