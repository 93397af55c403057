/* Value types of the connect string (docs/CONFIGURATION.md, "Value types"): parsing a
 * value text into its typed field, with range checks from the property table. */
#include "conf/impl.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOWN_MAX 48 /* bytes of a bad value echoed in a message */

int qsf_conf_value_error(qsf_errinfo *err, const struct qsf_conf_keydesc *d, const char *name,
                         const char *v, size_t vlen, size_t pos, const char *fmt, ...) {
    char reason[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (d->type == QSF_CONF_T_SECRET)
        return qsf_err_set(err, QSF_E_CONF, 0, 0, "%s: '***' at position %zu %s", name, pos,
                           reason);
    size_t shown = vlen;
    if (shown > SHOWN_MAX) {
        shown = SHOWN_MAX;
        while (shown > 0 && ((unsigned char) v[shown] & 0xC0) == 0x80)
            shown--; /* never cut a UTF-8 sequence */
    }
    return qsf_err_set(err, QSF_E_CONF, 0, 0, "%s: '%.*s%s' at position %zu %s", name, (int) shown,
                       v, shown < vlen ? "..." : "", pos, reason);
}

/* Decimal digits with an optional '-' into *out; 0 ok, -1 syntax, -2 overflow. */
static int parse_i64(const char *v, size_t n, int64_t *out) {
    bool neg = n > 0 && v[0] == '-';
    size_t i = neg ? 1 : 0;
    uint64_t acc = 0, limit = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
    if (i == n)
        return -1;
    for (; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        unsigned dgt = (unsigned) (v[i] - '0');
        if (acc > (limit - dgt) / 10)
            return -2;
        acc = acc * 10 + dgt;
    }
    *out = neg ? (int64_t) (0 - acc) : (int64_t) acc;
    return 0;
}

/* Digits, then k/m/g/t optionally followed by b, or a bare b; case-insensitive,
 * 1024-based. 0 ok, -1 syntax, -2 overflow. */
static int parse_size(const char *v, size_t n, uint64_t *out) {
    size_t i = 0;
    uint64_t acc = 0;
    while (i < n && v[i] >= '0' && v[i] <= '9') {
        unsigned dgt = (unsigned) (v[i] - '0');
        if (acc > (UINT64_MAX - dgt) / 10)
            return -2;
        acc = acc * 10 + dgt;
        i++;
    }
    if (i == 0)
        return -1;
    unsigned shift = 0;
    const char *units = "kmgt";
    const char *u = i < n && v[i] != '\0' ? strchr(units, v[i] | 0x20) : NULL;
    if (u) {
        shift = 10 * (unsigned) (u - units + 1);
        i++;
    }
    if (i < n && (v[i] | 0x20) == 'b')
        i++;
    if (i != n)
        return -1;
    if (shift && acc > (UINT64_MAX >> shift))
        return -2;
    *out = acc << shift;
    return 0;
}

static int range_error(qsf_errinfo *err, const struct qsf_conf_keydesc *d, const char *name,
                       const char *v, size_t n, size_t pos) {
    bool size = d->type == QSF_CONF_T_SIZE || d->type == QSF_CONF_T_SIZE_OFF;
    const char *unit = size ? " bytes" : "";
    if (d->max == UINT64_MAX || (!size && d->max == INT64_MAX))
        return qsf_conf_value_error(err, d, name, v, n, pos, "must be at least %lld%s",
                                    (long long) d->min, unit);
    if (d->min == INT64_MIN)
        return qsf_conf_value_error(err, d, name, v, n, pos, "must be at most %llu%s",
                                    (unsigned long long) d->max, unit);
    return qsf_conf_value_error(err, d, name, v, n, pos, "must be between %lld and %llu%s",
                                (long long) d->min, (unsigned long long) d->max, unit);
}

static bool in_range_signed(const struct qsf_conf_keydesc *d, int64_t x) {
    return x >= d->min && (x < 0 || (uint64_t) x <= d->max);
}

static bool in_range_size(const struct qsf_conf_keydesc *d, uint64_t x) {
    return x >= (uint64_t) d->min && x <= d->max;
}

static const char *or_off(const struct qsf_conf_keydesc *d) {
    return d->type >= QSF_CONF_T_INT_OFF && d->type <= QSF_CONF_T_SIZE_OFF ? ", or off" : "";
}

static int set_int(qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name, const char *v,
                   size_t n, size_t pos, qsf_errinfo *err) {
    int64_t x = 0;
    int rc = parse_i64(v, n, &x);
    if (rc == -1)
        return qsf_conf_value_error(err, d, name, v, n, pos,
                                    "is not an integer (expected decimal digits%s%s)",
                                    d->min < 0 ? " with an optional leading '-'" : "", or_off(d));
    if (rc == -2)
        return qsf_conf_value_error(err, d, name, v, n, pos, "is out of the 64-bit range");
    if (!in_range_signed(d, x))
        return range_error(err, d, name, v, n, pos);
    *(int64_t *) qsf_conf_field(c, d) = x;
    return QSF_OK;
}

static int set_size(qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name, const char *v,
                    size_t n, size_t pos, qsf_errinfo *err) {
    uint64_t x = 0;
    int rc = parse_size(v, n, &x);
    if (rc == -1)
        return qsf_conf_value_error(err, d, name, v, n, pos,
                                    "is not a size (expected digits with an optional k/m/g/t "
                                    "suffix%s)",
                                    or_off(d));
    if (rc == -2)
        return qsf_conf_value_error(err, d, name, v, n, pos, "overflows 64 bits");
    if (!in_range_size(d, x))
        return range_error(err, d, name, v, n, pos);
    if (d->type == QSF_CONF_T_SIZE)
        *(uint64_t *) qsf_conf_field(c, d) = x;
    else
        *(int64_t *) qsf_conf_field(c, d) = (int64_t) x; /* max <= INT64_MAX in the table */
    return QSF_OK;
}

static bool word_eq(const char *w, size_t wn, const char *v, size_t n) {
    return wn == n && memcmp(w, v, n) == 0;
}

/* Index of the '|' group holding word v, -1 if none. */
static int enum_index(const char *words, const char *v, size_t n) {
    int idx = 0;
    for (const char *p = words; *p;) {
        size_t wn = strcspn(p, ",|");
        if (word_eq(p, wn, v, n))
            return idx;
        p += wn;
        if (*p == '|')
            idx++;
        if (*p)
            p++;
    }
    return -1;
}

static int set_enum(qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name, const char *v,
                    size_t n, size_t pos, qsf_errinfo *err) {
    int idx = enum_index(d->words, v, n);
    if (idx < 0) {
        char list[160];
        size_t k = 0;
        for (const char *p = d->words; *p && k + 3 < sizeof list; p++) {
            if (*p == '|' || *p == ',')
                list[k++] = ',', list[k++] = ' ';
            else
                list[k++] = *p;
        }
        list[k] = '\0';
        return qsf_conf_value_error(err, d, name, v, n, pos, "is not one of: %s", list);
    }
    *(int *) qsf_conf_field(c, d) = idx;
    return QSF_OK;
}

static int set_onoff(qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name, const char *v,
                     size_t n, size_t pos, qsf_errinfo *err) {
    bool tf = qsf_conf_true_false[qsf_conf_key_of(d)];
    bool on = word_eq("on", 2, v, n) || (tf && word_eq("true", 4, v, n));
    if (!on && !word_eq("off", 3, v, n) && !(tf && word_eq("false", 5, v, n)))
        return qsf_conf_value_error(err, d, name, v, n, pos,
                                    tf ? "is not on/off (expected on, off, true or false)"
                                       : "is not on/off (expected on or off)");
    *(bool *) qsf_conf_field(c, d) = on;
    return QSF_OK;
}

static int set_or_off(qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name,
                      const char *v, size_t n, size_t pos, qsf_errinfo *err) {
    if (word_eq("off", 3, v, n)) {
        *(int64_t *) qsf_conf_field(c, d) = 0;
        return QSF_OK;
    }
    if (d->type == QSF_CONF_T_SIZE_OFF)
        return set_size(c, d, name, v, n, pos, err);
    return set_int(c, d, name, v, n, pos, err);
}

/* Character-class check of a string value; returns the offending offset or n. */
static size_t first_bad_char(int chars, const char *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char) v[i];
        bool ok = chars == QSF_CONF_C_PRINTABLE
                      ? ch >= 0x20 && ch < 0x7f
                      : (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                            (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
        if (!ok)
            return i;
    }
    return n;
}

static int check_string(const struct qsf_conf_keydesc *d, const char *name, const char *v, size_t n,
                        size_t pos, qsf_errinfo *err) {
    if (n < (uint64_t) d->min || n > d->max)
        return qsf_conf_value_error(err, d, name, v, n, pos,
                                    "is %zu bytes long (allowed: %lld..%llu)", n,
                                    (long long) d->min, (unsigned long long) d->max);
    if (d->chars == QSF_CONF_C_ANY)
        return QSF_OK;
    size_t bad = first_bad_char(d->chars, v, n);
    if (bad == n)
        return QSF_OK;
    if (d->chars == QSF_CONF_C_PRINTABLE)
        return qsf_conf_value_error(err, d, name, v, n, pos,
                                    "has a non-printable or non-ASCII byte at offset %zu (only "
                                    "printable ASCII is allowed)",
                                    bad);
    char what[16];
    if ((unsigned char) v[bad] >= 0x80)
        snprintf(what, sizeof what, "non-ASCII");
    else
        snprintf(what, sizeof what, "'%c'", v[bad]);
    return qsf_conf_value_error(err, d, name, v, n, pos,
                                "is not a valid slot name: %s not allowed in %s (only A-Z a-z "
                                "0-9 _ - are)",
                                what, d->name);
}

static int set_string(qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name,
                      const char *v, size_t n, size_t pos, qsf_errinfo *err) {
    int rc = check_string(d, name, v, n, pos, err);
    if (rc != QSF_OK)
        return rc;
    char *copy = malloc(n + 1);
    if (!copy)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory copying %s", d->name);
    memcpy(copy, v, n);
    copy[n] = '\0';
    char **field = qsf_conf_field(c, d);
    free(*field);
    *field = copy;
    return QSF_OK;
}

int qsf_conf_set_value(qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name,
                       const char *v, size_t vlen, size_t pos, qsf_errinfo *err) {
    switch (d->type) {
    case QSF_CONF_T_STR:
    case QSF_CONF_T_PATH:
    case QSF_CONF_T_SECRET:
        return set_string(c, d, name, v, vlen, pos, err);
    case QSF_CONF_T_INT:
    case QSF_CONF_T_MS:
        return set_int(c, d, name, v, vlen, pos, err);
    case QSF_CONF_T_SIZE:
        return set_size(c, d, name, v, vlen, pos, err);
    case QSF_CONF_T_ONOFF:
        return set_onoff(c, d, name, v, vlen, pos, err);
    case QSF_CONF_T_ENUM:
        return set_enum(c, d, name, v, vlen, pos, err);
    case QSF_CONF_T_INT_OFF:
    case QSF_CONF_T_MS_OFF:
    case QSF_CONF_T_SIZE_OFF:
        return set_or_off(c, d, name, v, vlen, pos, err);
    default:
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "%s: no scalar parser for its type", d->name);
    }
}
