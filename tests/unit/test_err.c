/* Error names, texts and errinfo filling. */
#include "testutil.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void names_are_stable(void **state) {
    (void) state;
    assert_string_equal(qsf_err_name(QSF_OK), "QSF_OK");
    assert_string_equal(qsf_err_name(QSF_E_FULL), "QSF_E_FULL");
    assert_string_equal(qsf_err_name(QSF_E_LOCKED), "QSF_E_LOCKED");
    assert_string_equal(qsf_err_name(-9999), "QSF_E_UNKNOWN");
    assert_string_equal(qsf_err_str(-9999), "unknown error");
}

static void every_code_has_a_distinct_name(void **state) {
    (void) state;
    for (int a = QSF_E_INTERNAL; a <= QSF_OK; a++) {
        assert_string_not_equal(qsf_err_name(a), "QSF_E_UNKNOWN");
        for (int b = a + 1; b <= QSF_OK; b++)
            assert_string_not_equal(qsf_err_name(a), qsf_err_name(b));
    }
}

/* Every "QSF_<prefix>NAME = value" of include/qsf.h is named NAME by fn:
 * a category or policy added to qsf.h without a name fails here. Returns
 * how many it checked. */
static int check_enum_names(const char *prefix, const char *(*fn)(int) ) {
    char path[4096];
    const char *root = getenv("QSF_SOURCE_ROOT");
    assert_non_null(root);
    snprintf(path, sizeof path, "%s/include/qsf.h", root);
    size_t len;
    char *h = (char *) tu_read_file(path, &len);
    int n = 0;
    for (char *line = strtok(h, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64];
        int value;
        const char *p = strstr(line, prefix);
        if (p && sscanf(p + strlen(prefix), "%63[A-Z_] = %d", name, &value) == 2) {
            if (strcmp(fn(value), name) != 0)
                fail_msg("%s%s = %d is named %s", prefix, name, value, fn(value));
            n++;
        }
    }
    free(h);
    return n;
}

static void categories_and_policies_have_names(void **state) {
    (void) state;
    assert_int_equal(check_enum_names("QSF_CAT_", qsf_category_name), 11);
    assert_int_equal(check_enum_names("QSF_POLICY_", qsf_policy_name), 4);
    assert_string_equal(qsf_category_name(QSF_CAT_WRITE_ERROR), "WRITE_ERROR");
    assert_string_equal(qsf_category_name(7), "UNKNOWN");
    assert_string_equal(qsf_policy_name(QSF_POLICY_RETRIABLE_OTHER), "RETRIABLE_OTHER");
    assert_string_equal(qsf_policy_name(0), "UNKNOWN");
}

static void set_fills_and_returns_code(void **state) {
    (void) state;
    qsf_errinfo e;
    int rc = qsf_err_set(&e, QSF_E_IO, QSF_ERRF_RETRIABLE, 5, "read %s at %d", "x.sfa", 24);
    assert_int_equal(rc, QSF_E_IO);
    assert_int_equal(e.code, QSF_E_IO);
    assert_int_equal(e.flags, QSF_ERRF_RETRIABLE);
    assert_int_equal(e.sys_errno, 5);
    assert_string_equal(e.msg, "read x.sfa at 24");
    qsf_err_prefix(&e, "recovery");
    assert_string_equal(e.msg, "recovery: read x.sfa at 24");
    assert_int_equal(qsf_err_set(NULL, QSF_E_NOMEM, 0, 0, "ignored"), QSF_E_NOMEM);
}

static void long_messages_are_truncated(void **state) {
    (void) state;
    qsf_errinfo e;
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    qsf_err_set(&e, QSF_E_CONF, 0, 0, "%s", big);
    assert_int_equal(strlen(e.msg), QSF_ERRINFO_MSG_MAX - 1);
}

static void version_matches_macros(void **state) {
    (void) state;
    assert_string_equal(qsf_version(), QSF_VERSION_STRING);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_are_stable),
        cmocka_unit_test(every_code_has_a_distinct_name),
        cmocka_unit_test(categories_and_policies_have_names),
        cmocka_unit_test(set_fills_and_returns_code),
        cmocka_unit_test(long_messages_are_truncated),
        cmocka_unit_test(version_matches_macros),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
