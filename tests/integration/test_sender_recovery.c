/* Outages, backpressure, pause, durable acks and replay after a crash: nothing
 * published is lost (docs/DURABILITY.md §3.3; docs/ERRORS.md §3; docs/PROTOCOL.md §8.5, §8.9, §10;
 * docs/FORMAT.md §6). */
#include "itest.h"

#include "log.h"
#include "os/os.h"
#include "sf/sidefile.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"

static void wait_disconnected(qsf_sender *s) {
    qsf_stats st;
    for (int k = 0; k < 2000; k++) {
        qsf_stats_get(s, &st);
        if (!st.connected)
            return;
        it_sleep_ms(1);
    }
    fail_msg("the sender did not notice the outage");
}

static void withheld_acks_then_reconnect_replays(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    int64_t fsn = it_publish(s, "t", 0, 2000, 100);
    assert_int_equal(qsink_wait_rows(sink, "t", 2000, 10000), 0);
    assert_int_equal(qsf_acked_fsn(s), -1); /* committed but never acknowledged */
    qsink_restart(sink);
    it_wait_acked(s, fsn);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.frames_replayed, (uint64_t) fsn + 1);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 2000, true);
    assert_int_equal(qsink_rows(sink, "t"), 4000); /* every row exactly twice */
    qsink_stop(sink);
}

static void stalled_server_then_restart(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "stall conn=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    int64_t fsn = it_publish(s, "t", 0, 2000, 100);
    it_sleep_ms(100);
    assert_true(qsf_acked_fsn(s) < fsn);
    qsink_restart(sink);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 2000, true);
}

static void outage_with_backlog_is_replayed_in_order(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    int64_t fsn = it_publish(s, "t", 0, 1000, 100);
    it_wait_acked(s, fsn);
    it_fault(sink, "reject=503 conn=2+ times=0");
    qsink_restart(sink);
    wait_disconnected(s);
    fsn = it_publish(s, "t", 1000, 5000, 100); /* the backlog grows in the ring */
    it_sleep_ms(100);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.connected, 0);
    assert_true(st.reconnect_attempts >= 2);
    assert_true(st.pending_frames >= 40);
    assert_true(st.oldest_unacked_age_ms >= 0);
    qsink_fault_clear(sink);
    it_wait_acked(s, fsn);
    qsf_stats_get(s, &st);
    assert_true(st.reconnects_succeeded >= 1);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 5000, false); /* nothing was in flight: exactly once */
    qsink_stop(sink);
}

static void full_ring_says_why(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    const char *ring = "sf_max_segment_bytes=64k;sf_max_total_bytes=128k;"
                       "sf_append_deadline_millis=100;auto_flush=off;" FAST;
    /* connected, acknowledgements withheld */
    it_fault(sink, "withhold-ok conn=1");
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ring));
    qsf_errinfo e;
    int rc = QSF_OK;
    for (int i = 0; i < 100000 && rc == QSF_OK; i++) {
        assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "k", 1, i, &e), QSF_OK);
        assert_int_equal(qsf_col_varchar(s, "pad", 3, "0123456789abcdef", 16, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1700000000000000ll + i, &e), QSF_OK);
        if (i % 100 == 99)
            rc = qsf_flush(s, NULL, &e);
    }
    assert_int_equal(rc, QSF_E_FULL);
    assert_true(e.flags & QSF_ERRF_RETRIABLE);
    assert_non_null(strstr(e.msg, "connected to 127.0.0.1:"));
    assert_non_null(strstr(e.msg, "acknowledgements not keeping up"));
    assert_true(qsf_buffered_rows(s) > 0); /* nothing dropped */
    /* not connected */
    it_fault(sink, "reject=503 conn=2+ times=0");
    qsink_restart(sink);
    wait_disconnected(s);
    it_sleep_ms(50);
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_FULL);
    assert_non_null(strstr(e.msg, "not connected"));
    assert_non_null(strstr(e.msg, "reconnect attempts since"));
    assert_non_null(strstr(e.msg, "last error"));
    /* paused */
    assert_int_equal(qsf_pause(s), QSF_OK);
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_FULL);
    assert_non_null(strstr(e.msg, "wire paused"));
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_true(st.backpressure_stalls >= 3); /* one per failed append call */
    assert_int_equal(st.paused, 1);
    assert_int_equal(qsf_resume(s), QSF_OK);
    qsink_fault_clear(sink);
    /* once the wire is back the backlog drains and the buffered rows fit again
     * (waiting first keeps the 100 ms append deadline out of the race) */
    it_wait_acked(s, qsf_published_fsn(s));
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK);
    it_wait_acked(s, qsf_published_fsn(s));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void pause_idles_the_wire_and_resume_replays(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    assert_int_equal(qsf_pause(s), QSF_OK);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.paused, 1);
    assert_int_equal(st.connected, 0);
    int64_t fsn = it_publish(s, "t", 0, 1000, 100);
    it_sleep_ms(100);
    qsink_stats ss;
    qsink_get_stats(sink, &ss);
    assert_int_equal(ss.frames, 0);
    assert_int_equal(ss.upgrades, 1); /* no attempts while paused */
    qsf_stats_get(s, &st);
    assert_int_equal(st.reconnect_attempts, 0);
    assert_int_equal(qsf_resume(s), QSF_OK);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 1000, false);
}

