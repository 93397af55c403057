/* The qsf binary's slot group: `qsf slot inspect` and `qsf slot verify` on a
 * clean slot, a slot needing repairs and a broken chain; exit codes; the slot
 * is never changed. The binary path is argv[1]. */
#include "testutil.h"

#include "clitest.h"
#include "sfops/rejected.h"
#include "sftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define out ct_out

/* Runs `qsf slot <sub> <dir>`, stdout and stderr together; returns the exit code. */
static int run_slot_cmd_on(const char *sub, const char *dir) {
    char args[1600];
    snprintf(args, sizeof args, "slot %s '%s'", sub, dir);
    return ct_run(st_root, args);
}

static int run_slot_cmd(const char *sub) {
    return run_slot_cmd_on(sub, st_slot);
}

/* A slot of one frame (FSN 0) with a manifest. */
static void one_frame_slot(void) {
    const char *a[] = {"a"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", 4096, QSF_SFA_FLAG_MANIFEST_REQUIRED, 0, 1,
                   a);
    st_manifest(st_slot, 1, 0, 0);
}

static void clean_slot_verifies(void **state) {
    (void) state;
    const char *a[] = {"a", "b"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", 4096, QSF_SFA_FLAG_MANIFEST_REQUIRED, 7, 2,
                   a);
    st_manifest(st_slot, 1, 7, 7);
    st_watermark(st_slot, 1, 7);
    assert_int_equal(run_slot_cmd("verify"), 0);
    assert_non_null(strstr(out, "verdict: ok\n"));
    assert_non_null(strstr(out, "segments: 1 live, FSN 7..8 (2 frames, 18 bytes), torn 0 bytes\n"));
    assert_non_null(strstr(out, "manifest: generation 1, headBase 7, activeBase 7\n"));
    assert_non_null(strstr(out, "watermark: generation 1, fsn 7\n"));
    assert_non_null(strstr(out, "on open: ackedFsn 7, commit boundary FSN 8\n"));
    assert_int_equal(run_slot_cmd("inspect"), 0);
}

/* The watermark's form shows: the Java client's 16 bytes, before and after
 * they hold a value. */
static void java_form_watermark_shows_its_form(void **state) {
    (void) state;
    one_frame_slot();
    uint8_t b[16] = {0};
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), b, sizeof b);
    assert_int_equal(run_slot_cmd("inspect"), 0);
    assert_non_null(strstr(out, "watermark: 16-byte form, no value yet\n"));
    memcpy(b, "AKW1", 4);
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), b, sizeof b);
    assert_int_equal(run_slot_cmd("inspect"), 0);
    assert_non_null(strstr(out, "watermark: 16-byte form, fsn 0\n"));
    assert_int_equal(run_slot_cmd("inspect --json"), 0);
    assert_non_null(strstr(out, "\"watermark\":{\"present\":true,\"size\":16,\"valid\":true"));
}

static void repairs_fail_verify_but_not_inspect(void **state) {
    (void) state;
    const char *a[] = {"one"};
    uint64_t end = st_segment_str(st_slot, "sf-initial.sfa", 4096, 0, 0, 1, a);
    st_patch(st_path(st_slot, "sf-initial.sfa"), end + 1, "x", 1);
    assert_int_equal(run_slot_cmd("inspect"), 0);
    assert_non_null(strstr(out, "verdict: opens, after repairs\n"));
    assert_non_null(strstr(out, "torn tail of"));
    assert_non_null(strstr(out, "an open migrates the slot"));
    assert_int_equal(run_slot_cmd("verify"), 2);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST))); /* read only */
}

static void broken_chain_and_bad_usage(void **state) {
    (void) state;
    const char *a[] = {"a"};
    /* full: no room */
    st_segment_str(st_slot, "sf-0000000000000001.sfa", QSF_SFA_MIN_SEGMENT, 0, 0, 1, a);
    st_segment_str(st_slot, "sf-0000000000000002.sfa", 4096, 0, 3, 1, a);
    assert_int_equal(run_slot_cmd("verify"), 2);
    assert_non_null(strstr(out, "verdict: open fails with QSF_E_CORRUPT: FSN gap in recovered "
                                "segments: expected 1 but got 3"));
    assert_int_equal(run_slot_cmd("frobnicate"), 64);
    assert_non_null(strstr(out, "unknown subcommand 'frobnicate'"));
    tu_rmtree(st_slot);
    assert_int_equal(run_slot_cmd("inspect"), 1);
    assert_non_null(strstr(out, "cannot open slot directory"));
}

/* A file name in the slot is text from outside: a newline or an ESC in it must
 * not reach the terminal, neither in the file list nor in the findings. */
