/* A slot damaged on disk, seen by the application: recovery salvages every
 * intact frame, gives up whole flushes only, never sends any part of one, and
 * the loss reaches the application as an error record and as the return code
 * of qsf_close, with the FSN span and the counts (docs/FORMAT.md, "Salvage"). */
#include "itest.h"

#include "bytes.h"
#include "log.h"
#include "sf/segfmt.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOWHERE        1 /* nothing listens on port 1 */
#define ROWS_PER_FLUSH 1000

/* A sender of slot `id` that cannot reach any server: rows stay on disk. */
static qsf_sender *offline_sender(const char *id, const char *extra) {
    char conf[1024], ex[900];
    snprintf(ex, sizeof ex,
             "sf_dir=%s;sender_id=%s;initial_connect_retry=async;close_flush_timeout_millis=0;%s",
             it_dir, id, extra ? extra : "");
    return it_sender(it_conf(conf, sizeof conf, NOWHERE, ex));
}

static void flip_byte(const char *id, const char *file, off_t off) {
    char p[900];
    snprintf(p, sizeof p, "%s/%s/%s", it_dir, id, file);
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, off), 1);
    b ^= 0x5A;
    assert_int_equal(pwrite(fd, &b, 1, off), 1);
    close(fd);
}

/* Where frame `fsn` of slot `id` lies: the segment's name into seg, the
 * offset of its envelope into *off and its payload length into *len. */
static void find_frame(const char *id, int64_t fsn, char seg[300], off_t *off, uint32_t *len) {
    char dir[800];
    snprintf(dir, sizeof dir, "%s/%s", it_dir, id);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    int64_t best_base = -1;
    while ((de = readdir(d))) {
        if (!qsf_seg_name_is_candidate(de->d_name))
            continue;
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        int fd = open(p, O_RDONLY);
        uint8_t h[QSF_SFA_HEADER_SIZE + QSF_SFA_FRAME_OVERHEAD];
        qsf_sfa_header hd;
        if (fd >= 0 && pread(fd, h, sizeof h, 0) == (ssize_t) sizeof h &&
            qsf_sfa_frame_len(h + QSF_SFA_HEADER_SIZE) > 0) { /* has frames */
            qsf_sfa_header_decode(h, &hd);
            int64_t base = hd.base_seq;
            if (base <= fsn && base > best_base) {
                best_base = base;
                snprintf(seg, 300, "%s", de->d_name);
            }
        }
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    assert_true(best_base >= 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, seg);
    int fd = open(p, O_RDONLY);
    *off = QSF_SFA_HEADER_SIZE;
    for (int64_t f = best_base; f <= fsn; f++) {
        uint8_t env[QSF_SFA_FRAME_OVERHEAD];
        assert_int_equal(pread(fd, env, sizeof env, *off), sizeof env);
        *len = qsf_sfa_frame_len(env);
        if (f < fsn)
            *off += QSF_SFA_FRAME_OVERHEAD + *len;
    }
    close(fd);
}

/* Flips a byte in the payload of frame `fsn` of slot `id`, wherever it is. */
static void damage_frame(const char *id, int64_t fsn) {
    char seg[300];
    off_t off;
    uint32_t len;
    find_frame(id, fsn, seg, &off, &len);
    flip_byte(id, seg, off + QSF_SFA_FRAME_AT_PAYLOAD + 20);
}

/* Every flush of ROWS_PER_FLUSH keys arrived whole or not at all; returns how
 * many flushes are missing. */
static int64_t missing_flushes(qsink *sink, int64_t rows) {
    static uint8_t seen[200000];
    memset(seen, 0, sizeof seen);
    int64_t n = qsink_rows(sink, "t");
    for (int64_t i = 0; i < n; i++) {
        char v[32];
        assert_int_equal(qsink_cell(sink, "t", i, "k", v, sizeof v), 0);
        int64_t k = atoll(v);
        assert_true(k >= 0 && k < rows);
        assert_int_equal(seen[k], 0); /* exactly once */
        seen[k] = 1;
    }
    int64_t missing = 0;
    for (int64_t f = 0; f < rows / ROWS_PER_FLUSH; f++) {
        int got = 0;
        for (int64_t k = f * ROWS_PER_FLUSH; k < (f + 1) * ROWS_PER_FLUSH; k++)
            got += seen[k];
        if (got != 0 && got != ROWS_PER_FLUSH)
            fail_msg("flush %" PRId64 " arrived in part: %d of %d rows", f, got, ROWS_PER_FLUSH);
        missing += got == 0;
    }
    return missing;
}

/* A sender of sf_dir connected to `sink`, with `extra` (sender_id etc.). */
static qsf_sender *online_sender(qsink *sink, const char *extra) {
    char conf[1024], ex[900];
    snprintf(ex, sizeof ex, "sf_dir=%s;%s", it_dir, extra);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ex));
}

