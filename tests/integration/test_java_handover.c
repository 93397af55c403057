/* A slot handed over from the Java client to a qsf sender after an ack
 * (docs/FORMAT.md §3.2, "The Java client's 16-byte form"): the 16-byte
 * .ack-watermark the Java client 1.3.x writes is honoured, so no acknowledged
 * frame is sent again, and the acks of the qsf sender are written in the same
 * form, which is the only one that client reads when it takes the slot back. */
#include "itest.h"

#include "bytes.h"

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

/* The FSN a Java client would read back, or -2 while the file is not in its
 * form yet. */
static int64_t java_reads(void) {
    char p[600];
    size_t n;
    uint8_t *b = tu_read_file(wm_path(p, sizeof p), &n);
    int64_t fsn = n == 16 && memcmp(b, "AKW1\0\0\0\0", 8) == 0 ? qsf_get_i64(b + 8) : -2;
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
    while (java_reads() != 29) {
        if (++spins > 20000)
            fail_msg("the watermark never read 29 in the Java form (now %lld)",
                     (long long) java_reads());
        usleep(500);
    }
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(java_slot_after_an_ack_replays_nothing_acknowledged,
                                        it_setup_dir, it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
