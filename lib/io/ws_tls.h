/* TLS set-up of the WebSocket client: the roots the server certificate is
 * checked against, and what a failed check tells the user.
 *
 * The tls_roots file is read once, when the sender (or an orphan drainer) is
 * created: qsf_ws_tls_roots_load checks it and turns it into the roots text
 * that qsf_io_opts.tls_roots and qsf_ws_conf.tls_roots carry:
 *
 *   qsf-roots: <the file's path, escaped as text.h does>\n
 *   -----BEGIN CERTIFICATE-----\n ... -----END CERTIFICATE-----\n    (one or more)
 *
 * PEM readers skip the first line (text outside the BEGIN/END lines); it names
 * the file in messages. So a bad file fails creation, what was checked is what
 * is used, and a PKCS#12 password never reaches the I/O thread.
 *
 * The trust store of a connection is exactly one of: the certificates of the
 * roots text (tls_roots set), or the operating system's default store (unset).
 * It replaces the store libwebsockets builds, which would add the system store
 * to tls_roots and a directory relative to the working directory to both. */
#ifndef QSF_IO_WS_TLS_H
#define QSF_IO_WS_TLS_H

#include "io/ws.h"

#include <stdbool.h>
#include <stddef.h>

struct lws_context_creation_info;

/* Reads `path`: with password NULL a file of PEM certificates, otherwise a
 * PKCS#12 file that opens with the password; either must hold at least one
 * certificate. On success *out is the malloc'd roots text (free it).
 * QSF_E_TLS naming the path and what is wrong (missing, a directory, not PEM,
 * PKCS#12 without or with a wrong password, a Java KeyStore, no certificate);
 * QSF_E_NOMEM. The password never appears in a message. */
int qsf_ws_tls_roots_load(const char *path, const char *password, char **out, qsf_errinfo *err);

/* The file a roots text came from, as written in its first line. */
void qsf_ws_tls_roots_name(const char *roots, char *out, size_t cap);

/* Per-client TLS state, owned by the qsf_ws that embeds it. */
typedef struct qsf_ws_tls {
    const char *roots; /* qsf_ws_conf.tls_roots: NULL = the system store */
    bool installed;    /* the trust store replaced the one of libwebsockets */
    char why[160];     /* why it could not be installed */
} qsf_ws_tls;

/* Before lws_create_context: the TLS options of the context (none for ws://). */
void qsf_ws_tls_init(qsf_ws_tls *t, const qsf_ws_conf *conf,
                     struct lws_context_creation_info *info);

/* LWS_CALLBACK_OPENSSL_LOAD_EXTRA_CLIENT_VERIFY_CERTS (`ssl_ctx` is the
 * client SSL_CTX, called while the context is created): installs the store. */
void qsf_ws_tls_install(qsf_ws_tls *t, void *ssl_ctx);

/* After lws_create_context: QSF_E_TLS unless a wss client got its store. */
int qsf_ws_tls_check(const qsf_ws_tls *t, const qsf_ws_conf *conf, qsf_errinfo *err);

/* The TLS part of a failed attempt: true when `reason` (escaped text) or the
 * last libwebsockets error line say the failure was in TLS. When the line is
 * a certificate verification error, `reason` becomes that error and, when
 * the issuer is unknown, the fix: set tls_roots, or (when it is set) that the
 * certificate is not signed by a CA in that file. */
bool qsf_ws_tls_explain(const qsf_ws_conf *conf, const char *lws_error, char *reason, size_t cap);

#endif
