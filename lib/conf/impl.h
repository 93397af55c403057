/* Internals shared by the conf*.c files (not for the rest of the library). */
#ifndef QSF_CONF_IMPL_H
#define QSF_CONF_IMPL_H

#include "conf/conf.h"

#include <stdarg.h>

/* One key=value pair as the lexer found it. `val` is unescaped (";;" -> ";"),
 * NUL-terminated and valid only during the callback. Positions are 0-based byte
 * offsets into the connect string. */
struct qsf_conf_pair {
    const char *key;
    size_t klen;
    size_t kpos;
    const char *val;
    size_t vlen;
    size_t vpos;
    bool after_secret; /* the previous pair was a secret: its tail may be this key */
};

typedef int (*qsf_conf_pair_fn)(void *ctx, const struct qsf_conf_pair *p, qsf_errinfo *err);

/* Checks the schema (sets *tls for wss) and calls fn for every pair in order.
 * Stops at the first error (returned, QSF_E_CONF or QSF_E_NOMEM). */
int qsf_conf_lex(const char *s, size_t len, bool *tls, qsf_conf_pair_fn fn, void *ctx,
                 qsf_errinfo *err);

/* The credentials: the secrets, and username, which goes with password. */
bool qsf_conf_is_credential(const struct qsf_conf_keydesc *d);

/* The credential key that the word w[0..n) is close to, or NULL: the name or
 * its alias in any case or with a typo (QSF_CONF_NEAR_TYPO), or followed by
 * two or more characters, a value glued to it (QSF_CONF_NEAR_GLUED). Such a
 * word is never shown in a message (conf/credential.c). */
#define QSF_CONF_NEAR_TYPO  1
#define QSF_CONF_NEAR_GLUED 2
#define QSF_CONF_NEAR_ANY   3
const struct qsf_conf_keydesc *qsf_conf_near_credential(const char *w, size_t n, int how);

/* Parses `v` with the key's type and range into its field. `name` is the key as
 * written (alias or canonical). No allocation except for strings. */
int qsf_conf_set_value(qsf_conf *c, const struct qsf_conf_keydesc *d, const char *name,
                       const char *v, size_t vlen, size_t pos, qsf_errinfo *err);

/* Fills err with "<name>: '<v>' at position <pos> <reason>", the value clipped
 * and replaced by *** for secrets. Returns QSF_E_CONF. */
int qsf_conf_value_error(qsf_errinfo *err, const struct qsf_conf_keydesc *d, const char *name,
                         const char *v, size_t vlen, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Duplicate detection for addr entries in O(1) per entry. */
struct qsf_addr_slot {
    uint64_t hash; /* compared first, so a probe rarely touches the entries */
    size_t idx;    /* index+1 into conf->addrs, 0 = empty */
};
struct qsf_addr_index {
    struct qsf_addr_slot *slots;
    size_t cap; /* power of two */
};
void qsf_addr_index_free(struct qsf_addr_index *ix);

/* Appends every comma-separated entry of one addr value. */
int qsf_conf_addr_add(qsf_conf *c, struct qsf_addr_index *ix, const char *v, size_t vlen,
                      size_t pos, qsf_errinfo *err);

/* Output with snprintf semantics: writes what fits (always NUL-terminated when
 * cap > 0) and counts everything in len. */
struct qsf_sbuf {
    char *buf;
    size_t cap;
    size_t len;
};
void qsf_sbuf_put(struct qsf_sbuf *b, const char *s, size_t n);
void qsf_sbuf_puts(struct qsf_sbuf *b, const char *s);
void qsf_sbuf_printf(struct qsf_sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends the value of key d in canonical form (not for addr; secrets verbatim). */
void qsf_conf_put_value(struct qsf_sbuf *b, const qsf_conf *c, const struct qsf_conf_keydesc *d);
/* Appends "host:port" ("[v6]:port"). */
void qsf_conf_put_addr(struct qsf_sbuf *b, const struct qsf_addr *a);
/* Appends a size in its shortest exact form ("4m", "65537"). */
void qsf_conf_put_size(struct qsf_sbuf *b, uint64_t v);

/* Cross-key rules and effective values (conf/rules.c). */
int qsf_conf_apply_rules(qsf_conf *c, qsf_errinfo *err);

/* The rules as documented: condition and outcome, for docs/CONFIGURATION.md. */
struct qsf_conf_rule_doc {
    const char *when;
    const char *outcome;
};
/* Rule i in check order, NULL past the last. */
const struct qsf_conf_rule_doc *qsf_conf_rule_doc(size_t i);

#endif
