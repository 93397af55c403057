/* The property table built from conf/keys.def, and lookups over it. */
#include "conf/conf.h"
#include "seglimits.h" /* a range in keys.def */

#include <stddef.h>
#include <string.h>
#include <strings.h>

#define QSF_CONF_OFF_STR(k)      offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_PATH(k)     offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_SECRET(k)   offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_INT(k)      offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_MS(k)       offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_SIZE(k)     offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_ONOFF(k)    offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_ENUM(k)     offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_INT_OFF(k)  offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_MS_OFF(k)   offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_SIZE_OFF(k) offsetof(struct qsf_conf, k)
#define QSF_CONF_OFF_ADDR(k)     0

const struct qsf_conf_keydesc qsf_conf_keys[QSF_CONF_NKEYS] = {
#define QSF_CONF_KEY(key, alias, group, type, def, min, max, words, chars, ddef, drule, dmean)     \
    {#key, alias, QSF_CONF_G_##group, QSF_CONF_T_##type,        def,  min,                         \
     max,  words, QSF_CONF_C_##chars, QSF_CONF_OFF_##type(key), ddef, drule,                       \
     dmean},
#include "conf/keys.def"
};

const struct qsf_conf_rejected qsf_conf_rejected_keys[] = {
#define QSF_CONF_REJECTED(key, why) {#key, why},
#include "conf/keys.def"
};
const size_t qsf_conf_n_rejected = sizeof qsf_conf_rejected_keys / sizeof qsf_conf_rejected_keys[0];

const char *const qsf_conf_group_names[QSF_CONF_NGROUPS] = {
    [QSF_CONF_G_ADDRESS] = "address",
    [QSF_CONF_G_AUTH] = "auth",
    [QSF_CONF_G_TLS] = "TLS",
    [QSF_CONF_G_SF] = "store-and-forward",
    [QSF_CONF_G_RECONNECT] = "reconnect",
    [QSF_CONF_G_DURABLE] = "durable ack",
    [QSF_CONF_G_ERRORS] = "errors",
    [QSF_CONF_G_FLUSHING] = "flushing",
    [QSF_CONF_G_BUFFERS] = "buffers",
    [QSF_CONF_G_IO] = "I/O",
    [QSF_CONF_G_EGRESS] = "egress (queries)",
    [QSF_CONF_G_POOL] = "connection pools",
};

const char *const qsf_conf_key_notes[QSF_CONF_NKEYS] = {
#define QSF_CONF_IGNORED(key, note) [QSF_CONF_KEY_##key] = note,
#include "conf/keys.def"
};

const bool qsf_conf_unchecked[QSF_CONF_NKEYS] = {
#define QSF_CONF_UNCHECKED(key) [QSF_CONF_KEY_##key] = true,
#include "conf/keys.def"
};

const bool qsf_conf_true_false[QSF_CONF_NKEYS] = {
#define QSF_CONF_TRUE_FALSE(key) [QSF_CONF_KEY_##key] = true,
#include "conf/keys.def"
};

const bool qsf_conf_alias_agrees[QSF_CONF_NKEYS] = {
#define QSF_CONF_ALIAS_AGREES(key) [QSF_CONF_KEY_##key] = true,
#include "conf/keys.def"
};

static bool name_is(const char *want, const char *name, size_t len) {
    return want && strlen(want) == len && memcmp(want, name, len) == 0;
}

const struct qsf_conf_keydesc *qsf_conf_find_key(const char *name, size_t len) {
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++)
        if (name_is(qsf_conf_keys[i].name, name, len) || name_is(qsf_conf_keys[i].alias, name, len))
            return &qsf_conf_keys[i];
    return NULL;
}

/* Used only to suggest the right spelling of an unknown key. */
const struct qsf_conf_keydesc *qsf_conf_find_key_nocase(const char *name, size_t len) {
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++) {
        const struct qsf_conf_keydesc *d = &qsf_conf_keys[i];
        if (strlen(d->name) == len && strncasecmp(d->name, name, len) == 0)
            return d;
        if (d->alias && strlen(d->alias) == len && strncasecmp(d->alias, name, len) == 0)
            return d;
    }
    return NULL;
}

const struct qsf_conf_rejected *qsf_conf_find_rejected(const char *name, size_t len) {
    for (size_t i = 0; i < qsf_conf_n_rejected; i++)
        if (name_is(qsf_conf_rejected_keys[i].name, name, len))
            return &qsf_conf_rejected_keys[i];
    return NULL;
}

const char *qsf_conf_enum_word(const struct qsf_conf_keydesc *d, int v, size_t *len) {
    if (d->type != QSF_CONF_T_ENUM || v < 0)
        return NULL;
    const char *p = d->words;
    for (int i = 0; i < v; i++) {
        p = strchr(p, '|');
        if (!p)
            return NULL;
        p++;
    }
    *len = strcspn(p, ",|");
    return p;
}
