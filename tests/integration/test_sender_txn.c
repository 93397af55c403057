/* transaction=on (docs/DURABILITY.md §16): auto-flushes only stage rows, the
 * explicit qsf_flush commits them all at once; a transaction that dies, is
 * abandoned, or cannot fit the ring delivers nothing. Observed through the
 * sink's commit model (qsink_commits: one deferred group is one commit). */
#include "itest.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAST        "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"
#define STAGED_KEYS 1000000 /* keys of transactions that must never commit start here */

/* Rows [from, to) of table t: k = row number, a symbol, `pad` bytes of blob.
 * Stops at the first failing call and returns its code (err says what). */
static int add_rows(qsf_sender *s, int64_t from, int64_t to, size_t pad, qsf_errinfo *e) {
    static uint8_t blob[4096];
    static const char *const syms[] = {"a", "b", "c"};
    int rc = QSF_OK;
    for (int64_t i = from; i < to && rc == QSF_OK; i++) {
        rc = qsf_table(s, "t", 1, e);
        if (rc == QSF_OK)
            rc = qsf_col_i64(s, "k", 1, i, e);
        if (rc == QSF_OK)
            rc = qsf_symbol(s, "sym", 3, syms[i % 3], 1, e);
        if (rc == QSF_OK && pad)
            rc = qsf_col_binary(s, "blob", 4, blob, pad, e);
        if (rc == QSF_OK)
            rc = qsf_at_micros(s, 1700000000000000ll + i, e);
    }
    return rc;
}

static void must_add(qsf_sender *s, int64_t from, int64_t to, size_t pad) {
    qsf_errinfo e;
    int rc = add_rows(s, from, to, pad, &e);
    if (rc != QSF_OK)
        fail_msg("adding rows %" PRId64 "..%" PRId64 ": %d %s", from, to, rc, e.msg);
}

/* A sender on the sink with transaction=on and `extra`. */
static qsf_sender *txn_sender(qsink *sink, const char *extra) {
    char conf[512], all[256];
    snprintf(all, sizeof all, "transaction=on;%s", extra);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), all));
}

static int64_t must_flush(qsf_sender *s) {
    qsf_errinfo e;
    int64_t fsn = -1;
    int rc = qsf_flush(s, &fsn, &e);
    if (rc != QSF_OK)
        fail_msg("qsf_flush: %d %s", rc, e.msg);
    return fsn;
}

/* 10 MB, five times the sink's batch cap, in 20 auto-flushes: nothing is
 * published until qsf_flush, and then the sink commits the table once. */
static void ten_megabytes_commit_at_once(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = txn_sender(sink, "auto_flush_rows=500;");
    must_add(s, 0, 10000, 1000);
    assert_int_equal(qsf_txn_rows(s), 10000);
    assert_int_equal(qsf_buffered_rows(s), 0);  /* the last auto-flush staged them all */
    assert_int_equal(qsf_published_fsn(s), -1); /* the I/O thread has nothing to send */
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.frames_sent, 0);
    assert_int_equal(qsink_rows(sink, "t"), 0);
    assert_int_equal(qsink_staged_rows(sink, "t"), 0);
    int64_t fsn = must_flush(s);
    assert_true(fsn >= 20); /* 20 staged frames and the committing one */
    assert_int_equal(qsf_txn_rows(s), 0);
    it_wait_acked(s, fsn);
    assert_int_equal(qsink_rows(sink, "t"), 10000);
    assert_int_equal(qsink_commits(sink, "t"), 1); /* all at once */
    it_close_and_check(s, sink, "t", 10000, false);
}

/* A transaction whose rows are all staged commits with the empty commit frame;
 * without transaction=on the same rows are 20 commits. */
static void auto_flushes_commit_without_transaction(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "auto_flush_rows=50;"));
    must_add(s, 0, 1000, 10);
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsink_commits(sink, "t"), 20);
    it_close_and_check(s, sink, "t", 1000, false);
}

/* argv[1] of this program run as the child of run_and_kill */
#define CHILD_ARG "--txn-child"

/* The child: commits keys [from, from + 100), then stages a large transaction
 * (keys from STAGED_KEYS on, across several segments), says "staged" and
 * waits to be killed. */
