/* transaction=on at its edges (docs/DURABILITY.md §16, docs/ERRORS.md §2.1): an
 * abort whose new symbols the next transaction reuses, memory mode, an empty
 * qsf_flush, many tables, server errors inside the committed group, a
 * terminal error while a transaction is staged, orphan draining of a killed
 * transaction, close with one open, 1 KiB segments, many aborts in a small
 * ring, a full ring's rollback, random connection faults. Each transaction
 * reaches the sink whole or not at all, its symbols as written. */
#include "itest.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAST    "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"
#define GIVE_UP 1000000 /* keys of transactions that must never commit start here */

/* Row i of table `table`: k = i, sym = "v<i/10>" (new symbols every 10 rows),
 * 200 bytes of blob. */
static int add(qsf_sender *s, const char *table, int64_t from, int64_t to, qsf_errinfo *e) {
    int rc = QSF_OK;
    for (int64_t i = from; i < to && rc == QSF_OK; i++) {
        char sym[32];
        snprintf(sym, sizeof sym, "v%" PRId64, i % GIVE_UP / 10);
        rc = it_add_row(s, table, i, sym, 200, e);
    }
    return rc;
}

static void must_add(qsf_sender *s, const char *table, int64_t from, int64_t to) {
    qsf_errinfo e;
    int rc = add(s, table, from, to, &e);
    if (rc != QSF_OK)
        fail_msg("adding %s %" PRId64 "..%" PRId64 ": %s: %s", table, from, to, qsf_err_name(rc),
                 e.msg);
}

static int64_t must_flush(qsf_sender *s) {
    qsf_errinfo e;
    int64_t fsn = -1;
    int rc = qsf_flush(s, &fsn, &e);
    if (rc != QSF_OK)
        fail_msg("qsf_flush: %s: %s", qsf_err_name(rc), e.msg);
    return fsn;
}

/* Table `table` holds exactly keys [0, n), once each, every symbol as it was
 * written, and no key of a given-up transaction. */
static void check_table(qsink *sink, const char *table, int64_t n) {
    assert_int_equal(qsink_wait_rows(sink, table, n, 20000), 0);
    int64_t rows = qsink_rows(sink, table);
    for (int64_t r = 0; r < rows; r++) {
        char k[32], sym[32], want[32];
        assert_int_equal(qsink_cell(sink, table, r, "k", k, sizeof k), 0);
        assert_int_equal(qsink_cell(sink, table, r, "sym", sym, sizeof sym), 0);
        int64_t key = strtoll(k, NULL, 10);
        if (key >= GIVE_UP)
            fail_msg("%s: key %" PRId64 " of a given-up transaction delivered", table, key);
        snprintf(want, sizeof want, "v%" PRId64, key / 10);
        if (strcmp(sym, want) != 0)
            fail_msg("%s row %" PRId64 " (k=%" PRId64 "): sym %s, written %s", table, r, key, sym,
                     want);
    }
    assert_int_equal(rows, n);
    assert_int_equal(qsink_duplicates(sink, table, "k"), 0);
}

static qsf_sender *sender_on(qsink *sink, const char *extra) {
    char conf[1200], all[1000];
    snprintf(all, sizeof all, "transaction=on;auto_flush_rows=50;" FAST "%s", extra);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), all));
}

/* The aborted transaction introduced symbols v100000.. (keys GIVE_UP..); the
 * next one uses the same strings for keys 0.. (v0..) and new ones. */
static void aborted_symbols_reused(qsink *sink, qsf_sender *s, bool reconnect) {
    must_add(s, "t", GIVE_UP, GIVE_UP + 300); /* 6 staged frames, new symbols */
    assert_int_equal(qsf_buffer_clear(s), 300);
    if (reconnect) {
        qsink_restart(sink);
        assert_int_equal(qsink_wait_upgrades(sink, 2, 10000), 0);
    }
    must_add(s, "t", 0, 400); /* v0..v39: v0..v29 were the aborted ones' ids */
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsink_commits(sink, "t"), 1);
}

/* In SF mode, with and without a reconnect in between. */
static void symbols_of_an_abort_are_reused(void **state) {
    (void) state;
    for (int reconnect = 0; reconnect < 2; reconnect++) {
        char extra[800];
        snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=sym%d;sf_max_segment_bytes=32k;", it_dir,
                 reconnect);
        qsink *sink = it_sink(NULL);
        qsf_sender *s = sender_on(sink, extra);
        aborted_symbols_reused(sink, s, reconnect);
        qsf_errinfo e;
        assert_int_equal(qsf_close(s, &e), QSF_OK);
        check_table(sink, "t", 400);
        qsink_stop(sink);
    }
}

