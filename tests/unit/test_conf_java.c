/* Connect strings written for the Java client work unchanged: `sf_max_bytes`,
 * its name of the segment size, and the values of its schema (compression=auto);
 * unknown keys stay rejected; `qsf conf check` notes each key given that the
 * sender accepts and ignores. argv[1] is the qsf binary. */
#include "conf_testutil.h"

#include "clitest.h"

#include <stdlib.h>

static void sf_max_bytes_is_the_segment_size(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=a;sf_max_bytes=8m;");
    assert_int_equal(c->sf_max_segment_bytes, 8 << 20);
    assert_true(qsf_conf_is_set(c, QSF_CONF_KEY_sf_max_segment_bytes));
    assert_non_null(strstr(conf_dump_str(c), "\nsf_max_segment_bytes=8m  (set)\n"));
    char s[256];
    qsf_conf_to_string(c, false, s, sizeof s);
    assert_string_equal(s, "ws::addr=a:9000;sf_max_segment_bytes=8m;");
    qsf_conf_free(c);
    /* both spellings with one value, in either order and form */
    conf_expect("ws::addr=a;sf_max_bytes=8m;sf_max_segment_bytes=8388608;", sf_max_segment_bytes,
                8 << 20);
    conf_expect("ws::addr=a;sf_max_segment_bytes=8MB;sf_max_bytes=8m;", sf_max_segment_bytes,
                8 << 20);
    /* the effective total follows the segment size given by either name */
    conf_expect("ws::addr=a;sf_max_bytes=64m;sf_max_total_bytes=1m;", sf_max_total_bytes,
                128 << 20);
}

static void sf_max_bytes_disagreeing_is_rejected(void **state) {
    (void) state;
    conf_bad("ws::addr=a;sf_max_segment_bytes=4m;sf_max_bytes=8m;",
             "sf_max_segment_bytes=4m at position 11 and sf_max_bytes=8m at position 35 "
             "disagree");
    conf_bad("ws::addr=a;sf_max_bytes=8m;sf_max_segment_bytes=4m;",
             "sf_max_bytes=8m at position 11 and sf_max_segment_bytes=4m at position 27 disagree");
    /* the value of the second is checked as usual */
    conf_bad("ws::addr=a;sf_max_bytes=8m;sf_max_segment_bytes=8x;",
             "sf_max_segment_bytes: '8x' at position 48 is not a size");
    conf_bad("ws::addr=a;sf_max_bytes=8m;sf_max_segment_bytes=3;",
             "sf_max_segment_bytes: '3' at position 48 must be between 33");
    /* one spelling twice stays a duplicate, equal or not */
    conf_bad("ws::addr=a;sf_max_bytes=8m;sf_max_bytes=8m;", "duplicate key: sf_max_bytes");
    conf_bad("ws::addr=a;sf_max_segment_bytes=8m;sf_max_segment_bytes=8m;",
             "duplicate key: sf_max_segment_bytes");
    conf_bad("ws::addr=a;sf_max_bytes=8m;sf_max_segment_bytes=8m;sf_max_bytes=8m;",
             "duplicate key: sf_max_bytes at position 51");
    /* the other aliases keep their rule: given together they are a duplicate */
    conf_bad("ws::addr=a;user=u;username=u;password=p;", "duplicate key: username");
}

static void compression_auto_is_accepted(void **state) {
    (void) state;
    conf_expect("ws::addr=a;compression=auto;", compression, QSF_CONF_COMPRESSION_AUTO);
    conf_bad("ws::addr=a;compression=Auto;", "is not one of: raw, zstd, auto");
    conf_bad("ws::addr=a;compression=lz4;", "is not one of: raw, zstd, auto");
}

static void unknown_keys_stay_rejected(void **state) {
    (void) state;
    conf_bad("ws::addr=a;query_timeout_ms=5;", "unknown configuration key: query_timeout_ms");
    conf_bad("ws::addr=a;sender_pool_size=5;", "unknown configuration key: sender_pool_size");
    conf_bad("ws::addr=a;compression_type=zstd;", "unknown configuration key: compression_type");
}

/* A valid value of key d, for a string that gives every ignored key. */
static const char *some_value(const struct qsf_conf_keydesc *d) {
    if (d->def)
        return d->def;
    return d->type == QSF_CONF_T_STR ? "eu-west-1a" : "1000";
}

static void conf_check_notes_each_ignored_key(void **state) {
    (void) state;
    char s[4096] = "ws::addr=a;sf_dir=/var/lib/qdb-sender;";
    size_t ignored = 0;
    for (size_t k = 0; k < QSF_CONF_NKEYS; k++) {
        if (!qsf_conf_key_notes[k])
            continue;
        size_t n = strlen(s);
        snprintf(s + n, sizeof s - n, "%s=%s;", qsf_conf_keys[k].name,
                 some_value(&qsf_conf_keys[k]));
        ignored++;
    }
    assert_true(ignored >= 30);
    char args[4200];
    snprintf(args, sizeof args, "conf check '%s'", s);
    assert_int_equal(ct_run(".", args), 0);
    for (size_t k = 0; k < QSF_CONF_NKEYS; k++) {
        if (!qsf_conf_key_notes[k])
            continue;
        char key[80], want[256];
        snprintf(key, sizeof key, ";%s=", qsf_conf_keys[k].name);
        snprintf(want, sizeof want, "\nnote: %s at position %zu: %s\n", qsf_conf_keys[k].name,
                 (size_t) (strstr(s, key) + 1 - s), qsf_conf_key_notes[k]);
        if (!strstr(ct_out, want))
            fail_msg("qsf conf check lacks '%s' in:\n%s", want + 1, ct_out);
    }
    assert_non_null(strstr(ct_out, "\nnote: compression at position "));
    assert_non_null(strstr(ct_out, " applies to queries, ignored by the sender\n"));
    assert_non_null(strstr(ct_out, " applies to sender pools, ignored by the sender\n"));
    assert_null(strstr(ct_out, "note: sf_dir"));
    assert_null(strstr(ct_out, "note: addr"));
}

static void conf_check_notes_only_keys_given(void **state) {
    (void) state;
    assert_int_equal(ct_run(".", "conf check 'ws::addr=a;sf_max_bytes=8m;'"), 0);
    assert_null(strstr(ct_out, "note:"));
    assert_int_equal(ct_run(".", "conf check 'ws::addr=a;target=replica;'"), 0);
    assert_non_null(strstr(ct_out, "\nnote: target at position 11: applies to queries, ignored by "
                                   "the sender\n"));
    assert_null(strstr(ct_out, "note: zone"));
}

int main(int argc, char **argv) {
    if (ct_init(argc, argv) != 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sf_max_bytes_is_the_segment_size),
        cmocka_unit_test(sf_max_bytes_disagreeing_is_rejected),
        cmocka_unit_test(compression_auto_is_accepted),
        cmocka_unit_test(unknown_keys_stay_rejected),
        cmocka_unit_test(conf_check_notes_each_ignored_key),
        cmocka_unit_test(conf_check_notes_only_keys_given),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