static _Noreturn void child_commit_then_stage(const char *conf, int64_t from, int fd) {
    qsf_sender *s = it_child_sender(conf, fd);
    qsf_errinfo e;
    int64_t fsn;
    int rc;
    if ((rc = add_rows(s, from, from + 100, 50, &e)) != QSF_OK ||
        (rc = qsf_flush(s, &fsn, &e)) != QSF_OK ||
        (rc = qsf_wait(s, fsn, QSF_WAIT_OK, IT_NO_PROGRESS_MS, &e)) != QSF_OK)
        it_child_give_up(fd, 4, "100 rows (commit and acknowledgement)", rc, &e);
    it_child_report(fd, "committed");
    int64_t staged = STAGED_KEYS + from * 100;
    if ((rc = add_rows(s, staged, staged + 5000, 200, &e)) != QSF_OK)
        it_child_give_up(fd, 5, "staging 5000 rows", rc, &e);
    if (qsf_txn_rows(s) != 5000) {
        it_child_report(fd, "staged %" PRIu64 " rows of 5000", qsf_txn_rows(s));
        _exit(6);
    }
    it_child_report(fd, "staged");
    for (;;)
        pause(); /* SIGKILLed with the transaction open */
}

/* The child's part of main: argv after CHILD_ARG is conf, from and the report
 * pipe's write end. */
static int child_main(char **argv) {
    child_commit_then_stage(argv[2], strtoll(argv[3], NULL, 10), atoi(argv[4]));
}

/* Runs the child until it has staged its transaction, and kills it there. */
static void run_and_kill(const char *conf, int64_t from) {
    char a_from[24];
    snprintf(a_from, sizeof a_from, "%" PRId64, from);
    it_child c;
    it_child_start(&c, CHILD_ARG, (const char *const[]){conf, a_from, NULL});
    int status = it_child_kill_at(&c, "staged", IT_NO_PROGRESS_MS,
                                  "the child's commit and staged transaction");
    assert_true(WIFSIGNALED(status));
}

/* Four senders in a row on one slot each commit 100 rows and die with a
 * transaction of 5000 rows open; a fifth commits 100 more and closes. Only the
 * 500 committed rows ever reach the sink. */
static void killed_transactions_commit_nothing(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=txn;sf_max_segment_bytes=256k;transaction=on;"
             "auto_flush_rows=250;" FAST,
             it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    for (int r = 0; r < 4; r++)
        run_and_kill(conf, r * 100);
    qsf_sender *s = it_sender(conf);
    must_add(s, 400, 500, 50);
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsink_staged_rows(sink, "t"), 0);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 500, true); /* a key from STAGED_KEYS on fails it */
    qsink_stop(sink);
}

/* The connection drops while the transaction is staged, and again in the
 * middle of sending it: it still commits once, every row exactly once. */
static void reconnect_mid_transaction_commits_once(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(
        it_conf(conf, sizeof conf, qsink_port(sink), "transaction=on;auto_flush_rows=100;" FAST));
    must_add(s, 0, 1000, 500);
    qsink_restart(sink);
    assert_int_equal(qsink_wait_upgrades(sink, 2, 10000), 0);
    it_fault(sink, "rst conn=2 after=4"); /* inside the group of 21 frames */
    must_add(s, 1000, 2000, 500);
    int64_t fsn = must_flush(s);
    it_wait_acked(s, fsn);
    int64_t on2 = qsink_frames(sink, 2, NULL, 0);
    assert_true(on2 >= 4 && on2 < fsn + 1); /* the reset came in the middle of the group */
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_true(qsink_frames(sink, 3, NULL, 0) >= fsn + 1); /* the whole group again */
    /* what went out on conn 2 is resent; a dictionary catch-up frame may have led it */
    assert_true(st.frames_replayed + 1 >= (uint64_t) on2);
    assert_true(st.frames_replayed <= (uint64_t) fsn + 1);
    assert_int_equal(qsink_commits(sink, "t"), 1);
    it_close_and_check(s, sink, "t", 2000, false);
}

/* A transaction that needs more than sf_max_total_bytes: the auto-flush that
 * would overflow fails at once, naming the limit, and nothing of it commits;
 * the next transaction is unaffected. */
