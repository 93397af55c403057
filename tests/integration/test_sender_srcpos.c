/* Source positions through the public API (include/qsf.h, "Resuming your
 * source"; docs/DURABILITY.md §9a): set with a flush, reported after it and
 * after its acknowledgement, kept across a drained close and reopen, carried
 * by a transaction's commit only, dropped with the rows they covered,
 * compacted as acknowledgements advance, and kept when an orphan drainer
 * drains the slot. */
#include "itest.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static qsf_sender *sender_on(qsink *sink, const char *extra) {
    char conf[1024];
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
}

static void set_pos(qsf_sender *s, const char *pos) {
    qsf_errinfo e;
    if (qsf_set_source_position(s, pos, strlen(pos), &e) != QSF_OK)
        fail_msg("qsf_set_source_position(%s): %s", pos, e.msg);
}

static int64_t flush_ok(qsf_sender *s) {
    qsf_errinfo e;
    int64_t fsn = -1;
    if (qsf_flush(s, &fsn, &e) != QSF_OK)
        fail_msg("qsf_flush: %s", e.msg);
    return fsn;
}

static void add_ok(qsf_sender *s, int64_t k) {
    qsf_errinfo e;
    if (it_add_row(s, "t", k, "a", 0, &e) != QSF_OK)
        fail_msg("row %" PRId64 ": %s", k, e.msg);
}

/* The position (acked or not) is `want` at `fsn` (want NULL: none). */
static void expect_pos(qsf_sender *s, bool acked, const char *want, int64_t fsn) {
    char buf[QSF_SOURCE_POSITION_MAX + 1] = {0};
    size_t len = 99;
    int64_t f = 99;
    qsf_errinfo e;
    int rc = acked ? qsf_acked_source_position(s, buf, sizeof buf, &len, &f, &e)
                   : qsf_source_position(s, buf, sizeof buf, &len, &f, &e);
    if (rc != QSF_OK)
        fail_msg("source position: %s", e.msg);
    if (!want) {
        assert_int_equal(len, 0);
        assert_int_equal(f, -1);
        return;
    }
    if (len != strlen(want) || memcmp(buf, want, len) != 0 || f != fsn)
        fail_msg("%s position: got '%.*s' at FSN %" PRId64 ", want '%s' at %" PRId64,
                 acked ? "acked" : "published", (int) len, buf, f, want, fsn);
}

static void memory_mode_reports_the_last_flush_and_its_ack(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sender_on(sink, "");
    expect_pos(s, false, NULL, -1);
    add_ok(s, 0);
    set_pos(s, "line 1");
    int64_t f1 = flush_ok(s);
    expect_pos(s, false, "line 1", f1);
    it_wait_acked(s, f1);
    expect_pos(s, true, "line 1", f1);
    /* too small a buffer: refused, with the size it needs */
    char small[2];
    size_t len = 0;
    int64_t fsn;
    qsf_errinfo e;
    assert_int_equal(qsf_source_position(s, small, sizeof small, &len, &fsn, &e), QSF_E_INVAL);
    assert_int_equal(len, 6);
    /* invalid positions */
    assert_int_equal(qsf_set_source_position(s, "x", 0, &e), QSF_E_INVAL);
    static char big[QSF_SOURCE_POSITION_MAX + 1];
    assert_int_equal(qsf_set_source_position(s, big, sizeof big, &e), QSF_E_INVAL);
    /* dropped with the rows it covered */
    add_ok(s, 1);
    set_pos(s, "line 2");
    assert_int_equal(qsf_buffer_clear(s), 1);
    add_ok(s, 2);
    int64_t f3 = flush_ok(s);
    assert_true(f3 > f1);
    expect_pos(s, false, "line 1", f1);
    /* a flush without rows still commits it, at the published FSN */
    set_pos(s, "line 3");
    assert_int_equal(flush_ok(s), f3);
    expect_pos(s, false, "line 3", f3);
    it_wait_acked(s, f3);
    assert_int_equal(qsf_close(s, NULL), QSF_OK);
    qsink_stop(sink);
}

static void kept_across_a_drained_close_and_reopen(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=p;sf_durability=append;", it_dir);
    qsf_sender *s = sender_on(sink, extra);
    expect_pos(s, false, NULL, -1);
    int64_t fsn = -1;
    for (int i = 0; i < 10; i++) {
        char pos[32];
        add_ok(s, i);
        snprintf(pos, sizeof pos, "offset %d", (i + 1) * 100);
        set_pos(s, pos);
        fsn = flush_ok(s);
    }
    it_wait_acked(s, fsn);
    expect_pos(s, true, "offset 1000", fsn);
    assert_int_equal(qsf_close(s, NULL), QSF_OK); /* drained: segments removed */
    char path[800];
    snprintf(path, sizeof path, "%s/p/.source-positions", it_dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);

    s = sender_on(sink, extra);
    expect_pos(s, false, "offset 1000", -1);
    expect_pos(s, true, "offset 1000", -1);
    add_ok(s, 10);
    set_pos(s, "offset 1100");
    fsn = flush_ok(s);
    expect_pos(s, false, "offset 1100", fsn);
    it_wait_acked(s, fsn);
    assert_int_equal(qsf_close(s, NULL), QSF_OK);
    qsink_stop(sink);
}

