/* Internal view of a parsed connect string (see the generated
 * docs/CONFIGURATION.md).
 *
 * struct qsf_conf has one typed field per key of conf/keys.def, named exactly
 * after the key. Values are already effective: defaults applied, mode-dependent
 * defaults resolved (sf_max_total_bytes), implications applied (tls_ca with
 * tls_roots, initial_connect_retry promoted by reconnect_*). Field types:
 *   string, path, secret   char *    NULL when unset and without a default
 *   size                   uint64_t  bytes
 *   integer, ms            int64_t   0 when unset and without a default
 *                                    (connect_timeout, max_batch_rows)
 *   on/off                 bool
 *   enum                   int       QSF_CONF_<KEY>_<VALUE> below
 *   integer/ms/size or off int64_t   0 = off
 * Use qsf_conf_is_set() to tell an explicit value from a default.
 */
#ifndef QSF_CONF_H
#define QSF_CONF_H

#include "qsf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Value types of the property table. */
/* The longest duration a millisecond key means: the keys accept up to
 * INT64_MAX (other clients' "forever"), but every such value ends up in
 * nanoseconds added to a clock, so anything longer is taken as 100 years, a
 * deadline that never passes. Use qsf_conf_ms() wherever a key's value leaves
 * the configuration. */
#define QSF_CONF_MS_NEVER ((int64_t) 100 * 365 * 24 * 3600 * 1000)
static inline int64_t qsf_conf_ms(int64_t ms) {
    return ms > QSF_CONF_MS_NEVER ? QSF_CONF_MS_NEVER : ms;
}

enum qsf_conf_type {
    QSF_CONF_T_STR,
    QSF_CONF_T_PATH,
    QSF_CONF_T_SECRET,
    QSF_CONF_T_INT,
    QSF_CONF_T_MS,
    QSF_CONF_T_SIZE,
    QSF_CONF_T_ONOFF,
    QSF_CONF_T_ENUM,
    QSF_CONF_T_INT_OFF,
    QSF_CONF_T_MS_OFF,
    QSF_CONF_T_SIZE_OFF,
    QSF_CONF_T_ADDR,
};

/* Documentation groups, in the order docs/CONFIGURATION.md lists them. */
enum qsf_conf_group {
    QSF_CONF_G_ADDRESS,
    QSF_CONF_G_AUTH,
    QSF_CONF_G_TLS,
    QSF_CONF_G_SF,
    QSF_CONF_G_RECONNECT,
    QSF_CONF_G_DURABLE,
    QSF_CONF_G_ERRORS,
    QSF_CONF_G_FLUSHING,
    QSF_CONF_G_BUFFERS,
    QSF_CONF_G_IO,
    QSF_CONF_G_EGRESS,
    QSF_CONF_G_POOL,
    QSF_CONF_NGROUPS,
};

/* Character classes of string values. */
enum qsf_conf_chars {
    QSF_CONF_C_ANY,       /* any valid UTF-8 without control characters */
    QSF_CONF_C_PRINTABLE, /* printable ASCII 0x20..0x7E (HTTP header values) */
    QSF_CONF_C_SLOT_NAME, /* A-Z a-z 0-9 _ - (a directory name) */
};

/* QSF_CONF_KEY_<key> indexes the property table. */
enum qsf_conf_key {
#define QSF_CONF_KEY(key, ...) QSF_CONF_KEY_##key,
#include "conf/keys.def"
    QSF_CONF_NKEYS
};

