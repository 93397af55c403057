/* Arrow format strings (the Arrow C Data Interface, "Data type description --
 * format strings") and field metadata: the one parser every Arrow call uses. */
#include "chunk/arrow_int.h"

#include "text.h"

#include <stdio.h>
#include <string.h>

/* Reads a decimal number of at most 9 digits at *p; false when there is none. */
static bool parse_num(const char **p, int32_t *out) {
    const char *s = *p;
    int32_t v = 0;
    int n = 0;
    while (*s >= '0' && *s <= '9' && n < 9) {
        v = v * 10 + (*s - '0');
        s++;
        n++;
    }
    if (n == 0 || (*s >= '0' && *s <= '9'))
        return false;
    *p = s;
    *out = v;
    return true;
}

static int time_unit(char c) {
    switch (c) {
    case 's':
        return QSF_UNIT_SECONDS;
    case 'm':
        return QSF_UNIT_MILLIS;
    case 'u':
        return QSF_UNIT_MICROS;
    case 'n':
        return QSF_UNIT_NANOS;
    default:
        return -1;
    }
}

/* One-character formats. */
static bool parse_single(char c, qsf_arrow_fmt *out) {
    static const struct {
        char c;
        qsf_arrow_kind k;
    } tab[] = {
        {'n', QSF_AK_NULL},  {'b', QSF_AK_BOOL},   {'c', QSF_AK_I8},      {'C', QSF_AK_U8},
        {'s', QSF_AK_I16},   {'S', QSF_AK_U16},    {'i', QSF_AK_I32},     {'I', QSF_AK_U32},
        {'l', QSF_AK_I64},   {'L', QSF_AK_U64},    {'e', QSF_AK_F16},     {'f', QSF_AK_F32},
        {'g', QSF_AK_F64},   {'z', QSF_AK_BINARY}, {'Z', QSF_AK_LBINARY}, {'u', QSF_AK_UTF8},
        {'U', QSF_AK_LUTF8},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        if (tab[i].c == c) {
            out->kind = tab[i].k;
            return true;
        }
    }
    return false;
}

/* d:P,S or d:P,S,B */
static int parse_decimal(const char *p, qsf_arrow_fmt *out, const char **why) {
    int32_t prec, scale, bits = 128;
    bool neg = false;
    if (!parse_num(&p, &prec) || *p++ != ',')
        return *why = "decimal needs d:precision,scale", QSF_E_UNSUPPORTED;
    if (*p == '-') {
        neg = true;
        p++;
    }
    if (!parse_num(&p, &scale))
        return *why = "decimal needs d:precision,scale", QSF_E_UNSUPPORTED;
    if (*p == ',') {
        p++;
        if (!parse_num(&p, &bits))
            return *why = "decimal bit width is not a number", QSF_E_UNSUPPORTED;
    }
    if (*p != '\0')
        return *why = "trailing characters after the decimal", QSF_E_UNSUPPORTED;
    if (bits != 32 && bits != 64 && bits != 128 && bits != 256)
        return *why = "decimal bit width is not 32, 64, 128 or 256", QSF_E_UNSUPPORTED;
    out->kind = QSF_AK_DECIMAL;
    out->precision = prec;
    out->scale = neg ? -scale : scale;
    out->bits = bits;
    return QSF_OK;
}

/* t...: dates, times, timestamps, durations, intervals (`f` follows the t). */
static int parse_temporal(const char *f, qsf_arrow_fmt *out, const char **why) {
    *why = "not an Arrow temporal format";
    if (f[0] == '\0' || f[1] == '\0')
        return QSF_E_UNSUPPORTED;
    if (f[0] == 'd' && (f[1] == 'D' || f[1] == 'm') && f[2] == '\0') {
        out->kind = f[1] == 'D' ? QSF_AK_DATE32 : QSF_AK_DATE64;
        return QSF_OK;
    }
    if (f[0] == 'i' && (f[1] == 'M' || f[1] == 'D' || f[1] == 'n') && f[2] == '\0') {
        out->kind = QSF_AK_INTERVAL;
        return QSF_OK;
    }
    if ((out->unit = time_unit(f[1])) < 0)
        return QSF_E_UNSUPPORTED;
    if ((f[0] == 't' || f[0] == 'D') && f[2] == '\0') {
        out->kind = f[0] == 't' ? QSF_AK_TIME : QSF_AK_DURATION;
        return QSF_OK;
    }
    if (f[0] == 's' && f[2] == ':') {
        out->kind = QSF_AK_TIMESTAMP;
        out->tz = f + 3;
        return QSF_OK;
    }
    return QSF_E_UNSUPPORTED;
}

