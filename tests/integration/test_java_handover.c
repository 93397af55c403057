/* A slot handed over between the Java client and a qsf sender after an ack
 * (docs/FORMAT.md §3.2, "The Java client's 16-byte form"): the 16-byte
 * .ack-watermark the Java client 1.3.x writes is honoured, so no acknowledged
 * frame is sent again, and the acks of the qsf sender are written in the same
 * form, which is the only one that client reads when it takes the slot back;
 * a slot qsf creates has that form unless sf_ack_watermark_form=dual. */
#include "itest.h"

#include "bytes.h"
#include "sf/sidefile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"

static const char *wm_path(char *buf, size_t cap) {
    snprintf(buf, cap, "%s/java/.ack-watermark", it_dir);
    return buf;
}

/* The Java client's form: "AKW1", four zero bytes, the FSN (LE i64). */
static void write_java_watermark(int64_t fsn) {
    uint8_t b[16] = {'A', 'K', 'W', '1', 0, 0, 0, 0};
    qsf_put_i64(b + 8, fsn);
    char p[600];
    tu_write_file(wm_path(p, sizeof p), b, sizeof b);
}

/* What the Java client 1.3.x takes from the slot's .ack-watermark, by its
 * read rule (docs/FORMAT.md §3.2): a file of exactly 16 bytes whose first
 * eight are "AKW1" and four zero bytes holds the acknowledged FSN; a 16-byte
 * file without them holds none yet (-1); a file of any other size is
 * truncated to a fresh one (-1). Frames on disk above the value are replayed. */
static int64_t java_client_takes(void) {
    char p[600];
    size_t n;
    uint8_t *b = tu_read_file(wm_path(p, sizeof p), &n);
    int64_t fsn = n == 16 && memcmp(b, "AKW1\0\0\0\0", 8) == 0 ? qsf_get_i64(b + 8) : -1;
    free(b);
    return fsn;
}

/* 30 frames of one row each (k = 0..29, FSNs 0..29) left in slot "java" with
 * nothing acknowledged, as a sender leaves them when its server never
 * answers. */
static void slot_with_30_frames(void) {
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1+");
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=java;close_flush_timeout_millis=100;" FAST,
             it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    assert_int_equal(it_publish(s, "t", 0, 30, 1), 29);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* nothing acknowledged: kept */
    qsink_stop(sink);
}

static void java_slot_after_an_ack_replays_nothing_acknowledged(void **state) {
    (void) state;
    slot_with_30_frames();
    write_java_watermark(19); /* the Java client had FSN 0..19 acknowledged */
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=java;" FAST, it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    /* at least 19 at once; the I/O thread may already have had 20..29
     * acknowledged by the time this reads it */
    assert_true(qsf_acked_fsn(s) >= 19);
    it_wait_acked(s, 29);
    assert_int_equal(qsink_rows(sink, "t"), 10); /* FSN 20..29 only */
    char v[32];
    assert_int_equal(qsink_cell(sink, "t", 0, "k", v, sizeof v), 0);
    assert_string_equal(v, "20");
    /* the acks go to the file in the form the Java client reads */
    int spins = 0;
    while (java_client_takes() != 29) {
        if (++spins > 20000)
            fail_msg("the watermark never read 29 in the Java form (now %lld)",
                     (long long) java_client_takes());
        usleep(500);
    }
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* A slot qsf creates in slot "java" (connect-string tail `form`): FSN 0..19
 * acknowledged, then the server gone and FSN 20..29 published; closed with
 * the tail kept, as a process leaves it for the next client. Returns the
 * acked FSN the sender saw; *image gets the watermark file. */
static int64_t qsf_slot_acked_then_cut_off(const char *form, uint8_t **image, size_t *n) {
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=java;close_flush_timeout_millis=100;%s" FAST,
             it_dir, form);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    assert_int_equal(it_publish(s, "t", 0, 20, 1), 19);
    it_wait_acked(s, 19);
    qsink_stop(sink); /* nothing after FSN 19 is acknowledged */
    assert_int_equal(it_publish(s, "t", 20, 30, 1), 29);
    int64_t acked = qsf_acked_fsn(s);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* the tail stays on disk */
    char p[600];
    *image = tu_read_file(wm_path(p, sizeof p), n);
    return acked;
}

/* The default: the slot's watermark is the Java client's 16 bytes for the
 * acked FSN (the golden file's layout), so that client, taking the slot over,
 * sends FSN 20..29 and nothing acknowledged again; and a qsf sender taking it
 * back does the same. */
static void qsf_slot_after_an_ack_replays_nothing_acknowledged_in_java(void **state) {
    (void) state;
    size_t n, gn;
    uint8_t *got;
    int64_t acked = qsf_slot_acked_then_cut_off("", &got, &n);
    assert_int_equal(acked, 19);
    char golden[1024];
    snprintf(golden, sizeof golden, "%s/tests/golden/java-ack-watermark-fsn19.hex",
             getenv("QSF_SOURCE_ROOT"));
    uint8_t *want = tu_read_hex_file(golden, &gn);
    assert_int_equal(gn, 16);
    qsf_put_i64(want + 8, acked); /* the layout, with the FSN of this run */
    assert_int_equal(n, gn);
    assert_memory_equal(got, want, gn);
    free(got);
    free(want);
    assert_int_equal(java_client_takes(), acked); /* replays FSN 20..29 only */
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=java;" FAST, it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    it_wait_acked(s, 29);
    assert_int_equal(qsink_rows(sink, "t"), 10);
    char v[32];
    assert_int_equal(qsink_cell(sink, "t", 0, "k", v, sizeof v), 0);
    assert_string_equal(v, "20");
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* sf_ack_watermark_form=dual: the reference format's 8192-byte form, which
 * qsf reads and the Java client 1.3.x does not (it would replay FSN 0..19). */
static void dual_form_on_request(void **state) {
    (void) state;
    size_t n;
    uint8_t *got;
    int64_t acked = qsf_slot_acked_then_cut_off("sf_ack_watermark_form=dual;", &got, &n);
    assert_int_equal(acked, 19);
    assert_int_equal(n, 8192);
    int64_t g, fsn;
    assert_int_equal(qsf_akw_read_image(got, n, &g, &fsn), 0);
    assert_int_equal(fsn, acked);
    free(got);
    assert_int_equal(java_client_takes(), -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(java_slot_after_an_ack_replays_nothing_acknowledged,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(qsf_slot_after_an_ack_replays_nothing_acknowledged_in_java,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(dual_form_on_request, it_setup_dir, it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
