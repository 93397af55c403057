/* Status -> category -> policy, the poison-frame detector with a fake clock,
 * and reconnect pacing (docs/PROTOCOL.md §9). */
#include "testutil.h"

#include "io/policy.h"
#include "os/os.h"
#include "qsf.h"

static int64_t fake_ns;
static int64_t fake_mono(void) {
    return fake_ns;
}

static int setup(void **state) {
    (void) state;
    fake_ns = 1000000000;
    qsf_os_table.mono_ns = fake_mono;
    return 0;
}
static int teardown(void **state) {
    (void) state;
    qsf_os_reset();
    return 0;
}

static void table_has_no_drop_policy(void **state) {
    (void) state;
    struct {
        int status, cat, pol;
    } rows[] = {
        {0x03, QSF_CAT_SCHEMA_MISMATCH, QSF_POLICY_TERMINAL},
        {0x04, QSF_CAT_UNKNOWN, QSF_POLICY_RETRIABLE},
        {0x05, QSF_CAT_PARSE_ERROR, QSF_POLICY_TERMINAL},
        {0x06, QSF_CAT_INTERNAL_ERROR, QSF_POLICY_RETRIABLE},
        {0x07, QSF_CAT_UNKNOWN, QSF_POLICY_RETRIABLE},
        {0x08, QSF_CAT_SECURITY_ERROR, QSF_POLICY_TERMINAL},
        {0x09, QSF_CAT_WRITE_ERROR, QSF_POLICY_RETRIABLE},
        {0x0A, QSF_CAT_UNKNOWN, QSF_POLICY_RETRIABLE},
        {0x0B, QSF_CAT_UNKNOWN, QSF_POLICY_RETRIABLE},
        {0x0C, QSF_CAT_NOT_WRITABLE, QSF_POLICY_RETRIABLE_OTHER},
        {0x0D, QSF_CAT_DICTIONARY_GAP, QSF_POLICY_RETRIABLE},
        {0xFF, QSF_CAT_UNKNOWN, QSF_POLICY_RETRIABLE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int cat = qsf_status_category(rows[i].status);
        assert_int_equal(cat, rows[i].cat);
        assert_int_equal(qsf_category_policy(cat), rows[i].pol);
    }
    assert_int_equal(qsf_category_policy(QSF_CAT_PROTOCOL_VIOLATION), QSF_POLICY_TERMINAL);
    assert_int_equal(qsf_category_policy(QSF_CAT_DATA_LOSS), QSF_POLICY_ABANDONED);
    assert_string_equal(qsf_category_name(QSF_CAT_DICTIONARY_GAP), "DICTIONARY_GAP");
}

static void escalates_only_after_four_strikes_and_five_seconds(void **state) {
    (void) state;
    qsf_poison p;
    qsf_poison_init(&p, 4, 5000);
    for (int i = 0; i < 3; i++) {
        assert_false(qsf_poison_strike(&p, 10));
        fake_ns += 3000000000ll; /* plenty of time, too few strikes */
    }
    /* 4th strike after 9 s: escalate */
    assert_true(qsf_poison_strike(&p, 10));

    /* many quick strikes do not escalate before the window */
    qsf_poison_init(&p, 4, 5000);
    for (int i = 0; i < 20; i++) {
        assert_false(qsf_poison_strike(&p, 11));
        fake_ns += 100000000; /* 0.1 s each: 2 s in total */
    }
    fake_ns += 3000000000ll;
    assert_true(qsf_poison_strike(&p, 11));
}

static void different_frame_or_ok_resets_the_count(void **state) {
    (void) state;
    qsf_poison p;
    qsf_poison_init(&p, 4, 5000);
    for (int i = 0; i < 3; i++)
        qsf_poison_strike(&p, 5);
    fake_ns += 6000000000ll;
    assert_false(qsf_poison_strike(&p, 6)); /* restarts at 1 with a new clock */
    for (int i = 0; i < 2; i++)
        assert_false(qsf_poison_strike(&p, 6));
    assert_false(qsf_poison_strike(&p, 6)); /* 4 strikes, but only 0 s */
    qsf_poison_ok(&p, 5);                   /* below the suspect: no effect */
    fake_ns += 5000000000ll;
    assert_true(qsf_poison_strike(&p, 6));
    qsf_poison_ok(&p, 6); /* covers it: cleared */
    assert_false(qsf_poison_strike(&p, 6));
}

static void zero_window_escalates_at_the_threshold(void **state) {
    (void) state;
    qsf_poison p;
    qsf_poison_init(&p, 2, 0);
    assert_false(qsf_poison_strike(&p, 1));
    assert_true(qsf_poison_strike(&p, 1));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(table_has_no_drop_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(escalates_only_after_four_strikes_and_five_seconds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(different_frame_or_ok_resets_the_count, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_window_escalates_at_the_threshold, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
