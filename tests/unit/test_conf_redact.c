/* Secrets (password, pass, token, tls_roots_password) never appear in an error
 * message, a dump or a redacted canonical string. Every error path reachable
 * with a secret in the string is driven with a distinctive secret and the text
 * is searched for it. */
#include "conf_testutil.h"

#include <stdlib.h>

#define SECRET "Zebra42Quokka"

/* Strings that fail on every kind of error while carrying SECRET in a secret
 * value (or as the tail of one). %s is replaced by SECRET. */
static const char *const failing[] = {
    /* value errors on the secret itself */
    "ws::addr=a;password=%s\x01;username=u;",
    "ws::addr=a;password=%s\xff;username=u;",
    "ws::addr=a;token=%s\xc2\x85;",
    "ws::addr=a;tls_roots_password=%s\n;tls_roots=/r;",
    "ws::addr=a;pass=%s;pass=%s;user=u;",
    "ws::addr=a;password=%s;pass=%s;user=u;",
    "ws::addr=a;token=%s;token=%s;",
    /* an unescaped ';' inside the secret: its tail looks like a key or a pair */
    "ws::addr=a;password=ab;%s=1;username=u;",
    "ws::addr=a;password=ab;%s;username=u;",
    "ws::addr=a;token=x;%s;",
    "ws::addr=a;tls_roots_password=x;%s=y;tls_roots=/r;",
    "ws::addr=a;password=x;%s\x01=1;username=u;",
    /* cross-key rules while secrets are set */
    "ws::addr=a;token=%s;username=u;",
    "ws::addr=a;password=%s;",
    "ws::addr=a;pass=%s;token=%s;",
    "ws::addr=a;tls_roots_password=%s;",
    "ws::password=%s;username=u;",
    "ws::addr=a;tls_roots_password=%s;tls_roots=/r;tls_verify=unsafe_off;",
    /* errors elsewhere in a string that holds secrets */
    "ws::addr=a;password=%s;username=u;bogus=1;",
    "ws::addr=a;password=%s;username=u;auth_timeout_ms=x;",
    "ws::addr=a;token=%s;addr=a;",
    "ws::addr=a;token=%s;sf_durability=periodic;",
    "http::addr=a;token=%s;",
    "ws::addr=a;token=%s;;;Sf_dir=/d;",
};

static void errors_never_show_secrets(void **state) {
    (void) state;
    for (size_t i = 0; i < sizeof failing / sizeof failing[0]; i++) {
        char s[512];
        snprintf(s, sizeof s, failing[i], SECRET, SECRET);
        qsf_conf *c = NULL;
        qsf_errinfo err;
        int rc = qsf_conf_parse(s, strlen(s), &c, &err);
        if (rc != QSF_E_CONF)
            fail_msg("case %zu: expected QSF_E_CONF, got %s", i, qsf_err_name(rc));
        if (strstr(err.msg, SECRET) || strstr(err.msg, "Zebra") || strstr(err.msg, "Quokka"))
            fail_msg("case %zu leaks the secret: %s", i, err.msg);
        assert_true(strlen(err.msg) > 10);
    }
}

static void secret_messages_still_name_key_and_position(void **state) {
    (void) state;
    conf_bad("ws::addr=a;password=" SECRET "\x01;username=u;",
             "control character U+0001 at position 33 in the value of password");
    conf_bad("ws::addr=a;pass=x;pass=" SECRET ";user=u;", "duplicate key: pass at position 18");
    conf_bad("ws::addr=a;password=ab;" SECRET "=1;username=u;",
             "unknown configuration key at position 23 (not shown: it follows a secret value");
    conf_bad("ws::addr=a;password=ab;" SECRET ";username=u;",
             "text at position 23 is not key=value (not shown");
}

static void dump_redacts(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("wss::addr=a;user=u;pass=" SECRET ";tls_roots=/r;"
                          "tls_roots_password=" SECRET ";");
    const char *d = conf_dump_str(c);
    assert_null(strstr(d, SECRET));
    assert_non_null(strstr(d, "\npassword=***  (set)\n"));
    assert_non_null(strstr(d, "\ntls_roots_password=***  (set)\n"));
    assert_non_null(strstr(d, "\ntoken=<unset>  (default)\n"));
    assert_non_null(strstr(d, "\nusername=u  (set)\n"));
    char s[512];
    qsf_conf_to_string(c, false, s, sizeof s);
    assert_null(strstr(s, SECRET));
    assert_non_null(strstr(s, "password=***;"));
    assert_non_null(strstr(s, "tls_roots_password=***;"));
    qsf_conf_to_string(c, true, s, sizeof s);
    assert_non_null(strstr(s, "password=" SECRET ";"));
    qsf_conf_free(c);
    c = conf_ok("ws::addr=a;token=" SECRET ";");
    assert_null(strstr(conf_dump_str(c), SECRET));
    assert_non_null(strstr(conf_dump_str(c), "\ntoken=***  (set)\n"));
    qsf_conf_free(c);
}

static void truncated_dump_redacts(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;token=" SECRET ";");
    size_t need = qsf_conf_dump(c, NULL, 0);
    char *buf = malloc(need + 1);
    for (size_t cap = 1; cap <= need + 1; cap += 7) {
        assert_int_equal(qsf_conf_dump(c, buf, cap), need);
        assert_int_equal(strlen(buf), cap - 1);
        assert_null(strstr(buf, "Zebra"));
    }
    free(buf);
    qsf_conf_free(c);
}

static void env_errors_redact(void **state) {
    (void) state;
    setenv("QDB_CLIENT_CONF", "ws::addr=a;token=" SECRET ";username=u;", 1);
    qsf_conf *c = NULL;
    qsf_errinfo err;
    assert_int_equal(qsf_conf_from_env(&c, &err), QSF_E_CONF);
    assert_null(strstr(err.msg, SECRET));
    assert_non_null(strstr(err.msg, "QDB_CLIENT_CONF: token at position 11"));
    unsetenv("QDB_CLIENT_CONF");
}

/* The tail of a secret cut by an unescaped ';' may hold a character that is
 * invalid in a key: the message names its position but never the character. */
static void bad_key_char_after_secret_is_not_shown(void **state) {
    (void) state;
    const char *msg = conf_bad("ws::addr=a;password=ab;Q/x;username=u;", "at position 24");
    assert_null(strstr(msg, "'/'"));
    assert_non_null(strstr(msg, "not shown"));
    msg = conf_bad("ws::addr=a;token=ab;Q\xe2\x82\xacx;", "at position 21");
    assert_null(strstr(msg, "20AC"));
    assert_non_null(strstr(msg, "not shown"));
    /* without a secret before it, the character is still named */
    conf_bad("ws::addr=a;Q/x;", "invalid character '/' at position 12");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_never_show_secrets),
        cmocka_unit_test(secret_messages_still_name_key_and_position),
        cmocka_unit_test(bad_key_char_after_secret_is_not_shown),
        cmocka_unit_test(dump_redacts),
        cmocka_unit_test(truncated_dump_redacts),
        cmocka_unit_test(env_errors_redact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
