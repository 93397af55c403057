/* What the Arrow import keeps per chunk: the QuestDB type each column is asked
 * to become (qsf_chunk_arrow_type; then the field's metadata, "questdb.type"
 * and the arrow.uuid extension; then the default mapping of docs/ARROW.md),
 * and the buffers of the columns it had to convert (arrow_convert.c), which
 * live until the chunk is cleared or freed, as borrowed buffers would. */
#include "chunk/arrow_int.h"
#include "grow.h"
#include "chunk/chunk_arrow.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Longest column name QuestDB takes, in bytes. */
#define TYPE_NAME_MAX 127

struct qsf_arrow_state {
    size_t n, cap; /* the type table */
    struct {
        char name[TYPE_NAME_MAX + 1];
        size_t len;
        int type;
    } * e;
    size_t nblocks, blocks_cap; /* converted buffers */
    void **blocks;
};

void qsf_arrow_state_clear(qsf_arrow_state *t) {
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->nblocks; i++)
        free(t->blocks[i]);
    t->nblocks = 0;
}

void qsf_arrow_state_free(qsf_arrow_state *t) {
    if (t != NULL) {
        qsf_arrow_state_clear(t);
        free(t->blocks);
        free(t->e);
        free(t);
    }
}

static qsf_arrow_state *state(qsf_chunk *c) {
    qsf_arrow_state **slot = qsf_chunk_arrow_state(c);
    if (*slot == NULL)
        *slot = calloc(1, sizeof **slot);
    return *slot;
}

void *qsf_arrow_scratch(qsf_chunk *c, size_t bytes) {
    qsf_arrow_state *t = state(c);
    if (t == NULL)
        return NULL;
    if (t->nblocks == t->blocks_cap) {
        void **b = qsf_grow(t->blocks, &t->blocks_cap, 8);
        if (b == NULL)
            return NULL;
        t->blocks = b;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (p != NULL)
        t->blocks[t->nblocks++] = p;
    return p;
}

/* Index of `name` (ASCII case-insensitive, as QuestDB compares column names),
 * or t->n. */
static size_t find(const qsf_arrow_state *t, const char *name, size_t len) {
    for (size_t i = 0; i < t->n; i++) {
        if (t->e[i].len == len && strncasecmp(t->e[i].name, name, len) == 0)
            return i;
    }
    return t->n;
}

static int types_get(const qsf_arrow_state *t, const char *name, size_t len) {
    if (t == NULL || name == NULL)
        return QSF_TYPE_AUTO;
    size_t i = find(t, name, len);
    return i < t->n ? t->e[i].type : QSF_TYPE_AUTO;
}

static int put(qsf_arrow_state *t, const char *col, size_t len, int type, qsf_errinfo *err) {
    size_t i = find(t, col, len);
    if (i == t->n) {
        if (t->n == t->cap) {
            void *e = qsf_grow(t->e, &t->cap, 4);
            if (e == NULL)
                return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "qsf_chunk_arrow_type: out of memory");
            t->e = e;
        }
        memcpy(t->e[i].name, col, len);
        t->e[i].len = len;
        t->n++;
    }
    t->e[i].type = type;
    return QSF_OK;
}

QSF_API int qsf_chunk_arrow_type(qsf_chunk *c, const char *col, size_t col_len, int qsf_type,
                                 qsf_errinfo *err) {
    if (c == NULL || col == NULL)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "qsf_chunk_arrow_type: NULL chunk or column");
    if (col_len == 0 || col_len > TYPE_NAME_MAX)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "qsf_chunk_arrow_type: column name of %zu bytes (1..%d)", col_len,
                           TYPE_NAME_MAX);
    if (qsf_type < QSF_TYPE_AUTO || qsf_type > QSF_TYPE_IPV4) {
        char name[QSF_ARROW_NAME_CAP];
        qsf_arrow_name_print(name, col, col_len);
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "qsf_chunk_arrow_type: unknown QuestDB type %d for column %s", qsf_type,
                           name);
    }
    qsf_arrow_state *t = state(c);
    if (t == NULL)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "qsf_chunk_arrow_type: out of memory");
    return put(t, col, col_len, qsf_type, err);
}

/* The QSF_TYPE_* a "questdb.type" value names, -1 for none. */
static int type_named(const char *v, int32_t len) {
    static const char *const names[] = {"", "symbol", "varchar", "uuid", "long256", "char", "ipv4"};
    for (int t = QSF_TYPE_SYMBOL; t <= QSF_TYPE_IPV4; t++) {
        if ((size_t) len == strlen(names[t]) && strncasecmp(v, names[t], (size_t) len) == 0)
            return t;
    }
    return -1;
}

int qsf_arrow_wanted_type(qsf_chunk *c, const char *name, size_t name_len,
                          const struct ArrowSchema *schema) {
    int t = types_get(*qsf_chunk_arrow_state(c), name, name_len);
    if (t != QSF_TYPE_AUTO)
        return t;
    const char *v;
    int32_t vl;
    if (qsf_arrow_meta_get(schema->metadata, "questdb.type", &v, &vl))
        return type_named(v, vl);
    if (qsf_arrow_meta_get(schema->metadata, "ARROW:extension:name", &v, &vl) && vl == 10 &&
        memcmp(v, "arrow.uuid", 10) == 0)
        return QSF_TYPE_UUID;
    return QSF_TYPE_AUTO;
}
