/* Writing configurations out: values in canonical form, the canonical connect
 * string (qsf_conf_to_string) and the effective-configuration dump
 * (qsf_conf_dump). Secrets are written as *** unless the caller asks for them. */
#include "conf/impl.h"

#include <stdio.h>
#include <string.h>

void qsf_sbuf_put(struct qsf_sbuf *b, const char *s, size_t n) {
    if (b->len < b->cap) {
        size_t room = b->cap - 1 - b->len;
        memcpy(b->buf + b->len, s, n < room ? n : room);
        b->buf[b->len + (n < room ? n : room)] = '\0';
    }
    b->len += n;
}

void qsf_sbuf_puts(struct qsf_sbuf *b, const char *s) {
    qsf_sbuf_put(b, s, strlen(s));
}

void qsf_sbuf_printf(struct qsf_sbuf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        qsf_sbuf_put(b, tmp, (size_t) n < sizeof tmp ? (size_t) n : sizeof tmp - 1);
}

void qsf_conf_put_size(struct qsf_sbuf *b, uint64_t v) {
    static const char units[] = "tgmk";
    for (int i = 0; i < 4 && v; i++) {
        unsigned shift = 10 * (unsigned) (4 - i);
        if ((v & ((1ULL << shift) - 1)) == 0) {
            qsf_sbuf_printf(b, "%llu%c", (unsigned long long) (v >> shift), units[i]);
            return;
        }
    }
    qsf_sbuf_printf(b, "%llu", (unsigned long long) v);
}

void qsf_conf_put_addr(struct qsf_sbuf *b, const struct qsf_addr *a) {
    qsf_sbuf_puts(b, a->ipv6 ? "[" : "");
    qsf_sbuf_puts(b, a->host);
    qsf_sbuf_printf(b, "%s:%d", a->ipv6 ? "]" : "", a->port);
}

/* A string value with each ';' doubled, as the grammar escapes it. */
static void put_escaped(struct qsf_sbuf *b, const char *s) {
    for (const char *semi; (semi = strchr(s, ';')); s = semi + 1) {
        qsf_sbuf_put(b, s, (size_t) (semi - s));
        qsf_sbuf_put(b, ";;", 2);
    }
    qsf_sbuf_puts(b, s);
}

void qsf_conf_put_value(struct qsf_sbuf *b, const qsf_conf *c, const struct qsf_conf_keydesc *d) {
    const void *f = qsf_conf_cfield(c, d);
    size_t wn = 0;
    const char *w;
    switch (d->type) {
    case QSF_CONF_T_STR:
    case QSF_CONF_T_PATH:
    case QSF_CONF_T_SECRET:
        put_escaped(b, *(char *const *) f ? *(char *const *) f : "");
        break;
    case QSF_CONF_T_INT:
    case QSF_CONF_T_MS:
        qsf_sbuf_printf(b, "%lld", (long long) *(const int64_t *) f);
        break;
    case QSF_CONF_T_SIZE:
        qsf_conf_put_size(b, *(const uint64_t *) f);
        break;
    case QSF_CONF_T_ONOFF:
        qsf_sbuf_puts(b, *(const bool *) f ? "on" : "off");
        break;
    case QSF_CONF_T_ENUM:
        w = qsf_conf_enum_word(d, *(const int *) f, &wn);
        qsf_sbuf_put(b, w ? w : "?", w ? wn : 1);
        break;
    case QSF_CONF_T_INT_OFF:
    case QSF_CONF_T_MS_OFF:
    case QSF_CONF_T_SIZE_OFF:
        if (*(const int64_t *) f == 0)
            qsf_sbuf_puts(b, "off");
        else if (d->type == QSF_CONF_T_SIZE_OFF)
            qsf_conf_put_size(b, (uint64_t) * (const int64_t *) f);
        else
            qsf_sbuf_printf(b, "%lld", (long long) *(const int64_t *) f);
        break;
    }
}

static void put_addrs(struct qsf_sbuf *b, const qsf_conf *c) {
    for (size_t i = 0; i < c->n_addrs; i++) {
        if (i)
            qsf_sbuf_put(b, ",", 1);
        qsf_conf_put_addr(b, &c->addrs[i]);
    }
}

size_t qsf_conf_to_string(const qsf_conf *c, bool include_secrets, char *buf, size_t cap) {
    struct qsf_sbuf b = {buf, cap, 0};
    if (cap)
        buf[0] = '\0';
    qsf_sbuf_puts(&b, c->tls ? "wss::" : "ws::");
    if (c->n_addrs) {
        qsf_sbuf_puts(&b, "addr=");
        put_addrs(&b, c);
        qsf_sbuf_puts(&b, ";");
    }
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++) {
        const struct qsf_conf_keydesc *d = &qsf_conf_keys[i];
        if (d->type == QSF_CONF_T_ADDR || !c->key_set[i] || c->key_unkept[i])
            continue; /* a value that was not kept: nothing to claim */
        qsf_sbuf_printf(&b, "%s=", d->name);
        if (d->type == QSF_CONF_T_SECRET && !include_secrets)
            qsf_sbuf_puts(&b, "***");
        else
            qsf_conf_put_value(&b, c, d);
        qsf_sbuf_puts(&b, ";");
    }
    return b.len;
}

static bool is_unset_value(const qsf_conf *c, const struct qsf_conf_keydesc *d) {
    if (qsf_conf_type_is_string(d->type))
        return *(char *const *) qsf_conf_cfield(c, d) == NULL;
    /* numeric keys without a default and not derived: connect_timeout, max_batch_rows */
    return !d->def && !c->key_set[qsf_conf_key_of(d)] && !c->key_derived[qsf_conf_key_of(d)];
}

static void dump_line(struct qsf_sbuf *b, const qsf_conf *c, const struct qsf_conf_keydesc *d) {
    size_t k = qsf_conf_key_of(d);
    qsf_sbuf_printf(b, "%s=", d->name);
    if (d->type == QSF_CONF_T_ADDR)
        put_addrs(b, c);
    else if (c->key_unkept[k])
        qsf_sbuf_puts(b, "<not kept: ignored, not validated>");
    else if (is_unset_value(c, d))
        qsf_sbuf_puts(b, "<unset>");
    else if (d->type == QSF_CONF_T_SECRET)
        qsf_sbuf_puts(b, "***");
    else
        qsf_conf_put_value(b, c, d);
    qsf_sbuf_puts(b, c->key_set[k] ? "  (set" : "  (default");
    if (c->key_derived[k]) {
        qsf_sbuf_puts(b, "; ");
        qsf_sbuf_puts(b, c->key_derived[k]);
    }
    qsf_sbuf_puts(b, ")\n");
}

QSF_API size_t qsf_conf_dump(const qsf_conf *conf, char *buf, size_t cap) {
    struct qsf_sbuf b = {buf, cap, 0};
    if (cap)
        buf[0] = '\0';
    if (!conf)
        return 0;
    qsf_sbuf_puts(&b, conf->tls ? "schema=wss  (set)\n" : "schema=ws  (set)\n");
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++)
        dump_line(&b, conf, &qsf_conf_keys[i]);
    return b.len;
}
