/* Orphan adoption (drain_orphans=on, docs/FORMAT.md §7.1): slots left behind
 * by senders that are gone are drained by a new sender in the background; a
 * slot in use is never taken, a slot marked .failed is left alone, and a slot
 * that cannot be replayed is marked .failed instead of being moved. */
#include "itest.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"
/* Nothing listens on port 1 of the loopback: every connection is refused. */
#define NOWHERE 1

static bool exists(const char *slot, const char *name) {
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s%s%s", it_dir, slot, name ? "/" : "", name ? name : "");
    return stat(p, &st) == 0;
}

static int segments(const char *slot) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", it_dir, slot);
    return it_count_segments(p, NULL, 0);
}

/* Leaves slot `id` behind holding rows [0, n) of table `table`, unsent; what
 * its close left there. */
static qsf_close_info make_orphan(const char *id, const char *table, int64_t n) {
    qsf_sender *s = it_offline_sender(id);
    it_publish(s, table, 0, n, 100);
    qsf_errinfo e;
    qsf_close_info ci = {.struct_size = sizeof ci};
    /* fast close: the tail stays on disk, and close says so */
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_TIMEOUT);
    assert_non_null(strstr(e.msg, "kept in the slot"));
    assert_true(segments(id) >= 1);
    assert_true(ci.frames_unacked > 0);
    return ci;
}

static qsf_sender *adopting_sender(qsink *sink, const char *id) {
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=%s;drain_orphans=on;" FAST, it_dir, id);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
}

static qsf_stats stats_when(qsf_sender *s, uint64_t succeeded, uint64_t failed) {
    qsf_stats st;
    for (int k = 0; k < 4000; k++) {
        qsf_stats_get(s, &st);
        if (st.drainers_succeeded >= succeeded && st.drainers_failed >= failed &&
            st.active_drainers == 0)
            return st;
        it_sleep_ms(5);
    }
    fail_msg("drainers: %d active, %" PRIu64 " succeeded, %" PRIu64 " failed", st.active_drainers,
             st.drainers_succeeded, st.drainers_failed);
    return st;
}

/* Two dead senders' slots are drained in the background while the new sender
 * publishes its own rows: every orphan row arrives exactly once and in order,
 * and the orphan slots' files are gone afterwards. */
static void orphan_slots_are_drained_and_removed(void **state) {
    (void) state;
    make_orphan("dead1", "t1", 3000);
    make_orphan("dead2", "t2", 500);
    qsink *sink = it_sink(NULL);
    qsf_sender *s = adopting_sender(sink, "main");
    int64_t fsn = it_publish(s, "m", 0, 1000, 100);
    qsf_stats st = stats_when(s, 2, 0);
    assert_int_equal(st.drainers_succeeded, 2);
    assert_int_equal(st.drainers_failed, 0);
    it_assert_rows(sink, "t1", 3000, false);
    it_assert_rows(sink, "t2", 500, false);
    assert_int_equal(segments("dead1"), 0);
    assert_int_equal(segments("dead2"), 0);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "m", 1000, false);
}

/* A slot whose sender is alive is left to it, and a slot marked .failed is
 * left alone: nothing of theirs is sent and their files stay, while an orphan
 * next to them is drained. */