static void a_transaction_carries_it_with_its_commit(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=t;transaction=on;auto_flush_rows=10;",
             it_dir);
    qsf_sender *s = sender_on(sink, extra);
    for (int i = 0; i < 25; i++) /* two auto-flushes stage rows, none commits */
        add_ok(s, i);
    set_pos(s, "txn 1");
    for (int i = 25; i < 35; i++) /* a third auto-flush: still nothing committed */
        add_ok(s, i);
    expect_pos(s, false, NULL, -1);
    int64_t fsn = flush_ok(s);
    expect_pos(s, false, "txn 1", fsn);
    /* an aborted transaction takes its position with it */
    add_ok(s, 35);
    set_pos(s, "txn 2");
    qsf_buffer_clear(s);
    add_ok(s, 36);
    int64_t f2 = flush_ok(s);
    expect_pos(s, false, "txn 1", fsn);
    it_wait_acked(s, f2);
    expect_pos(s, true, "txn 1", fsn);
    assert_int_equal(qsf_close(s, NULL), QSF_OK);
    qsink_stop(sink);
}

/* 4000 acknowledged flushes with 64-byte positions (about 350 KB of records)
 * leave a log of at most two compaction thresholds. */
static void the_log_is_compacted_as_acks_advance(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=c;", it_dir);
    qsf_sender *s = sender_on(sink, extra);
    char pos[65];
    int64_t fsn = -1;
    for (int i = 0; i < 4000; i++) {
        add_ok(s, i);
        snprintf(pos, sizeof pos, "%064d", i);
        set_pos(s, pos);
        fsn = flush_ok(s);
        if (i % 500 == 499)
            it_wait_acked(s, fsn);
    }
    char path[800];
    snprintf(path, sizeof path, "%s/c/.source-positions", it_dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    if (st.st_size > 2 * 64 * 1024 + 16 + 88) /* header, one record of 24 + 64 bytes */
        fail_msg(".source-positions is %lld bytes after 4000 flushes", (long long) st.st_size);
    expect_pos(s, false, pos, fsn);
    it_wait_acked(s, fsn);
    expect_pos(s, true, pos, fsn);
    assert_int_equal(qsf_close(s, NULL), QSF_OK);
    qsink_stop(sink);
}

/* A dead sender's slot drained by an orphan drainer keeps its last
 * position for the next sender on it. */
static void kept_when_an_orphan_drainer_drains_the_slot(void **state) {
    (void) state;
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=dead;initial_connect_retry=async;"
             "close_flush_timeout_millis=0;reconnect_max_backoff_millis=100;",
             it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, 1, extra)); /* port 1: nobody */
    add_ok(s, 0);
    set_pos(s, "left behind");
    flush_ok(s);
    assert_int_equal(qsf_close(s, NULL), QSF_E_TIMEOUT); /* the tail stays in the slot */

    qsink *sink = it_sink(NULL);
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=main;drain_orphans=on;", it_dir);
    qsf_sender *m = sender_on(sink, extra);
    qsf_stats st;
    for (int k = 0; k < 4000; k++) { /* until the drainer is done */
        qsf_stats_get(m, &st);
        if (st.drainers_succeeded >= 1 && st.active_drainers == 0)
            break;
        it_sleep_ms(5);
    }
    assert_int_equal(st.drainers_succeeded, 1);
    assert_int_equal(qsink_rows(sink, "t"), 1);
    assert_int_equal(qsf_close(m, NULL), QSF_OK);
    char path[800];
    struct stat fs;
    snprintf(path, sizeof path, "%s/main/.source-positions", it_dir);
    assert_int_equal(stat(path, &fs), -1); /* a slot without positions has no file */

    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=dead;", it_dir);
    s = sender_on(sink, extra);
    expect_pos(s, false, "left behind", -1);
    expect_pos(s, true, "left behind", -1);
    assert_int_equal(qsf_close(s, NULL), QSF_OK);
    qsink_stop(sink);
}

/* qsf_flush_chunk commits the position like qsf_flush: with a chunk's rows,
 * with an empty chunk, and inside a transaction's commit; an SF reopen
 * reports the last one. */
static void a_chunk_flush_carries_it(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=c;sf_durability=append;", it_dir);
    qsf_sender *s = sender_on(sink, extra);
    qsf_chunk *c = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    static const int64_t k[3] = {1, 2, 3};
    assert_int_equal(qsf_chunk_i64(c, "k", 1, k, NULL, 0, 3, &e), QSF_OK);
    set_pos(s, "batch 7");
    int64_t fsn = -1;
    assert_int_equal(qsf_flush_chunk(s, c, &fsn, &e), QSF_OK);
    expect_pos(s, false, "batch 7", fsn);
    qsf_chunk_clear(c); /* no rows: the position still commits, at the published FSN */
    set_pos(s, "batch 8");
    int64_t same = -1;
    assert_int_equal(qsf_flush_chunk(s, c, &same, &e), QSF_OK);
    assert_int_equal(same, fsn);
    expect_pos(s, false, "batch 8", fsn);
    it_wait_acked(s, fsn);
    assert_int_equal(qsf_close(s, NULL), QSF_OK);

    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=c;sf_durability=append;transaction=on;",
             it_dir);
    s = sender_on(sink, extra);
    expect_pos(s, false, "batch 8", -1);
    assert_int_equal(qsf_chunk_i64(c, "k", 1, k, NULL, 0, 3, &e), QSF_OK);
    set_pos(s, "batch 9");
    assert_int_equal(qsf_flush_chunk(s, c, &fsn, &e), QSF_OK);
    expect_pos(s, false, "batch 9", fsn);
    it_wait_acked(s, fsn);
    expect_pos(s, true, "batch 9", fsn);
    assert_int_equal(qsf_close(s, NULL), QSF_OK);
    qsf_chunk_free(c);
    assert_int_equal(qsink_rows(sink, "t"), 6);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_mode_reports_the_last_flush_and_its_ack),
        cmocka_unit_test_setup_teardown(kept_across_a_drained_close_and_reopen, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_transaction_carries_it_with_its_commit, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(the_log_is_compacted_as_acks_advance, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_chunk_flush_carries_it, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(kept_when_an_orphan_drainer_drains_the_slot, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
