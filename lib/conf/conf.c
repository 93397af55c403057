/* qsf_conf lifecycle: parse (lexer -> per-key values -> cross-key rules), from
 * the environment, clone, compare, free. */
#include "conf/impl.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

struct parse_ctx {
    qsf_conf *conf;
    struct qsf_addr_index addr_index;
    char name[64]; /* the key as written, for messages */
};

/* Every key starts at its default, parsed by the key's own parser. */
static int apply_defaults(qsf_conf *c, qsf_errinfo *err) {
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++) {
        const struct qsf_conf_keydesc *d = &qsf_conf_keys[i];
        if (!d->def)
            continue;
        int rc = qsf_conf_set_value(c, d, d->name, d->def, strlen(d->def), 0, err);
        if (rc == QSF_E_CONF) /* a bad row in conf/keys.def; every unit test catches it */
            return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "the default of %s does not parse",
                               d->name);
        if (rc != QSF_OK)
            return rc;
    }
    return QSF_OK;
}

static int unknown_key(const struct qsf_conf_pair *p, qsf_errinfo *err) {
    const struct qsf_conf_rejected *r = qsf_conf_find_rejected(p->key, p->klen);
    const struct qsf_conf_keydesc *near = qsf_conf_find_key_nocase(p->key, p->klen);
    if (p->after_secret) /* the "key" may be the tail of a secret with an unescaped ';' */
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "unknown configuration key at position %zu (not shown: it follows a "
                           "secret value; write ';' inside a value as ';;')",
                           p->kpos);
    if (r)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "unknown configuration key: %.*s at position %zu (%s)", (int) p->klen,
                           p->key, p->kpos, r->why);
    if (near)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "unknown configuration key: %.*s at position %zu (keys are "
                           "case-sensitive; did you mean %s?)",
                           (int) p->klen, p->key, p->kpos, near->name);
    const struct qsf_conf_keydesc *cred =
        qsf_conf_near_credential(p->key, p->klen, QSF_CONF_NEAR_ANY);
    if (cred) /* a credential with a typo or its value glued on: neither is shown */
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "unknown configuration key at position %zu (not shown: it is close to "
                           "the credential key %s and may hold its value; write %s=<value>)",
                           p->kpos, cred->name, cred->name);
    return qsf_err_set(err, QSF_E_CONF, 0, 0, "unknown configuration key: %.*s at position %zu",
                       (int) p->klen, p->key, p->kpos);
}

static int duplicate_key(const qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name,
                         size_t kpos, qsf_errinfo *err) {
    size_t first = c->key_pos[qsf_conf_key_of(d)];
    if (strcmp(name, d->name) != 0 || d->alias)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "duplicate key: %s at position %zu (%s%s%s was already given at "
                           "position %zu)",
                           name, kpos, d->name, d->alias ? "/" : "", d->alias ? d->alias : "",
                           first);
    return qsf_err_set(err, QSF_E_CONF, 0, 0,
                       "duplicate key: %s at position %zu (first given at position %zu)", name,
                       kpos, first);
}

static size_t field_size(int type) {
    switch (type) {
    case QSF_CONF_T_ONOFF:
        return sizeof(bool);
    case QSF_CONF_T_ENUM:
        return sizeof(int);
    case QSF_CONF_T_ADDR:
        return 0;
    default:
        return sizeof(int64_t); /* int64_t and uint64_t fields */
    }
}

/* Both spellings of a key whose alias may agree with it: the second value must
 * parse to the first (4m and 4194304 agree). */