static void live_and_failed_slots_are_left_alone(void **state) {
    (void) state;
    make_orphan("dead", "td", 200);
    qsf_sender *live = it_offline_sender("live");
    it_publish(live, "tl", 0, 100, 50);
    make_orphan("bad", "tb", 100);
    char p[700];
    snprintf(p, sizeof p, "%s/bad/.failed", it_dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("given up earlier\n", f);
    fclose(f);

    qsink *sink = it_sink(NULL);
    qsf_sender *s = adopting_sender(sink, "main");
    qsf_stats st = stats_when(s, 1, 0);
    assert_int_equal(st.drainers_succeeded, 1);
    assert_int_equal(st.drainers_failed, 0);
    assert_int_equal(st.failed_slots, 1); /* "bad" */
    it_assert_rows(sink, "td", 200, false);
    assert_int_equal(qsink_rows(sink, "tl"), 0);
    assert_int_equal(qsink_rows(sink, "tb"), 0);
    assert_true(segments("live") >= 1);
    assert_true(segments("bad") >= 1);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    assert_int_equal(qsf_close(live, &e), QSF_E_TIMEOUT);
    assert_true(segments("live") >= 1); /* its rows wait for its own next start */
    qsink_stop(sink);
}

#define PAD80 "................................................................................"

static void row(qsf_sender *s, const char *sym, int64_t ts) {
    qsf_errinfo e;
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    assert_int_equal(qsf_symbol(s, "sym", 3, sym, strlen(sym), &e), QSF_OK);
    assert_int_equal(qsf_col_varchar(s, "pad", 3, PAD80, 80, &e), QSF_OK);
    assert_int_equal(qsf_at_micros(s, ts, &e), QSF_OK);
}

/* An orphan whose dictionary cannot be rebuilt is not replayed and not moved
 * aside (which is what its own sender would do): the drainer marks it .failed,
 * with the reason, and leaves every file where it is. The frames that
 * introduced a symbol were acknowledged and trimmed, and .symbol-dict was
 * damaged into disagreeing with a frame still to send. */
static void unreplayable_orphan_is_marked_failed(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[800], first[64], seg0[800], slot[700];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=q;sf_max_segment_bytes=200;sf_max_total_bytes=100k;"
             "auto_flush=off;close_flush_timeout_millis=0;" FAST,
             it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    qsf_errinfo e;
    int64_t fsn;
    for (int i = 0; i < 3; i++) { /* fsn 0..2, one 200-byte segment each, acknowledged */
        row(s, "alpha", 1 + i);
        assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    }
    it_wait_acked(s, fsn);
    snprintf(slot, sizeof slot, "%s/q", it_dir);
    assert_true(it_count_segments(slot, first, sizeof first) >= 1);
    snprintf(seg0, sizeof seg0, "%s/%s", slot, first);
    it_fault(sink, "stall conn=1+");
    qsink_restart(sink);
    row(s, "beta", 9);
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK); /* fsn 3 needs id 1 ("beta") */
    struct stat st0;
    for (int k = 0; k < 500 && stat(seg0, &st0) == 0; k++)
        it_sleep_ms(5); /* the acknowledged first segment is trimmed */
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* fast close: fsn 3 stays on disk */
    static const char *const other[] = {"alpha", "gamma"};
    tu_write_symdict(slot, 2, other); /* id 1 is "gamma" there, "beta" in fsn 3 */
    qsink_fault_clear(sink);

    qsf_sender *m = adopting_sender(sink, "main");
    qsf_stats st = stats_when(m, 0, 1);
    assert_int_equal(st.drainers_failed, 1);
    assert_int_equal(st.drainers_succeeded, 0);
    assert_int_equal(st.failed_slots, 1);
    assert_true(exists("q", ".failed"));
    assert_true(segments("q") >= 1); /* nothing moved or deleted */
    assert_int_equal(qsf_close(m, &e), QSF_OK);
    qsink_stop(sink);
}

/* The adopting sender `s` gave up on slot `slot` for good: one failed
 * drainer, .failed holding `why`, the files kept, nothing of `table` at the
 * sink. */
static void assert_given_up(qsf_sender *s, qsink *sink, const char *slot, const char *table,
                            const char *why) {
    qsf_stats st = stats_when(s, 0, 1);
    assert_int_equal(st.drainers_failed, 1);
    assert_int_equal(st.drainers_succeeded, 0);
    assert_true(segments(slot) >= 1);
    assert_int_equal(qsink_rows(sink, table), 0);
    char p[700], reason[512] = {0};
    snprintf(p, sizeof p, "%s/%s/.failed", it_dir, slot);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    assert_non_null(fgets(reason, sizeof reason, f));
    fclose(f);
    if (!strstr(reason, why))
        fail_msg(".failed says \"%s\", expected it to mention \"%s\"", reason, why);
}

/* A drainer whose endpoints do not grant the durable acks the connect string
 * asks for gives up after 16 of them in a row: .failed with the reason, the
 * orphan's files kept, nothing of it sent. (A sender in the same situation
 * before its first connection gives up after one round: the owner's own
 * connection ends with the same error.) */
static void drainer_gives_up_on_missing_durable_acks(void **state) {
    (void) state;
    make_orphan("dead", "td", 100);
    qsink *sink = it_sink(NULL); /* grants no durable acks */
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=main;drain_orphans=on;request_durable_ack=on;"
             "initial_connect_retry=async;reconnect_max_duration_millis=600000;" FAST,
             it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    assert_given_up(s, sink, "dead", "td", "durable");
    qsink_stats ks;
    qsink_get_stats(sink, &ks);
    assert_true(ks.upgrades >= 16 + 1); /* the drainer's 16 and the owner's one */
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_PROTOCOL);
    qsink_stop(sink);
}

/* A symbol longer than the server's batch cap: the dictionary catch-up that
 * must precede the orphan's replay can never be sent. A sender would keep
 * trying; a drainer gives up after 16 attempts (the minimum dwell,
 * catch_up_cap_gap_min_escalation_window_millis, set to 0 here). */