static void durable_acks_trim_and_keepalive_pings_fetch_them(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.durable = 1;
    o.durable_lag_ms = 50; /* uploads lag: the server reports on inbound traffic only */
    qsink *sink = it_sink(&o);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "request_durable_ack=on;"
                                      "durable_ack_keepalive_interval_millis=20;"));
    int64_t fsn = it_publish(s, "t", 0, 1000, 100);
    qsf_errinfo e;
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 5000, &e), QSF_OK);
    /* the producer is idle: only keepalive PINGs can make the server report */
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_DURABLE, 5000, &e), QSF_OK);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_true(st.durable_acks >= 1);
    assert_true(st.durable_trim_advances >= 1);
    assert_int_equal(st.acked_fsn, fsn);
    it_close_and_check(s, sink, "t", 1000, false);
}

/* argv[1] of this program run as the child of
 * replay_after_sigkill_on_the_same_slot, of aborted_tail_is_retired_not_sent */
#define REPLAY_CHILD "--replay-child"
#define TAIL_CHILD   "--tail-child"

/* The child: publishes 5000 rows in 20 flushes into the slot of conf while no
 * server accepts it, says "published" and waits to be killed. A failed call
 * of it_publish prints what failed and exits: the parent sees the pipe end
 * after "sender created". */
static _Noreturn void child_publish(const char *conf, int fd) {
    qsf_sender *s = it_child_sender(conf, fd);
    it_publish(s, "t", 0, 5000, 250);
    it_child_report(fd, "published");
    for (;;)
        pause(); /* SIGKILLed here while reconnecting, nothing acknowledged */
}

/* The child publishes into an SF slot while no server accepts it, then is
 * SIGKILLed; a new sender on the same slot delivers every row exactly once. */
static void replay_after_sigkill_on_the_same_slot(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1+ times=0");
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=crash;initial_connect_retry=async;" FAST,
             it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    it_child c;
    it_child_start(&c, REPLAY_CHILD, (const char *const[]){conf, NULL});
    int status =
        it_child_kill_at(&c, "published", IT_NO_PROGRESS_MS, "the child's 5000 rows published");
    assert_true(WIFSIGNALED(status));
    assert_int_equal(qsink_rows(sink, "t"), 0);
    qsink_fault_clear(sink);
    qsf_sender *s = it_sender(conf);
    assert_int_equal(qsf_published_fsn(s), 19);
    /* the new sender keeps publishing after the recovered frames */
    int64_t fsn = it_publish(s, "t", 5000, 6000, 250);
    assert_int_equal(fsn, 23);
    it_wait_acked(s, fsn);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.frames_replayed, 20);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 6000, false);
    qsink_stop(sink);
}

/* A sender that recovered an unacknowledged tail and published nothing of
 * its own: qsf_close waits up to close_flush_timeout_millis for everything
 * published to be acknowledged (qsf.h), the recovered frames included. It
 * waited only for the last frame this sender had published (none), and
 * returned QSF_E_TIMEOUT at once while the replay was under way. */
