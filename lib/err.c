/* Error codes, their names, and errinfo filling (no allocation on any path). */
#include "err.h"

#include "text.h"

#include <stdio.h>
#include <string.h>

struct code_desc {
    int code;
    const char *name;
    const char *text;
};

/* One row per code; the table is the single source for names and texts. */
static const struct code_desc codes[] = {
    {QSF_OK, "QSF_OK", "success"},
    {QSF_E_INVAL, "QSF_E_INVAL", "invalid argument"},
    {QSF_E_CONF, "QSF_E_CONF", "invalid configuration"},
    {QSF_E_NOMEM, "QSF_E_NOMEM", "out of memory"},
    {QSF_E_IO, "QSF_E_IO", "I/O error"},
    {QSF_E_NOSPC, "QSF_E_NOSPC", "no space left on device"},
    {QSF_E_LOCKED, "QSF_E_LOCKED", "slot locked by another sender"},
    {QSF_E_CORRUPT, "QSF_E_CORRUPT", "slot files are inconsistent"},
    {QSF_E_FULL, "QSF_E_FULL", "ring full"},
    {QSF_E_TOO_LARGE, "QSF_E_TOO_LARGE", "too large"},
    {QSF_E_TIMEOUT, "QSF_E_TIMEOUT", "timed out"},
    {QSF_E_CONNECT, "QSF_E_CONNECT", "cannot connect"},
    {QSF_E_AUTH, "QSF_E_AUTH", "authentication rejected"},
    {QSF_E_SERVER, "QSF_E_SERVER", "server rejected a frame"},
    {QSF_E_PROTOCOL, "QSF_E_PROTOCOL", "protocol violation"},
    {QSF_E_CLOSED, "QSF_E_CLOSED", "sender closed"},
    {QSF_E_BUSY, "QSF_E_BUSY", "sender in use by another thread"},
    {QSF_E_STATE, "QSF_E_STATE", "call out of order"},
    {QSF_E_VALUE, "QSF_E_VALUE", "invalid value"},
    {QSF_E_DICT_FULL, "QSF_E_DICT_FULL", "symbol dictionary full"},
    {QSF_E_RESEND_REQUIRED, "QSF_E_RESEND_REQUIRED", "resend required"},
    {QSF_E_DATA_LOSS, "QSF_E_DATA_LOSS", "accepted data was given up"},
    {QSF_E_TLS, "QSF_E_TLS", "TLS error"},
    {QSF_E_UNSUPPORTED, "QSF_E_UNSUPPORTED", "unsupported"},
    {QSF_E_DURABILITY, "QSF_E_DURABILITY", "durability barrier failed"},
    {QSF_E_INTERNAL, "QSF_E_INTERNAL", "internal error"},
};

static const struct code_desc *find(int code) {
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].code == code)
            return &codes[i];
    return NULL;
}

QSF_API const char *qsf_err_name(int code) {
    const struct code_desc *d = find(code);
    return d ? d->name : "QSF_E_UNKNOWN";
}

QSF_API const char *qsf_err_str(int code) {
    const struct code_desc *d = find(code);
    return d ? d->text : "unknown error";
}

/* Names of the error records' categories and policies (qsf.h), as the log
 * lines and docs/ERRORS.md §5 spell them. */
struct value_name {
    int value;
    const char *name;
};

static const struct value_name categories[] = {
    {QSF_CAT_SCHEMA_MISMATCH, "SCHEMA_MISMATCH"},
    {QSF_CAT_PARSE_ERROR, "PARSE_ERROR"},
    {QSF_CAT_INTERNAL_ERROR, "INTERNAL_ERROR"},
    {QSF_CAT_SECURITY_ERROR, "SECURITY_ERROR"},
    {QSF_CAT_WRITE_ERROR, "WRITE_ERROR"},
    {QSF_CAT_NOT_WRITABLE, "NOT_WRITABLE"},
    {QSF_CAT_DICTIONARY_GAP, "DICTIONARY_GAP"},
    {QSF_CAT_UNKNOWN, "UNKNOWN"},
    {QSF_CAT_PROTOCOL_VIOLATION, "PROTOCOL_VIOLATION"},
    {QSF_CAT_DATA_LOSS, "DATA_LOSS"},
    {QSF_CAT_CONNECTION, "CONNECTION"},
};

static const struct value_name policies[] = {
    {QSF_POLICY_RETRIABLE, "RETRIABLE"},
    {QSF_POLICY_RETRIABLE_OTHER, "RETRIABLE_OTHER"},
    {QSF_POLICY_TERMINAL, "TERMINAL"},
    {QSF_POLICY_ABANDONED, "ABANDONED"},
};

static const char *name_of(const struct value_name *t, size_t n, int value) {
    for (size_t i = 0; i < n; i++)
        if (t[i].value == value)
            return t[i].name;
    return "UNKNOWN";
}

QSF_API const char *qsf_category_name(int category) {
    return name_of(categories, sizeof categories / sizeof categories[0], category);
}

QSF_API const char *qsf_policy_name(int policy) {
    return name_of(policies, sizeof policies / sizeof policies[0], policy);
}

QSF_API const char *qsf_version(void) {
    return QSF_VERSION_STRING;
}

int qsf_err_vset(qsf_errinfo *err, int code, unsigned flags, int sys_errno, const char *fmt,
                 va_list ap) {
    if (!err)
        return code;
    err->code = code;
    err->flags = flags;
    err->sys_errno = sys_errno;
    if (fmt) {
        /* a message is one line of visible text, whatever the arguments held */
        char raw[sizeof err->msg];
        int n = vsnprintf(raw, sizeof raw, fmt, ap);
        size_t len = n < 0 ? 0 : (size_t) n < sizeof raw ? (size_t) n : sizeof raw - 1;
        qsf_text_escape(err->msg, sizeof err->msg, raw, len);
    } else
        snprintf(err->msg, sizeof err->msg, "%s", qsf_err_str(code));
    return code;
}

int qsf_err_set(qsf_errinfo *err, int code, unsigned flags, int sys_errno, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    qsf_err_vset(err, code, flags, sys_errno, fmt, ap);
    va_end(ap);
    return code;
}

void qsf_err_prefix(qsf_errinfo *err, const char *prefix) {
    if (!err || !prefix)
        return;
    size_t plen = strlen(prefix) + 2; /* "<prefix>: " */
    if (plen >= sizeof err->msg)
        return;
    size_t keep = strnlen(err->msg, sizeof err->msg - 1);
    if (keep > sizeof err->msg - 1 - plen)
        keep = sizeof err->msg - 1 - plen;
    memmove(err->msg + plen, err->msg, keep);
    memcpy(err->msg, prefix, plen - 2);
    memcpy(err->msg + plen - 2, ": ", 2);
    err->msg[plen + keep] = '\0';
}

void qsf_err_clear(qsf_errinfo *err) {
    if (!err)
        return;
    err->code = QSF_OK;
    err->flags = 0;
    err->sys_errno = 0;
    err->msg[0] = '\0';
}

void qsf_err_copy(qsf_errinfo *dst, const qsf_errinfo *src) {
    if (dst && src && dst != src)
        *dst = *src;
}
