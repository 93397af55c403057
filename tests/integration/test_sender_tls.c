/* wss with a throwaway CA made by the openssl CLI at test time: verification is
 * on by default and fails clearly, tls_roots makes it pass, unsafe_off skips it.
 * tls_roots is checked when the sender is created (missing, a directory, not
 * PEM, a Java KeyStore, PKCS#12 with or without its password), and it is the
 * whole trust store: neither the system store nor a directory relative to the
 * working directory adds to it. PKCS#12 files are made here with OpenSSL. */
#include "itest.h"

#include "log.h"

#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[512], ca[600], cert[600], key[600], other_ca[600];

static int make_pki(void **state) {
    (void) state;
    it_make_pki(dir, sizeof dir, ca, cert, key, sizeof ca);
    snprintf(other_ca, sizeof other_ca, "%s/other-ca.pem", dir); /* a CA that signed nothing */
    return 0;
}

static X509 *read_cert(const char *path) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(x);
    return x;
}

/* <dir>/<name>: a PKCS#12 file holding the test CA (and, with_key, the
 * server's key and certificate), protected by `password`. */
static const char *make_p12(const char *name, const char *password, bool with_key) {
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    STACK_OF(X509) *cas = sk_X509_new_null();
    sk_X509_push(cas, read_cert(ca));
    X509 *own = with_key ? read_cert(cert) : NULL;
    EVP_PKEY *pk = NULL;
    if (with_key) {
        FILE *kf = fopen(key, "r");
        assert_non_null(kf);
        pk = PEM_read_PrivateKey(kf, NULL, NULL, NULL);
        fclose(kf);
        assert_non_null(pk);
    }
    PKCS12 *p12 =
        PKCS12_create(password, "qsf-test", pk, own, with_key ? NULL : cas, 0, 0, 0, 0, 0);
    assert_non_null(p12);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(i2d_PKCS12_fp(out, p12), 1);
    fclose(out);
    PKCS12_free(p12);
    EVP_PKEY_free(pk);
    X509_free(own);
    sk_X509_pop_free(cas, X509_free);
    return path;
}

/* qsf_sender_new must fail with `code` and a message holding want and want2
 * (unless NULL); the server must not have seen an upgrade. */
static const char *create_fails(qsink *sink, const char *conf, int code, const char *want,
                                const char *want2) {
    static qsf_errinfo e;
    qsf_sender *s = NULL;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    if (rc != code)
        fail_msg("'%s': expected %s, got %s: %s", conf, qsf_err_name(code), qsf_err_name(rc),
                 e.msg);
    assert_null(s);
    if (!strstr(e.msg, want) || (want2 && !strstr(e.msg, want2)))
        fail_msg("'%s': message '%s' lacks '%s' / '%s'", conf, e.msg, want, want2 ? want2 : "");
    qsink_stats st;
    qsink_get_stats(sink, &st);
    assert_int_equal(st.upgrades, 0);
    return e.msg;
}

static int drop_pki(void **state) {
    (void) state;
    tu_rmtree(dir);
    return 0;
}

static qsink *tls_sink(void) {
    return it_tls_sink(cert, key);
}

static void tls_roots_verifies_the_server(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[1024];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), ca);
    qsf_sender *s = it_sender(conf);
    int64_t fsn = it_publish(s, "t", 0, 2000, 500);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 2000, false);
}

static void unknown_ca_fails_verification_clearly(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[1024];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;", qsink_port(sink));
    qsf_sender *s = NULL;
    qsf_errinfo e;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    assert_int_equal(rc, QSF_E_TLS);
    assert_null(s);
    assert_non_null(strstr(e.msg, "TLS"));
    assert_non_null(strstr(e.msg, "127.0.0.1"));
    qsink_stats st;
    qsink_get_stats(sink, &st);
    assert_int_equal(st.upgrades, 0);
    qsink_stop(sink);
}

