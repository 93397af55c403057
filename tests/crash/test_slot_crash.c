/* A child process is SIGKILLed at a numbered fault point inside slot code
 * (docs/DURABILITY.md §15.2); the next open must succeed into a valid state with
 * nothing recovered that was not there. Needs -Dfault_injection=true. */
#include "testutil.h"

#include "sftest.h"

#include "os/os.h"
#include "sf/recover.h"
#include "log.h"
#include "sf/symdict.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEG 4096
#define F   QSF_SFA_FLAG_MANIFEST_REQUIRED

/* Runs work() in a child armed to die at the first hit of `point`. */
static void kill_child_at(int point, void (*work)(void)) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        qsf_log_set(NULL, NULL, QSF_LOG_OFF);
        qsf_fault_arm(point, 1, QSF_FA_KILL);
        work();
        _exit(0); /* the point was never reached */
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGKILL);
}

static void open_slot(void) {
    qsf_slot_recovered r;
    qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_PERIODIC, SEG, &r, NULL);
}

static void drained_cleanup(void) {
    qsf_slot_recovered r;
    if (qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, NULL) != QSF_OK)
        _exit(3);
    const char *names[] = {QSF_NAME_INITIAL};
    qsf_slot_unlink_segments(&r.slot, names, 1, NULL);
    qsf_slot_remove_sidefiles(&r, NULL);
}

static void expect_empty_slot(void) {
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.published_fsn, -1);
    assert_int_equal(r.acked_fsn, -1);
    assert_int_equal(r.segment_count, 1);
    qsf_slot_release(&r);
}

static void killed_after_manifest_record_of_fresh_slot(void **state) {
    (void) state;
    kill_child_at(QSF_FP_MANIFEST_WRITTEN, open_slot);
    assert_true(st_exists(st_path(st_slot, QSF_NAME_INITIAL)));
    expect_empty_slot(); /* manifest + unflagged segment: valid */
}

static void killed_after_quarantine_rename(void **state) {
    (void) state;
    st_unreplayable_segment("sf-0000000000000001.sfa", SEG);
    st_manifest(st_slot, 1, 0, 0);
    kill_child_at(QSF_FP_QUARANTINE_RENAMED, open_slot);
    assert_true(st_exists(st_path(st_sfdir, "default.unreplayable-1/.failed")));
    expect_empty_slot(); /* a fresh slot under the old name */
    assert_true(st_exists(st_path(st_sfdir, "default.unreplayable-1/sf-0000000000000001.sfa")));
}

static void killed_with_dictionary_chunk_half_written(void **state) {
    (void) state;
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_symdict d;
    assert_int_equal(qsf_symdict_create(&d, dfd, st_slot, NULL), QSF_OK);
    const char *a[] = {"alpha"}, *ab[] = {"alpha", "beta-symbol"};
    assert_int_equal(qsf_symdict_append(&d, 0, 1, a, (uint32_t[]){5}, NULL), QSF_OK);
    qsf_symdict_destroy(&d);
    close(dfd);
    uint8_t p[64];
    const uint8_t *pp[1] = {p};
    uint32_t l[1] = {(uint32_t) st_qwp(p, 0x08, 0, 2, ab)};
    st_segment(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, pp, l);
    st_manifest(st_slot, 1, 0, 0);
    /* recovery learns "beta-symbol" from the frame and appends it */
    kill_child_at(QSF_FP_SYMDICT_HALF_WRITTEN, open_slot);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.data_loss);
    assert_int_equal(qsf_symdict_size(&r.symdict), 2);
    assert_string_equal(qsf_symdict_entry(&r.symdict, 1, NULL), "beta-symbol");
    qsf_slot_release(&r);
    dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    assert_int_equal(qsf_symdict_open(&d, dfd, st_slot, NULL), QSF_OK);
    assert_int_equal(d.torn_bytes, 0);
    assert_int_equal(d.chunks, 2);
    qsf_symdict_destroy(&d);
    close(dfd);
}

static void killed_between_drained_unlinks(void **state) {
    (void) state;
    expect_empty_slot(); /* creates the slot */
    kill_child_at(QSF_FP_SEGMENT_UNLINKED, drained_cleanup);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_INITIAL)));
    assert_true(st_exists(st_path(st_slot, QSF_NAME_MANIFEST)));
    expect_empty_slot(); /* collapsed manifest, no segment: starts empty */
}

static void drained_cleanup_leaves_only_the_lock(void **state) {
    (void) state;
    expect_empty_slot();
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    const char *names[] = {QSF_NAME_INITIAL};
    assert_int_equal(qsf_slot_unlink_segments(&r.slot, names, 1, NULL), QSF_OK);
    assert_int_equal(qsf_slot_remove_sidefiles(&r, NULL), QSF_OK);
    qsf_slot_release(&r);
    const char *gone[] = {QSF_NAME_INITIAL, QSF_NAME_MANIFEST, QSF_NAME_SYMDICT,
                          QSF_NAME_WATERMARK};
    for (int i = 0; i < 4; i++)
        assert_false(st_exists(st_path(st_slot, gone[i])));
    assert_false(st_exists(st_path(st_sfdir, ".slot-locks/default.lock")));
    assert_true(st_exists(st_path(st_slot, ".lock")));
    assert_true(st_exists(st_path(st_slot, ".lock.pid")));
    expect_empty_slot();
}

/* The active segment and a spare, unlinked in generation order (docs/DURABILITY.md §12 step 4),
 * after everything was acknowledged. */
static void drained_cleanup_with_spare(void) {
    qsf_slot_recovered r;
    if (qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, NULL) != QSF_OK ||
        r.acked_fsn != 7)
        _exit(3);
    /* the spare the spare thread provisions while the sender runs (next FSN 8) */
    st_segment_str(st_slot, "sf-0000000000000002.sfa", SEG, F, 8, 0, NULL);
    const char *names[] = {"sf-0000000000000001.sfa", "sf-0000000000000002.sfa"};
    qsf_slot_unlink_segments(&r.slot, names, 2, NULL);
    qsf_slot_remove_sidefiles(&r, NULL);
}

static void killed_between_active_and_spare_unlinks(void **state) {
    (void) state;
    const char *a[] = {"a", "b", "c"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 5, 3, a); /* FSN 5..7 */
    st_manifest(st_slot, 3, 5, 5);
    st_watermark(st_slot, 2, 7); /* all acknowledged: a drained close */
    kill_child_at(QSF_FP_SEGMENT_UNLINKED, drained_cleanup_with_spare);
    assert_false(st_exists(st_path(st_slot, "sf-0000000000000001.sfa")));
    assert_true(st_exists(st_path(st_slot, "sf-0000000000000002.sfa")));
    expect_empty_slot(); /* only a spare under a collapsed manifest: starts empty */
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(killed_after_manifest_record_of_fresh_slot), T(killed_after_quarantine_rename),
        T(killed_with_dictionary_chunk_half_written),  T(killed_between_drained_unlinks),
        T(killed_between_active_and_spare_unlinks),    T(drained_cleanup_leaves_only_the_lock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