static int values_agree(qsf_conf *c, const struct qsf_conf_keydesc *d,
                        const struct qsf_conf_pair *p, const char *name, qsf_errinfo *err) {
    size_t k = qsf_conf_key_of(d), n = field_size(d->type);
    unsigned char first[sizeof(int64_t)];
    memcpy(first, qsf_conf_field(c, d), n);
    int rc = qsf_conf_set_value(c, d, name, p->val, p->vlen, p->vpos, err);
    if (rc != QSF_OK || memcmp(first, qsf_conf_field(c, d), n) == 0)
        return rc;
    char now[40], was[40];
    struct qsf_sbuf b = {now, sizeof now, 0};
    qsf_conf_put_value(&b, c, d);
    memcpy(qsf_conf_field(c, d), first, n);
    b = (struct qsf_sbuf){was, sizeof was, 0};
    qsf_conf_put_value(&b, c, d);
    return qsf_err_set(err, QSF_E_CONF, 0, 0,
                       "%s=%s at position %zu and %s=%s at position %zu disagree (%s is another "
                       "name of %s: give one of them, or both with the same value)",
                       c->key_by_alias[k] ? d->alias : d->name, was, c->key_pos[k], name, now,
                       p->kpos, d->alias, d->name);
}

/* A key given again: a duplicate, unless it is the other spelling of a key whose
 * alias may agree with it. */
static int repeated_key(qsf_conf *c, const struct qsf_conf_keydesc *d,
                        const struct qsf_conf_pair *p, const char *name, qsf_errinfo *err) {
    size_t k = qsf_conf_key_of(d);
    bool by_alias = strcmp(name, d->name) != 0;
    if (!qsf_conf_alias_agrees[k] || qsf_conf_type_is_string(d->type) ||
        by_alias == c->key_by_alias[k])
        return duplicate_key(c, d, name, p->kpos, err);
    return values_agree(c, d, p, name, err);
}

static int apply_pair(void *vctx, const struct qsf_conf_pair *p, qsf_errinfo *err) {
    struct parse_ctx *ctx = vctx;
    qsf_conf *c = ctx->conf;
    const struct qsf_conf_keydesc *d = qsf_conf_find_key(p->key, p->klen);
    if (!d)
        return unknown_key(p, err);
    memcpy(ctx->name, p->key, p->klen); /* known keys are shorter than the buffer */
    ctx->name[p->klen] = '\0';
    size_t k = qsf_conf_key_of(d);
    if (p->vlen == 0)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "%s: empty value at position %zu (every key needs a value)", ctx->name,
                           p->vpos);
    if (c->key_set[k] && d->type != QSF_CONF_T_ADDR)
        return repeated_key(c, d, p, ctx->name, err);
    int rc = d->type == QSF_CONF_T_ADDR
                 ? qsf_conf_addr_add(c, &ctx->addr_index, p->val, p->vlen, p->vpos, err)
                 : qsf_conf_set_value(c, d, ctx->name, p->val, p->vlen, p->vpos, err);
    if (rc == QSF_E_CONF && qsf_conf_unchecked[k]) { /* ignored whatever its value: noted */
        c->key_unkept[k] = true;
        rc = QSF_OK;
    }
    if (rc == QSF_OK && !c->key_set[k]) {
        c->key_set[k] = true;
        c->key_pos[k] = p->kpos;
        c->key_by_alias[k] = strcmp(ctx->name, d->name) != 0;
    }
    return rc;
}

static int parse_into(qsf_conf *c, const char *s, size_t len, qsf_errinfo *err) {
    struct parse_ctx ctx = {.conf = c};
    int rc = apply_defaults(c, err);
    if (rc == QSF_OK)
        rc = qsf_conf_lex(s, len, &c->tls, apply_pair, &ctx, err);
    qsf_addr_index_free(&ctx.addr_index);
    if (rc == QSF_OK)
        rc = qsf_conf_apply_rules(c, err);
    return rc;
}

QSF_API int qsf_conf_parse(const char *s, size_t len, qsf_conf **out, qsf_errinfo *err) {
    if (!out || (!s && len))
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "qsf_conf_parse: %s is NULL",
                           out ? "the string" : "out");
    *out = NULL;
    qsf_conf *c = calloc(1, sizeof *c);
    if (!c)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory parsing the connect string");
    int rc = parse_into(c, s ? s : "", len, err);
    if (rc != QSF_OK) {
        qsf_conf_free(c);
        return rc;
    }
    if (err)
        qsf_err_clear(err);
    *out = c;
    return QSF_OK;
}

