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
    qsf_conf *c = conf_ok("ws::addr=a;zone=eu;;token;client_id=a;;tok=1;user=u;"
                          "password=p;;ssw;;rd;sf_dir=/d;;x token=y;");
    assert_string_equal(c->zone, "eu;token");
    assert_string_equal(c->client_id, "a;tok=1");
    assert_string_equal(c->password, "p;ssw;rd");
    assert_string_equal(c->sf_dir, "/d;x token=y");
    qsf_conf_free(c);
    /* a ';;' right before a real pair: the credential is a key of its own */
    c = conf_ok("ws::addr=a;zone=eu;;;token=T0kenXyz8;");
    assert_string_equal(c->zone, "eu;");
    assert_string_equal(c->token, "T0kenXyz8");
    qsf_conf_free(c);
}

/* A credential key typed without its '=', or misspelt after a ';;': the
 * strings of issue 28 and their neighbours. Neither the word nor anything
 * after it is shown. */
static void near_credential_keys_are_not_shown(void **state) {
    (void) state;
    static const char *const cases[][2] = {
        {"ws::addr=a;passwordSekr1tPw9;", "Sekr1tPw9"},
        {"ws::addr=h:9000;;togken=T0kenXyz8;", "T0kenXyz8"},
        {"ws::addr=a;username=u;passwordSekr1tPw9;", "Sekr1tPw9"},
        {"ws::addr=a;tokenT0kenXyz8=1;", "T0kenXyz8"},
        {"ws::addr=a;paswordSekr1tPw9;", "Sekr1tPw9"},
        {"ws::addr=a;passwrd=Sekr1tPw9;", "passwrd"},
        {"ws::addr=a;tls_roots_pasword=Sekr1tPw9;", "pasword"},
        {"ws::addr=a;zone=eu;;pasword=Sekr1tPw9;", "Sekr1tPw9"},
        {"ws::addr=a;zone=eu;;tokne = T0kenXyz8;", "T0kenXyz8"},
        {"ws::addr=a;passwordSekr1t!Pw9;", "Sekr1t"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg = conf_bad2(cases[i][0], "not shown", NULL);
        if (strstr(msg, cases[i][1]))
            fail_msg("'%s' shows '%s': %s", cases[i][0], cases[i][1], msg);
    }
    conf_bad2("ws::addr=a;passwordSekr1tPw9;", "text at position 11 is not key=value",
              "close to the credential key password");
    conf_bad2("ws::addr=h:9000;;togken=T0kenXyz8;", "addr: value at position 9", "'token='");
    conf_bad2("ws::addr=a;pasword=x;", "unknown configuration key at position 11",
              "write password=<value>");
    /* words that are not close stay named, and literal ';;' still works */
    conf_bad2("ws::addr=a;bogus=1;", "unknown configuration key: bogus", NULL);
    conf_bad2("ws::addr=a;sf_dirr=/d;", "unknown configuration key: sf_dirr", NULL);
    qsf_conf *c = conf_ok("ws::addr=a;client_id=a;;tok=1;zone=eu;;togken;");
    assert_string_equal(c->client_id, "a;tok=1");
    qsf_conf_free(c);
    conf_bad2("ws::addr=a;client_id=a;;tokenizer=1;", "client_id: value at position 21",
              "not shown");
    conf_bad2("ws::addr=a;zone=eu;;cpasswordT2V8;", "zone: value at position 16", "not shown");
}

/* xorshift64: the same 6,000 strings on every run. */
static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n) {
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (uint32_t) (rnd_state % n);
}

/* A secret of alternating capital letters and digits: every piece of two or
 * more characters of it holds both, which no message has by chance. */
static void random_secret(char *out, size_t len) {
    for (size_t i = 0; i < len; i++)
        out[i] = (char) (i % 2 ? '0' + rnd(10) : 'A' + rnd(26));
    out[len] = '\0';
}

/* A credential key name, perhaps with one typo or in capitals. */
static void random_credential(char *out, size_t cap) {
    static const char *const names[] = {"password", "pass", "token", "tls_roots_password"};
    snprintf(out, cap, "%s", names[rnd(4)]);
    size_t n = strlen(out), at = rnd((uint32_t) n);
    switch (rnd(6)) {
    case 0: /* substitute */
        out[at] = (char) ('a' + rnd(26));
        break;
    case 1: /* delete */
        memmove(out + at, out + at + 1, n - at);
        break;
    case 2: /* insert */
        memmove(out + at + 1, out + at, n - at + 1);
        out[at] = (char) ('a' + rnd(26));
        break;
    case 3: /* swap neighbours */
        if (at + 1 < n) {
            char t = out[at];
            out[at] = out[at + 1];
            out[at + 1] = t;
        }
        break;
    case 4:
        for (size_t i = 0; i < n; i++)
            out[i] = (char) (out[i] >= 'a' && out[i] <= 'z' ? out[i] - 32 : out[i]);
        break;
    default: /* as it is */
        break;
    }
}

/* One random connect string carrying `secret` after a credential key that may
 * be misspelt, lack its '=', be glued to it or follow a ';;'. */
static void random_string(char *s, size_t cap, const char *secret) {
    static const char *const pairs[] = {"addr=h:9000", "zone=eu", "client_id=app",
                                        "sf_dir=/d",   "user=u",  "auto_flush_rows=5",
                                        "bogus=1",     "x",       "sender_id=s"};
    static const char *const joins[] = {"=", "", " =", "= ", "=;", "_"};
    static const char *const seps[] = {";", ";;", ";;;", "; ;"};
    char cred[40];
    random_credential(cred, sizeof cred);
    int n = snprintf(s, cap, "ws::");
    for (uint32_t k = rnd(3); k > 0; k--)
        n += snprintf(s + n, cap - (size_t) n, "%s;", pairs[rnd(9)]);
    n += snprintf(s + n, cap - (size_t) n, "%s%s%s%s%s", pairs[rnd(9)], seps[rnd(4)], cred,
                  joins[rnd(6)], secret);
    for (uint32_t k = rnd(3); k > 0; k--)
        n += snprintf(s + n, cap - (size_t) n, "%s%s", seps[rnd(4)], pairs[rnd(9)]);
}

/* Fails when any four or more neighbouring characters of secret appear in text. */
static void expect_no_piece(const char *text, const char *secret, const char *s) {
    size_t n = strlen(secret);
    for (size_t i = 0; i + 4 <= n; i++)
        for (size_t k = 4; i + k <= n; k++) {
            char piece[32];
            snprintf(piece, sizeof piece, "%.*s", (int) k, secret + i);
            if (strstr(text, piece))
                fail_msg("'%s' echoes '%s': %s", s, piece, text);
        }
}

/* 6,000 random strings: no piece of the secret is ever echoed, in an error
 * message or in the dump of a string that parsed. */
static void random_strings_never_echo_a_secret(void **state) {
    (void) state;
    for (int i = 0; i < 6000; i++) {
        char secret[16], s[512];
        random_secret(secret, 8 + rnd(8));
        random_string(s, sizeof s, secret);
        qsf_conf *c = NULL;
        qsf_errinfo err;
        if (qsf_conf_parse(s, strlen(s), &c, &err) != QSF_OK) {
            expect_no_piece(err.msg, secret, s);
            continue;
        }
        char dump[1024];
        qsf_conf_to_string(c, false, dump, sizeof dump);
        expect_no_piece(dump, secret, s);
        qsf_conf_free(c);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_never_show_secrets),
        cmocka_unit_test(near_credential_keys_are_not_shown),
        cmocka_unit_test(random_strings_never_echo_a_secret),
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
