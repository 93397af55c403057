/* TLS set-up of the WebSocket client (see io/ws_tls.h): the tls_roots file
 * read and checked at creation, the trust store installed into the client
 * SSL_CTX, and the explanation of a refused server certificate. */
#include "io/ws_tls.h"

#include "err.h"
#include "os/os.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOTS_PREFIX   "qsf-roots: "
#define ROOTS_FILE_MAX (64u << 20) /* far beyond any CA bundle */

/* The tls_roots file, read once; `name` is its path escaped for messages. */
struct roots_file {
    unsigned char *p;
    size_t n;
    char name[1024];
};

/* ---- reading the file ---- */

static int file_error(qsf_errinfo *err, const struct roots_file *f, int e, const char *what) {
    return qsf_err_set(err, QSF_E_TLS, 0, e, "tls_roots=%s: %s%s%s", f->name, what, e ? ": " : "",
                       e ? strerror(e) : "");
}

static int check_kind(int fd, const struct roots_file *f, off_t *size, qsf_errinfo *err) {
    struct stat st;
    if (QSF_OS->fstat(fd, &st) != 0)
        return file_error(err, f, errno, "cannot stat it");
    if (S_ISDIR(st.st_mode))
        return file_error(err, f, 0, "is a directory (expected a file of CA certificates)");
    if (!S_ISREG(st.st_mode))
        return file_error(err, f, 0, "is not a regular file (expected a file of CA certificates)");
    if ((unsigned long long) st.st_size > ROOTS_FILE_MAX)
        return file_error(err, f, 0, "is larger than 64 MiB: not a file of CA certificates");
    *size = st.st_size;
    return QSF_OK;
}

static int read_all(int fd, struct roots_file *f, off_t size, qsf_errinfo *err) {
    f->p = malloc((size_t) size + 1);
    if (!f->p)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory reading tls_roots");
    while (f->n < (size_t) size) {
        ssize_t got = QSF_OS->pread(fd, f->p + f->n, (size_t) size - f->n, (off_t) f->n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return file_error(err, f, errno, "cannot read it");
        if (got == 0)
            break; /* shrank meanwhile: what is there is what is checked */
        f->n += (size_t) got;
    }
    return QSF_OK;
}

/* O_NONBLOCK: a FIFO given as tls_roots must not hang creation. */
static int read_file(const char *path, struct roots_file *f, qsf_errinfo *err) {
    qsf_text_escape(f->name, sizeof f->name, path, strlen(path));
    int fd = QSF_OS->open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);
    if (fd < 0)
        return file_error(err, f, errno, "cannot open it");
    off_t size = 0;
    int rc = check_kind(fd, f, &size, err);
    if (rc == QSF_OK)
        rc = read_all(fd, f, size, err);
    QSF_OS->close(fd);
    return rc;
}

/* ---- certificates out of PEM or PKCS#12 ---- */

/* One PEM block: certificates are kept, anything else (keys, CRLs) skipped. */
static int pem_block(const char *name, const unsigned char *data, long len, STACK_OF(X509) * out) {
    bool trusted = strcmp(name, PEM_STRING_X509_TRUSTED) == 0;
    if (!trusted && strcmp(name, PEM_STRING_X509) != 0 && strcmp(name, PEM_STRING_X509_OLD) != 0)
        return 0;
    X509 *x = trusted ? d2i_X509_AUX(NULL, &data, len) : d2i_X509(NULL, &data, len);
    if (!x)
        return -1;
    if (!sk_X509_push(out, x)) {
        X509_free(x);
        return -1;
    }
    return 0;
}

static int pem_certs(const struct roots_file *f, STACK_OF(X509) * out, qsf_errinfo *err) {
    ERR_clear_error(); /* the end of the loop is read from the error queue */
    BIO *b = BIO_new_mem_buf(f->p, (int) f->n);
    int bad = b ? 0 : -1;
    for (;;) {
        char *name = NULL, *header = NULL;
        unsigned char *data = NULL;
        long len = 0;
        if (bad || !PEM_read_bio(b, &name, &header, &data, &len))
            break;
        bad = pem_block(name, data, len, out);
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_free(data);
    }
    /* the loop ends at the end of the text, or at a damaged block */
    bool at_end = ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE;
    ERR_clear_error();
    BIO_free(b);
    if (bad || !at_end)
        return file_error(err, f, 0,
                          "holds a damaged PEM block (a certificate that does not decode)");
    return QSF_OK;
}