QSF_API int qsf_conf_from_env(qsf_conf **out, qsf_errinfo *err) {
    const char *s = getenv("QDB_CLIENT_CONF");
    if (out)
        *out = NULL;
    if (!s || !*s)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "QDB_CLIENT_CONF is %s (expected a connect string such as "
                           "ws::addr=localhost:9000;)",
                           s ? "empty" : "not set");
    int rc = qsf_conf_parse(s, strlen(s), out, err);
    if (rc != QSF_OK)
        qsf_err_prefix(err, "QDB_CLIENT_CONF");
    return rc;
}

static void free_fields(qsf_conf *c) {
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++) {
        const struct qsf_conf_keydesc *d = &qsf_conf_keys[i];
        if (qsf_conf_type_is_string(d->type)) {
            char **f = qsf_conf_field(c, d);
            if (*f && d->type == QSF_CONF_T_SECRET)
                explicit_bzero(*f, strlen(*f)); /* no secrets left in freed memory */
            free(*f);
            *f = NULL;
        }
    }
    free(c->addrs);
    c->addrs = NULL;
}

QSF_API void qsf_conf_free(qsf_conf *conf) {
    if (!conf)
        return;
    free_fields(conf);
    free(conf);
}

bool qsf_conf_is_set(const qsf_conf *c, enum qsf_conf_key key) {
    return c && (size_t) key < QSF_CONF_NKEYS && c->key_set[key];
}

qsf_conf *qsf_conf_clone(const qsf_conf *src) {
    qsf_conf *c = malloc(sizeof *c);
    if (!c || !src) {
        free(c);
        return NULL;
    }
    *c = *src;
    c->addrs = NULL;
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++)
        if (qsf_conf_type_is_string(qsf_conf_keys[i].type))
            *(char **) qsf_conf_field(c, &qsf_conf_keys[i]) = NULL;
    bool ok = true;
    for (size_t i = 0; i < QSF_CONF_NKEYS && ok; i++) {
        const struct qsf_conf_keydesc *d = &qsf_conf_keys[i];
        const char *s =
            qsf_conf_type_is_string(d->type) ? *(char *const *) qsf_conf_cfield(src, d) : NULL;
        if (s)
            ok = (*(char **) qsf_conf_field(c, d) = strdup(s)) != NULL;
    }
    if (ok && src->n_addrs) {
        c->addrs = malloc(src->n_addrs * sizeof *c->addrs);
        ok = c->addrs != NULL;
        if (ok)
            memcpy(c->addrs, src->addrs, src->n_addrs * sizeof *c->addrs);
        c->addr_cap = src->n_addrs;
    }
    if (!ok) {
        qsf_conf_free(c);
        return NULL;
    }
    return c;
}

static bool field_equal(const qsf_conf *a, const qsf_conf *b, const struct qsf_conf_keydesc *d) {
    if (qsf_conf_type_is_string(d->type)) {
        const char *x = *(char *const *) qsf_conf_cfield(a, d);
        const char *y = *(char *const *) qsf_conf_cfield(b, d);
        return x == y || (x && y && strcmp(x, y) == 0);
    }
    return memcmp(qsf_conf_cfield(a, d), qsf_conf_cfield(b, d), field_size(d->type)) == 0;
}

static bool addr_equal(const struct qsf_addr *x, const struct qsf_addr *y) {
    return x->port == y->port && x->ipv6 == y->ipv6 && strcmp(x->host, y->host) == 0;
}

bool qsf_conf_equal(const qsf_conf *a, const qsf_conf *b) {
    if (a->tls != b->tls || a->n_addrs != b->n_addrs)
        return false;
    for (size_t i = 0; i < a->n_addrs; i++)
        if (!addr_equal(&a->addrs[i], &b->addrs[i]))
            return false;
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++) /* an unkept value changes nothing */
        if (!a->key_unkept[i] && !b->key_unkept[i] &&
            (a->key_set[i] != b->key_set[i] || !field_equal(a, b, &qsf_conf_keys[i])))
            return false;
    return true;
}