static void drainer_gives_up_on_a_catch_up_cap_gap(void **state) {
    (void) state;
    static char big[3001]; /* a 3000-byte symbol, NUL-terminated (row() takes strlen) */
    memset(big, 's', sizeof big - 1);
    qsink *first = it_sink(NULL);
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=dead;auto_flush=off;close_flush_timeout_millis=0;" FAST, it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(first), extra));
    qsf_errinfo e;
    int64_t fsn;
    for (int i = 0; i < 3; i++) { /* fsn 0..2 (0 brings the symbol), acknowledged */
        row(s, big, 1 + i);
        assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    }
    it_wait_acked(s, fsn);
    it_sleep_ms(50);   /* the manager writes the acknowledged FSN to .ack-watermark */
    qsink_stop(first); /* the server goes away for good */
    row(s, big, 9);
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK); /* fsn 3 reuses the symbol's id */
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT);
    assert_true(segments("dead") >= 1);

    qsink_opts so;
    memset(&so, 0, sizeof so);
    so.max_batch = 1024;
    qsink *sink = it_sink(&so);
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=main;drain_orphans=on;"
             "catch_up_cap_gap_min_escalation_window_millis=0;" FAST,
             it_dir);
    qsf_sender *m = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    assert_given_up(m, sink, "dead", "t", "cap gap");
    assert_int_equal(qsf_close(m, &e), QSF_OK);
    qsink_stop(sink);
}

/* A short job: the adopting sender publishes a few rows and closes at once.
 * Its close waits for the drainers it started (within
 * close_flush_timeout_millis), so the orphans are drained all the same, and
 * close says nothing was left. */
static void short_owner_drains_its_orphans(void **state) {
    (void) state;
    make_orphan("dead1", "t1", 3000);
    make_orphan("dead2", "t2", 500);
    qsink *sink = it_sink(NULL);
    qsf_sender *s = adopting_sender(sink, "main");
    it_publish(s, "m", 0, 10, 0);
    qsf_close_info ci = {.struct_size = sizeof ci};
    qsf_errinfo e;
    int rc = qsf_close_report(s, &ci, &e);
    if (rc != QSF_OK)
        fail_msg("close: %s: %s", qsf_err_name(rc), e.msg);
    assert_int_equal(ci.orphan_slots_left, 0);
    assert_int_equal(ci.orphan_frames_left, 0);
    assert_int_equal(ci.orphan_slots_not_started, 0);
    it_assert_rows(sink, "t1", 3000, false);
    it_assert_rows(sink, "t2", 500, false);
    it_assert_rows(sink, "m", 10, false);
    assert_int_equal(segments("dead1"), 0);
    assert_int_equal(segments("dead2"), 0);
    qsink_stop(sink);
}

/* A close whose drainer cannot finish in time: with one drainer and no
 * server, close waits close_flush_timeout_millis, then says what stays on
 * disk: the slot being drained, with exactly the frames and bytes its own
 * sender left there, and the slot never started. Both keep their files. */
static void close_reports_what_drainers_left(void **state) {
    (void) state;
    qsf_close_info left = make_orphan("dead1", "t1", 700);
    make_orphan("dead2", "t2", 300);
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=main;drain_orphans=on;max_background_drainers=1;"
             "initial_connect_retry=async;close_flush_timeout_millis=300;" FAST,
             it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, NOWHERE, extra));
    qsf_stats st;
    for (int k = 0; k < 2000; k++) { /* the drainer took dead1 (name order) */
        qsf_stats_get(s, &st);
        if (st.active_drainers == 1)
            break;
        it_sleep_ms(5);
    }
    assert_int_equal(st.active_drainers, 1);
    assert_int_equal(st.orphans_queued, 1);
    qsf_close_info ci = {.struct_size = sizeof ci};
    qsf_errinfo e;
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_TIMEOUT);
    assert_int_equal(ci.frames_unacked, 0); /* the owner published nothing */
    assert_int_equal(ci.orphan_slots_left, 1);
    assert_int_equal(ci.orphan_frames_left, left.frames_unacked);
    assert_int_equal(ci.orphan_bytes_left, left.bytes_unacked);
    assert_int_equal(ci.orphan_slots_not_started, 1);
    if (!strstr(e.msg, "1 orphan slots not fully drained") || !strstr(e.msg, "never started"))
        fail_msg("close message: %s", e.msg);
    assert_true(segments("dead1") >= 1);
    assert_true(segments("dead2") >= 1);
    assert_false(exists("dead1", ".failed"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(orphan_slots_are_drained_and_removed, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(live_and_failed_slots_are_left_alone, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(unreplayable_orphan_is_marked_failed, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(drainer_gives_up_on_missing_durable_acks, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(drainer_gives_up_on_a_catch_up_cap_gap, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(short_owner_drains_its_orphans, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(close_reports_what_drainers_left, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
