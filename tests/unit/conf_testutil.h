/* Helpers for the connect-string tests: parse and expect success, or parse and
 * expect QSF_E_CONF with a message containing given fragments. */
#ifndef QSF_CONF_TESTUTIL_H
#define QSF_CONF_TESTUTIL_H

#include "testutil.h"

#include "conf/conf.h"

#include <stdio.h>
#include <string.h>

/* Parses s (NUL-terminated) and fails the test with the message on error. */
static inline qsf_conf *conf_ok(const char *s) {
    qsf_conf *c = NULL;
    qsf_errinfo err;
    int rc = qsf_conf_parse(s, strlen(s), &c, &err);
    if (rc != QSF_OK)
        fail_msg("expected '%s' to parse, got %s: %s", s, qsf_err_name(rc), err.msg);
    assert_non_null(c);
    return c;
}

/* Parses s and asserts one integer-like field of the result. */
#define conf_expect(s, field, want)                                                                \
    do {                                                                                           \
        qsf_conf *c_ = conf_ok(s);                                                                 \
        assert_int_equal(c_->field, (want));                                                       \
        qsf_conf_free(c_);                                                                         \
    } while (0)

/* Parses s, expects QSF_E_CONF, and that the message contains `want` (and
 * `want2` unless NULL). Returns the message in a static buffer. */
static inline const char *conf_bad2(const char *s, const char *want, const char *want2) {
    static qsf_errinfo err;
    qsf_conf *c = (qsf_conf *) 1;
    int rc = qsf_conf_parse(s, strlen(s), &c, &err);
    if (rc != QSF_E_CONF)
        fail_msg("expected '%s' to be rejected, got %s", s, qsf_err_name(rc));
    assert_null(c);
    assert_int_equal(err.code, QSF_E_CONF);
    if (!strstr(err.msg, want) || (want2 && !strstr(err.msg, want2)))
        fail_msg("'%s': message '%s' lacks '%s'%s%s", s, err.msg, want, want2 ? " / " : "",
                 want2 ? want2 : "");
    return err.msg;
}

static inline const char *conf_bad(const char *s, const char *want) {
    return conf_bad2(s, want, NULL);
}

/* Dump of c into a static buffer. */
static inline const char *conf_dump_str(const qsf_conf *c) {
    static char buf[16384];
    size_t n = qsf_conf_dump(c, buf, sizeof buf);
    assert_true(n < sizeof buf);
    return buf;
}

#endif