static void close_waits_for_a_recovered_tail(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1");
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=tail;close_flush_timeout_millis=100;" FAST,
             it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    qsf_sender *s = it_sender(conf);
    int64_t fsn = it_publish(s, "t", 0, 20000, 100);
    assert_int_equal(qsink_wait_rows(sink, "t", 20000, 10000), 0);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* nothing acknowledged: kept */
    qsink_fault_clear(sink);
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=tail;close_flush_timeout_millis=20000;" FAST,
             it_dir);
    s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    assert_int_equal(qsf_published_fsn(s), fsn);
    qsf_close_info ci = {.struct_size = sizeof ci};
    int rc = qsf_close_report(s, &ci, &e);
    if (rc != QSF_OK)
        fail_msg("close with a 20 s budget and a server acknowledging: %d (%s), %" PRIu64
                 " frames unacknowledged",
                 rc, e.msg, ci.frames_unacked);
    it_assert_rows(sink, "t", 20000, true);
    qsink_stop(sink);
}

#ifdef QSF_FAULT_INJECTION
/* Rows k in [from, to) with a 200-byte VARCHAR (about 35 rows per 8 KiB frame). */
static void publish_padded(qsf_sender *s, int64_t from, int64_t to) {
    static const char pad[200] = {'x'};
    qsf_errinfo e;
    for (int64_t i = from; i < to; i++) {
        assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "k", 1, i, &e), QSF_OK);
        assert_int_equal(qsf_col_varchar(s, "pad", 3, pad, 1, &e), QSF_OK);
        assert_int_equal(qsf_col_binary(s, "blob", 4, pad, sizeof pad, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1700000000000000ll + i, &e), QSF_OK);
    }
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK);
}

/* The child of aborted_tail_is_retired_not_sent: commits fsn 0, then is
 * killed while writing the third frame of a split flush. A failed call of
 * publish_padded prints what failed and exits. */
static _Noreturn void child_split_flush(const char *conf, int fd) {
    qsf_sender *s = it_child_sender(conf, fd);
    publish_padded(s, 0, 20); /* fsn 0, committing */
    it_child_report(fd, "fsn 0 published");
    /* die while writing the third frame of the next (split) flush */
    qsf_fault_arm(QSF_FP_FRAME_PAYLOAD_WRITTEN, 3, QSF_FA_KILL); /* counts from here */
    publish_padded(s, 20, 220);
    it_child_report(fd, "not killed in the split flush");
    _exit(5);
}

/* A producer killed in the middle of a split flush leaves deferred frames with
 * no committing frame after them: the next sender never sends that aborted tail
 * (docs/FORMAT.md §6.18): recovery cuts it from the disk (docs/FORMAT.md), so
 * the new frames take its FSNs and can never commit it. */
static void aborted_tail_is_retired_not_sent(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1+ times=0");
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=tail;sf_max_segment_bytes=8k;auto_flush=off;"
             "initial_connect_retry=async;" FAST,
             it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    it_child c;
    it_child_start(&c, TAIL_CHILD, (const char *const[]){conf, NULL});
    int status = it_child_end(&c, IT_NO_PROGRESS_MS, "the child's kill in its split flush");
    if (!WIFSIGNALED(status))
        fail_msg("child exited with %d, last report \"%s\"", WEXITSTATUS(status), c.last);
    assert_int_equal(WTERMSIG(status), SIGKILL);
    qsink_fault_clear(sink);
    qsf_sender *s = it_sender(conf);
    assert_int_equal(qsf_published_fsn(s), 0); /* fsn 1, 2 (the aborted group) were cut */
    publish_padded(s, 220, 250);
    it_wait_acked(s, 1);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.frames_sent, 2); /* fsn 0 and the new fsn 1, never the aborted frames */
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    assert_int_equal(qsink_rows(sink, "t"), 50);
    assert_int_equal(qsink_first_out_of_order(sink, "t", "k"), -1);
    char cell[32];
    assert_int_equal(qsink_cell(sink, "t", 20, "k", cell, sizeof cell), 0);
    assert_string_equal(cell, "220");
    qsink_stop(sink);
}
#endif

/* docs/PROTOCOL.md §8.1, step 5: reconnects while the producer publishes at full speed must
 * not lose the first replayed frame (or any other). */
