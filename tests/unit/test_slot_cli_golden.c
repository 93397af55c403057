/* What an operator reads: the output of `qsf slot list | inspect | dump |
 * set-aside`, text and JSON, on fixture slots built here (real rows, a
 * damaged frame, a group with a failed and a quarantined slot), compared with
 * tests/golden/cli/. Times that depend on when the test runs (ages, the
 * set-aside's audit time, pids, the user and host) are replaced by
 * placeholders first; everything else must match byte for byte. Run with
 * QSF_UPDATE_GOLDEN=1 to rewrite the files after a deliberate change (and
 * read the diff). The binary path is argv[1]. (tests/sf/clitest.h) */
#include "testutil.h"

#include "clitest.h"
#include "sfrows.h"
#include "sftest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEG     4096
#define CREATED 1704067200000000LL /* 2024-01-01T00:00:00Z */

static int run(const char *args) {
    return ct_run(st_root, args);
}

static void expect_golden(const char *name) {
    ct_expect_golden(name);
}

/* Segment mtimes decide "newest written": pinned, so the output is stable. */
static void pin_mtimes(const char *slot) {
    struct timespec ts[2] = {{.tv_sec = CREATED / 1000000}, {.tv_sec = CREATED / 1000000}};
    const char *names[] = {"sf-0000000000000001.sfa", "sf-0000000000000002.sfa"};
    for (int i = 0; i < 2; i++)
        utimensat(AT_FDCWD, st_path(slot, names[i]), ts, 0);
}

/* Three flushes of two rows, the first acknowledged. */
static void rows_slot(void) {
    assert_int_equal(sr_rows_slot(st_slot, SEG, CREATED, "trades", 3, 2), 2);
    st_watermark(st_slot, 1, 0);
    pin_mtimes(st_slot);
}

static void inspect_a_slot_with_rows(void **state) {
    (void) state;
    rows_slot();
    assert_int_equal(run("slot inspect sf/default"), 0);
    expect_golden("rows-inspect.txt");
    assert_int_equal(run("slot inspect sf/default --json"), 0);
    expect_golden("rows-inspect.json");
    assert_int_equal(run("slot verify sf/default"), 0);
}

static void dump_a_slot_with_rows(void **state) {
    (void) state;
    rows_slot();
    assert_int_equal(run("slot dump sf/default"), 0);
    expect_golden("rows-dump.txt");
    assert_int_equal(run("slot dump sf/default --rows"), 0);
    expect_golden("rows-dump-rows.txt");
    assert_int_equal(run("slot dump sf/default --rows --json --from 1 --limit 1"), 0);
    expect_golden("rows-dump-rows.jsonl");
}

/* A group root: a slot with rows, one a drainer gave up on (.failed), one
 * recovery set aside (.unreplayable-1), and a drained one. */
static void list_a_group(void **state) {
    (void) state;
    rows_slot();
    char p[800];
    const char *others[] = {"given-up", "default.unreplayable-1", "drained"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", st_sfdir, others[i]);
        assert_int_equal(mkdir(p, 0700), 0);
        if (i < 2) {
            assert_int_equal(sr_rows_slot(p, SEG, CREATED, "t", 1, 1), 0);
            pin_mtimes(p);
            tu_write_file(st_path(p, ".failed"), "unreplayable: frame FSN 0 needs symbol ids\n",
                          44);
        } else
            tu_write_file(st_path(p, ".lock"), "", 0);
    }
    snprintf(p, sizeof p, "%s/not-a-slot", st_sfdir);
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(run("slot list sf"), 0);
    expect_golden("list.txt");
    assert_int_equal(run("slot list sf --json"), 0);
    expect_golden("list.json");
    assert_int_equal(run("slot list sf/default"), 2);
    expect_golden("list-of-a-slot.txt");
}

static void set_aside_and_look_again(void **state) {
    (void) state;
    rows_slot();
    assert_int_equal(run("slot set-aside sf/default --fsn 1 --reason 'px became LONG[] on the "
                         "server: SCHEMA_MISMATCH'"),
                     0);
    expect_golden("setaside.txt");
    pin_mtimes(st_slot);
    assert_int_equal(run("slot inspect sf/default"), 0);
    expect_golden("setaside-inspect.txt");
    assert_int_equal(run("slot dump sf/default --rejected --rows"), 0);
    expect_golden("setaside-dump-rejected.txt");
    assert_int_equal(run("slot set-aside sf/default --fsn 0 --reason again"), 2);
    expect_golden("setaside-acked.txt");
    assert_int_equal(run("slot set-aside sf/default --fsn 1..2 --reason again --json"), 2);
    expect_golden("setaside-empty.txt");
}

/* A flipped byte in the middle frame: the intact frames are kept, the
 * damaged one becomes a placeholder and its flush is given up. */
static void inspect_and_dump_a_damaged_slot(void **state) {
    (void) state;
    rows_slot();
    st_frames f;
    st_read_frames(st_path(st_slot, "sf-0000000000000001.sfa"), &f);
    st_patch(st_path(st_slot, "sf-0000000000000001.sfa"), f.off[1] + 20, "\xff", 1);
    st_frames_free(&f);
    pin_mtimes(st_slot);
    assert_int_equal(run("slot inspect sf/default"), 0);
    expect_golden("damaged-inspect.txt");
    assert_int_equal(run("slot verify sf/default"), 2);
    assert_int_equal(run("slot dump sf/default"), 0);
    expect_golden("damaged-dump.txt");
}

int main(int argc, char **argv) {
    if (ct_init(argc, argv) != 0)
        return 2;
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(inspect_a_slot_with_rows), T(dump_a_slot_with_rows),           T(list_a_group),
        T(set_aside_and_look_again), T(inspect_and_dump_a_damaged_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