/* Memory mode: the same, the abort spanning several segments of the ring. */
static void memory_mode_abort_then_commit(void **state) {
    (void) state;
    for (int reconnect = 0; reconnect < 2; reconnect++) {
        qsink *sink = it_sink(NULL);
        qsf_sender *s = sender_on(sink, "sf_max_segment_bytes=32k;");
        aborted_symbols_reused(sink, s, reconnect);
        qsf_errinfo e;
        assert_int_equal(qsf_close(s, &e), QSF_OK);
        check_table(sink, "t", 400);
        qsink_stop(sink);
    }
}

/* qsf_flush with nothing staged publishes nothing, every time, and the
 * transaction after it is one commit as usual. */
static void empty_flush_publishes_nothing(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sender_on(sink, "");
    assert_int_equal(must_flush(s), -1);
    assert_int_equal(must_flush(s), -1);
    must_add(s, "t", 0, 120);
    int64_t fsn = must_flush(s);
    assert_int_equal(must_flush(s), fsn);
    assert_int_equal(qsf_published_fsn(s), fsn);
    it_wait_acked(s, fsn);
    assert_int_equal(qsink_commits(sink, "t"), 1);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    check_table(sink, "t", 120);
    qsink_stop(sink);
}

/* 12 tables in one transaction: aborted, none of them; committed, each once. */
static void many_tables_all_or_nothing(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sender_on(sink, "sf_max_segment_bytes=64k;");
    char name[16];
    for (int t = 0; t < 12; t++) {
        snprintf(name, sizeof name, "m%d", t);
        must_add(s, name, GIVE_UP, GIVE_UP + 37);
    }
    assert_int_equal(qsf_buffer_clear(s), 12 * 37);
    for (int t = 0; t < 12; t++) {
        snprintf(name, sizeof name, "m%d", t);
        must_add(s, name, 0, 37);
    }
    it_wait_acked(s, must_flush(s));
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    for (int t = 0; t < 12; t++) {
        snprintf(name, sizeof name, "m%d", t);
        check_table(sink, name, 37);
        assert_int_equal(qsink_commits(sink, name), 1);
    }
    qsink_stop(sink);
}

/* A retriable status for a frame in the middle of the committed group: the
 * group is sent again from its first frame and commits once, whole. */
static void retriable_error_inside_group_commits_once(void **state) {
    (void) state;
    static const char *const statuses[] = {"status=0x09 seq=4 times=1", "status=0x06 seq=6 times=1",
                                           "status=0x0D seq=2 times=1"};
    for (size_t i = 0; i < sizeof statuses / sizeof *statuses; i++) {
        qsink *sink = it_sink(NULL);
        it_fault(sink, statuses[i]);
        qsf_sender *s = sender_on(sink, "");
        must_add(s, "t", 0, 400); /* 8 staged frames and the committing one */
        it_wait_acked(s, must_flush(s));
        if (qsink_commits(sink, "t") != 1)
            fail_msg("%s: %" PRId64 " commits", statuses[i], qsink_commits(sink, "t"));
        qsf_errinfo e;
        assert_int_equal(qsf_close(s, &e), QSF_OK);
        check_table(sink, "t", 400);
        qsink_stop(sink);
    }
}

/* A terminal status for a frame in the middle of the group: nothing of the
 * transaction is committed; a later sender on the slot, the cause fixed,
 * delivers it whole. */
static void terminal_error_inside_group_commits_nothing(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "status=0x03:column-type seq=4 times=1");
    char extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=term;", it_dir);
    qsf_sender *s = sender_on(sink, extra);
    must_add(s, "t", 0, 400);
    int64_t fsn = must_flush(s);
    qsf_errinfo e;
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 10000, &e), QSF_E_SERVER);
    assert_int_equal(qsink_rows(sink, "t"), 0);
    assert_int_equal(qsf_close(s, &e), QSF_E_SERVER);
    assert_int_equal(qsink_rows(sink, "t"), 0);
    s = sender_on(sink, extra);
    it_wait_acked(s, fsn);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    check_table(sink, "t", 400);
    assert_int_equal(qsink_commits(sink, "t"), 1);
    qsink_stop(sink);
}

/* A committed transaction is rejected (terminal) while the next one is
 * staged: every call says so, the staged one is never sent, and the next
 * sender on the slot delivers the committed one only. */