/* Slot `id` left holding `rows` unacknowledged rows in flushes of
 * ROWS_PER_FLUSH, with one byte flipped at offset 1,000,000 of its first
 * segment. */
static void leave_flipped_slot(const char *id, int64_t rows) {
    qsf_sender *s = offline_sender(id, NULL);
    it_publish(s, "t", 0, rows, ROWS_PER_FLUSH);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* kept on disk */
    flip_byte(id, "sf-initial.sfa", 1000000);
}

/* The observed case: one flipped byte at offset 1,000,000 of a segment holding
 * 100,000 unacknowledged rows. Open returned OK with a warning, 58,000 rows were
 * delivered, no loss was reported, and the files were removed after the drain. */
static void flipped_byte_loses_one_flush_and_says_so(void **state) {
    (void) state;
    const int64_t rows = 100000;
    leave_flipped_slot("d", rows);
    qsink *sink = it_sink(NULL);
    qsf_sender *s = online_sender(sink, "sender_id=d;");
    qsf_errinfo e;
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DATA_LOSS);
    assert_int_equal(r.policy, QSF_POLICY_ABANDONED);
    assert_true(r.from_fsn >= 0 && r.to_fsn >= r.from_fsn);
    assert_non_null(strstr(r.message, "given up, never sent"));
    assert_true(strlen(r.quarantined_path) > 0); /* the damaged bytes are kept */
    if (access(r.quarantined_path, F_OK) != 0)
        fail_msg("no copy at %s (%s)", r.quarantined_path, r.message);
    it_wait_acked(s, qsf_published_fsn(s));
    qsf_close_info ci = {.struct_size = sizeof ci};
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_DATA_LOSS);
    assert_non_null(strstr(e.msg, "damaged slot"));
    int64_t missing = missing_flushes(sink, rows);
    assert_true(missing >= 1 && missing <= 2); /* the damaged flush (and its neighbour at most) */
    assert_int_equal(ci.frames_lost, (uint64_t) (r.to_fsn - r.from_fsn + 1));
    assert_int_equal(qsink_rows(sink, "t"), rows - missing * ROWS_PER_FLUSH);
    qsink_stop(sink);
}

/* A flush split over two segments whose second frame is damaged: its first
 * frame, intact in a segment recovery does not rewrite, is never sent either
 * (a retired span), so no row of that flush arrives. */
