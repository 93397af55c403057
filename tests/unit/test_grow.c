/* The growth step of a growable array (lib/grow.h): doubling from the first
 * capacity, for each capacity type; a capacity that cannot double leaves the
 * array and the capacity as they were. */
#include "testutil.h"

#include "grow.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

static void the_capacity_starts_at_first_then_doubles(void **state) {
    (void) state;
    uint64_t *v = NULL;
    uint32_t cap = 0;
    uint32_t seen[4];
    for (int i = 0; i < 4; i++) {
        uint64_t *p = qsf_grow(v, &cap, 16);
        assert_non_null(p);
        v = p;
        seen[i] = cap;
        v[cap - 1] = cap; /* the whole capacity is writable */
    }
    assert_int_equal(seen[0], 16);
    assert_int_equal(seen[1], 32);
    assert_int_equal(seen[2], 64);
    assert_int_equal(seen[3], 128);
    free(v);
}

static void every_capacity_type_grows_alike(void **state) {
    (void) state;
    char **a = NULL;
    int icap = 0;
    size_t scap = 0;
    a = qsf_grow(a, &icap, 8);
    assert_non_null(a);
    assert_int_equal(icap, 8);
    a = qsf_grow(a, &icap, 8);
    assert_non_null(a);
    assert_int_equal(icap, 16);
    free(a);
    a = NULL;
    a = qsf_grow(a, &scap, 4);
    assert_non_null(a);
    assert_int_equal(scap, 4);
    free(a);
}

static void a_capacity_that_cannot_double_changes_nothing(void **state) {
    (void) state;
    char *arr = malloc(1);
    assert_non_null(arr);
    uint32_t ucap = (uint32_t) 1 << 31;
    assert_null(qsf_grow(arr, &ucap, 16));
    assert_int_equal(ucap, (uint32_t) 1 << 31);
    int icap = INT_MAX / 2 + 1;
    assert_null(qsf_grow(arr, &icap, 16));
    assert_int_equal(icap, INT_MAX / 2 + 1);
    uint64_t *wide = (uint64_t *) arr;
    size_t scap = SIZE_MAX / 16 + 1; /* doubles, but not in bytes of 8 */
    assert_null(qsf_grow(wide, &scap, 16));
    assert_int_equal(scap, SIZE_MAX / 16 + 1);
    free(arr); /* still the caller's, unmoved */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_capacity_starts_at_first_then_doubles),
        cmocka_unit_test(every_capacity_type_grows_alike),
        cmocka_unit_test(a_capacity_that_cannot_double_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
