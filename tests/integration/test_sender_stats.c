/* qsf_stats as an operator reads it: the backlog gauges (pending frames and
 * bytes, the age of the oldest unacknowledged frame) match what is really
 * unacknowledged while the server is away, after a restart that recovers the
 * backlog from disk, and once it is delivered (docs/METRICS.md §3). */
#include "itest.h"

#include "bytes.h"
#include "sf/segfmt.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Bytes (8-byte envelopes included) of the frames of one segment file with
 * an FSN in (acked, published], read from the file itself. */
static uint64_t file_frame_bytes(const char *path, int64_t acked, int64_t published) {
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    uint8_t *b = malloc((size_t) st.st_size);
    assert_non_null(b);
    assert_int_equal(pread(fd, b, (size_t) st.st_size, 0), st.st_size);
    close(fd);
    int64_t fsn = qsf_get_i64(b + QSF_SFA_AT_BASE_SEQ);
    uint64_t n = 0;
    for (uint64_t off = QSF_SFA_HEADER_SIZE; off + 8 <= (uint64_t) st.st_size; fsn++) {
        uint32_t len = qsf_get_u32(b + off + 4);
        if (len == 0 || qsf_get_u32(b + off) == 0 || off + 8 + len > (uint64_t) st.st_size)
            break;
        if (fsn > acked && fsn <= published)
            n += 8 + len;
        off += 8 + len;
    }
    free(b);
    return n;
}

/* The same over every segment file of the slot. */
static uint64_t slot_frame_bytes(const char *slot, int64_t acked, int64_t published) {
    DIR *d = opendir(slot);
    assert_non_null(d);
    uint64_t n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (!qsf_seg_name_is_candidate(de->d_name))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", slot, de->d_name);
        n += file_frame_bytes(p, acked, published);
    }
    closedir(d);
    return n;
}

static qsf_stats stats_of(qsf_sender *s) {
    qsf_stats st;
    qsf_stats_get(s, &st);
    return st;
}

static qsf_sender *slot_sender(qsink *sink) {
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=st;initial_connect_retry=async;close_flush_timeout_millis=0;"
             "auto_flush=off;" FAST,
             it_dir);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
}

/* The gauges of a fully acknowledged sender. */
static void assert_nothing_pending(qsf_sender *s) {
    qsf_stats st = stats_of(s);
    assert_int_equal(st.published_fsn, st.acked_fsn);
    assert_int_equal(st.pending_frames, 0);
    assert_int_equal(st.pending_bytes, 0);
    assert_int_equal(st.oldest_unacked_age_ms, -1);
}

/* The gauges of a backlog: the frames above acked, their bytes as the slot's
 * files hold them, and an age between 0 and max_age_ms. */
static qsf_stats assert_backlog(qsf_sender *s, const char *slot, uint64_t frames,
                                int64_t max_age_ms) {
    qsf_stats st = stats_of(s);
    assert_int_equal(st.pending_frames, frames);
    assert_int_equal(st.published_fsn - st.acked_fsn, (int64_t) frames);
    assert_int_equal(st.pending_bytes, slot_frame_bytes(slot, st.acked_fsn, st.published_fsn));
    assert_true(st.pending_bytes > 0);
    if (st.oldest_unacked_age_ms < 0 || st.oldest_unacked_age_ms > max_age_ms)
        fail_msg("oldest_unacked_age_ms %lld, expected 0..%lld",
                 (long long) st.oldest_unacked_age_ms, (long long) max_age_ms);
    return st;
}

/* A server that acknowledged the first flushes and then went away: the
 * gauges count only what came after; a new sender on the slot recovers the
 * same backlog with the same gauges and an age that is not -1; once the
 * server is back everything drains to zero. */
static void backlog_gauges_match_the_slot(void **state) {
    (void) state;
    char slot[700];
    snprintf(slot, sizeof slot, "%s/st", it_dir);
    int64_t t0_wall = wall_ms();
    qsink *sink = it_sink(NULL);
    qsf_sender *s = slot_sender(sink);
    assert_nothing_pending(s);
    int64_t fsn = it_publish(s, "t", 0, 500, 100);
    it_wait_acked(s, fsn);
    assert_nothing_pending(s); /* acknowledged frames still fill the active segment */

    it_fault(sink, "reject=503 conn=1+ times=0");
    qsink_restart(sink); /* the server goes away */
    for (int k = 0; k < 2000 && stats_of(s).connected; k++)
        it_sleep_ms(1); /* the drop is noticed: nothing published next can be acknowledged */
    assert_int_equal(stats_of(s).connected, 0);
    int64_t t1_mono = mono_ms();
    int64_t last = it_publish(s, "t", 500, 800, 100);
    assert_int_equal(last, fsn + 3); /* three flushes of one frame each */
    qsf_stats before = assert_backlog(s, slot, 3, mono_ms() - t1_mono);

    qsf_close_info ci = {.struct_size = sizeof ci};
    qsf_errinfo e;
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_TIMEOUT);
    assert_int_equal(ci.frames_unacked, 3);
    assert_int_equal(ci.bytes_unacked, before.pending_bytes);

    s = slot_sender(sink); /* recovers the backlog, still no server */
    qsf_stats st = assert_backlog(s, slot, 3, wall_ms() - t0_wall);
    assert_int_equal(st.pending_bytes, before.pending_bytes);
    assert_int_equal(st.acked_fsn, before.acked_fsn);

    qsink_fault_clear(sink); /* the server is back: the recovered frames are delivered */
    it_wait_acked(s, last);
    assert_nothing_pending(s);
    it_close_and_check(s, sink, "t", 800, true);
}

