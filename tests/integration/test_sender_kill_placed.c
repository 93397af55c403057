/* A sender killed while a frame is written into the ring's active segment
 * (docs/DURABILITY.md §3.2): the frame's flush had not returned, so the next
 * sender finds a torn tail and nothing else: no damaged place, no frame that
 * was never flushed, whatever the bytes of the rows were. The row here
 * carries, in a BINARY value, the bytes of a stored frame (envelope and QWP
 * message of a table "ghost"), as an application forwarding slot contents
 * would. The kill comes while the frame's new symbol is written ahead, after
 * its payload is copied in or built in place (its CRC not yet written), or
 * with a frame built in place whole, before its length replaces the room's
 * in its envelope. A frame built in place without the writer's marker in its
 * envelope fails the last case: salvage finds the stored frame in the BINARY
 * value. */
#include "itest.h"

#include "os/os.h"
#include "qwp/batch.h"
#include "qwp/encoder.h"
#include "qwp/symtab.h"
#include "sf/segment.h"
#include "sf/sfa.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef QSF_FAULT_INJECTION

#define NOWHERE 1 /* nothing listens: the killed sender stays offline */
#define ROWS    10

static int to_segment(void *user, const uint8_t *frame, size_t len, bool last, qsf_errinfo *e) {
    (void) last;
    (void) e;
    return qsf_seg_write(user, frame, (uint32_t) len) ? QSF_OK : QSF_E_INTERNAL;
}

/* The bytes of one stored frame (CRC, length, message of one row of table
 * "ghost") as a segment holds them. Returns their length. */
static size_t stored_ghost_frame(uint8_t *out, size_t cap) {
    qsf_symtab *st;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *enc;
    qsf_segment *seg;
    assert_int_equal(qsf_symtab_new(&st, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_new(st, NULL, &b, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_encoder_new(&enc, NULL), QSF_OK);
    assert_int_equal(qsf_seg_new_mem(4096, 0, &seg, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_table(b, "ghost", 5, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_col_i64(b, "k", 1, 666, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_at_micros(b, 1700000000000000ll, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_encode(enc, b, NULL, NULL, to_segment, seg, NULL, NULL), QSF_OK);
    size_t n = (size_t) (seg->append_off - QSF_SFA_HEADER_SIZE);
    assert_true(n <= cap);
    memcpy(out, seg->base + QSF_SFA_HEADER_SIZE, n);
    qsf_seg_destroy(seg);
    qsf_qwp_encoder_free(enc);
    qsf_qwp_batch_free(b);
    qsf_symtab_free(st);
    return n;
}

static const char *conf_for(char *buf, size_t cap, uint16_t port) {
    char extra[900];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=p;sf_max_segment_bytes=64k;auto_flush=off;"
             "initial_connect_retry=async;close_flush_timeout_millis=5000;"
             "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;",
             it_dir);
    return it_conf(buf, cap, port, extra);
}

/* Commits ROWS rows, then flushes one more row (a new symbol, the stored
 * frame in a BINARY value) with `point` armed to kill. Exits 0 if the flush
 * returned without reaching the point. */
static void child(int point) {
    char conf[1400];
    qsf_sender *s = it_sender(conf_for(conf, sizeof conf, NOWHERE));
    qsf_errinfo e;
    int64_t fsn;
    for (int64_t k = 0; k < ROWS; k++)
        if (it_add_row(s, "t", k, "old", 8, &e) != QSF_OK)
            _exit(3);
    if (qsf_flush(s, &fsn, &e) != QSF_OK)
        _exit(4);
    uint8_t ghost[256];
    size_t n = stored_ghost_frame(ghost, sizeof ghost);
    if (qsf_table(s, "t", 1, &e) != QSF_OK || qsf_col_i64(s, "k", 1, ROWS, &e) != QSF_OK ||
        qsf_symbol(s, "sym", 3, "new", 3, &e) != QSF_OK ||
        qsf_col_binary(s, "blob", 4, ghost, n, &e) != QSF_OK ||
        qsf_at_micros(s, 1700000000000000ll + ROWS, &e) != QSF_OK)
        _exit(5);
    qsf_fault_arm_here(point, 1, QSF_FA_KILL);
    int rc = qsf_flush(s, &fsn, &e);
    _exit(rc == QSF_OK && fsn == 1 ? 0 : 6);
}

/* Runs the child; returns whether it was killed at the point (else it
 * flushed the row and exited). */
static bool run_child(int point) {
    pid_t pid = fork();
    if (pid == 0)
        child(point);
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        return true;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child failed before or in its last flush: status %d", status);
    return false;
}

/* The next sender finds exactly the flushes that returned: no damaged place,
 * no row of the stored frame, the last row only if its flush returned. */
static void check_recovered(bool killed) {
    qsink *sink = it_sink(NULL);
    char conf[1400];
    qsf_sender *s = it_sender(conf_for(conf, sizeof conf, qsink_port(sink)));
    qsf_stats st;
    qsf_stats_get(s, &st);
    if (st.data_losses || st.frames_lost)
        fail_msg("recovery reported %llu damaged places (%llu frames) after a kill inside an "
                 "unreturned flush",
                 (unsigned long long) st.data_losses, (unsigned long long) st.frames_lost);
    assert_int_equal(qsf_published_fsn(s), killed ? 0 : 1); /* the flushes that returned */
    it_wait_acked(s, qsf_published_fsn(s));
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", killed ? ROWS : ROWS + 1, false);
    assert_int_equal(qsink_rows(sink, "ghost"), 0);
    qsink_stop(sink);
}

/* Killed while the last row's new symbol is written ahead to .symbol-dict. */
static void killed_encoding_in_place_leaves_a_torn_tail_only(void **state) {
    (void) state;
    if (!run_child(QSF_FP_SYMDICT_HALF_WRITTEN))
        fail_msg("the flush did not write its new symbol ahead");
    check_recovered(true);
}

/* Killed with the row's frame in the segment, its length written, its CRC
 * not yet: the frame says it was being written, so recovery does not look
 * into its payload for frames. */
static void killed_before_a_copied_frame_has_its_crc(void **state) {
    (void) state;
    if (!run_child(QSF_FP_FRAME_PAYLOAD_WRITTEN))
        fail_msg("the flush did not write its frame");
    check_recovered(true);
}

/* Killed with the frame built in place, before its length replaces the
 * room's: the envelope holds the writer's marker and the room's length
 * (docs/FORMAT.md §2.4), so recovery looks into none of the room for
 * frames. */
static void killed_before_a_placed_frame_is_sealed(void **state) {
    (void) state;
    if (!run_child(QSF_FP_FRAME_PLACED))
        fail_msg("the flush built no frame in place");
    check_recovered(true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(killed_encoding_in_place_leaves_a_torn_tail_only,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(killed_before_a_placed_frame_is_sealed, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(killed_before_a_copied_frame_has_its_crc, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

int main(void) {
    return 77; /* needs -Dfault_injection=true */
}

#endif