static void transaction_larger_than_ring_fails(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s =
        txn_sender(sink, "auto_flush_rows=20;sf_max_segment_bytes=64k;sf_max_total_bytes=256k;");
    qsf_errinfo e;
    int rc = add_rows(s, STAGED_KEYS, STAGED_KEYS + 1000, 1000, &e);
    assert_int_equal(rc, QSF_E_TOO_LARGE);
    assert_non_null(strstr(e.msg, "transaction aborted, nothing of it was committed"));
    assert_non_null(strstr(e.msg, "sf_max_total_bytes=262144"));
    assert_false(e.flags & QSF_ERRF_RETRIABLE);
    assert_int_equal(qsf_txn_rows(s), 0);
    assert_int_equal(qsf_buffered_rows(s), 0);
    assert_int_equal(qsf_published_fsn(s), -1);
    must_add(s, 0, 100, 10);
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsink_commits(sink, "t"), 1);
    it_close_and_check(s, sink, "t", 100, false);
}

/* Older unacknowledged frames hold the ring's room: an auto-flush of an open
 * transaction that cannot append within sf_append_deadline_millis fails with
 * QSF_E_FULL, retriable, and the transaction stays open, as it was before that
 * auto-flush (its rows buffered again, but for the row whose call failed);
 * once the room is back qsf_flush commits all of it, once. */
static void full_ring_mid_transaction_can_be_retried(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "stall conn=1"); /* nothing is acknowledged */
    qsf_sender *s = txn_sender(sink, "auto_flush_rows=20;sf_max_segment_bytes=64k;"
                                     "sf_max_total_bytes=256k;sf_append_deadline_millis=300;" FAST);
    must_add(s, 0, 100, 1000); /* two segments, committed, unacknowledged */
    int64_t fsn = must_flush(s);
    qsf_errinfo e;
    assert_int_equal(add_rows(s, 100, 1100, 1000, &e), QSF_E_FULL);
    assert_true(e.flags & QSF_ERRF_RETRIABLE);
    assert_null(strstr(e.msg, "transaction aborted"));
    uint64_t rows = qsf_txn_rows(s);
    /* staged auto-flushes, and the rows accepted before the failed one; the
     * row whose qsf_at_micros failed is left out (include/qsf.h "Rows") */
    assert_true(rows > 40 && rows < 1000);
    assert_int_equal(qsf_buffered_rows(s), 19);
    assert_int_equal(qsf_published_fsn(s), fsn);
    qsink_restart(sink);
    it_wait_acked(s, fsn);
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsink_commits(sink, "t"), 2);
    it_close_and_check(s, sink, "t", 100 + (int64_t) rows, false);
}

/* qsf_buffer_clear abandons the open transaction, staged rows included. */
static void buffer_clear_abandons_transaction(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = txn_sender(sink, "auto_flush_rows=100;");
    must_add(s, STAGED_KEYS, STAGED_KEYS + 250, 10);
    assert_int_equal(qsf_buffered_rows(s), 50);
    assert_int_equal(qsf_buffer_clear(s), 250);
    assert_int_equal(qsf_txn_rows(s), 0);
    must_add(s, 0, 350, 10); /* 300 staged, 50 in the committing frame */
    assert_int_equal(qsf_buffered_rows(s), 50);
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsink_commits(sink, "t"), 1);
    it_close_and_check(s, sink, "t", 350, false);
}

/* close never commits an open transaction: it says how many rows it aborted. */
static void close_aborts_open_transaction(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = txn_sender(sink, "auto_flush_rows=100;");
    must_add(s, 0, 100, 10);
    it_wait_acked(s, must_flush(s));
    must_add(s, STAGED_KEYS, STAGED_KEYS + 250, 10);
    qsf_close_info ci = {.struct_size = sizeof ci};
    qsf_errinfo e;
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_DATA_LOSS);
    assert_int_equal(ci.txn_rows_uncommitted, 250);
    assert_int_equal(ci.rows_unpublished, 0);
    assert_non_null(strstr(e.msg, "250 rows of the open transaction not committed"));
    assert_int_equal(qsink_rows(sink, "t"), 100);
    assert_int_equal(qsink_staged_rows(sink, "t"), 0);
    qsink_stop(sink);
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], CHILD_ARG) == 0)
        return child_main(argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ten_megabytes_commit_at_once),
        cmocka_unit_test(auto_flushes_commit_without_transaction),
        cmocka_unit_test_setup_teardown(killed_transactions_commit_nothing, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test(reconnect_mid_transaction_commits_once),
        cmocka_unit_test(transaction_larger_than_ring_fails),
        cmocka_unit_test(full_ring_mid_transaction_can_be_retried),
        cmocka_unit_test(buffer_clear_abandons_transaction),
        cmocka_unit_test(close_aborts_open_transaction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