/* Enum values: the index of the value's word group in the table's `words`. */
enum { QSF_CONF_TLS_VERIFY_ON, QSF_CONF_TLS_VERIFY_UNSAFE_OFF };
enum {
    QSF_CONF_TLS_CA_OS_ROOTS,
    QSF_CONF_TLS_CA_PEM_FILE,
    QSF_CONF_TLS_CA_WEBPKI_ROOTS,
    QSF_CONF_TLS_CA_WEBPKI_AND_OS_ROOTS
};
/* flush is a synonym of append and parses to QSF_CONF_SF_DURABILITY_APPEND. */
enum {
    QSF_CONF_SF_DURABILITY_MEMORY,
    QSF_CONF_SF_DURABILITY_PERIODIC,
    QSF_CONF_SF_DURABILITY_APPEND
};
enum { QSF_CONF_SF_ACK_WATERMARK_FORM_JAVA16, QSF_CONF_SF_ACK_WATERMARK_FORM_DUAL };
/* off/false -> OFF; on/true/sync -> ON; async -> ASYNC. */
enum {
    QSF_CONF_INITIAL_CONNECT_RETRY_OFF,
    QSF_CONF_INITIAL_CONNECT_RETRY_ON,
    QSF_CONF_INITIAL_CONNECT_RETRY_ASYNC
};
/* The six on_*_error keys share one word list. */
#define QSF_CONF_ON_ERROR_ENUM(KEY)                                                                \
    enum {                                                                                         \
        QSF_CONF_##KEY##_AUTO,                                                                     \
        QSF_CONF_##KEY##_TERMINAL,                                                                 \
        QSF_CONF_##KEY##_RETRIABLE,                                                                \
        QSF_CONF_##KEY##_RETRIABLE_OTHER                                                           \
    };
QSF_CONF_ON_ERROR_ENUM(ON_SERVER_ERROR)
QSF_CONF_ON_ERROR_ENUM(ON_SCHEMA_ERROR)
QSF_CONF_ON_ERROR_ENUM(ON_PARSE_ERROR)
QSF_CONF_ON_ERROR_ENUM(ON_INTERNAL_ERROR)
QSF_CONF_ON_ERROR_ENUM(ON_SECURITY_ERROR)
QSF_CONF_ON_ERROR_ENUM(ON_WRITE_ERROR)
#undef QSF_CONF_ON_ERROR_ENUM
enum { QSF_CONF_QWP_WS_PROGRESS_BACKGROUND, QSF_CONF_QWP_WS_PROGRESS_MANUAL };
enum { QSF_CONF_TARGET_ANY, QSF_CONF_TARGET_PRIMARY, QSF_CONF_TARGET_REPLICA };
enum { QSF_CONF_COMPRESSION_RAW, QSF_CONF_COMPRESSION_ZSTD, QSF_CONF_COMPRESSION_AUTO };
enum { QSF_CONF_POOL_REAP_AUTO, QSF_CONF_POOL_REAP_MANUAL };

#define QSF_CONF_DEFAULT_PORT 9000

/* One endpoint. IPv6 hosts are stored without brackets (zone included). */
struct qsf_addr {
    char host[256];
    int port;
    bool ipv6;
};

#define QSF_CONF_FIELD_STR(k)      char *k;
#define QSF_CONF_FIELD_PATH(k)     char *k;
#define QSF_CONF_FIELD_SECRET(k)   char *k;
#define QSF_CONF_FIELD_INT(k)      int64_t k;
#define QSF_CONF_FIELD_MS(k)       int64_t k;
#define QSF_CONF_FIELD_SIZE(k)     uint64_t k;
#define QSF_CONF_FIELD_ONOFF(k)    bool k;
#define QSF_CONF_FIELD_ENUM(k)     int k;
#define QSF_CONF_FIELD_INT_OFF(k)  int64_t k;
#define QSF_CONF_FIELD_MS_OFF(k)   int64_t k;
#define QSF_CONF_FIELD_SIZE_OFF(k) int64_t k;
#define QSF_CONF_FIELD_ADDR(k)

struct qsf_conf {
    bool tls; /* wss:: */
    struct qsf_addr *addrs;
    size_t n_addrs;
#define QSF_CONF_KEY(key, alias, group, type, ...) QSF_CONF_FIELD_##type(key)
#include "conf/keys.def"

    /* bookkeeping, not keys */
    size_t addr_cap;
    bool key_set[QSF_CONF_NKEYS];            /* given explicitly in the string */
    bool key_unkept[QSF_CONF_NKEYS];         /* an unchecked key whose value did not parse */
    size_t key_pos[QSF_CONF_NKEYS];          /* byte offset of the (first) key, if set */
    bool key_by_alias[QSF_CONF_NKEYS];       /* the first was spelled as the alias */
    const char *key_derived[QSF_CONF_NKEYS]; /* why an unset key differs from its default */
};