/* +...: nested types. */
static int parse_nested(const char *f, qsf_arrow_fmt *out, const char **why) {
    *why = "not an Arrow nested format";
    if (f[0] == '\0')
        return QSF_E_UNSUPPORTED;
    if (f[1] == '\0') {
        switch (f[0]) {
        case 'l':
            return out->kind = QSF_AK_LIST, QSF_OK;
        case 'L':
            return out->kind = QSF_AK_LLIST, QSF_OK;
        case 's':
            return out->kind = QSF_AK_STRUCT, QSF_OK;
        case 'm':
            return out->kind = QSF_AK_MAP, QSF_OK;
        case 'r':
            return out->kind = QSF_AK_RUNEND, QSF_OK;
        default:
            return QSF_E_UNSUPPORTED;
        }
    }
    if (f[0] == 'v' && (f[1] == 'l' || f[1] == 'L') && f[2] == '\0')
        return out->kind = QSF_AK_LISTVIEW, QSF_OK;
    if (f[0] == 'u' && (f[1] == 'd' || f[1] == 's') && f[2] == ':')
        return out->kind = QSF_AK_UNION, QSF_OK;
    if (f[0] == 'w' && f[1] == ':') {
        const char *p = f + 2;
        if (!parse_num(&p, &out->width) || *p != '\0')
            return *why = "fixed-size list needs +w:size", QSF_E_UNSUPPORTED;
        out->kind = QSF_AK_FIXLIST;
        return QSF_OK;
    }
    return QSF_E_UNSUPPORTED;
}

int qsf_arrow_fmt_parse(const char *f, qsf_arrow_fmt *out, const char **why) {
    memset(out, 0, sizeof *out);
    *why = "not an Arrow format string";
    if (f == NULL)
        return *why = "no format string", QSF_E_UNSUPPORTED;
    if (f[0] != '\0' && f[1] == '\0' && parse_single(f[0], out))
        return QSF_OK;
    switch (f[0]) {
    case 'v':
        if ((f[1] == 'u' || f[1] == 'z') && f[2] == '\0') {
            out->kind = f[1] == 'u' ? QSF_AK_UTF8VIEW : QSF_AK_BINVIEW;
            return QSF_OK;
        }
        return QSF_E_UNSUPPORTED;
    case 'd':
        return f[1] == ':' ? parse_decimal(f + 2, out, why) : QSF_E_UNSUPPORTED;
    case 'w': {
        const char *p = f + 2;
        if (f[1] != ':' || !parse_num(&p, &out->width) || *p != '\0' || out->width == 0)
            return *why = "fixed-size binary needs w:bytes", QSF_E_UNSUPPORTED;
        out->kind = QSF_AK_FIXBIN;
        return QSF_OK;
    }
    case 't':
        return parse_temporal(f + 1, out, why);
    case '+':
        return parse_nested(f + 1, out, why);
    default:
        return QSF_E_UNSUPPORTED;
    }
}

/* Field metadata can be any size; a bound keeps a corrupt count from walking
 * far through memory. */
#define META_MAX_BYTES (1 << 20)

static int32_t get_i32(const char *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

bool qsf_arrow_meta_get(const char *m, const char *key, const char **val, int32_t *val_len) {
    if (m == NULL)
        return false;
    int32_t n = get_i32(m);
    size_t pos = 4, klen = strlen(key);
    for (int32_t i = 0; i < n && pos + 4 <= META_MAX_BYTES; i++) {
        int32_t kl = get_i32(m + pos);
        if (kl < 0 || pos + 4 + (size_t) kl + 4 > META_MAX_BYTES)
            return false;
        const char *k = m + pos + 4;
        int32_t vl = get_i32(k + kl);
        if (vl < 0 || pos + 8 + (size_t) kl + (size_t) vl > META_MAX_BYTES)
            return false;
        if ((size_t) kl == klen && memcmp(k, key, klen) == 0) {
            *val = k + kl + 4;
            *val_len = vl;
            return true;
        }
        pos += 8 + (size_t) kl + (size_t) vl;
    }
    return false;
}

void qsf_arrow_name_print(char *dst, const char *name, size_t len) {
    if (name == NULL) {
        snprintf(dst, QSF_ARROW_NAME_CAP, "(unnamed)");
        return;
    }
    /* quoted, as the typed calls name columns */
    dst[0] = '"';
    size_t n = qsf_text_escape(dst + 1, QSF_ARROW_NAME_CAP - 2, name, len);
    if (n > QSF_ARROW_NAME_CAP - 3)
        n = strlen(dst + 1);
    dst[n + 1] = '"';
    dst[n + 2] = '\0';
}

void qsf_arrow_who_set(qsf_arrow_who *w, const char *name, size_t name_len, const char *format) {
    qsf_arrow_name_print(w->name, name, name_len);
    if (format == NULL)
        snprintf(w->format, sizeof w->format, "(none)");
    else
        qsf_text_escape(w->format, sizeof w->format, format, strnlen(format, 64));
}