static void flush_split_over_segments_is_given_up_whole(void **state) {
    (void) state;
    qsf_sender *s =
        offline_sender("x", "sf_max_segment_bytes=64k;auto_flush=off;sf_max_total_bytes=4m;");
    it_publish(s, "t", 0, 3 * ROWS_PER_FLUSH, ROWS_PER_FLUSH); /* ~40 KB flushes */
    static char pad[200];
    memset(pad, 'p', sizeof pad);
    qsf_errinfo e;
    for (int64_t k = 3 * ROWS_PER_FLUSH; k < 4 * ROWS_PER_FLUSH; k++) { /* ~230 KB */
        assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "k", 1, k, &e), QSF_OK);
        assert_int_equal(qsf_col_varchar(s, "pad", 3, pad, sizeof pad, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1700000000000000ll + k, &e), QSF_OK);
    }
    int64_t last;
    assert_int_equal(qsf_flush(s, &last, &e), QSF_OK);
    it_publish(s, "t", 4 * ROWS_PER_FLUSH, 5 * ROWS_PER_FLUSH, ROWS_PER_FLUSH);
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT);
    /* the big flush's committing frame is the last frame of its segment: damage
     * it where it lies (the segment holding FSN `last`) */
    char slot[700], name[QSF_SEG_NAME_MAX];
    snprintf(slot, sizeof slot, "%s/x", it_dir);
    int found = 0;
    for (int g = 1; g < 64 && !found; g++) {
        qsf_seg_name((uint64_t) g, name);
        char p[800];
        snprintf(p, sizeof p, "%s/%s", slot, name);
        int fd = open(p, O_RDONLY);
        if (fd < 0)
            continue;
        uint8_t h[QSF_SFA_HEADER_SIZE];
        qsf_sfa_header hd;
        if (pread(fd, h, sizeof h, 0) == (ssize_t) sizeof h) {
            qsf_sfa_header_decode(h, &hd);
            /* the committing frame is in here */
            found = hd.base_seq <= last && last < hd.base_seq + 10;
        }
        close(fd);
    }
    assert_true(found);
    /* inside the segment's first frame */
    flip_byte("x", name, QSF_SFA_HEADER_SIZE + QSF_SFA_FRAME_AT_PAYLOAD + 100);

    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=x;sf_max_segment_bytes=64k;", it_dir);
    s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DATA_LOSS);
    /* waiting for everything works although no OK covers the given-up frames */
    assert_int_equal(qsf_wait(s, qsf_published_fsn(s), QSF_WAIT_OK, 10000, &e), QSF_OK);
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    /* no part of the big flush arrived; every other flush did, whole */
    for (int64_t i = 0; i < qsink_rows(sink, "t"); i++) {
        char v[32];
        assert_int_equal(qsink_cell(sink, "t", i, "k", v, sizeof v), 0);
        int64_t k = atoll(v);
        if (k >= 3 * ROWS_PER_FLUSH && k < 4 * ROWS_PER_FLUSH)
            fail_msg("row %" PRId64 " of the damaged flush was delivered", k);
    }
    assert_true(qsink_rows(sink, "t") >= 3 * ROWS_PER_FLUSH);
    qsink_stop(sink);
}

/* The given-up flush is the last one in the slot: no OK will ever cover its
 * FSNs, yet a wait for everything published returns (retiring it counts as
 * progress at both levels), and close says what was lost. */
static void wait_returns_when_the_last_flush_was_given_up(void **state) {
    (void) state;
    qsf_sender *s = offline_sender("w", "sf_max_segment_bytes=64k;auto_flush=off;");
    it_publish(s, "t", 0, 2 * ROWS_PER_FLUSH, ROWS_PER_FLUSH);
    int64_t before = qsf_published_fsn(s);
    static char pad[200];
    memset(pad, 'p', sizeof pad);
    qsf_errinfo e;
    for (int64_t k = 2 * ROWS_PER_FLUSH; k < 3 * ROWS_PER_FLUSH; k++) { /* ~230 KB, split */
        assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "k", 1, k, &e), QSF_OK);
        assert_int_equal(qsf_col_varchar(s, "pad", 3, pad, sizeof pad, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1700000000000000ll + k, &e), QSF_OK);
    }
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK);
    assert_true(qsf_published_fsn(s) > before + 1);
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT);
    damage_frame("w", before + 1); /* the big flush's first frame */

    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=w;sf_max_segment_bytes=64k;", it_dir);
    s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DATA_LOSS);
    assert_int_equal(r.to_fsn, qsf_published_fsn(s)); /* the last flush */
    assert_int_equal(qsf_wait(s, qsf_published_fsn(s), QSF_WAIT_OK, 10000, &e), QSF_OK);
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    qsink_stop(sink);
}

/* The same damage in a slot left behind, drained by another sender of the
 * application (drain_orphans=on). The drainer's recovery gives up the damaged
 * flush, delivers the rest and removes the slot: the only place that knew of
 * the loss. It must reach the application like its own slot's would (an
 * error record, QSF_E_DATA_LOSS from qsf_close); it was only logged. */