static void unsafe_off_skips_verification(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[1024];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_verify=unsafe_off;", qsink_port(sink));
    qsf_sender *s = it_sender(conf);
    int64_t fsn = it_publish(s, "t", 0, 100, 0);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 100, false);
}

static void tls_roots_is_checked_at_creation(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[2048], path[700];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s/missing.pem;",
             qsink_port(sink), dir);
    snprintf(path, sizeof path, "tls_roots=%s/missing.pem: cannot open it", dir);
    create_fails(sink, conf, QSF_E_TLS, path, "No such file");
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), dir);
    create_fails(sink, conf, QSF_E_TLS, dir, "is a directory");
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    tu_write_file(path, "not a certificate\n", 18);
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), path);
    create_fails(sink, conf, QSF_E_TLS, path, "holds no PEM certificate");
    snprintf(path, sizeof path, "%s/broken.pem", dir);
    tu_write_file(path, "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", 60);
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), path);
    create_fails(sink, conf, QSF_E_TLS, path, "damaged PEM block");
    snprintf(path, sizeof path, "%s/trust.jks", dir);
    tu_write_file(path, "\xfe\xed\xfe\xed\0\0\0\2", 8);
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), path);
    create_fails(sink, conf, QSF_E_TLS, path, "JKS keystores are not supported");
    /* checked before the slot is touched: no slot directory is created */
    char sfdir[700], slot[800];
    snprintf(sfdir, sizeof sfdir, "%s/sf", dir);
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s/missing.pem;sf_dir=%s;",
             qsink_port(sink), dir, sfdir);
    create_fails(sink, conf, QSF_E_TLS, "missing.pem", "No such file");
    snprintf(slot, sizeof slot, "%s/default", sfdir);
    assert_int_equal(access(slot, F_OK), -1);
    qsink_stop(sink);
}

static void pkcs12_roots_verify_the_server(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    const char *p12 = make_p12("roots.p12", "Sesame42", false);
    char conf[2048];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;tls_roots_password=Sesame42;",
             qsink_port(sink), p12);
    qsf_sender *s = it_sender(conf);
    int64_t fsn = it_publish(s, "t", 0, 500, 100);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 500, false);
}

static void pkcs12_needs_its_password(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    const char *p12 = make_p12("locked.p12", "Sesame42", false);
    char conf[2048];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;tls_roots_password=Wr0ngPass;",
             qsink_port(sink), p12);
    const char *msg = create_fails(sink, conf, QSF_E_TLS, p12, "wrong password");
    assert_null(strstr(msg, "Wr0ngPass"));
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), p12);
    create_fails(sink, conf, QSF_E_TLS, "is a PKCS#12 file", "set tls_roots_password");
    /* a PEM file with a password: the password says PKCS#12 */
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;tls_roots_password=x;",
             qsink_port(sink), ca);
    create_fails(sink, conf, QSF_E_TLS, ca, "is not a PKCS#12 file");
    /* RC2, the default of older exports, is left out by OpenSSL 3: said so */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "openssl pkcs12 -export -nokeys -in '%s' -out '%s/legacy.p12' -passout pass:Sesame42 "
             "-legacy 2>/dev/null",
             ca, dir);
    if (system(cmd) != 0)
        fail_msg("openssl CLI could not make a legacy PKCS#12 file");
    snprintf(conf, sizeof conf,
             "wss::addr=127.0.0.1:%u;tls_roots=%s/legacy.p12;tls_roots_password=Sesame42;",
             qsink_port(sink), dir);
    create_fails(sink, conf, QSF_E_TLS, "legacy.p12: cannot be decrypted", "convert it to PEM");
    /* a key's own certificate is not a root: this file holds no CA */
    p12 = make_p12("identity.p12", "Sesame42", true);
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;tls_roots_password=Sesame42;",
             qsink_port(sink), p12);
    create_fails(sink, conf, QSF_E_TLS, p12, "holds no CA certificate");
    qsink_stop(sink);
}