static void reconnect_storm_while_publishing_loses_nothing(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    int64_t fsn = -1, n = 0;
    for (int round = 0; round < 30; round++) {
        fsn = it_publish(s, "t", n, n + 2000, 50); /* returns while frames are in flight */
        n += 2000;
        qsink_restart(sink); /* every connection dropped mid-stream */
        it_sleep_ms(5);
    }
    it_wait_acked(s, fsn);
    qsf_stats st;
    for (int k = 0; k < 1000; k++) {
        qsf_stats_get(s, &st);
        if (st.reconnects_succeeded >= 1)
            break;
        it_sleep_ms(5);
    }
    assert_true(st.reconnects_succeeded >= 1);
    it_close_and_check(s, sink, "t", n, true);
}

#define PAD80 "01234567890123456789012345678901234567890123456789012345678901234567890123456789"

static bool file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The dictionary disagrees with a frame (.symbol-dict damaged into holding
 * "gamma" where the frame defines "beta"): the slot cannot be replayed. The
 * sender sets it aside, says so with a DATA_LOSS / ABANDONED record naming the
 * quarantined path, and goes on with a fresh slot (docs/FORMAT.md §5.6). (A
 * dictionary that lost entries gives up only the frames that need them:
 * test_lost_symbols.c.) */
static void unreplayable_slot_is_quarantined_and_reported(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700], seg0[700];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=q;sf_max_segment_bytes=200;sf_max_total_bytes=100k;"
             "auto_flush=off;close_flush_timeout_millis=0;" FAST,
             it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    /* 80 bytes per row: two frames never share a 200-byte segment */
    qsf_errinfo e;
    int64_t fsn;
    for (int i = 0; i < 3; i++) { /* fsn 0..2, one segment each, acknowledged */
        assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
        assert_int_equal(qsf_symbol(s, "sym", 3, "alpha", 5, &e), QSF_OK);
        assert_int_equal(qsf_col_varchar(s, "pad", 3, PAD80, 80, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1 + i, &e), QSF_OK);
        assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    }
    it_wait_acked(s, fsn);
    char slot[600], first[64], now[64];
    snprintf(slot, sizeof slot, "%s/q", it_dir);
    assert_true(it_count_segments(slot, first, sizeof first) >= 1); /* holds fsn 0 (alpha) */
    snprintf(seg0, sizeof seg0, "%s/%s", slot, first);
    it_fault(sink, "stall conn=1+");
    qsink_restart(sink);
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    assert_int_equal(qsf_symbol(s, "sym", 3, "beta", 4, &e), QSF_OK);
    assert_int_equal(qsf_col_varchar(s, "pad", 3, PAD80, 80, &e), QSF_OK);
    assert_int_equal(qsf_at_micros(s, 2, &e), QSF_OK);
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK); /* fsn 3 needs id 1 ("beta") */
    for (int k = 0; k < 500 && file_exists(seg0); k++)
        it_sleep_ms(5); /* the acknowledged first segment is trimmed */
    assert_false(file_exists(seg0));
    assert_true(it_count_segments(slot, now, sizeof now) >= 1);
    assert_true(strcmp(now, first) > 0);
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* fast close: fsn 3 stays on disk */
    static const char *const other[] = {"alpha", "gamma"};
    tu_write_symdict(slot, 2, other); /* id 1 is "gamma" there, "beta" in fsn 3 */
    qsink_fault_clear(sink);
    s = it_sender(conf);
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DATA_LOSS);
    assert_int_equal(r.policy, QSF_POLICY_ABANDONED);
    assert_true(strlen(r.quarantined_path) > 0);
    assert_true(file_exists(r.quarantined_path));
    assert_int_equal(qsf_published_fsn(s), -1); /* a fresh slot */
    /* the loss is returned by close too, not only queued for a handler */
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    assert_non_null(strstr(e.msg, "quarantined"));
    qsink_stop(sink);
}

/* ---- .ack-watermark follows the acknowledgements ---- */

static _Atomic int hold_watermark_sync, watermark_syncs_held;
static int slow_watermark_fsync(int fd) {
    if (atomic_load(&hold_watermark_sync) && tu_fd_path_ends_with(fd, "/.ack-watermark")) {
        atomic_fetch_add(&watermark_syncs_held, 1);
        while (atomic_load(&hold_watermark_sync))
            usleep(1000);
    }
    return fsync(fd);
}