static void loss_found_by_an_orphan_drainer_reaches_the_application(void **state) {
    (void) state;
    const int64_t rows = 100000;
    leave_flipped_slot("d", rows);
    qsink *sink = it_sink(NULL);
    qsf_sender *s = online_sender(sink, "sender_id=main;drain_orphans=on;");
    qsf_errinfo e;
    qsf_stats st;
    for (int k = 0; k < 4000; k++) {
        qsf_stats_get(s, &st);
        if (st.drainers_succeeded + st.drainers_failed > 0 && st.active_drainers == 0)
            break;
        it_sleep_ms(5);
    }
    assert_int_equal(st.drainers_succeeded, 1);
    int64_t missing = missing_flushes(sink, rows);
    assert_true(missing >= 1); /* given up */
    qsf_error_record r;
    int records = 0;
    while (qsf_poll_error(s, &r) == 1)
        records += r.category == QSF_CAT_DATA_LOSS;
    int rc = qsf_close(s, &e);
    if (records == 0 || rc != QSF_E_DATA_LOSS)
        fail_msg("%" PRId64 " flushes of an orphan given up: %d data-loss records, close %d (%s)",
                 missing, records, rc, e.msg);
    qsink_stop(sink);
}

/* ---- a byte that changes while the sender runs ---- */

/* Turns key `k` (an 8-byte little-endian LONG) in the payload of frame `fsn`
 * of slot `id` into k + 1: the frame still decodes, with a wrong value. */
static void change_key(const char *id, int64_t fsn, int64_t k) {
    char seg[300], p[1200];
    off_t off;
    uint32_t len;
    find_frame(id, fsn, seg, &off, &len);
    snprintf(p, sizeof p, "%s/%s/%s", it_dir, id, seg);
    uint8_t *frame = malloc(len), want[8];
    int fd = open(p, O_RDONLY);
    assert_int_equal(pread(fd, frame, len, off + QSF_SFA_FRAME_AT_PAYLOAD), (ssize_t) len);
    close(fd);
    qsf_put_u64(want, (uint64_t) k);
    uint8_t *at = memmem(frame, len, want, sizeof want);
    assert_non_null(at);
    flip_byte(id, seg, off + QSF_SFA_FRAME_AT_PAYLOAD + (at - frame)); /* 0x5A: another key */
    free(frame);
}

/* A byte of a published frame that changes before it is sent (bit rot, a
 * stray write) is caught by the frame's CRC before it goes on the wire: a
 * DATA_LOSS record names the FSN, close says so, the frames after it are
 * delivered, and the sink never holds the changed value. */
static void frame_changed_before_sending_is_given_up_not_sent(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = online_sender(sink, "sender_id=c;");
    it_wait_acked(s, it_publish(s, "t", 0, 2 * ROWS_PER_FLUSH, ROWS_PER_FLUSH));
    assert_int_equal(qsf_pause(s), QSF_OK); /* published from here on, not sent */
    int64_t first = qsf_published_fsn(s) + 1;
    int64_t last = it_publish(s, "t", 2 * ROWS_PER_FLUSH, 5 * ROWS_PER_FLUSH, ROWS_PER_FLUSH);
    assert_int_equal(last, first + 2); /* one frame per flush */
    change_key("c", first + 1, 3 * ROWS_PER_FLUSH + 500);
    assert_int_equal(qsf_resume(s), QSF_OK);
    it_wait_acked(s, last);
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DATA_LOSS);
    assert_int_equal(r.from_fsn, first + 1);
    assert_int_equal(r.to_fsn, first + 1);
    assert_non_null(strstr(r.message, "fails its CRC-32C"));
    assert_int_equal(qsf_poll_error(s, &r), 0); /* once */
    qsf_errinfo e;
    qsf_close_info ci = {.struct_size = sizeof ci};
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_DATA_LOSS);
    assert_int_equal(ci.frames_lost, 1);
    /* every row that arrived is the one written; the changed flush is absent */
    for (int64_t i = 0; i < qsink_rows(sink, "t"); i++) {
        char k[32], v[32];
        assert_int_equal(qsink_cell(sink, "t", i, "k", k, sizeof k), 0);
        assert_int_equal(qsink_cell(sink, "t", i, "v", v, sizeof v), 0);
        if (atof(v) != (double) atoll(k) * 0.5)
            fail_msg("row %" PRId64 ": k %s arrived with v %s: a changed value was sent", i, k, v);
    }
    assert_int_equal(missing_flushes(sink, 5 * ROWS_PER_FLUSH), 1);
    assert_int_equal(qsink_rows(sink, "t"), 4 * ROWS_PER_FLUSH);
    qsink_stop(sink);
}