/* One row of the property table (see conf/keys.def for the columns). */
struct qsf_conf_keydesc {
    const char *name;
    const char *alias;
    int group;
    int type;
    const char *def;
    int64_t min;
    uint64_t max;
    const char *words;
    int chars;
    size_t off; /* offset of the field in struct qsf_conf (0 for addr) */
    const char *doc_default;
    const char *doc_rule;
    const char *doc_meaning;
};

struct qsf_conf_rejected {
    const char *name;
    const char *why;
};

extern const struct qsf_conf_keydesc qsf_conf_keys[QSF_CONF_NKEYS];
extern const struct qsf_conf_rejected qsf_conf_rejected_keys[];
extern const size_t qsf_conf_n_rejected;
extern const char *const qsf_conf_group_names[QSF_CONF_NGROUPS];
/* What a sender does not do with a key it accepts (QSF_CONF_IGNORED), NULL for
 * the keys it applies. */
extern const char *const qsf_conf_key_notes[QSF_CONF_NKEYS];
/* An ignored key whose value is not validated (QSF_CONF_UNCHECKED): kept when it
 * parses, otherwise only noted (key_unkept). */
extern const bool qsf_conf_unchecked[QSF_CONF_NKEYS];
/* An on/off key that also takes true/false (QSF_CONF_TRUE_FALSE). */
extern const bool qsf_conf_true_false[QSF_CONF_NKEYS];
/* The key's alias may be given beside it with an equal value (QSF_CONF_ALIAS_AGREES). */
extern const bool qsf_conf_alias_agrees[QSF_CONF_NKEYS];

/* True if `key` was given explicitly in the string (alias included). */
bool qsf_conf_is_set(const qsf_conf *c, enum qsf_conf_key key);

/* Deep copy; NULL on allocation failure. */
qsf_conf *qsf_conf_clone(const qsf_conf *c);

/* Field-by-field equality of two configurations (values, set flags, addresses). */
bool qsf_conf_equal(const qsf_conf *a, const qsf_conf *b);

/* Canonical connect string: schema, addr, then every explicitly set key in table
 * order with its canonical name and value (';' escaped as ';;'). Parsing it gives
 * an equal configuration. Secrets are written as *** unless include_secrets.
 * snprintf semantics: returns the length needed, writes at most cap bytes. */
size_t qsf_conf_to_string(const qsf_conf *c, bool include_secrets, char *buf, size_t cap);

/* Renders docs/CONFIGURATION.md from the property table; malloc'd, NUL-terminated
 * (NULL on allocation failure). */
char *qsf_conf_render_docs(void);

/* Property-table helpers (conf/table.c). */
const struct qsf_conf_keydesc *qsf_conf_find_key(const char *name, size_t len);
const struct qsf_conf_rejected *qsf_conf_find_rejected(const char *name, size_t len);
const struct qsf_conf_keydesc *qsf_conf_find_key_nocase(const char *name, size_t len);
/* Canonical word of enum value `v` of key `d` (not NUL-terminated: *len bytes),
 * NULL if out of range. */
const char *qsf_conf_enum_word(const struct qsf_conf_keydesc *d, int v, size_t *len);
static inline enum qsf_conf_key qsf_conf_key_of(const struct qsf_conf_keydesc *d) {
    return (enum qsf_conf_key)(d - qsf_conf_keys);
}
static inline void *qsf_conf_field(qsf_conf *c, const struct qsf_conf_keydesc *d) {
    return (char *) c + d->off;
}
static inline const void *qsf_conf_cfield(const qsf_conf *c, const struct qsf_conf_keydesc *d) {
    return (const char *) c + d->off;
}
static inline bool qsf_conf_type_is_string(int t) {
    return t == QSF_CONF_T_STR || t == QSF_CONF_T_PATH || t == QSF_CONF_T_SECRET;
}

#endif
