/* examples/demo (what scripts/demo.sh runs): its exit code agrees with the
 * summary it prints. */
#include "testutil.h"

#include "exrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *DEMO;
static char out[1 << 16];

/* Runs the demo with the bundled sink; returns its exit code. */
static int run_demo(const char *rows) {
    char dir[512];
    tu_mkdtemp(dir, sizeof dir);
    const char *argv[] = {DEMO, rows, dir, NULL};
    int rc = ex_run(argv, NULL, out, sizeof out);
    tu_rmtree(dir);
    return rc;
}

/* "rows lost N" in the summary must be the exit code's reason: 0 exactly when
 * nothing was lost. With no rows to publish nothing can be lost. */
static void no_rows_is_success(void **state) {
    (void) state;
    int rc = run_demo("0");
    int64_t lost = ex_number_after(out, "rows lost");
    print_message("demo 0: exit %d, rows lost %lld\n", rc, (long long) lost);
    assert_int_equal(lost, 0);
    assert_int_equal(rc, 0);
}

static void some_rows_arrive(void **state) {
    (void) state;
    int rc = run_demo("20000");
    assert_int_equal(ex_number_after(out, "rows published"), 20000);
    assert_int_equal(ex_number_after(out, "rows lost"), 0);
    assert_int_equal(rc, 0);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_demo DEMO\n");
        return 2;
    }
    DEMO = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_rows_is_success),
        cmocka_unit_test(some_rows_arrive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