/* Credentials refused before the first connection end the sender: the stats
 * say so (the code every producer call now fails with), until close. */
static void a_terminal_error_shows_in_the_stats(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=401 conn=1+ times=0");
    char conf[256];
    qsf_sender *s =
        it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "initial_connect_retry=async;"));
    qsf_stats st = stats_of(s);
    for (int k = 0; k < 2000 && !st.terminal_error_code; k++) {
        it_sleep_ms(5);
        st = stats_of(s);
    }
    assert_int_equal(st.terminal_error_code, QSF_E_AUTH);
    assert_int_equal(st.last_error_code, QSF_E_AUTH);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_AUTH);
    qsink_stop(sink);
}

#define NOWHERE  1 /* nothing listens on port 1 of the loopback */
#define SENTINEL 0xA5

static bool untouched(const unsigned char *b, size_t from, size_t to) {
    for (size_t i = from; i < to; i++)
        if (b[i] != SENTINEL)
            return false;
    return true;
}

/* A program built against an older qsf.h (a qsf_stats that ends before the
 * loss counters) and one built against a newer one (a longer struct): qsf
 * fills what both know, says so in struct_size, and writes nothing past it. */
static void stats_fill_what_the_caller_knows(void **state) {
    (void) state;
    _Alignas(qsf_stats) unsigned char b[sizeof(qsf_stats) + 64];
    size_t older = offsetof(qsf_stats, data_losses);
    memset(b, SENTINEL, sizeof b);
    assert_int_equal(qsf_stats_get_sized(NULL, (qsf_stats *) b, older), older);
    qsf_stats *st = (qsf_stats *) b;
    assert_int_equal(st->struct_size, older);
    assert_int_equal(st->published_fsn, -1);
    assert_int_equal(st->oldest_unacked_age_ms, -1);
    assert_true(untouched(b, older, sizeof b));

    memset(b, SENTINEL, sizeof b);
    assert_int_equal(qsf_stats_get_sized(NULL, st, sizeof b), sizeof(qsf_stats));
    assert_int_equal(st->struct_size, sizeof(qsf_stats));
    assert_int_equal(st->data_losses, 0);
    assert_true(untouched(b, sizeof(qsf_stats), sizeof b));
    assert_int_equal(qsf_stats_get_sized(NULL, st, sizeof(size_t) - 1), 0);
}

/* The text forms follow snprintf: the whole length is returned whatever
 * fits, the buffer is always NUL-terminated and holds a prefix. */
static void text_forms_are_measured_and_truncated(void **state) {
    (void) state;
    size_t (*forms[])(const qsf_sender *, char *, size_t) = {qsf_stats_json,
                                                             qsf_metrics_prometheus};
    for (int i = 0; i < 2; i++) {
        char full[8192], small[16];
        size_t n = forms[i](NULL, NULL, 0);
        assert_true(n > sizeof small && n < sizeof full);
        assert_int_equal(forms[i](NULL, full, sizeof full), n);
        assert_int_equal(strlen(full), n);
        memset(small, 'x', sizeof small);
        assert_int_equal(forms[i](NULL, small, sizeof small), n);
        assert_int_equal(strlen(small), sizeof small - 1);
        assert_memory_equal(small, full, sizeof small - 1);
    }
    char full[8192];
    qsf_stats_json(NULL, full, sizeof full);
    assert_non_null(strstr(full, "\"published_fsn\":-1,"));
}

static _Atomic size_t handler_saw;

static void on_error(void *user, const qsf_error_record *rec) {
    (void) user;
    atomic_store(&handler_saw, rec->struct_size);
}

/* The same for error records: a poll with an older record's size gets that
 * much; a handler is told the size qsf filled. */
static void error_records_fill_what_the_caller_knows(void **state) {
    (void) state;
    char conf[256];
    qsf_sender *s =
        it_sender(it_conf(conf, sizeof conf, NOWHERE, "initial_connect_retry=async;" FAST));
    _Alignas(qsf_error_record) unsigned char b[sizeof(qsf_error_record) + 64];
    size_t older = offsetof(qsf_error_record, quarantined_path);
    int got = 0;
    for (int k = 0; k < 2000 && !got; k++) { /* "not connected: every endpoint failed" */
        memset(b, SENTINEL, sizeof b);
        got = qsf_poll_error_sized(s, (qsf_error_record *) b, older);
        if (!got)
            it_sleep_ms(5);
    }
    assert_int_equal(got, 1);
    const qsf_error_record *r = (const qsf_error_record *) b;
    assert_int_equal(r->struct_size, older);
    assert_int_equal(r->category, QSF_CAT_CONNECTION);
    assert_non_null(strstr(r->message, "not connected"));
    assert_true(untouched(b, older, sizeof b));

    qsf_errinfo e;
    qsf_close(s, &e);

    s = it_sender(it_conf(conf, sizeof conf, NOWHERE, "initial_connect_retry=async;" FAST));
    assert_int_equal(qsf_set_error_handler(s, on_error, NULL), QSF_OK);
    for (int k = 0; k < 2000 && !atomic_load(&handler_saw); k++)
        it_sleep_ms(5);
    qsf_close(s, &e);
    assert_int_equal(atomic_load(&handler_saw), sizeof(qsf_error_record));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(backlog_gauges_match_the_slot, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test(a_terminal_error_shows_in_the_stats),
        cmocka_unit_test(stats_fill_what_the_caller_knows),
        cmocka_unit_test(text_forms_are_measured_and_truncated),
        cmocka_unit_test(error_records_fill_what_the_caller_knows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
