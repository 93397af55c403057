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
    "ws::addr=a;password=x;%s=\x01;username=u;",
    "ws::addr=a;token=x;%s=v;;token=y;",
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

/* ';;' is a literal ';', so "key=v;;token=T;" gives key the value "v;token=T":
 * the token would be echoed by a message about that key, shown by the dump, or
 * sent in a header (client_id becomes X-QWP-Client-Id). Such a value is
 * rejected, naming the keys and positions and showing no value. */
static const struct {
    const char *s, *key, *cred;
} smuggled[] = {
    /* the three strings that showed or sent the token */
    {"ws::addr=127.0.0.1:1;;token=T0kenXyz8;", "addr", "token="},
    {"ws::addr=a;zone=eu;;token=T0kenXyz8;", "zone", "token="},
    {"ws::addr=a;client_id=app;;token=T0kenXyz8;", "client_id", "token="},
    /* any credential key or alias, in any case, with spaces around the name */
    {"ws::addr=a;zone=eu;;password=T0kenXyz8;", "zone", "password="},
    {"ws::addr=a;zone=eu;;pass=T0kenXyz8;", "zone", "password="},
    {"ws::addr=a;zone=eu;;tls_roots_password=T0kenXyz8;", "zone", "tls_roots_password="},
    {"ws::addr=a;zone=eu;;username=T0kenXyz8;", "zone", "username="},
    {"ws::addr=a;zone=eu;;user=T0kenXyz8;", "zone", "username="},
    {"ws::addr=a;zone=eu;;TOKEN=T0kenXyz8;", "zone", "token="},
    {"ws::addr=a;zone=eu;;  Token  =T0kenXyz8;", "zone", "token="},
    {"ws::addr=a;zone=eu;;x;;token=T0kenXyz8;", "zone", "token="},
    /* in a value of every type, secrets included */
    {"ws::addr=a;sf_dir=/d;;token=T0kenXyz8;", "sf_dir", "token="},
    {"ws::addr=a;auto_flush_rows=5;;token=T0kenXyz8;", "auto_flush_rows", "token="},
    {"ws::addr=a;user=u;password=p;;token=T0kenXyz8;", "password", "token="},
    {"ws::addr=a;token=p;;password=T0kenXyz8;", "token", "password="},
    /* after a secret the key itself is not shown */
    {"ws::addr=a;token=x;eu=v;;token=T0kenXyz8;", "a key that follows a secret (not shown)",
     "token="},
};

static void escaped_semicolon_cannot_carry_a_credential(void **state) {
    (void) state;
    for (size_t i = 0; i < sizeof smuggled / sizeof smuggled[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "%s: value at position", smuggled[i].key);
        const char *msg = conf_bad2(smuggled[i].s, want, smuggled[i].cred);
        if (strstr(msg, "T0kenXyz8") || strstr(msg, "eu") || strstr(msg, "app;"))
            fail_msg("'%s' shows a value: %s", smuggled[i].s, msg);
        assert_non_null(strstr(msg, "not shown"));
    }
    /* the positions: the value, and the ';;' */
    conf_bad2("ws::addr=a;zone=eu;;token=T0kenXyz8;", "zone: value at position 16",
              "';;' at position 18");
}

static void escaped_semicolon_still_works_elsewhere(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;zone=eu;;token;client_id=a;;tokenizer=1;user=u;"
                          "password=p;;ssw;;rd;sf_dir=/d;;x token=y;");
    assert_string_equal(c->zone, "eu;token");
    assert_string_equal(c->client_id, "a;tokenizer=1");
    assert_string_equal(c->password, "p;ssw;rd");
    assert_string_equal(c->sf_dir, "/d;x token=y");
    qsf_conf_free(c);
    /* a ';;' right before a real pair: the credential is a key of its own */
    c = conf_ok("ws::addr=a;zone=eu;;;token=T0kenXyz8;");
    assert_string_equal(c->zone, "eu;");
    assert_string_equal(c->token, "T0kenXyz8");
    qsf_conf_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_never_show_secrets),
        cmocka_unit_test(secret_messages_still_name_key_and_position),
        cmocka_unit_test(bad_key_char_after_secret_is_not_shown),
        cmocka_unit_test(dump_redacts),
        cmocka_unit_test(truncated_dump_redacts),
        cmocka_unit_test(env_errors_redact),
        cmocka_unit_test(escaped_semicolon_cannot_carry_a_credential),
        cmocka_unit_test(escaped_semicolon_still_works_elsewhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
