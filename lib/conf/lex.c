/* Connect-string grammar (docs/CONFIGURATION.md, "Grammar"):
 *
 *   conf   := schema "::" [ pair { ";" pair } [ ";" ] ]
 *   schema := 1*( ALPHA / DIGIT / "_" )          only "ws" and "wss" are accepted
 *   pair   := key "=" value
 *   key    := 1*( ALPHA / DIGIT / "_" )
 *   value  := 1*( any character except a control character; ";;" is a literal ";" )
 *
 * The whole string must be valid UTF-8 without control characters (U+0000..U+001F,
 * U+007F..U+009F). One pass, linear in the length; values are unescaped into one
 * scratch buffer reused for every pair.
 *
 * A ";;" followed by a credential key and "=" (in any case or with a typo,
 * spaces around the name allowed), or by a word that starts like one and goes
 * on (a value glued to it), is rejected inside every value: it is a ';' written as ";;" by
 * mistake, and the credential would become part of a value that messages, the
 * dump and the client_id header show. Nothing after a secret's value is shown
 * in a message before it is known to be a key (it may be the secret's tail).
 */
#include "conf/impl.h"
#include "err.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_key_char(unsigned char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

static bool is_control(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

/* Error for a character that may not appear where it is; `where` completes
 * "... at position N <where>". */
static int bad_char(qsf_errinfo *err, const char *s, size_t len, size_t pos, const char *where) {
    uint32_t cp;
    size_t n = qsf_text_utf8_step((const unsigned char *) s + pos, len - pos, &cp);
    if (n == 0)
        return qsf_err_set(err, QSF_E_CONF, 0, 0, "invalid UTF-8 at position %zu %s", pos, where);
    if (is_control(cp))
        return qsf_err_set(err, QSF_E_CONF, 0, 0, "control character U+%04X at position %zu %s",
                           (unsigned) cp, pos, where);
    if (cp < 0x80)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "invalid character '%c' at position %zu %s (only letters, digits "
                           "and _ are allowed)",
                           (char) cp, pos, where);
    return qsf_err_set(err, QSF_E_CONF, 0, 0,
                       "non-ASCII character U+%04X at position %zu %s (only letters, digits "
                       "and _ are allowed)",
                       (unsigned) cp, pos, where);
}

static int lex_schema(const char *s, size_t len, bool *tls, size_t *pos, qsf_errinfo *err) {
    size_t i = 0;
    while (i < len && is_key_char((unsigned char) s[i]))
        i++;
    if (i == len || s[i] != ':' || i + 1 == len || s[i + 1] != ':') {
        if (i < len && s[i] != ':')
            return bad_char(err, s, len, i, "in the schema");
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "expected '::' at position %zu after the schema (a connect string "
                           "starts with ws:: or wss::)",
                           i);
    }
    if (i == 0)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "missing schema at position 0: a connect string starts with ws:: or "
                           "wss::");
    if ((i == 2 && memcmp(s, "ws", 2) == 0) || (i == 3 && memcmp(s, "wss", 3) == 0)) {
        *tls = i == 3;
        *pos = i + 2;
        return QSF_OK;
    }
    if ((i == 5 && memcmp(s, "qwpws", 5) == 0) || (i == 6 && memcmp(s, "qwpwss", 6) == 0))
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "unsupported schema '%.*s': write %s:: (the QuestDB docs call it an "
                           "alias, but the Java client refuses it too, so a string with it "
                           "would configure qsf alone)",
                           (int) i, s, i == 5 ? "ws" : "wss");
    int shown = i > 32 ? 32 : (int) i;
    return qsf_err_set(err, QSF_E_CONF, 0, 0,
                       "unsupported schema '%.*s%s': qsf speaks QWP over WebSocket; use ws:: or "
                       "wss::",
                       shown, s, i > 32 ? "..." : "");
}

/* A key without its '=' that is close to a credential key: it is most likely
 * the credential with its value glued on, so neither is shown. */
static int near_credential_key(qsf_errinfo *err, size_t start, const struct qsf_conf_keydesc *d) {
    return qsf_err_set(err, QSF_E_CONF, 0, 0,
                       "text at position %zu is not key=value (not shown: it is close to the "
                       "credential key %s and may hold its value; write %s=<value>)",
                       start, d->name, d->name);
}

/* Scans a key starting at *pos up to and including its '='. */
static int lex_key(const char *s, size_t len, size_t *pos, bool after_secret, qsf_errinfo *err) {
    size_t start = *pos, i = start;
    while (i < len && is_key_char((unsigned char) s[i]))
        i++;
    if (i < len && s[i] == '=') {
        if (i == start)
            return qsf_err_set(err, QSF_E_CONF, 0, 0, "empty key at position %zu", start);
        *pos = i + 1;
        return QSF_OK;
    }
    const struct qsf_conf_keydesc *cred =
        qsf_conf_near_credential(s + start, i - start, QSF_CONF_NEAR_ANY);
    if (cred && !after_secret)
        return near_credential_key(err, start, cred);
    if (i < len && s[i] != ';' && after_secret) /* the character may belong to the secret */
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "invalid character at position %zu in a key (not shown: it follows a "
                           "secret value; write ';' inside a value as ';;')",
                           i);
    if (i < len && s[i] != ';')
        return bad_char(err, s, len, i, "in a key");
    if (i == start)
        return qsf_err_set(err, QSF_E_CONF, 0, 0, "empty pair at position %zu (expected key=value)",
                           start);
    if (after_secret)
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "text at position %zu is not key=value (not shown: it follows a "
                           "secret value; write ';' inside a value as ';;')",
                           start);
    return qsf_err_set(err, QSF_E_CONF, 0, 0,
                       "key '%.*s' at position %zu has no '=' (expected key=value)",
                       (int) (i - start), s + start, start);
}