static void terminal_error_while_staged(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1+ times=0"); /* nothing is sent until both are in */
    char extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=lat;sf_max_segment_bytes=32k;initial_connect_retry=async;",
             it_dir);
    qsf_sender *s = sender_on(sink, extra);
    must_add(s, "t", 0, 30);
    int64_t fsn = must_flush(s);
    must_add(s, "t", GIVE_UP, GIVE_UP + 200); /* staged, then the rejection comes in */
    qsink_fault_clear(sink);
    it_fault(sink, "status=0x03:column-type seq=0 times=1");
    qsf_errinfo e;
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 10000, &e), QSF_E_SERVER);
    assert_int_equal(add(s, "t", GIVE_UP + 200, GIVE_UP + 300, &e), QSF_E_SERVER);
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_SERVER);
    qsf_close_info ci = {.struct_size = sizeof ci};
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_SERVER);
    assert_int_equal(ci.txn_rows_uncommitted, 200);
    s = sender_on(sink, extra);
    must_add(s, "t", 30, 60);
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    check_table(sink, "t", 60);
    qsink_stop(sink);
}

/* A sender killed with a transaction open leaves an orphan slot; another
 * sender's drainer delivers its committed rows and nothing of the open one. */
static void drained_orphan_never_commits_open_transaction(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "stall conn=1"); /* the committed rows are never read */
    char conf[1200], extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=dead;sf_max_segment_bytes=32k;", it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    pid_t pid = fork();
    if (pid == 0) {
        qsf_sender *s = sender_on(sink, extra);
        qsf_errinfo e;
        if (add(s, "t", 0, 100, &e) != QSF_OK || qsf_flush(s, NULL, &e) != QSF_OK ||
            add(s, "t", GIVE_UP, GIVE_UP + 400, &e) != QSF_OK)
            _exit(3);
        raise(SIGKILL);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    qsink_restart(sink); /* the unread bytes of the dead sender's connection go with it */
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=live;drain_orphans=on;", it_dir);
    qsf_sender *s = sender_on(sink, extra);
    qsf_stats st;
    for (int k = 0; k < 4000; k++) {
        qsf_stats_get(s, &st);
        if (st.drainers_succeeded + st.drainers_failed >= 1 && st.active_drainers == 0)
            break;
        it_sleep_ms(5);
    }
    assert_int_equal(st.drainers_succeeded, 1);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    check_table(sink, "t", 100);
    qsink_stop(sink);
}

/* close with a transaction open and a long close_flush_timeout_millis: it does
 * not wait for the transaction (nothing of it is published), it reports it,
 * and the committed transaction before it is acknowledged. */
static void close_timeout_with_open_transaction(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sender_on(sink, "close_flush_timeout_millis=60000;");
    must_add(s, "t", 0, 100);
    must_flush(s);
    must_add(s, "t", GIVE_UP, GIVE_UP + 120);
    qsf_close_info ci = {.struct_size = sizeof ci};
    qsf_errinfo e;
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_DATA_LOSS);
    assert_int_equal(ci.txn_rows_uncommitted, 120);
    assert_int_equal(ci.frames_unacked, 0);
    check_table(sink, "t", 100);
    qsink_stop(sink);
}

/* Segments of 1 KiB (sf_max_bytes, the Java name), a few rows each: a
 * transaction over dozens of them is abandoned, then one committed; one left
 * open at close is not committed by the next sender on the slot. */
static void tiny_segments_abort_and_commit(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=tiny;sf_max_bytes=1k;sf_max_total_bytes=4m;",
             it_dir);
    qsf_sender *s = sender_on(sink, extra);
    must_add(s, "t", GIVE_UP, GIVE_UP + 300);
    assert_int_equal(qsf_buffer_clear(s), 300);
    must_add(s, "t", 0, 300);
    it_wait_acked(s, must_flush(s));
    must_add(s, "t", GIVE_UP, GIVE_UP + 300);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    s = sender_on(sink, extra);
    must_add(s, "t", 300, 400);
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    check_table(sink, "t", 400);
    qsink_stop(sink);
}

/* 60 transactions of 5 segments each abandoned in a ring of 8: each abort
 * gives its segments back, so a transaction of the same size commits after
 * them. */
static void abort_loop_in(const char *extra) {
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sender_on(sink, extra);
    for (int i = 0; i < 60; i++) {
        must_add(s, "t", GIVE_UP, GIVE_UP + 700);
        assert_int_equal(qsf_buffer_clear(s), 700);
    }
    must_add(s, "t", 0, 700);
    it_wait_acked(s, must_flush(s));
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    check_table(sink, "t", 700);
    qsink_stop(sink);
}

#define SMALL_RING "sf_max_segment_bytes=32k;sf_max_total_bytes=256k;"