/* The value a reopening sender would read from <slot>/.ack-watermark, in
 * either form (-1 when none). */
static int64_t persisted_watermark(const char *slot) {
    char p[800];
    snprintf(p, sizeof p, "%s/.ack-watermark", slot);
    FILE *f = fopen(p, "rb");
    uint8_t b[8192];
    size_t n = f ? fread(b, 1, sizeof b, f) : 0;
    if (f)
        fclose(f);
    int64_t gen, fsn;
    return qsf_akw_read_image(b, n, &gen, &fsn) == 0 ? fsn : -1;
}

/* The persisted watermark follows the acknowledgements while the manager is
 * stuck in a slow trim barrier. It was written only when a trim pass had
 * nothing else to do: after a SIGKILL up to 1306 frames and 218 ms behind the
 * sender's acked FSN, so a restart replayed that much. */
static void watermark_follows_acks_while_the_manager_waits_for_the_disk(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700], slot[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=wm;sf_max_segment_bytes=64k;", it_dir);
    snprintf(slot, sizeof slot, "%s/wm", it_dir);
    it_fault(sink, "withhold-ok conn=1"); /* nothing trimmed yet */
    QSF_OS->fsync = slow_watermark_fsync; /* before any thread reads the table; it passes
                                             through until hold_watermark_sync is set */
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    int64_t fsn = it_publish(s, "t", 0, 20000, 100); /* 200 frames over several segments */
    atomic_store(&hold_watermark_sync, 1);
    qsink_fault_clear(sink);
    qsink_restart(sink); /* the replay is acknowledged: the manager starts to trim */
    it_wait_acked(s, fsn);
    for (int k = 0; k < 2000 && atomic_load(&watermark_syncs_held) == 0; k++)
        it_sleep_ms(5); /* a trim quantum is stuck in the watermark's fsync */
    int held = atomic_load(&watermark_syncs_held);
    fsn = it_publish(s, "t", 20000, 20005, 1); /* acknowledged while it stays stuck */
    it_wait_acked(s, fsn);
    int64_t seen = -1;
    for (int k = 0; k < 2000 && (seen = persisted_watermark(slot)) < fsn; k++)
        it_sleep_ms(5);
    atomic_store(&hold_watermark_sync, 0); /* before any assertion can end the test */
    assert_true(held > 0);
    assert_int_equal(seen, fsn); /* written while the manager still waited */
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsf_os_reset();
    it_assert_rows(sink, "t", 20005, true); /* committed before the restart, then replayed */
    qsink_stop(sink);
}

int main(int argc, char **argv) {
    /* a child: argv after its role is conf and the report pipe's write end */
    if (argc == 4 && strcmp(argv[1], REPLAY_CHILD) == 0)
        child_publish(argv[2], atoi(argv[3]));
#ifdef QSF_FAULT_INJECTION
    if (argc == 4 && strcmp(argv[1], TAIL_CHILD) == 0)
        child_split_flush(argv[2], atoi(argv[3]));
#endif
    qsf_log_set(NULL, NULL, getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF);
    if (getenv("QSF_TEST_ONLY")) {
        const struct CMUnitTest one[] = {
            cmocka_unit_test_setup_teardown(full_ring_says_why, it_setup_dir, it_teardown_dir)};
        return cmocka_run_group_tests(one, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reconnect_storm_while_publishing_loses_nothing,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(unreplayable_slot_is_quarantined_and_reported, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(withheld_acks_then_reconnect_replays, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(stalled_server_then_restart, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(outage_with_backlog_is_replayed_in_order, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(full_ring_says_why, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(watermark_follows_acks_while_the_manager_waits_for_the_disk,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(pause_idles_the_wire_and_resume_replays, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(durable_acks_trim_and_keepalive_pings_fetch_them,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(close_waits_for_a_recovered_tail, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(replay_after_sigkill_on_the_same_slot, it_setup_dir,
                                        it_teardown_dir),
#ifdef QSF_FAULT_INJECTION
        cmocka_unit_test_setup_teardown(aborted_tail_is_retired_not_sent, it_setup_dir,
                                        it_teardown_dir),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
