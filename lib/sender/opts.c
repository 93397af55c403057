/* The ring's and the I/O thread's options from the connect string (see
 * sender/opts.h). */
#include "sender/opts.h"

#include "err.h"
#include "io/ws_tls.h"
#include "qsf.h"
#include "sf/sidefile.h"

#include <libwebsockets.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

qsf_ring_opts qsf_ring_opts_from_conf(const qsf_conf *c, const char *sender_id) {
    return (qsf_ring_opts){
        .sf_dir = c->sf_dir,
        .sender_id = sender_id ? sender_id : c->sender_id,
        .segment_bytes = c->sf_max_segment_bytes,
        .total_bytes = c->sf_max_total_bytes,
        .durability = c->sf_durability == QSF_CONF_SF_DURABILITY_APPEND     ? QSF_DUR_APPEND
                      : c->sf_durability == QSF_CONF_SF_DURABILITY_PERIODIC ? QSF_DUR_PERIODIC
                                                                            : QSF_DUR_MEMORY,
        .sync_interval_ms = qsf_conf_ms(c->sf_sync_interval_millis),
        .append_deadline_ms = qsf_conf_ms(c->sf_append_deadline_millis),
        .wm_form = c->sf_ack_watermark_form == QSF_CONF_SF_ACK_WATERMARK_FORM_DUAL ? QSF_WM_DUAL
                                                                                   : QSF_WM_JAVA16,
    };
}

/* "Basic base64(user:pass)" or "Bearer token" into out; NULL when no auth. */
static const char *auth_header(const qsf_conf *c, char *out, size_t cap) {
    if (c->token) {
        if (strlen(c->token) + 8 > cap)
            return NULL;
        snprintf(out, cap, "Bearer %s", c->token);
        return out;
    }
    if (!c->username)
        return NULL;
    size_t n = strlen(c->username) + 1 + (c->password ? strlen(c->password) : 0);
    char *plain = malloc(n + 1);
    if (!plain)
        return NULL;
    snprintf(plain, n + 1, "%s:%s", c->username, c->password ? c->password : "");
    memcpy(out, "Basic ", 6);
    int k = lws_b64_encode_string(plain, (int) n, out + 6, (int) (cap - 6));
    memset(plain, 0, n);
    free(plain);
    return k < 0 ? NULL : out;
}

static int initial_mode(const qsf_conf *c) {
    if (c->initial_connect_retry == QSF_CONF_INITIAL_CONNECT_RETRY_ASYNC)
        return QSF_IO_INIT_ASYNC;
    return c->initial_connect_retry == QSF_CONF_INITIAL_CONNECT_RETRY_ON ? QSF_IO_INIT_ON
                                                                         : QSF_IO_INIT_OFF;
}

int qsf_io_conf_build(const qsf_conf *c, const qsf_recovery_report *r, qsf_io_conf *out,
                      qsf_errinfo *err) {
    memset(out, 0, sizeof *out);
    out->addrs = calloc(c->n_addrs ? c->n_addrs : 1, sizeof *out->addrs);
    if (!out->addrs)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < c->n_addrs; i++)
        out->addrs[i] = (qsf_io_addr){c->addrs[i].host, c->addrs[i].port};
    const char *authz = auth_header(c, out->auth, sizeof out->auth);
    if (!authz && (c->username || c->token)) {
        qsf_io_conf_clear(out);
        return qsf_err_set(err, QSF_E_CONF, 0, 0,
                           "credentials too long for the Authorization header (at most %zu "
                           "bytes once encoded)",
                           sizeof out->auth - 8);
    }
    /* the roots are used by wss only; on ws:: the key is validated, unused */
    int rc = c->tls && c->tls_roots
                 ? qsf_ws_tls_roots_load(c->tls_roots, c->tls_roots_password, &out->roots, err)
                 : QSF_OK;
    if (rc != QSF_OK) {
        qsf_io_conf_clear(out);
        return rc;
    }
    out->opts = (qsf_io_opts){
        .addrs = out->addrs,
        .n_addrs = (int) c->n_addrs,
        .tls = c->tls,
        .tls_verify = c->tls_verify != QSF_CONF_TLS_VERIFY_UNSAFE_OFF,
        .tls_roots = out->roots,
        .authorization = authz,
        .client_id = c->client_id ? c->client_id : "qsf/" QSF_VERSION_STRING,
        .request_durable_ack = c->request_durable_ack,
        .connect_timeout_ms = qsf_conf_ms(c->connect_timeout),
        .auth_timeout_ms = qsf_conf_ms(c->auth_timeout_ms),
        .keepalive_ms = qsf_conf_ms(c->durable_ack_keepalive_interval_millis),
        .ping_interval_ms = qsf_conf_ms(c->ping_interval_millis),
        .liveness_timeout_ms = qsf_conf_ms(c->liveness_timeout_millis),
        .ack_timeout_ms = qsf_conf_ms(c->ack_timeout_millis),
        .frozen_timeout_ms = qsf_conf_ms(c->frozen_server_timeout_millis),
        .backoff_initial_ms = qsf_conf_ms(c->reconnect_initial_backoff_millis),
        .backoff_max_ms = qsf_conf_ms(c->reconnect_max_backoff_millis),
        .reconnect_max_duration_ms = qsf_conf_ms(c->reconnect_max_duration_millis),
        /* the key goes up to INT64_MAX, other clients' "forever" */
        .max_frame_rejections =
            c->max_frame_rejections > INT_MAX ? INT_MAX : (int) c->max_frame_rejections,
        .poison_window_ms = qsf_conf_ms(c->poison_min_escalation_window_millis),
        .initial_mode = initial_mode(c),
        .recovered_published_fsn = r ? r->published_fsn : -1,
        .self_sufficient = r && r->self_sufficient,
    };
    return QSF_OK;
}

void qsf_io_conf_clear(qsf_io_conf *ic) {
    free(ic->addrs);
    ic->addrs = NULL;
    free(ic->roots);
    ic->roots = NULL;
    memset(ic->auth, 0, sizeof ic->auth);
}