static void aborts_give_the_room_back(void **state) {
    (void) state;
    /* memory mode: an abort's buffers come back through the ring manager,
     * which a loaded machine may run late; no append here is meant to fail */
    abort_loop_in(SMALL_RING "sf_append_deadline_millis=60000;");
    char extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=loop;" SMALL_RING, it_dir);
    abort_loop_in(extra);
}

/* A full ring (nothing acknowledged) rolls back the auto-flush that did not
 * fit, whose new symbols were already registered; once the sink is back the
 * transaction commits with every symbol as written. */
static void full_rollback_in(const char *more) {
    qsink *sink = it_sink(NULL);
    it_fault(sink, "stall conn=1");
    char extra[600];
    snprintf(extra, sizeof extra,
             "sf_max_segment_bytes=32k;sf_max_total_bytes=128k;sf_append_deadline_millis=300;"
             "%.400s",
             more);
    qsf_sender *s = sender_on(sink, extra);
    must_add(s, "t", 0, 150);
    int64_t fsn = must_flush(s);
    qsf_errinfo e;
    assert_int_equal(add(s, "t", 150, 2000, &e), QSF_E_FULL);
    /* the row whose call failed is left out: it is the next one to add */
    int64_t next = 150 + (int64_t) qsf_txn_rows(s);
    assert_true(next < 2000);
    qsink_restart(sink);
    it_wait_acked(s, fsn);
    must_add(s, "t", next, next + 20);
    it_wait_acked(s, must_flush(s));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    check_table(sink, "t", next + 20);
    qsink_stop(sink);
}

static void full_ring_rollback_keeps_symbols(void **state) {
    (void) state;
    full_rollback_in("");
    char extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=full;", it_dir);
    full_rollback_in(extra);
}

/* The keys of transaction t (rows t*300 .. t*300+299) all reached the sink
 * the same number of times, at least once (a replay may repeat a committed
 * group whole), and no key of an abandoned one did. */
static void check_whole(qsink *sink, int ntxn, int seed) {
    uint8_t cnt[2400] = {0};
    int64_t rows = qsink_rows(sink, "t");
    for (int64_t r = 0; r < rows; r++) {
        char k[32];
        assert_int_equal(qsink_cell(sink, "t", r, "k", k, sizeof k), 0);
        int64_t key = strtoll(k, NULL, 10);
        if (key < 0 || key >= ntxn * 300) /* GIVE_UP.. included; fail_msg does not return */
            fail_msg("seed %d: key %" PRId64 " of no committed transaction", seed, key);
        else
            cnt[key]++;
    }
    for (int t = 0; t < ntxn; t++)
        for (int i = 0; i < 300; i++)
            if (cnt[t * 300 + i] != cnt[t * 300] || cnt[t * 300] == 0)
                fail_msg("seed %d: transaction %d delivered in part: key %d %u times, its first %u",
                         seed, t, t * 300 + i, cnt[t * 300 + i], cnt[t * 300]);
}

/* Connections dropped, reset and refused at random (the sink's random
 * fault) while eight transactions are committed and some abandoned. */
static void random_faults_keep_transactions_whole(void **state) {
    (void) state;
    for (int seed = 1; seed <= 4; seed++) {
        qsink *sink = it_sink(NULL);
        char f[64], extra[800];
        snprintf(f, sizeof f, "random=0.05:%d", seed);
        it_fault(sink, f);
        snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=rnd%d;sf_max_segment_bytes=64k;", it_dir,
                 seed);
        qsf_sender *s = sender_on(sink, extra);
        int64_t fsn = -1;
        for (int t = 0; t < 8; t++) {
            must_add(s, "t", GIVE_UP + t * 300, GIVE_UP + t * 300 + 100);
            assert_int_equal(qsf_buffer_clear(s), 100);
            must_add(s, "t", t * 300, t * 300 + 300);
            fsn = must_flush(s);
        }
        it_wait_acked(s, fsn);
        qsf_errinfo e;
        assert_int_equal(qsf_close(s, &e), QSF_OK);
        check_whole(sink, 8, seed);
        qsink_stop(sink);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(symbols_of_an_abort_are_reused, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test(memory_mode_abort_then_commit),
        cmocka_unit_test(empty_flush_publishes_nothing),
        cmocka_unit_test(many_tables_all_or_nothing),
        cmocka_unit_test(retriable_error_inside_group_commits_once),
        cmocka_unit_test_setup_teardown(terminal_error_inside_group_commits_nothing, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(terminal_error_while_staged, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(drained_orphan_never_commits_open_transaction, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test(close_timeout_with_open_transaction),
        cmocka_unit_test_setup_teardown(tiny_segments_abort_and_commit, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(aborts_give_the_room_back, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(full_ring_rollback_keeps_symbols, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(random_faults_keep_transactions_whole, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