/* The server is signed by a CA that is not in tls_roots: the message says so,
 * names the file, and does not advise setting tls_roots. */
static void wrong_roots_are_named(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[2048];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), other_ca);
    qsf_sender *s = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_sender_new(conf, strlen(conf), &s, &e), QSF_E_TLS);
    char want[700];
    snprintf(want, sizeof want, "not signed by a CA in tls_roots=%s", other_ca);
    if (!strstr(e.msg, want) || strstr(e.msg, "set tls_roots"))
        fail_msg("message: %s", e.msg);
    qsink_stop(sink);
}

/* tls_roots is the whole trust store: a system store that trusts the server
 * (SSL_CERT_FILE points OpenSSL's default store at the test CA) does not
 * rescue a tls_roots that does not. */
static void tls_roots_replaces_the_system_store(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char conf[2048], empty[700];
    snprintf(empty, sizeof empty, "%s/empty-dir", dir);
    mkdir(empty, 0700);
    setenv("SSL_CERT_FILE", ca, 1);
    setenv("SSL_CERT_DIR", empty, 1);
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;", qsink_port(sink));
    qsf_sender *s = it_sender(conf); /* the system store alone trusts it */
    int64_t fsn = it_publish(s, "t", 0, 10, 0);
    it_wait_acked(s, fsn);
    assert_int_equal(qsf_close(s, NULL), QSF_OK);
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;tls_roots=%s;", qsink_port(sink), other_ca);
    s = NULL;
    qsf_errinfo e;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    unsetenv("SSL_CERT_FILE");
    unsetenv("SSL_CERT_DIR");
    if (rc != QSF_E_TLS)
        fail_msg("expected QSF_E_TLS, got %s: %s", qsf_err_name(rc), e.msg);
    qsink_stop(sink);
}

/* libwebsockets adds "../share" (relative to the working directory) to the
 * client's trust store: a CA placed there must not be trusted. */
static void no_trust_from_the_working_directory(void **state) {
    (void) state;
    qsink *sink = tls_sink();
    char share[700], cwd[700], hashed[800], back[1024];
    snprintf(share, sizeof share, "%s/share", dir);
    snprintf(cwd, sizeof cwd, "%s/cwd", dir);
    mkdir(share, 0700);
    mkdir(cwd, 0700);
    X509 *x = read_cert(ca);
    snprintf(hashed, sizeof hashed, "%s/%08lx.0", share, X509_subject_name_hash(x));
    X509_free(x);
    size_t n;
    uint8_t *pem = tu_read_file(ca, &n);
    tu_write_file(hashed, pem, n);
    free(pem);
    assert_non_null(getcwd(back, sizeof back));
    assert_int_equal(chdir(cwd), 0);
    char conf[1024];
    snprintf(conf, sizeof conf, "wss::addr=127.0.0.1:%u;", qsink_port(sink));
    qsf_sender *s = NULL;
    qsf_errinfo e;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    assert_int_equal(chdir(back), 0);
    if (rc != QSF_E_TLS) {
        if (s)
            qsf_close(s, NULL);
        fail_msg("a CA in ../share was trusted (%s)", qsf_err_name(rc));
    }
    qsink_stop(sink);
}

int main(void) {
    qsf_log_set(NULL, NULL, getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tls_roots_verifies_the_server),
        cmocka_unit_test(unknown_ca_fails_verification_clearly),
        cmocka_unit_test(unsafe_off_skips_verification),
        cmocka_unit_test(tls_roots_is_checked_at_creation),
        cmocka_unit_test(pkcs12_roots_verify_the_server),
        cmocka_unit_test(pkcs12_needs_its_password),
        cmocka_unit_test(wrong_roots_are_named),
        cmocka_unit_test(tls_roots_replaces_the_system_store),
        cmocka_unit_test(no_trust_from_the_working_directory),
    };
    return cmocka_run_group_tests(tests, make_pki, drop_pki);
}
