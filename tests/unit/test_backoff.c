/* The reconnect backoff (lib/io/backoff.h): one doubling sequence with equal
 * jitter, an immediate first retry after a loss, reset only by progress. */
#include "testutil.h"

#include "io/backoff.h"

/* Delay k of a sequence must lie in [b, 2b) for b = min(100 << n, 5000). */
static void assert_in_step(int64_t d, int n) {
    int64_t b = 100;
    for (int i = 0; i < n && b < 5000; i++)
        b *= 2;
    if (b > 5000)
        b = 5000;
    if (d < b || d >= 2 * b)
        fail_msg("delay %lld outside [%lld, %lld) at step %d", (long long) d, (long long) b,
                 (long long) (2 * b), n);
}

static void refusals_double_from_the_initial_step_and_cap(void **state) {
    (void) state;
    qsf_backoff b;
    qsf_backoff_init(&b, 100, 5000, 7);
    for (int k = 0; k < 40; k++)
        assert_in_step(qsf_backoff_next(&b, false), k);
}

static void a_loss_is_retried_at_once_the_first_time_only(void **state) {
    (void) state;
    qsf_backoff b;
    qsf_backoff_init(&b, 100, 5000, 3);
    assert_int_equal(qsf_backoff_next(&b, true), 0);
    for (int k = 0; k < 10; k++)
        assert_in_step(qsf_backoff_next(&b, true), k);
}

static void only_progress_starts_the_sequence_again(void **state) {
    (void) state;
    qsf_backoff b;
    qsf_backoff_init(&b, 100, 5000, 11);
    for (int k = 0; k < 6; k++)
        qsf_backoff_next(&b, true);
    /* a failure of another kind does not reset it */
    assert_in_step(qsf_backoff_next(&b, false), 6);
    qsf_backoff_progress(&b);
    assert_int_equal(qsf_backoff_next(&b, true), 0);
    assert_in_step(qsf_backoff_next(&b, true), 0);
}

static void the_jitter_is_not_constant(void **state) {
    (void) state;
    qsf_backoff b;
    qsf_backoff_init(&b, 1000, 1000, 5);
    int64_t first = qsf_backoff_next(&b, false);
    bool differs = false;
    for (int k = 0; k < 20; k++)
        differs |= qsf_backoff_next(&b, false) != first;
    assert_true(differs);
}

static void zero_initial_means_no_delay(void **state) {
    (void) state;
    qsf_backoff b;
    qsf_backoff_init(&b, 0, 5000, 1);
    for (int k = 0; k < 5; k++)
        assert_int_equal(qsf_backoff_next(&b, false), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refusals_double_from_the_initial_step_and_cap),
        cmocka_unit_test(a_loss_is_retried_at_once_the_first_time_only),
        cmocka_unit_test(only_progress_starts_the_sequence_again),
        cmocka_unit_test(the_jitter_is_not_constant),
        cmocka_unit_test(zero_initial_means_no_delay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
