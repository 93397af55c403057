/* What qsf_close returns for what it found (qsf_close_outcome, the rank of
 * include/qsf.h below the terminal error): an adopted orphan slot that no
 * drainer started keeps its frames in it, as an interrupted one does, and is
 * QSF_E_TIMEOUT; it was QSF_OK, said only in a count and a log line. */
#include "testutil.h"

#include "sender/internal.h"

#include <string.h>

static qsf_close_info empty(void) {
    qsf_close_info ci;
    memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    return ci;
}

static void nothing_left_is_ok(void **state) {
    (void) state;
    qsf_close_info ci = empty();
    assert_int_equal(qsf_close_outcome(&ci, false), QSF_OK);
}

static void an_orphan_slot_never_started_is_a_timeout(void **state) {
    (void) state;
    qsf_close_info ci = empty();
    ci.orphan_slots_not_started = 2;
    assert_int_equal(qsf_close_outcome(&ci, false), QSF_E_TIMEOUT);
}

static void frames_left_in_slots_are_a_timeout(void **state) {
    (void) state;
    qsf_close_info ci = empty();
    ci.frames_unacked = 3;
    ci.kept_on_disk = 1;
    assert_int_equal(qsf_close_outcome(&ci, false), QSF_E_TIMEOUT);
    ci = empty();
    ci.orphan_slots_left = 1;
    assert_int_equal(qsf_close_outcome(&ci, false), QSF_E_TIMEOUT);
}

static void data_given_up_outranks_a_timeout(void **state) {
    (void) state;
    qsf_close_info ci = empty();
    ci.orphan_slots_not_started = 1;
    ci.rows_unpublished = 9;
    assert_int_equal(qsf_close_outcome(&ci, false), QSF_E_DATA_LOSS);
    ci = empty();
    ci.txn_rows_uncommitted = 4;
    assert_int_equal(qsf_close_outcome(&ci, false), QSF_E_DATA_LOSS);
    ci = empty();
    assert_int_equal(qsf_close_outcome(&ci, true), QSF_E_DATA_LOSS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_left_is_ok),
        cmocka_unit_test(an_orphan_slot_never_started_is_a_timeout),
        cmocka_unit_test(frames_left_in_slots_are_a_timeout),
        cmocka_unit_test(data_given_up_outranks_a_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
