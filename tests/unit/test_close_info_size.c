/* qsf_close_info is extensible like qsf_stats (docs/METRICS.md §1): qsf fills
 * the bytes both sides know, sets struct_size to that and writes nothing past
 * it, so a program built against a newer qsf.h, whose qsf_close_info has
 * more fields, can tell from struct_size that this library left them alone.
 * qsf_close_report(NULL, ...) fills an empty report: no sender needed. */
#include "testutil.h"

#include "qsf.h"

#include <stddef.h>
#include <string.h>

/* qsf_close_info as a newer qsf.h might declare it. */
typedef struct newer_close_info {
    qsf_close_info known;
    uint64_t appended_later;
} newer_close_info;

static void a_newer_caller_learns_what_was_filled(void **state) {
    (void) state;
    newer_close_info ci;
    memset(&ci, 0xAB, sizeof ci);
    ci.known.struct_size = sizeof ci;
    qsf_errinfo e;
    assert_int_equal(qsf_close_report(NULL, &ci.known, &e), QSF_OK);
    assert_int_equal(ci.known.struct_size, sizeof(qsf_close_info));
    assert_int_equal(ci.known.frames_unacked, 0);
    assert_true(ci.appended_later == 0xABABABABABABABABull); /* not written */
}

static void an_older_caller_gets_its_own_fields_only(void **state) {
    (void) state;
    qsf_close_info ci;
    memset(&ci, 0xAB, sizeof ci);
    size_t older = offsetof(qsf_close_info, kept_on_disk); /* knew two counts only */
    ci.struct_size = older;
    qsf_errinfo e;
    assert_int_equal(qsf_close_report(NULL, &ci, &e), QSF_OK);
    assert_int_equal(ci.struct_size, older);
    assert_int_equal(ci.frames_unacked, 0);
    assert_int_equal(ci.bytes_unacked, 0);
    assert_true(ci.rows_unpublished == 0xABABABABABABABABull); /* past its size */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_newer_caller_learns_what_was_filled),
        cmocka_unit_test(an_older_caller_gets_its_own_fields_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