static bool is_pkcs12(const struct roots_file *f) {
    const unsigned char *q = f->p;
    PKCS12 *p12 = d2i_PKCS12(NULL, &q, (long) f->n);
    PKCS12_free(p12);
    ERR_clear_error();
    return p12 != NULL;
}

/* JKS (FEEDFEED) and JCEKS (CECECECE) keystores start with their magic. */
static bool is_java_keystore(const struct roots_file *f) {
    static const unsigned char jks[4] = {0xFE, 0xED, 0xFE, 0xED},
                               jceks[4] = {0xCE, 0xCE, 0xCE, 0xCE};
    return f->n >= 4 && (memcmp(f->p, jks, 4) == 0 || memcmp(f->p, jceks, 4) == 0);
}

static int not_pem(const struct roots_file *f, qsf_errinfo *err) {
    if (is_java_keystore(f))
        return file_error(err, f, 0,
                          "is a Java KeyStore: JKS keystores are not supported; convert to PEM or "
                          "PKCS#12");
    if (is_pkcs12(f))
        return file_error(err, f, 0, "is a PKCS#12 file: set tls_roots_password to its password");
    return file_error(err, f, 0,
                      "holds no PEM certificate (expected '-----BEGIN CERTIFICATE-----' blocks; "
                      "a PKCS#12 file needs tls_roots_password)");
}

/* The certificates of a trust store: those without a private key. A key's
 * own certificate identifies a client and is not a root (Java's trust
 * managers skip such entries too). */
static int p12_open(const struct roots_file *f, PKCS12 *p12, const char *password,
                    STACK_OF(X509) * out, qsf_errinfo *err) {
    if (PKCS12_mac_present(p12) && !PKCS12_verify_mac(p12, password, -1))
        return file_error(err, f, 0, "tls_roots_password does not open it (wrong password)");
    EVP_PKEY *key = NULL;
    X509 *own = NULL;
    STACK_OF(X509) *ca = NULL;
    if (!PKCS12_parse(p12, password, &key, &own, &ca)) {
        char why[160], what[400];
        ERR_error_string_n(ERR_peek_last_error(), why, sizeof why);
        if (strstr(why, "unsupported")) /* e.g. RC2-40 of older keytool/openssl exports */
            snprintf(what, sizeof what,
                     "cannot be decrypted: it is protected with an algorithm OpenSSL 3 leaves "
                     "out by default (such as RC2); convert it to PEM, or export it again with "
                     "AES (%s)",
                     why);
        else
            snprintf(what, sizeof what, "cannot read its contents (%s)", why);
        return file_error(err, f, 0, what);
    }
    EVP_PKEY_free(key);
    X509_free(own);
    for (X509 *x; ca && (x = sk_X509_shift(ca));)
        if (!sk_X509_push(out, x))
            X509_free(x);
    sk_X509_free(ca);
    return QSF_OK;
}

static int p12_certs(const struct roots_file *f, const char *password, STACK_OF(X509) * out,
                     qsf_errinfo *err) {
    const unsigned char *q = f->p;
    PKCS12 *p12 = d2i_PKCS12(NULL, &q, (long) f->n);
    int rc;
    if (p12)
        rc = p12_open(f, p12, password, out, err);
    else if (is_java_keystore(f))
        rc = not_pem(f, err);
    else
        rc = file_error(err, f, 0,
                        "is not a PKCS#12 file (tls_roots_password is set, so the file "
                        "must be PKCS#12)");
    PKCS12_free(p12);
    ERR_clear_error();
    return rc;
}

/* ---- the roots text ---- */

static int emit(const struct roots_file *f, STACK_OF(X509) * certs, char **out, qsf_errinfo *err) {
    BIO *m = BIO_new(BIO_s_mem());
    bool ok = m && BIO_printf(m, ROOTS_PREFIX "%s\n", f->name) > 0;
    for (int i = 0; ok && i < sk_X509_num(certs); i++)
        ok = PEM_write_bio_X509(m, sk_X509_value(certs, i)) == 1;
    char *data = NULL;
    long n = ok ? BIO_get_mem_data(m, &data) : 0;
    *out = ok ? malloc((size_t) n + 1) : NULL;
    if (*out) {
        memcpy(*out, data, (size_t) n);
        (*out)[n] = '\0';
    }
    BIO_free(m);
    ERR_clear_error();
    return *out ? QSF_OK : qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory reading tls_roots");
}

