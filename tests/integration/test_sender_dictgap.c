/* A recovered slot whose deferred tail needs symbol ids the client no longer
 * has (.symbol-dict lost its end in a host crash). Recovery judges the gap
 * against the commit boundary (docs/FORMAT.md §6.9): a gap in the aborted tail is
 * harmless because the tail is never sent (docs/FORMAT.md §6.18; recovery cuts
 * it from the disk, docs/FORMAT.md), so the slot is not quarantined, the
 * pre-send guard of docs/PROTOCOL.md §4.4 never fires and nothing is reported. (A gap at or below
 * the boundary quarantines the slot: see unreplayable_slot_is_quarantined_and_reported in
 * test_sender_recovery.c.) */
#include "itest.h"

#include "sftest.h"

#include "sf/sfa.h"
#include "sf/symdict.h"

#include <fcntl.h>
#include <unistd.h>

#include <stdio.h>
#include <string.h>

/* .symbol-dict holds id 0; fsn 0 registers id 0 and commits; fsn 1, deferred,
 * needs ids from 5 (ids 1..4 were lost with the end of .symbol-dict). */
static size_t build_slot(uint8_t tail[256]) {
    static const char *const zero[] = {"alpha"}, *const five[] = {"zeta"};
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    qsf_symdict d;
    assert_int_equal(qsf_symdict_create(&d, dfd, st_slot, NULL), QSF_OK);
    assert_int_equal(qsf_symdict_append(&d, 0, 1, zero, (uint32_t[]){5}, NULL), QSF_OK);
    qsf_symdict_destroy(&d);
    close(dfd);
    uint8_t head[256];
    const uint8_t *p[2] = {head, tail};
    uint32_t len[2];
    len[0] = (uint32_t) st_qwp(head, 0x08, 0, 1, zero);
    len[1] = (uint32_t) st_qwp(tail, 0x09, 5, 1, five);
    st_segment(st_slot, QSF_NAME_INITIAL, 4096, 0, 0, 2, p, len);
    return len[1];
}

static bool sink_got(qsink *sink, int64_t conns, const uint8_t *frame, size_t len) {
    uint8_t got[256];
    for (int c = 1; c <= conns; c++) {
        int64_t n = qsink_frames(sink, c, NULL, 0);
        for (int64_t i = 0; i < n; i++)
            if (qsink_frame_payload(sink, c, i, got, sizeof got) == (int64_t) len &&
                memcmp(got, frame, len) == 0)
                return true;
    }
    return false;
}

static void gap_in_the_aborted_tail_is_never_sent(void **state) {
    (void) state;
    uint8_t tail[256];
    size_t tail_len = build_slot(tail);
    qsink_opts o = {.record_payloads = 1};
    qsink *sink = it_sink(&o);
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=default;auto_flush=off;", st_sfdir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 0); /* no DATA_LOSS: nothing quarantined */
    assert_int_equal(qsf_published_fsn(s), 0);  /* the committed frame; the tail was cut */
    it_wait_acked(s, 0);
    /* the sender goes on: its rows are delivered after the recovered frame */
    int64_t fsn = it_publish(s, "t", 0, 20, 0);
    assert_int_equal(fsn, 1);
    it_wait_acked(s, fsn);
    qsf_errinfo e;
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK); /* no latched RESEND_REQUIRED */
    it_assert_rows(sink, "t", 20, false);
    qsink_stats st;
    qsink_get_stats(sink, &st);
    assert_int_equal(st.errors, 0);
    assert_false(sink_got(sink, st.accepted, tail, tail_len)); /* cut: docs/FORMAT.md §6.18 */
    it_close_and_check(s, sink, "t", 20, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(gap_in_the_aborted_tail_is_never_sent, st_setup,
                                        st_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
