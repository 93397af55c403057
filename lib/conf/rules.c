/* Cross-key rules and effective values (docs/CONFIGURATION.md, "Cross-key rules"), in one
 * table: each row is documented in docs/CONFIGURATION.md with its `when` and
 * `outcome` texts and checked by its function, in table order. A rule either
 * rejects the configuration (QSF_E_CONF naming the keys and their positions) or
 * resolves an effective value and records why in key_derived (shown in dumps). */
#include "conf/impl.h"
#include "err.h"

#define K(name)      QSF_CONF_KEY_##name
#define SET(c, name) ((c)->key_set[K(name)])
#define POS(c, name) ((c)->key_pos[K(name)])

#define MEMORY_MODE_TOTAL (128ULL << 20)
#define SF_MODE_TOTAL     (10ULL << 30)

static int fail(qsf_errinfo *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(qsf_errinfo *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    qsf_err_vset(err, QSF_E_CONF, 0, 0, fmt, ap);
    va_end(ap);
    return QSF_E_CONF;
}

static int addr_required(qsf_conf *c, qsf_errinfo *err) {
    if (c->n_addrs)
        return QSF_OK;
    return fail(err, "addr: required key missing (give at least one endpoint, e.g. "
                     "addr=localhost:9000)");
}

static int auth_exclusive(qsf_conf *c, qsf_errinfo *err) {
    if (!SET(c, token) || (!SET(c, username) && !SET(c, password)))
        return QSF_OK;
    return fail(err,
                "token at position %zu cannot be combined with username/password "
                "(conflicting authentication)",
                POS(c, token));
}

static int basic_complete(qsf_conf *c, qsf_errinfo *err) {
    if (SET(c, username) && !SET(c, password))
        return fail(err,
                    "username at position %zu requires password (incomplete Basic "
                    "credentials)",
                    POS(c, username));
    if (SET(c, password) && !SET(c, username))
        return fail(err,
                    "password at position %zu requires username (incomplete Basic "
                    "credentials)",
                    POS(c, password));
    return QSF_OK;
}

static int roots_need_verify(qsf_conf *c, qsf_errinfo *err) {
    if (SET(c, tls_roots) && c->tls_verify == QSF_CONF_TLS_VERIFY_UNSAFE_OFF)
        return fail(err,
                    "tls_roots cannot be combined with tls_verify=unsafe_off (positions %zu "
                    "and %zu)",
                    POS(c, tls_roots), POS(c, tls_verify));
    return QSF_OK;
}

static int roots_password_needs_roots(qsf_conf *c, qsf_errinfo *err) {
    if (SET(c, tls_roots_password) && !SET(c, tls_roots))
        return fail(err, "tls_roots_password at position %zu requires tls_roots",
                    POS(c, tls_roots_password));
    return QSF_OK;
}

static int root_store(qsf_conf *c, qsf_errinfo *err) {
    if (SET(c, tls_roots) && SET(c, tls_ca) && c->tls_ca != QSF_CONF_TLS_CA_PEM_FILE) {
        size_t n = 0;
        const char *w = qsf_conf_enum_word(&qsf_conf_keys[K(tls_ca)], c->tls_ca, &n);
        return fail(err,
                    "tls_roots at position %zu cannot be combined with tls_ca=%.*s: "
                    "tls_roots implies tls_ca=pem_file (conflicting root store)",
                    POS(c, tls_roots), (int) n, w);
    }
    if (!SET(c, tls_roots) && c->tls_ca == QSF_CONF_TLS_CA_PEM_FILE)
        return fail(err,
                    "tls_ca=pem_file at position %zu requires tls_roots (conflicting root "
                    "store)",
                    POS(c, tls_ca));
    if (SET(c, tls_roots) && !SET(c, tls_ca)) {
        c->tls_ca = QSF_CONF_TLS_CA_PEM_FILE;
        c->key_derived[K(tls_ca)] = "implied by tls_roots";
    }
    return QSF_OK;
}

static int durability_needs_dir(qsf_conf *c, qsf_errinfo *err) {
    if (c->sf_durability == QSF_CONF_SF_DURABILITY_MEMORY || SET(c, sf_dir))
        return QSF_OK;
    size_t n = 0;
    const char *w = qsf_conf_enum_word(&qsf_conf_keys[K(sf_durability)], c->sf_durability, &n);
    return fail(err, "sf_durability=%.*s at position %zu requires sf_dir", (int) n, w,
                POS(c, sf_durability));
}

static int sync_interval_needs_periodic(qsf_conf *c, qsf_errinfo *err) {
    if (!SET(c, sf_sync_interval_millis) || c->sf_durability == QSF_CONF_SF_DURABILITY_PERIODIC)
        return QSF_OK;
    return fail(err, "sf_sync_interval_millis at position %zu requires sf_durability=periodic",
                POS(c, sf_sync_interval_millis));
}

static int orphans_need_dir(qsf_conf *c, qsf_errinfo *err) {
    if (!c->drain_orphans || SET(c, sf_dir))
        return QSF_OK;
    return fail(err, "drain_orphans=on at position %zu requires sf_dir", POS(c, drain_orphans));
}

static int auto_flush_consistent(qsf_conf *c, qsf_errinfo *err) {
    static const enum qsf_conf_key triggers[] = {K(auto_flush_rows), K(auto_flush_interval),
                                                 K(auto_flush_bytes)};
    if (c->auto_flush)
        return QSF_OK;
    for (size_t i = 0; i < sizeof triggers / sizeof triggers[0]; i++)
        if (c->key_set[triggers[i]])
            return fail(err,
                        "auto_flush=off at position %zu cannot be combined with %s at "
                        "position %zu (conflicting auto-flush settings)",
                        POS(c, auto_flush), qsf_conf_keys[triggers[i]].name,
                        c->key_pos[triggers[i]]);
    return QSF_OK;
}

static int buffer_sizes(qsf_conf *c, qsf_errinfo *err) {
    if (c->init_buf_size <= c->max_buf_size)
        return QSF_OK;
    return fail(err, "init_buf_size (%llu bytes) exceeds max_buf_size (%llu bytes)",
                (unsigned long long) c->init_buf_size, (unsigned long long) c->max_buf_size);
}

static int unsupported(qsf_conf *c, qsf_errinfo *err) {
    if (c->qwp_ws_progress == QSF_CONF_QWP_WS_PROGRESS_MANUAL)
        return fail(err,
                    "qwp_ws_progress=manual at position %zu is not supported: qsf always "
                    "runs its own I/O thread",
                    POS(c, qwp_ws_progress));
    return QSF_OK;
}

static int promote_retry(qsf_conf *c, qsf_errinfo *err) {
    static const enum qsf_conf_key reconnect[] = {K(reconnect_initial_backoff_millis),
                                                  K(reconnect_max_backoff_millis),
                                                  K(reconnect_max_duration_millis)};
    if (SET(c, initial_connect_retry))
        return QSF_OK;
    for (size_t i = 0; i < sizeof reconnect / sizeof reconnect[0]; i++) {
        if (c->key_set[reconnect[i]]) {
            c->initial_connect_retry = QSF_CONF_INITIAL_CONNECT_RETRY_ON;
            c->key_derived[K(initial_connect_retry)] = "promoted to on because a reconnect_* key "
                                                       "is set";
            break;
        }
    }
    return QSF_OK;
}

static int total_bytes(qsf_conf *c, qsf_errinfo *err) {
    uint64_t floor2 = 2 * c->sf_max_segment_bytes; /* a segment is below 2^31: no overflow */
    if (!SET(c, sf_max_total_bytes)) {
        c->sf_max_total_bytes = c->sf_dir ? SF_MODE_TOTAL : MEMORY_MODE_TOTAL;
        c->key_derived[K(sf_max_total_bytes)] =
            c->sf_dir ? "SF-mode default 10g" : "memory-mode default 128m";
    }
    if (c->sf_max_total_bytes < floor2) {
        c->sf_max_total_bytes = floor2;
        c->key_derived[K(sf_max_total_bytes)] = "raised to 2 x sf_max_segment_bytes";
    }
    return QSF_OK;
}

struct rule {
    struct qsf_conf_rule_doc doc;
    int (*apply)(qsf_conf *c, qsf_errinfo *err);
};

static const struct rule rules[] = {
    {{"`addr` missing", "rejected: required key"}, addr_required},
    {{"`token` with `username` or `password`", "rejected: conflicting authentication"},
     auth_exclusive},
    {{"`username` without `password`, or the reverse", "rejected: incomplete Basic credentials"},
     basic_complete},
    {{"`tls_roots` with `tls_verify=unsafe_off`",
      "rejected: \"tls_roots cannot be combined with tls_verify=unsafe_off\""},
     roots_need_verify},
    {{"`tls_roots_password` without `tls_roots`", "rejected: requires `tls_roots`"},
     roots_password_needs_roots},
    {{"`tls_ca=pem_file` without `tls_roots`; `tls_roots` with another explicit `tls_ca`",
      "rejected: conflicting root store (`tls_roots` alone implies `tls_ca=pem_file`)"},
     root_store},
    {{"`sf_durability` other than `memory` without `sf_dir`", "rejected: requires `sf_dir`"},
     durability_needs_dir},
    {{"`sf_sync_interval_millis` without `sf_durability=periodic`",
      "rejected: requires `sf_durability=periodic`"},
     sync_interval_needs_periodic},
    {{"`drain_orphans=on` without `sf_dir`", "rejected: requires `sf_dir`"}, orphans_need_dir},
    {{"`auto_flush=off` with an explicit `auto_flush_rows`, `auto_flush_interval` or "
      "`auto_flush_bytes`",
      "rejected: conflicting auto-flush settings"},
     auto_flush_consistent},
    {{"`init_buf_size` > `max_buf_size`", "rejected: buffer sizes"}, buffer_sizes},
    {{"`qwp_ws_progress=manual`", "rejected: not supported"}, unsupported},
    {{"any `reconnect_*` key set and `initial_connect_retry` not set",
      "not an error: `initial_connect_retry` becomes `on`"},
     promote_retry},
    {{"`sf_max_total_bytes` not set, or below `2 x sf_max_segment_bytes`",
      "not an error: the default is `128m` without `sf_dir` and `10g` with it; the effective "
      "value is raised to `2 x sf_max_segment_bytes` (shown in dumps)"},
     total_bytes},
    {{"TLS keys on a `ws::` string", "not an error: validated, unused"}, NULL},
};

#define N_RULES (sizeof rules / sizeof rules[0])

const struct qsf_conf_rule_doc *qsf_conf_rule_doc(size_t i) {
    return i < N_RULES ? &rules[i].doc : NULL;
}

int qsf_conf_apply_rules(qsf_conf *c, qsf_errinfo *err) {
    for (size_t i = 0; i < N_RULES; i++) {
        int rc = rules[i].apply ? rules[i].apply(c, err) : QSF_OK;
        if (rc != QSF_OK)
            return rc;
    }
    return QSF_OK;
}
