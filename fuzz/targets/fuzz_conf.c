/* Fuzz target for the connect-string parser. Any bytes: never crash, never
 * leak. When a string parses, its canonical form (with secrets) must parse to
 * an equal configuration, and the canonical form must be a fixed point. The
 * dump must never show a secret value. */
#include "conf/conf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *canonical(const qsf_conf *c) {
    size_t n = qsf_conf_to_string(c, true, NULL, 0);
    char *s = malloc(n + 1);
    if (!s)
        abort();
    if (qsf_conf_to_string(c, true, s, n + 1) != n || strlen(s) != n)
        abort();
    return s;
}

static void check_dump_redacts(const qsf_conf *c) {
    size_t n = qsf_conf_dump(c, NULL, 0);
    char *d = malloc(n + 1);
    if (!d || qsf_conf_dump(c, d, n + 1) != n)
        abort();
    /* the dump line of every set secret is exactly "<key>=***  (set)" */
    static const enum qsf_conf_key secrets[] = {QSF_CONF_KEY_password, QSF_CONF_KEY_token,
                                                QSF_CONF_KEY_tls_roots_password};
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++) {
        if (!qsf_conf_is_set(c, secrets[i]))
            continue;
        char line[64];
        snprintf(line, sizeof line, "\n%s=***  (set)\n", qsf_conf_keys[secrets[i]].name);
        if (!strstr(d, line))
            abort();
    }
    free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qsf_conf *c = NULL;
    qsf_errinfo err;
    if (qsf_conf_parse((const char *) data, size, &c, &err) != QSF_OK) {
        if (err.code != QSF_E_CONF || strlen(err.msg) == 0)
            abort();
        return 0;
    }
    check_dump_redacts(c);
    char *s = canonical(c);
    qsf_conf *back = NULL;
    if (qsf_conf_parse(s, strlen(s), &back, &err) != QSF_OK) {
        fprintf(stderr, "canonical form does not parse: %s\n", err.msg);
        abort();
    }
    if (!qsf_conf_equal(c, back))
        abort();
    char *again = canonical(back);
    if (strcmp(s, again) != 0)
        abort();
    qsf_conf *k = qsf_conf_clone(c);
    if (!k || !qsf_conf_equal(c, k))
        abort();
    free(again);
    free(s);
    qsf_conf_free(k);
    qsf_conf_free(back);
    qsf_conf_free(c);
    return 0;
}
