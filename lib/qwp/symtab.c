/* The sender's symbol table: a strmap plus the cap and the published / persisted
 * watermarks described in symtab.h. */
#include "qwp/symtab.h"

#include "err.h"
#include "qwp/strmap.h"
#include "qwp/types.h"

#include <stdbool.h>
#include <stdlib.h>

struct qsf_symtab {
    qsf_strmap map;
    uint32_t cap;
    uint32_t published;
    uint32_t persisted;
};

int qsf_symtab_new(qsf_symtab **out, qsf_errinfo *err) {
    qsf_symtab *t = calloc(1, sizeof *t);
    if (!t)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "symbol table: out of memory");
    qsf_strmap_init(&t->map);
    t->cap = QSF_QWP_MAX_SYMBOLS;
    *out = t;
    return QSF_OK;
}

void qsf_symtab_free(qsf_symtab *t) {
    if (!t)
        return;
    qsf_strmap_destroy(&t->map);
    free(t);
}

static int add(qsf_symtab *t, const char *s, size_t len, uint32_t hash, bool link, uint32_t *id,
               qsf_errinfo *err) {
    if (t->map.count >= t->cap)
        return qsf_err_set(err, QSF_E_DICT_FULL, 0, 0,
                           "symbol dictionary full: %u distinct symbols (the server's limit); "
                           "known symbols can still be used",
                           t->cap);
    int64_t r = link ? qsf_strmap_add(&t->map, s, len, hash)
                     : qsf_strmap_add_unlinked(&t->map, s, len, hash);
    if (r < 0)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "symbol table: out of memory (%u entries)",
                           t->map.count);
    *id = (uint32_t) r;
    return QSF_OK;
}

int qsf_symtab_intern(qsf_symtab *t, const char *s, size_t len, uint32_t *id, int *is_new,
                      qsf_errinfo *err) {
    uint32_t hash = qsf_strmap_hash(s, len);
    int64_t found = qsf_strmap_find(&t->map, s, len, hash);
    if (is_new)
        *is_new = found < 0;
    if (found >= 0) {
        *id = (uint32_t) found;
        return QSF_OK;
    }
    return add(t, s, len, hash, true, id, err);
}

int qsf_symtab_find(const qsf_symtab *t, const char *s, size_t len, uint32_t *id) {
    int64_t found = qsf_strmap_find(&t->map, s, len, qsf_strmap_hash(s, len));
    if (found < 0)
        return 0;
    *id = (uint32_t) found;
    return 1;
}

int qsf_symtab_get(const qsf_symtab *t, uint32_t id, const char **s, size_t *len) {
    if (id >= t->map.count)
        return QSF_E_INVAL;
    *s = qsf_strmap_str(&t->map, id, len);
    return QSF_OK;
}

int qsf_symtab_entry_cb(void *user, uint32_t id, const char **s, size_t *len) {
    return qsf_symtab_get(user, id, s, len);
}

uint32_t qsf_symtab_size(const qsf_symtab *t) {
    return t->map.count;
}

uint32_t qsf_symtab_cap(const qsf_symtab *t) {
    return t->cap;
}

int qsf_symtab_seed(qsf_symtab *t, const char *s, size_t len, qsf_errinfo *err) {
    uint32_t id, hash = qsf_strmap_hash(s, len);
    bool dup = qsf_strmap_find(&t->map, s, len, hash) >= 0;
    return add(t, s, len, hash, !dup, &id, err);
}

uint32_t qsf_symtab_published(const qsf_symtab *t) {
    return t->published;
}

uint32_t qsf_symtab_persisted(const qsf_symtab *t) {
    return t->persisted;
}

void qsf_symtab_set_published(qsf_symtab *t, uint32_t n) {
    t->published = n < t->map.count ? n : t->map.count;
}

void qsf_symtab_set_persisted(qsf_symtab *t, uint32_t n) {
    t->persisted = n < t->map.count ? n : t->map.count;
}

void qsf_symtab_truncate(qsf_symtab *t, uint32_t size) {
    uint32_t floor = t->published > t->persisted ? t->published : t->persisted;
    qsf_strmap_truncate(&t->map, size > floor ? size : floor);
}

void qsf_symtab_set_cap(qsf_symtab *t, uint32_t cap) {
    if (cap >= 1 && cap <= QSF_QWP_MAX_SYMBOLS)
        t->cap = cap;
}