/* The credential key written at s[i..] as "name=" (in any case, with a typo,
 * spaces around the name) or with a value glued to it (conf/credential.c),
 * or NULL. A bare name ("token", no '=') is a literal word. The keys whose
 * value may never end up inside another key's value: the secrets, and
 * username, which goes with password. */
static const struct qsf_conf_keydesc *credential_at(const char *s, size_t len, size_t i) {
    while (i < len && s[i] == ' ')
        i++;
    size_t start = i;
    while (i < len && is_key_char((unsigned char) s[i]))
        i++;
    size_t n = i - start;
    while (i < len && s[i] == ' ')
        i++;
    bool eq = i < len && s[i] == '=';
    return qsf_conf_near_credential(s + start, n, eq ? QSF_CONF_NEAR_ANY : QSF_CONF_NEAR_GLUED);
}

/* "key: " for messages about a value, or "" when the key may be the tail of a
 * secret cut by an unescaped ';'. */
static const char *key_label(const struct qsf_conf_pair *p, char *buf, size_t cap) {
    if (p->after_secret)
        snprintf(buf, cap, "a key that follows a secret (not shown)");
    else
        snprintf(buf, cap, "%.*s", (int) p->klen, p->key);
    return buf;
}

/* A ';;' followed by a credential: the user almost certainly meant ';', and the
 * credential would become part of this value, which messages, the dump and
 * the client_id header show. Rejected, showing no value. */
static int credential_inside(const struct qsf_conf_pair *p, size_t semi,
                             const struct qsf_conf_keydesc *cred, qsf_errinfo *err) {
    char key[64];
    return qsf_err_set(err, QSF_E_CONF, 0, 0,
                       "%s: value at position %zu not accepted (not shown): the ';;' at position "
                       "%zu is a literal ';' and would put what looks like '%s=' (perhaps with its "
                       "value) inside the value; end the value with a single ';' before %s",
                       key_label(p, key, sizeof key), p->vpos, semi, cred->name, cred->name);
}

/* Scans a value from p->vpos into out (unescaping ";;") up to the ';' ending it. */
static int lex_value(const char *s, size_t len, size_t *pos, char *out, struct qsf_conf_pair *p,
                     qsf_errinfo *err) {
    size_t i = *pos, n = 0;
    while (i < len) {
        uint32_t cp;
        if (s[i] == ';' && (i + 1 == len || s[i + 1] != ';'))
            break;
        if (s[i] == ';') {
            const struct qsf_conf_keydesc *cred = credential_at(s, len, i + 2);
            if (cred)
                return credential_inside(p, i, cred, err);
            out[n++] = ';';
            i += 2;
            continue;
        }
        size_t step = qsf_text_utf8_step((const unsigned char *) s + i, len - i, &cp);
        if (step == 0 || is_control(cp)) {
            char where[128], key[64];
            snprintf(where, sizeof where, "in the value of %s", key_label(p, key, sizeof key));
            return bad_char(err, s, len, i, where);
        }
        memcpy(out + n, s + i, step);
        n += step;
        i += step;
    }
    out[n] = '\0';
    p->val = out;
    p->vlen = n;
    *pos = i;
    return QSF_OK;
}

static bool key_is_secret(const char *key, size_t klen) {
    const struct qsf_conf_keydesc *d = qsf_conf_find_key(key, klen);
    return d && d->type == QSF_CONF_T_SECRET;
}

static int lex_pairs(const char *s, size_t len, size_t pos, char *scratch, qsf_conf_pair_fn fn,
                     void *ctx, qsf_errinfo *err) {
    bool after_secret = false;
    while (pos < len) {
        struct qsf_conf_pair p = {.key = s + pos, .kpos = pos, .after_secret = after_secret};
        int rc = lex_key(s, len, &pos, after_secret, err);
        if (rc != QSF_OK)
            return rc;
        p.klen = pos - 1 - p.kpos;
        p.vpos = pos;
        rc = lex_value(s, len, &pos, scratch, &p, err);
        if (rc == QSF_OK)
            rc = fn(ctx, &p, err);
        if (rc != QSF_OK)
            return rc;
        after_secret = key_is_secret(p.key, p.klen);
        if (pos < len)
            pos++; /* the ';' ending the pair */
    }
    return QSF_OK;
}

int qsf_conf_lex(const char *s, size_t len, bool *tls, qsf_conf_pair_fn fn, void *ctx,
                 qsf_errinfo *err) {
    size_t pos = 0;
    int rc = lex_schema(s, len, tls, &pos, err);
    if (rc != QSF_OK)
        return rc;
    char *scratch = malloc(len - pos + 1);
    if (!scratch)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory parsing the connect string");
    rc = lex_pairs(s, len, pos, scratch, fn, ctx, err);
    explicit_bzero(scratch, len - pos + 1); /* it held unescaped secret values */
    free(scratch);
    return rc;
}
