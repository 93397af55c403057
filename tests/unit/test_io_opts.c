/* The I/O thread's options built from a connect string (lib/sender/opts.c):
 * each key's value arrives as the key's row in docs/CONFIGURATION.md says. */
#include "testutil.h"

#include "conf/conf.h"
#include "io/policy.h"
#include "sender/opts.h"

#include <string.h>

/* The poison detector the I/O thread builds from `conf` (io/io.c). */
static qsf_poison detector_of(const char *conf) {
    qsf_conf *c = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_conf_parse(conf, strlen(conf), &c, &e), QSF_OK);
    qsf_io_conf ic;
    assert_int_equal(qsf_io_conf_build(c, NULL, &ic, &e), QSF_OK);
    qsf_poison p;
    qsf_poison_init(&p, ic.opts.max_frame_rejections, ic.opts.poison_window_ms);
    qsf_io_conf_clear(&ic);
    qsf_conf_free(c);
    return p;
}

/* max_frame_rejections is "≥ 1" up to INT64_MAX (other clients' "forever"): a
 * count past the range of an int must not wrap into a detector that gives a
 * frame up at its first rejection. */
static void a_huge_rejection_count_never_escalates_at_the_first_strike(void **state) {
    (void) state;
    static const char *const huge[] = {
        "ws::addr=127.0.0.1;max_frame_rejections=9223372036854775807;"
        "poison_min_escalation_window_millis=0;",
        "ws::addr=127.0.0.1;max_frame_rejections=4294967297;"
        "poison_min_escalation_window_millis=0;",
        "ws::addr=127.0.0.1;max_frame_rejections=2147483648;"
        "poison_min_escalation_window_millis=0;",
    };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        qsf_poison p = detector_of(huge[i]);
        for (int k = 0; k < 8; k++)
            assert_false(qsf_poison_strike(&p, 7));
    }
}

static void the_default_escalates_at_the_fourth_strike(void **state) {
    (void) state;
    qsf_poison p = detector_of("ws::addr=127.0.0.1;poison_min_escalation_window_millis=0;");
    assert_false(qsf_poison_strike(&p, 7));
    assert_false(qsf_poison_strike(&p, 7));
    assert_false(qsf_poison_strike(&p, 7));
    assert_true(qsf_poison_strike(&p, 7));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_huge_rejection_count_never_escalates_at_the_first_strike),
        cmocka_unit_test(the_default_escalates_at_the_fourth_strike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