int qsf_ws_tls_roots_load(const char *path, const char *password, char **out, qsf_errinfo *err) {
    struct roots_file f = {0};
    STACK_OF(X509) *certs = sk_X509_new_null();
    *out = NULL;
    int rc = certs ? read_file(path, &f, err)
                   : qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory reading tls_roots");
    if (rc == QSF_OK)
        rc = password ? p12_certs(&f, password, certs, err) : pem_certs(&f, certs, err);
    if (rc == QSF_OK && sk_X509_num(certs) == 0)
        rc = password ? file_error(err, &f, 0, "holds no CA certificate (PKCS#12)")
                      : not_pem(&f, err);
    if (rc == QSF_OK)
        rc = emit(&f, certs, out, err);
    sk_X509_pop_free(certs, X509_free);
    free(f.p);
    return rc;
}

void qsf_ws_tls_roots_name(const char *roots, char *out, size_t cap) {
    size_t pre = strlen(ROOTS_PREFIX);
    if (!roots || strncmp(roots, ROOTS_PREFIX, pre) != 0) {
        snprintf(out, cap, "tls_roots");
        return;
    }
    snprintf(out, cap, "%.*s", (int) strcspn(roots + pre, "\n"), roots + pre);
}

/* ---- the trust store ---- */

void qsf_ws_tls_init(qsf_ws_tls *t, const qsf_ws_conf *conf,
                     struct lws_context_creation_info *info) {
    memset(t, 0, sizeof *t);
    if (!conf->tls)
        return;
    t->roots = conf->tls_roots;
    info->options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    if (t->roots) /* replaced by the roots anyway: do not load it */
        info->options |= LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
}

static int add_roots(X509_STORE *st, const char *roots) {
    BIO *b = BIO_new_mem_buf(roots, -1);
    int n = 0;
    for (X509 *x; b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL));) {
        n += X509_STORE_add_cert(st, x) == 1;
        X509_free(x);
    }
    BIO_free(b);
    return n;
}

void qsf_ws_tls_install(qsf_ws_tls *t, void *ssl_ctx) {
    X509_STORE *st = X509_STORE_new();
    bool ok = st && (t->roots ? add_roots(st, t->roots) > 0 : X509_STORE_set_default_paths(st));
    if (ok) {
        SSL_CTX_set_cert_store(ssl_ctx, st); /* frees the store libwebsockets made */
        t->installed = true;
    } else {
        X509_STORE_free(st);
        snprintf(t->why, sizeof t->why, "%s",
                 t->roots ? "no certificate of tls_roots could be added"
                          : "the system's trust store could not be loaded");
    }
    ERR_clear_error();
}

int qsf_ws_tls_check(const qsf_ws_tls *t, const qsf_ws_conf *conf, qsf_errinfo *err) {
    if (!conf->tls || t->installed)
        return QSF_OK;
    return qsf_err_set(err, QSF_E_TLS, 0, 0, "cannot set up the TLS trust store: %s",
                       t->why[0] ? t->why : "libwebsockets did not ask for it");
}

/* ---- a refused certificate ---- */

/* Verification errors that mean "no trusted CA signed this". */
static bool issuer_unknown(int code) {
    return code < 0 || code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
           code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
           code == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE ||
           code == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
           code == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN;
}

static bool says_tls(const char *s) {
    return strstr(s, "SSL") || strstr(s, "ssl") || strstr(s, "TLS") || strstr(s, "tls") ||
           strstr(s, "certificate");
}

/* lws logs "SSL error: <X509 error text> (preverify_ok=0;err=<code>;depth=<d>)". */
bool qsf_ws_tls_explain(const qsf_ws_conf *conf, const char *lws_error, char *reason, size_t cap) {
    const char *at = strstr(lws_error, "SSL error: ");
    if (!conf->tls || !says_tls(reason))
        return false;
    if (!at)
        return true;
    const char *d = at + strlen("SSL error: "), *code = strstr(d, "err=");
    size_t dl = strcspn(d, "(");
    while (dl && d[dl - 1] == ' ')
        dl--;
    char shown[QSF_TEXT_ESCAPED_MAX(120)], name[300];
    qsf_text_escape(shown, sizeof shown, d, dl > 120 ? 120 : dl);
    if (!issuer_unknown(code ? atoi(code + 4) : -1)) {
        snprintf(reason, cap, "%s", shown);
    } else if (conf->tls_roots) {
        qsf_ws_tls_roots_name(conf->tls_roots, name, sizeof name);
        snprintf(reason, cap, "%s (the server certificate is not signed by a CA in tls_roots=%s)",
                 shown, name);
    } else {
        snprintf(reason, cap,
                 "%s (server certificate not trusted: set tls_roots to the CA file that signed it)",
                 shown);
    }
    return true;
}
