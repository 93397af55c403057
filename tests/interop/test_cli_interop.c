/* `qsf slot inspect` and `qsf slot dump` on slots the Java client wrote
 * (../shared/interop): a legacy slot without manifest holding its two-frame
 * segment, the same with a torn frame, and its two-chunk .symbol-dict, each
 * compared with tests/golden/cli/java-*. On a checkout without ../shared the
 * whole program is skipped (TAP "1..0 # SKIP"). The binary path is argv[1]. */
#include "testutil.h"

#include "clitest.h"
#include "sftest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* <slot>/<as> holds the fixture `name`, as the Java client wrote it. */
static void place(const char *name, const char *as) {
    size_t n;
    uint8_t *b = tu_read_hex_file(st_fixture_path(name), &n);
    tu_write_file(st_path(st_slot, as), b, n);
    free(b);
    /* its mtime is "newest written": pinned, so the output is stable */
    struct timespec ts[2] = {{.tv_sec = 1704067200}, {.tv_sec = 1704067200}};
    utimensat(AT_FDCWD, st_path(st_slot, as), ts, 0);
}

static void java_slot(void **state) {
    (void) state;
    place("java-two-frame.sfa.hex", "sf-initial.sfa");
    place("java-two-chunk.symbol-dict.hex", ".symbol-dict");
    assert_int_equal(ct_run(st_root, "slot inspect sf/default"), 0);
    ct_expect_golden("java-inspect.txt");
    assert_int_equal(ct_run(st_root, "slot verify sf/default"), 0); /* migrating is no repair */
    assert_int_equal(ct_run(st_root, "slot dump sf/default --rows"), 0);
    ct_expect_golden("java-dump.txt");
    assert_int_equal(ct_run(st_root, "slot dump sf/default --json"), 0);
    ct_expect_golden("java-dump.jsonl");
}

static void java_slot_with_a_torn_frame(void **state) {
    (void) state;
    place("java-two-frame-torn-tail.sfa.hex", "sf-initial.sfa");
    place("java-two-chunk-torn-tail.symbol-dict.hex", ".symbol-dict");
    assert_int_equal(ct_run(st_root, "slot inspect sf/default"), 0);
    ct_expect_golden("java-torn-inspect.txt");
    assert_int_equal(ct_run(st_root, "slot dump sf/default"), 0);
    ct_expect_golden("java-torn-dump.txt");
}

int main(int argc, char **argv) {
    char why[1500];
    if (!st_fixtures_present(why, sizeof why)) {
        printf("1..0 # SKIP %s\n", why);
        return 0;
    }
    if (ct_init(argc, argv) != 0)
        return 2;
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(java_slot),
        T(java_slot_with_a_torn_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