/* One flipped byte in the last frame of a cleanly closed slot: its rows
 * vanished as a "torn tail" with no record and close returned OK (for a
 * sender whose whole backlog is one flush, all of it). A crash tears only
 * what was never reported published, and the close recorded FSN 2 as
 * published: the frame is a loss, named with its FSN, and the flushes
 * before it are delivered. */
static void a_damaged_last_frame_is_a_loss_not_a_tear(void **state) {
    (void) state;
    qsf_sender *s = offline_sender("l", NULL);
    int64_t last = it_publish(s, "t", 0, 3 * ROWS_PER_FLUSH, ROWS_PER_FLUSH);
    assert_int_equal(last, 2);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* kept on disk */
    damage_frame("l", last);
    qsink *sink = it_sink(NULL);
    s = online_sender(sink, "sender_id=l;");
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DATA_LOSS);
    assert_int_equal(r.from_fsn, last);
    assert_int_equal(r.to_fsn, last);
    assert_non_null(strstr(r.message, "were published but are damaged"));
    assert_non_null(strstr(r.message, "1 frames destroyed"));
    it_wait_acked(s, qsf_published_fsn(s));
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    assert_int_equal(missing_flushes(sink, 3 * ROWS_PER_FLUSH), 1);
    assert_int_equal(qsink_rows(sink, "t"), 2 * ROWS_PER_FLUSH);
    qsink_stop(sink);
}

/* A slot with more damaged regions than the error inbox holds (16) that is
 * also unreplayable (.symbol-dict damaged into disagreeing with the frames):
 * the record that says the slot was set aside was pushed first and dropped
 * by the loss records of the regions that followed it. Now the slot's loss
 * is one record covering what it gives up, FSN 0..39 (all 40 frames). */
static void the_set_aside_record_is_never_the_one_dropped(void **state) {
    (void) state;
    qsf_sender *s = offline_sender("a", NULL);
    int64_t last = it_publish(s, "t", 0, 40 * ROWS_PER_FLUSH, ROWS_PER_FLUSH);
    assert_int_equal(last, 39);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT);
    for (int64_t fsn = 2; fsn <= 38; fsn += 2) /* 19 damaged regions */
        damage_frame("a", fsn);
    char slot[800];
    snprintf(slot, sizeof slot, "%s/a", it_dir);
    static const char *const other[] = {"o0", "o1", "o2", "o3", "o4", "o5", "o6"};
    tu_write_symdict(slot, 7, other); /* FSN 0 defines id 0 as another string */
    qsink *sink = it_sink(NULL);
    s = online_sender(sink, "sender_id=a;error_inbox_capacity=16;");
    qsf_error_record r;
    int records = 0, set_aside = 0, losses = 0;
    while (qsf_poll_error(s, &r) == 1) {
        records++;
        set_aside += r.quarantined_path[0] && strstr(r.message, "unreplayable") != NULL;
        if (r.from_fsn >= 0) {
            losses++;
            assert_int_equal(r.from_fsn, 0);
            assert_int_equal(r.to_fsn, last);
        }
    }
    if (set_aside != 1 || losses != 1)
        fail_msg("%d records: %d say the slot was set aside, %d losses", records, set_aside,
                 losses);
    qsf_close_info ci = {.struct_size = sizeof ci};
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_DATA_LOSS);
    assert_int_equal(ci.frames_lost, (uint64_t) last + 1);
    qsink_stop(sink);
}

int main(void) {
    qsf_log_set(NULL, NULL, getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(loss_found_by_an_orphan_drainer_reaches_the_application,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(flipped_byte_loses_one_flush_and_says_so, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(flush_split_over_segments_is_given_up_whole, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(wait_returns_when_the_last_flush_was_given_up, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(frame_changed_before_sending_is_given_up_not_sent,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_damaged_last_frame_is_a_loss_not_a_tear, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(the_set_aside_record_is_never_the_one_dropped, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
