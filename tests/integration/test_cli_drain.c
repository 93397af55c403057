/* `qsf slot drain` and `qsf slot set-aside` against qwp-sink: a drain moves
 * every frame of a slot to the server exactly once and leaves an empty slot;
 * it refuses a slot in use, naming the pid; it drains a .failed slot and a
 * quarantined one; a frame the server rejects for good stops it and is named,
 * and once it is set aside (kept in .rejected with its span) a sender opened on
 * the slot delivers everything else exactly once. The binary path is
 * argv[1]. */
#include "itest.h"

#include "clitest.h"

#include "sfops/rejected.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"
#define PER  50 /* rows per flush: one frame each */

#define out ct_out

static int run_qsf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_qsf(const char *fmt, ...) {
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return ct_run(it_dir, args);
}

static const char *slot_path(const char *id) {
    static char p[2][700];
    static int k;
    char *b = p[k++ % 2];
    snprintf(b, sizeof p[0], "%s/%s", it_dir, id);
    return b;
}

/* Leaves slot `id` with rows [0, n) of table t unsent, PER rows a frame: FSN
 * f holds the keys [f * PER, (f + 1) * PER). */
static void make_slot(const char *id, int64_t n) {
    qsf_sender *s = it_offline_sender(id);
    it_publish(s, "t", 0, n, PER);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* the tail stays on disk */
    assert_true(it_count_segments(slot_path(id), NULL, 0) >= 1);
}

static int drain(qsink *sink, const char *path, const char *more) {
    return run_qsf("slot drain '%s' --conf 'ws::addr=127.0.0.1:%u;" FAST "' --timeout 20 %s", path,
                   qsink_port(sink), more);
}

static bool has_file(const char *path, const char *name) {
    struct stat st;
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", path, name);
    return lstat(p, &st) == 0;
}

/* After a drain only the lock files (and what was set aside) are left. */
static void expect_emptied(const char *path) {
    assert_int_equal(it_count_segments(path, NULL, 0), 0);
    const char *gone[] = {".ack-watermark", ".symbol-dict", "sf-manifest.bin", ".failed"};
    for (int i = 0; i < 4; i++)
        assert_false(has_file(path, gone[i]));
    assert_true(has_file(path, ".lock"));
}

/* The keys of table t in the sink, each exactly once, are [0, n) without
 * [skip_from, skip_to). */
static void expect_keys(qsink *sink, int64_t n, int64_t skip_from, int64_t skip_to) {
    int64_t want = n - (skip_to - skip_from);
    if (qsink_wait_rows(sink, "t", want, 20000) != 0)
        fail_msg("sink has %lld rows, expected %lld", (long long) qsink_rows(sink, "t"),
                 (long long) want);
    assert_int_equal(qsink_rows(sink, "t"), want);
    uint8_t *seen = calloc((size_t) n, 1);
    for (int64_t r = 0; r < want; r++) {
        char v[64];
        assert_int_equal(qsink_cell(sink, "t", r, "k", v, sizeof v), 0);
        int64_t k = strtoll(v, NULL, 10);
        if (k < 0 || k >= n || (k >= skip_from && k < skip_to)) /* fail_msg does not return */
            fail_msg("row %lld: key %lld is not one the sink should have", (long long) r,
                     (long long) k);
        else
            assert_int_equal(seen[k]++, 0);
    }
    free(seen);
}

static void drain_moves_every_frame_and_empties_the_slot(void **state) {
    (void) state;
    make_slot("dead", 1000);
    qsink *sink = it_sink(NULL);
    assert_int_equal(drain(sink, slot_path("dead"), "--dry-run"), 0);
    assert_non_null(strstr(out, "would send 20 frames"));
    assert_int_equal(qsink_rows(sink, "t"), 0);
    assert_int_equal(drain(sink, slot_path("dead"), ""), 0);
    assert_non_null(strstr(out, "drain: done: FSN 0..19 acknowledged"));
    expect_keys(sink, 1000, 0, 0);
    expect_emptied(slot_path("dead"));
    assert_int_equal(drain(sink, slot_path("dead"), ""), 0); /* nothing left: fine */
    assert_non_null(strstr(out, "nothing to send"));
    qsink_stop(sink);
}

static void a_slot_in_use_is_refused_naming_its_pid(void **state) {
    (void) state;
    qsf_sender *live = it_offline_sender("live");
    it_publish(live, "t", 0, 100, PER);
    qsink *sink = it_sink(NULL);
    char pid[32];
    snprintf(pid, sizeof pid, "in use by pid %ld", (long) getpid());
    assert_int_equal(drain(sink, slot_path("live"), ""), 3);
    assert_non_null(strstr(out, pid));
    assert_int_equal(drain(sink, slot_path("live"), "--dry-run"), 3);
    assert_int_equal(run_qsf("slot set-aside '%s' --fsn 0 --reason x", slot_path("live")), 3);
    assert_non_null(strstr(out, pid));
    assert_int_equal(run_qsf("slot inspect '%s'", slot_path("live")), 0);
    char held[48];
    snprintf(held, sizeof held, "lock: held by pid %ld (running)", (long) getpid());
    assert_non_null(strstr(out, held));
    assert_int_equal(qsink_rows(sink, "t"), 0);
    qsf_errinfo e;
    assert_int_equal(qsf_close(live, &e), QSF_E_TIMEOUT);
    assert_int_equal(drain(sink, slot_path("live"), ""), 0); /* now it is free */
    expect_keys(sink, 100, 0, 0);
    qsink_stop(sink);
}

/* A server that never acknowledges: off a terminal the drain prints plain
 * progress lines, gives up after --timeout without progress, and leaves every
 * frame in the slot. */