static void hostile_file_names_are_escaped(void **state) {
    (void) state;
    const char *a[] = {"a"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", 4096, 0, 1, 1, a);
    tu_write_file(st_path(st_slot, "x\nverdict: ok\x1b[2J.sfa"), "junk", 4);
    run_slot_cmd("inspect");
    assert_null(strstr(out, "\x1b"));
    assert_null(strstr(out, "\nverdict: ok\x1b"));
    assert_non_null(strstr(out, "x\\nverdict: ok\\x1b[2J.sfa"));
    for (const char *p = out; *p; p++)
        assert_true(*p == '\n' || (unsigned char) *p >= 0x20);
}

/* A group root (sf_dir) and a directory that holds no slot files are not
 * slots: inspect and verify say so and fail, never "verdict: ok". */
static void group_root_and_plain_directory_are_not_slots(void **state) {
    (void) state;
    one_frame_slot();
    for (int verify = 0; verify < 2; verify++) {
        const char *sub = verify ? "verify" : "inspect";
        assert_int_equal(run_slot_cmd_on(sub, st_sfdir), 2);
        assert_null(strstr(out, "verdict: ok"));
        assert_non_null(strstr(out, "is a group root"));
        assert_non_null(strstr(out, "qsf slot list"));
        assert_int_equal(run_slot_cmd_on(sub, st_root), 2); /* holds sf/ only */
        assert_null(strstr(out, "verdict: ok"));
        assert_non_null(strstr(out, "not a slot"));
    }
    char plain[800];
    snprintf(plain, sizeof plain, "%s/plain", st_root);
    assert_int_equal(mkdir(plain, 0700), 0);
    assert_int_equal(run_slot_cmd_on("verify", plain), 2);
    assert_null(strstr(out, "verdict: ok"));
    assert_non_null(strstr(out, "not a slot"));
    assert_false(st_exists(st_path(plain, ".lock"))); /* still only read */
}

/* A FIFO planted as .failed or .lock.pid must not stall any command (the
 * monitoring OPERATIONS.md recommends runs them from cron): each returns, and
 * .failed is reported as unreadable rather than waited on. The tool is killed
 * after 60 s: 137 means it hung. */
static void fifo_markers_hang_no_command(void **state) {
    (void) state;
    one_frame_slot();
    assert_int_equal(mkfifo(st_path(st_slot, QSF_NAME_FAILED), 0600), 0);
    assert_int_equal(mkfifo(st_path(st_slot, QSF_NAME_LOCK_PID), 0600), 0);
    char args[2000];
    snprintf(args, sizeof args, "slot list '%s'", st_sfdir);
    assert_int_equal(ct_run_limited(st_root, 60, args), 0);
    assert_non_null(strstr(out, "failed"));
    for (int verify = 0; verify < 2; verify++) {
        snprintf(args, sizeof args, "slot %s '%s'", verify ? "verify" : "inspect", st_slot);
        assert_int_not_equal(ct_run_limited(st_root, 60, args), 137);
        assert_non_null(strstr(out, "failed: (unreadable: not a regular file)"));
    }
    snprintf(args, sizeof args, "slot drain '%s' --conf 'ws::addr=127.0.0.1:1;' --dry-run",
             st_slot);
    assert_int_not_equal(ct_run_limited(st_root, 60, args), 137);
    assert_non_null(strstr(out, "would send 1 frames"));
    snprintf(args, sizeof args, "slot set-aside '%s' --fsn 9..9 --reason test", st_slot);
    assert_int_equal(ct_run_limited(st_root, 60, args), 2); /* beyond the chain */
}

/* `qsf slot dump --rejected` on a slot whose .rejected cannot be read fails
 * with exit 1 and frees what the inspection held (under LeakSanitizer a leak
 * turns the exit code into 23). */
static void dump_rejected_error_frees_the_inspection(void **state) {
    (void) state;
    one_frame_slot();
    assert_int_equal(mkdir(st_path(st_slot, QSF_NAME_REJECTED), 0700), 0);
    char args[1600];
    snprintf(args, sizeof args, "slot dump '%s' --rejected", st_slot);
    assert_int_equal(ct_run(st_root, args), 1);
    assert_non_null(strstr(out, "not a regular file"));
}

/* A slot whose only damage is an aborted transaction (frames after the last
 * committing one) verifies: the cut is what killing a transaction=on producer
 * leaves, and verify says what the next open cuts. */
static void aborted_transaction_alone_verifies(void **state) {
    (void) state;
    st_segment_flushes("sf-0000000000000001.sfa", 4096, 0, "CCDD", 3);
    st_manifest(st_slot, 1, 0, 0);
    assert_int_equal(run_slot_cmd("verify"), 0);
    assert_non_null(strstr(out, "verdict: ok\n"));
    assert_non_null(strstr(out, "interrupted flush of 2 frames (FSN 2..3"));
    assert_non_null(strstr(out, "the next open cuts it"));
}

/* ---- verdicts that agree with the open ---- */

/* verify (as `prefix`, "" for this user) says the slot does not open, naming
 * `why`, and the drain's real open fails too: the verdict agrees with it. */
static void expect_refused(const char *prefix, const char *why) {
    char args[1600];
    snprintf(args, sizeof args, "slot verify '%s'", st_slot);
    assert_int_equal(ct_run_prefixed(st_root, prefix, args), 2);
    if (!strstr(out, "verdict: open fails") || !strstr(out, why))
        fail_msg("verify should refuse (%s):\n%s", why, out);
    snprintf(args, sizeof args, "slot drain '%s' --conf 'ws::addr=127.0.0.1:1;' --dry-run",
             st_slot);
    assert_int_equal(ct_run_prefixed(st_root, prefix, args), 2);
    assert_non_null(strstr(out, "cannot drain"));
    snprintf(args, sizeof args, "slot drain '%s' --conf 'ws::addr=127.0.0.1:1;' --timeout 1",
             st_slot);
    assert_int_not_equal(ct_run_prefixed(st_root, prefix, args), 0);
    assert_null(strstr(out, "FSN 1..")); /* it never got as far as sending */
}

/* Files an open refuses, planted where it needs a lock or a directory. */
static void planted_files_fail_verify_as_they_fail_the_open(void **state) {
    (void) state;
    one_frame_slot();
    const char *lock = st_path(st_slot, QSF_NAME_LOCK);
    assert_int_equal(mkdir(lock, 0700), 0); /* the lock file a directory */
    expect_refused("", "is not a regular file");
    assert_int_equal(rmdir(lock), 0);
    assert_int_equal(mkfifo(lock, 0600), 0); /* a FIFO */
    expect_refused("", "is not a regular file");
    assert_int_equal(unlink(lock), 0);
    assert_int_equal(symlink("/nonexistent/lock", lock), 0); /* dangling */
    expect_refused("", "symbolic link");
    assert_int_equal(unlink(lock), 0);
    char locks[800], moved[800];
    snprintf(locks, sizeof locks, "%s/%s", st_sfdir, QSF_NAME_SLOT_LOCKS);
    tu_rmtree(locks);             /* the drains above created it */
    tu_write_file(locks, "x", 1); /* .slot-locks a file */
    expect_refused("", "is not a directory");
    assert_int_equal(unlink(locks), 0);
    assert_int_equal(symlink(st_root, locks), 0); /* .slot-locks a symlink */
    expect_refused("", "symbolic link");
    assert_int_equal(unlink(locks), 0);
    snprintf(moved, sizeof moved, "%s/elsewhere", st_root); /* the slot directory a symlink */
    assert_int_equal(rename(st_slot, moved), 0);
    assert_int_equal(symlink(moved, st_slot), 0);
    expect_refused("", "symbolic link");
    assert_int_equal(unlink(st_slot), 0);
    assert_int_equal(rename(moved, st_slot), 0);
    char args[1600];
    snprintf(args, sizeof args, "slot verify '%s'", st_slot);
    assert_int_equal(ct_run(st_root, args), 0); /* and whole again, it verifies */
}

/* As an unprivileged user, a file the open must write but may not. Runs as
 * nobody through setpriv when the test runs as root. */
static void read_only_files_fail_verify_for_an_unprivileged_user(void **state) {
    (void) state;
    if (getuid() != 0) {
        printf("# skipped: needs root to run the tool as nobody (setpriv)\n");
        skip();
    }
    one_frame_slot();
    st_watermark(st_slot, 1, -1);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "chmod 755 '%s' && chown -R nobody '%s'", st_root, st_sfdir);
    assert_int_equal(system(cmd), 0);
    const char *as_nobody = "setpriv --reuid=nobody --regid=nogroup --clear-groups";
    char args[1600];
    snprintf(args, sizeof args, "slot verify '%s'", st_slot);
    assert_int_equal(ct_run_prefixed(st_root, as_nobody, args), 0); /* all writable */
    const char *files[] = {QSF_NAME_WATERMARK, QSF_NAME_MANIFEST, "sf-0000000000000001.sfa",
                           QSF_NAME_LOCK};
    tu_write_file(st_path(st_slot, QSF_NAME_LOCK), "", 0);
    assert_int_equal(chown(st_path(st_slot, QSF_NAME_LOCK), 65534, 65534), 0);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        assert_int_equal(chmod(st_path(st_slot, files[i]), 0400), 0);
        expect_refused(as_nobody, "is not writable by this user");
        assert_non_null(strstr(out, files[i]));
        assert_int_equal(chmod(st_path(st_slot, files[i]), 0600), 0);
    }
    assert_int_equal(chmod(st_slot, 0500), 0);
    expect_refused(as_nobody, "is not writable by this user");
    assert_int_equal(chmod(st_slot, 0700), 0);
}

int main(int argc, char **argv) {
    if (ct_init(argc, argv) != 0)
        return 2;
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(clean_slot_verifies),
        T(java_form_watermark_shows_its_form),
        T(repairs_fail_verify_but_not_inspect),
        T(broken_chain_and_bad_usage),
        T(hostile_file_names_are_escaped),
        T(group_root_and_plain_directory_are_not_slots),
        T(fifo_markers_hang_no_command),
        T(dump_rejected_error_frees_the_inspection),
        T(aborted_transaction_alone_verifies),
        T(planted_files_fail_verify_as_they_fail_the_open),
        T(read_only_files_fail_verify_for_an_unprivileged_user),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
