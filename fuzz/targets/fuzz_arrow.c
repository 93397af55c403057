/* Fuzz target: the Arrow C Data Interface import (lib/chunk/arrow_*.c) over
 * hostile ArrowSchema/ArrowArray trees built from the input. Every buffer is
 * its own allocation of exactly the size the array declares for its format
 * (offset + length elements, the bitmap's bytes, offsets + 1 entries, string
 * data as far as any offset reaches), so under ASan a read past what the
 * producer declared is caught. Everything else is the input's word: lengths,
 * offsets, null counts, buffer and child counts, offsets' values, codes,
 * formats, metadata. The call must return QSF_OK (and the chunk then holds
 * the rows) or a clear error (a known code and a message), and a failed call
 * leaves the chunk as it was. */
#include "qsf.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(int cond) {
    if (!cond)
        abort();
}

typedef struct rd {
    const uint8_t *p;
    size_t n;
} rd;

static uint8_t u8(rd *r) {
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

/* Every allocation of one input, freed at the end. A tree has at most
 * MAX_NODES nodes of at most 10 allocations each. */
#define MAX_NODES  48
#define MAX_ALLOCS (10 * MAX_NODES)
static void *allocs[MAX_ALLOCS];
static int nallocs, nnodes;

static void *take(size_t n) {
    check(nallocs < MAX_ALLOCS);
    void *p = malloc(n ? n : 1);
    check(p != NULL);
    allocs[nallocs++] = p;
    return p;
}

static void *fill(rd *r, size_t n) {
    uint8_t *p = take(n);
    for (size_t i = 0; p && i < n; i++)
        p[i] = u8(r);
    return p;
}

/* How a format's buffers are laid out. */
enum lay { L_FIXED, L_BITS, L_VAR32, L_VAR64, L_LIST, L_FIXLIST, L_STRUCT, L_NONE, L_VIEW };

static const struct fmt {
    const char *f;
    enum lay lay;
    int width; /* bytes per value (FIXED), values per row (FIXLIST) */
} fmts[] = {
    {"b", L_BITS, 0},
    {"c", L_FIXED, 1},
    {"C", L_FIXED, 1},
    {"s", L_FIXED, 2},
    {"S", L_FIXED, 2},
    {"i", L_FIXED, 4},
    {"I", L_FIXED, 4},
    {"l", L_FIXED, 8},
    {"L", L_FIXED, 8},
    {"e", L_FIXED, 2},
    {"f", L_FIXED, 4},
    {"g", L_FIXED, 8},
    {"z", L_VAR32, 0},
    {"Z", L_VAR64, 0},
    {"u", L_VAR32, 0},
    {"U", L_VAR64, 0},
    {"vu", L_VIEW, 0},
    {"vz", L_VIEW, 0},
    {"d:10,2", L_FIXED, 16},
    {"d:40,3,256", L_FIXED, 32},
    {"d:9,1,32", L_FIXED, 4},
    {"d:18,4,64", L_FIXED, 8},
    {"d:5,-2", L_FIXED, 16},
    {"d:90,80,256", L_FIXED, 32},
    {"w:16", L_FIXED, 16},
    {"w:32", L_FIXED, 32},
    {"w:3", L_FIXED, 3},
    {"tdD", L_FIXED, 4},
    {"tdm", L_FIXED, 8},
    {"tts", L_FIXED, 4},
    {"ttn", L_FIXED, 8},
    {"tss:", L_FIXED, 8},
    {"tsm:UTC", L_FIXED, 8},
    {"tsu:", L_FIXED, 8},
    {"tsn:Asia/Tokyo", L_FIXED, 8},
    {"tDu", L_FIXED, 8},
    {"tiM", L_FIXED, 4},
    {"+l", L_LIST, 0},
    {"+L", L_LIST, 0},
    {"+w:2", L_FIXLIST, 2},
    {"+w:3", L_FIXLIST, 3},
    {"+w:0", L_FIXLIST, 0},
    {"+s", L_STRUCT, 0},
    {"+m", L_LIST, 0},
    {"+ud:0,1", L_NONE, 0},
    {"+r", L_NONE, 0},
    {"n", L_NONE, 0},
    {"x", L_NONE, 0},
    {"", L_NONE, 0},
    {"tsu", L_FIXED, 8},
    {"+w:", L_NONE, 0},
};
#define NFMTS (sizeof fmts / sizeof fmts[0])

static const char *const qtypes[] = {"symbol", "varchar", "uuid", "long256", "char", "ipv4", "x"};

typedef struct node {
    struct ArrowSchema s;
    struct ArrowArray a;
} node;

static void rel_schema(struct ArrowSchema *s) {
    s->release = NULL;
}
static void rel_array(struct ArrowArray *a) {
    a->release = NULL;
}

/* Well-formed metadata {"questdb.type" or the extension name: a value}. */
static const char *metadata(rd *r) {
    uint8_t m = u8(r);
    if (m % 4 != 0)
        return NULL;
    const char *key = m & 4 ? "ARROW:extension:name" : "questdb.type";
    const char *val = m & 4 ? "arrow.uuid" : qtypes[(m >> 3) % 7];
    int32_t n = 1, kl = (int32_t) strlen(key), vl = (int32_t) strlen(val);
    char *b = take(12 + (size_t) kl + (size_t) vl);
    if (b == NULL)
        return NULL;
    memcpy(b, &n, 4);
    memcpy(b + 4, &kl, 4);
    memcpy(b + 8, key, (size_t) kl);
    memcpy(b + 8 + kl, &vl, 4);
    memcpy(b + 12 + kl, val, (size_t) vl);
    return b;
}

/* An offsets buffer of `count` entries of `width` bytes from the input (small
 * values that may decrease or be negative); *reach gets the largest. */
static void *offsets(rd *r, size_t count, int width, int64_t *reach) {
    uint8_t *p = take(count * (size_t) width);
    int64_t v = 0;
    *reach = 0;
    for (size_t i = 0; p && i < count; i++) {
        int8_t step = (int8_t) u8(r);
        v = step < -100 ? step : v + (step & 7);
        if (v > *reach)
            *reach = v;
        if (width == 4) {
            int32_t w = (int32_t) v;
            memcpy(p + i * 4, &w, 4);
        } else {
            memcpy(p + i * 8, &v, 8);
        }
    }
    return p;
}

static node *build(rd *r, int depth, const struct fmt *force, int64_t *rows_out);

/* The buffers of a node whose format is `f`, sized for offset + length. */
static void buffers(rd *r, node *nd, const struct fmt *f, int depth) {
    int64_t span = nd->a.offset + nd->a.length;
    int nb = f->lay == L_NONE                            ? 0
             : f->lay == L_STRUCT || f->lay == L_FIXLIST ? 1
             : f->lay == L_VAR32 || f->lay == L_VAR64    ? 3
             : f->lay == L_VIEW                          ? 4
                                                         : 2;
    uint8_t lie = u8(r);
    if (lie % 16 == 0) /* a wrong n_buffers: the pointer array has that many */
        nb = (nb + 1 + lie / 16) % 5;
    nd->a.n_buffers = nb;
    const void **b = take((size_t) nb * sizeof *b);
    nd->a.buffers = b;
    if (b == NULL)
        return;
    memset(b, 0, (size_t) nb * sizeof *b);
    if (nb > 0 && u8(r) % 2)
        b[0] = fill(r, (size_t) (span + 7) / 8);
    int64_t reach = 0;
    if (nb > 1) {
        switch (f->lay) {
        case L_FIXED:
            b[1] = fill(r, (size_t) span * (size_t) f->width);
            break;
        case L_BITS:
            b[1] = fill(r, (size_t) (span + 7) / 8);
            break;
        case L_VAR32:
        case L_LIST:
            b[1] = offsets(r, (size_t) span + 1, 4, &reach);
            break;
        case L_VAR64:
            b[1] = offsets(r, (size_t) span + 1, 8, &reach);
            break;
        default:
            b[1] = fill(r, (size_t) span * 16);
            break;
        }
    }
    if (nb > 2)
        b[2] = fill(r, (size_t) reach + 1);
    for (int i = 3; i < nb; i++)
        b[i] = fill(r, 8);
    if (f->lay == L_VIEW && nb == 4) { /* one data buffer, its true size last */
        static const int64_t size = 64;
        b[2] = fill(r, (size_t) size);
        int64_t *sz = take(sizeof size);
        *sz = size;
        b[3] = sz;
    }
    if (u8(r) % 32 == 0 && nb > 1) /* a NULL data buffer */
        b[1] = NULL;
    (void) depth;
}

/* Children: a list's element array, fixed-size list levels, struct fields. */
static void children(rd *r, node *nd, const struct fmt *f, int depth) {
    int64_t n = 0;
    if (f->lay == L_LIST || f->lay == L_FIXLIST)
        n = 1;
    else if (f->lay == L_STRUCT)
        n = u8(r) % 5;
    if (u8(r) % 32 == 0)
        n = u8(r) % 3; /* a wrong count */
    if (n == 0 || depth > 5)
        return;
    struct ArrowSchema **sk = take((size_t) n * sizeof *sk);
    struct ArrowArray **ak = take((size_t) n * sizeof *ak);
    if (sk == NULL || ak == NULL)
        return;
    for (int64_t i = 0; i < n; i++) {
        int64_t rows;
        node *c = build(r, depth + 1, NULL, &rows);
        if (c == NULL)
            return;
        sk[i] = &c->s;
        ak[i] = &c->a;
    }
    nd->s.n_children = nd->a.n_children = n;
    nd->s.children = sk;
    nd->a.children = ak;
    if (u8(r) % 32 == 0) /* schema and array disagree on the count */
        nd->a.n_children = n - 1;
}

static const char *const names[] = {"a", "b", "ts", "k", "sym", "A", "x y", "\x1b[31m"};

static node *build(rd *r, int depth, const struct fmt *force, int64_t *rows_out) {
    if (++nnodes > MAX_NODES)
        return NULL;
    node *nd = take(sizeof *nd);
    memset(nd, 0, sizeof *nd);
    uint8_t pick = u8(r);
    const struct fmt *f = &fmts[pick % NFMTS];
    /* mostly float64 under a list, so the list paths are reached */
    if (depth > 0 && pick >= 200)
        f = &fmts[11];
    if (force != NULL)
        f = force;
    nd->s.format = f->f;
    nd->s.name = names[u8(r) % 8];
    nd->s.metadata = metadata(r);
    nd->s.release = rel_schema;
    nd->a.release = rel_array;
    uint8_t len = u8(r), off = u8(r);
    nd->a.length = len % 48;
    nd->a.offset = off % 8;
    if (len == 255)
        nd->a.length = -1 - (int64_t) (off % 3);
    int64_t span = nd->a.length >= 0 ? nd->a.offset + nd->a.length : 0;
    int8_t nc = (int8_t) u8(r);
    nd->a.null_count = nc < -1 ? -1 : nc;
    if (nd->a.length < 0) { /* nothing may be read: no buffers */
        nd->a.n_buffers = 0;
        *rows_out = 0;
        return nd;
    }
    buffers(r, nd, f, depth);
    /* the bitmap's own zeros, most of the time, so values are reached */
    if (nd->a.n_buffers > 0 && nd->a.buffers[0] != NULL && nc >= 0 && nc % 4 != 0) {
        const uint8_t *v = nd->a.buffers[0];
        int64_t z = 0;
        for (int64_t i = nd->a.offset; i < span; i++)
            z += !((v[i >> 3] >> (i & 7)) & 1);
        nd->a.null_count = z;
    } else if (nd->a.n_buffers > 0 && nd->a.buffers[0] == NULL && nc >= 0 && nc % 4 != 0) {
        nd->a.null_count = 0;
    }
    children(r, nd, f, depth);
    if (depth < 3 && (f->f[0] == 'c' || f->f[0] == 's' || f->f[0] == 'i') && f->f[1] == 0 &&
        u8(r) % 2) {
        int64_t rows;
        node *d = build(r, depth + 1, NULL, &rows);
        if (d != NULL) {
            nd->s.dictionary = &d->s;
            if (u8(r) % 16 != 0)
                nd->a.dictionary = &d->a;
        }
    }
    *rows_out = nd->a.length;
    return nd;
}

static bool clear_error(int rc, const qsf_errinfo *e) {
    if (rc != QSF_E_VALUE && rc != QSF_E_UNSUPPORTED && rc != QSF_E_INVAL)
        return false;
    return e->code == rc && e->msg[0] != '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rd r = {data, size};
    nallocs = nnodes = 0;
    qsf_chunk *c;
    qsf_errinfo e;
    check(qsf_chunk_new("t", 1, &c, &e) == QSF_OK);
    uint8_t mode = u8(&r);
    if (mode & 8)
        (void) qsf_chunk_arrow_type(c, names[(mode >> 4) % 8], strlen(names[(mode >> 4) % 8]),
                                    (mode >> 5) % 8, &e);
    int64_t rows;
    /* a record batch is a struct most of the time */
    node *top = build(&r, 0, (mode & 5) == 1 ? &fmts[42] : NULL, &rows);
    if (top != NULL) {
        size_t before = qsf_chunk_rows(c);
        int rc;
        if (mode & 1)
            rc = qsf_chunk_arrow_batch(c, &top->s, &top->a, mode & 2 ? "ts" : NULL, &e);
        else
            rc = qsf_chunk_arrow_column(c, NULL, 0, &top->s, &top->a, &e);
        if (rc == QSF_OK)
            check((mode & 1) || qsf_chunk_rows(c) == (size_t) top->a.length);
        else
            check(clear_error(rc, &e) && qsf_chunk_rows(c) == before);
    }
    qsf_chunk_free(c);
    for (int i = 0; i < nallocs; i++)
        free(allocs[i]);
    return 0;
}