static void progress_lines_and_a_timeout_leave_the_slot_whole(void **state) {
    (void) state;
    make_slot("slow", 1000);
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok");
    int rc = run_qsf("slot drain '%s' --conf 'ws::addr=127.0.0.1:%u;' --timeout 2 --every 1",
                     slot_path("slow"), qsink_port(sink));
    assert_int_equal(rc, 1);
    char line[80];
    snprintf(line, sizeof line, "drain: sending to 127.0.0.1:%u, 0/20 frames (0%%)",
             qsink_port(sink));
    assert_non_null(strstr(out, line));
    assert_non_null(strstr(out, "not drained: nothing acknowledged within --timeout"));
    assert_non_null(strstr(out, "drain: nothing acknowledged; FSN 0..19 stays in the slot"));
    assert_int_equal(run_qsf("slot inspect '%s'", slot_path("slow")), 0);
    assert_non_null(strstr(out, "pending: 20 frames"));
    qsink_stop(sink);
}

/* A slot a drainer gave up on, and one recovery quarantined, are drained
 * once their cause is gone; .failed goes with the files. */
static void failed_and_quarantined_slots_are_drained(void **state) {
    (void) state;
    make_slot("given-up", 200);
    char failed[800];
    snprintf(failed, sizeof failed, "%s/.failed", slot_path("given-up"));
    tu_write_file(failed, "gave up\n", 8);
    make_slot("q", 300);
    char to[700];
    snprintf(to, sizeof to, "%s/q.unreplayable-1", it_dir);
    assert_int_equal(rename(slot_path("q"), to), 0);
    qsink *sink = it_sink(NULL);
    assert_int_equal(drain(sink, slot_path("given-up"), ""), 0);
    assert_non_null(strstr(out, "removed .failed (it said: gave up)"));
    expect_emptied(slot_path("given-up"));
    expect_keys(sink, 200, 0, 0);
    qsink_stop(sink);
    sink = it_sink(NULL);
    assert_int_equal(drain(sink, to, ""), 0);
    expect_emptied(to);
    expect_keys(sink, 300, 0, 0);
    qsink_stop(sink);
}

/* FSN 3 of the slot (keys 150..199) is refused with SCHEMA_MISMATCH: the
 * drain stops and names it; set aside, it is in .rejected with its span; a
 * sender opened on the slot then delivers everything else exactly once. */
static void a_rejected_frame_is_set_aside_and_the_rest_delivered_once(void **state) {
    (void) state;
    make_slot("default", 500);
    qsink *sink = it_sink(NULL);
    /* wireSeq 0 is the dictionary catch-up, so FSN f goes out as f + 1 */
    it_fault(sink, "status=0x03:column_type\x1b[2J_mismatch conn=1 seq=4");
    assert_int_equal(drain(sink, slot_path("default"), ""), 1);
    assert_null(strstr(out, "\x1b")); /* the server's text is shown escaped */
    assert_non_null(strstr(out, "column_type\\x1b[2J_mismatch"));
    assert_non_null(strstr(out, "the server rejected FSN 3 (status 0x03, table t)"));
    assert_non_null(strstr(out, "drain: FSN 0..2 acknowledged; FSN 3..9 stays in the slot"));
    assert_non_null(strstr(out, "qsf slot set-aside"));
    assert_non_null(strstr(out, "--fsn 3..3"));
    expect_keys(sink, 150, 0, 0); /* FSN 0..2 got through */
    assert_int_equal(run_qsf("slot set-aside '%s' --fsn 3 --reason 'v is LONG[] on the server'",
                             slot_path("default")),
                     0);
    assert_non_null(strstr(out, "set aside FSN 3..3 (1 frames"));
    assert_non_null(strstr(out, "50 rows; tables: t 50 rows"));
    int dfd = open(slot_path("default"), O_RDONLY | O_DIRECTORY);
    qsf_rejected_list l;
    assert_int_equal(qsf_rejected_read(dfd, slot_path("default"), &l, NULL), QSF_OK);
    close(dfd);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.v[0].from, 3);
    assert_int_equal(l.v[0].to, 3);
    assert_int_equal(l.v[0].rows, 50);
    assert_true(l.v[0].done);
    assert_non_null(strstr(l.v[0].audit, ": v is LONG[] on the server\n"));
    qsf_rejected_list_free(&l);
    assert_int_equal(run_qsf("slot dump '%s' --rejected --rows --json", slot_path("default")), 0);
    assert_non_null(strstr(out, "\"fsn\":3,\"state\":\"set-aside\""));
    assert_non_null(strstr(out, "\"k\":150,"));
    assert_non_null(strstr(out, "\"k\":199,"));

    char conf[1024], extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=default;" FAST, it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    int64_t fsn = it_publish(s, "t", 500, 600, PER);
    it_wait_acked(s, fsn);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    expect_keys(sink, 600, 150, 200);
    assert_int_equal(qsink_duplicates(sink, "t", "k"), 0);
    assert_true(has_file(slot_path("default"), ".rejected")); /* kept */
    qsink_stop(sink);
}

int main(int argc, char **argv) {
    if (ct_init(argc, argv) != 0)
        return 2;
#define T(f) cmocka_unit_test_setup_teardown(f, it_setup_dir, it_teardown_dir)
    const struct CMUnitTest tests[] = {
        T(drain_moves_every_frame_and_empties_the_slot),
        T(a_slot_in_use_is_refused_naming_its_pid),
        T(progress_lines_and_a_timeout_leave_the_slot_whole),
        T(failed_and_quarantined_slots_are_drained),
        T(a_rejected_frame_is_set_aside_and_the_rest_delivered_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
