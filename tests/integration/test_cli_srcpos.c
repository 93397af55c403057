/* Source positions in the qsf tool (docs/FORMAT.md §4a): `qsf slot inspect`
 * shows the position an open would report and the acknowledged one, `qsf slot
 * dump` each position beside the frame it was committed with, and `qsf slot
 * drain` keeps the last position for the next sender on the slot. */
#include "itest.h"

#include "clitest.h"

#include "sf/segfmt.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FAST    "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"
#define NOWHERE 1 /* nothing listens on port 1 of the loopback */

static void expect_out(const char *want) {
    if (!strstr(ct_out, want))
        fail_msg("the output lacks \"%s\":\n%s", want, ct_out);
}

static qsf_sender *sender_to(uint16_t port) {
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=s;initial_connect_retry=async;close_flush_timeout_millis=0;" FAST,
             it_dir);
    return it_sender(it_conf(conf, sizeof conf, port, extra));
}

/* Three flushes, "row 1".."row 3" (FSNs 0..2), left unsent in the slot. */
static void three_flushes(void) {
    qsf_sender *s = sender_to(NOWHERE);
    qsf_errinfo e;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(it_add_row(s, "t", i, "a", 0, &e), 0);
        char pos[16];
        snprintf(pos, sizeof pos, "row %d", i + 1);
        assert_int_equal(qsf_set_source_position(s, pos, strlen(pos), &e), 0);
        assert_int_equal(qsf_flush(s, NULL, &e), 0);
    }
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* unsent: the tail stays */
}

static void inspect_and_drain_keep_the_position(void **state) {
    (void) state;
    three_flushes();

    char path[700], args[1024];
    snprintf(path, sizeof path, "%s/s", it_dir);
    snprintf(args, sizeof args, "slot inspect '%s'", path);
    assert_int_equal(ct_run(it_dir, args), 0);
    expect_out("source positions: 3 records");
    expect_out("published: FSN 2, 5 bytes \"row 3\" (hex 726f772033)");
    expect_out("acknowledged: none");
    snprintf(args, sizeof args, "slot dump '%s'", path); /* beside the frame it names */
    assert_int_equal(ct_run(it_dir, args), 0);
    expect_out("FSN 2  ");
    expect_out("\n  source position: 5 bytes \"row 3\" (hex 726f772033)\n");
    if (strstr(ct_out, "source position: 5 bytes \"row 3\"") < strstr(ct_out, "FSN 2  "))
        fail_msg("the position is not shown after FSN 2:\n%s", ct_out);
    snprintf(args, sizeof args, "slot inspect --json '%s'", path);
    assert_int_equal(ct_run(it_dir, args), 0);
    expect_out("\"source_positions\":{\"present\":true");

    qsink *sink = it_sink(NULL);
    snprintf(args, sizeof args,
             "slot drain '%s' --conf 'ws::addr=127.0.0.1:%u;" FAST "' --timeout 20", path,
             qsink_port(sink));
    assert_int_equal(ct_run(it_dir, args), 0);
    assert_int_equal(qsink_rows(sink, "t"), 3);
    snprintf(args, sizeof args, "slot inspect '%s'", path);
    ct_run(it_dir, args);
    expect_out("published: FSN -1, 5 bytes \"row 3\"");
    expect_out("acknowledged: FSN -1, 5 bytes \"row 3\"");

    qsf_sender *s = sender_to(qsink_port(sink)); /* the next sender resumes from it */
    qsf_errinfo e;
    char buf[16];
    size_t len;
    int64_t fsn;
    assert_int_equal(qsf_source_position(s, buf, sizeof buf, &len, &fsn, &e), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(buf, "row 3", 5);
    assert_int_equal(fsn, -1);
    qsf_close(s, &e);
    qsink_stop(sink);
}

/* Changes the last payload byte of the frame at FSN `fsn` of the slot's first
 * segment. With `valid`, its CRC is recomputed: another valid frame of the
 * same size stands there, what salvage can leave at an FSN after a host crash
 * lost the committing frame of a flush whose record survived (docs/FORMAT.md
 * §6.15); without, the frame is damaged and recovery gives its flush up. */
static void change_frame(const char *slot, int64_t fsn, bool valid) {
    char p[800];
    snprintf(p, sizeof p, "%s/%s", slot, QSF_NAME_INITIAL);
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    static uint8_t seg[1 << 20];
    ssize_t n = pread(fd, seg, sizeof seg, 0);
    assert_true(n > QSF_SFA_HEADER_SIZE);
    size_t off = QSF_SFA_HEADER_SIZE;
    for (int64_t i = 0; i < fsn; i++)
        off += QSF_SFA_FRAME_OVERHEAD + qsf_sfa_frame_len(seg + off);
    uint32_t len = qsf_sfa_frame_len(seg + off);
    assert_true(len > 0 && off + QSF_SFA_FRAME_OVERHEAD + len <= (size_t) n);
    static uint8_t payload[1 << 20], frame[1 << 20];
    memcpy(payload, seg + off + QSF_SFA_FRAME_OVERHEAD, len);
    payload[len - 1] ^= 0x01;
    qsf_sfa_frame_encode(frame, payload, len);
    if (!valid)
        memcpy(frame, seg + off, QSF_SFA_FRAME_OVERHEAD); /* the old CRC */
    assert_int_equal(pwrite(fd, frame, QSF_SFA_FRAME_OVERHEAD + len, (off_t) off),
                     (ssize_t) (QSF_SFA_FRAME_OVERHEAD + len));
    close(fd);
}

/* What an open reports: `want` at FSN `fsn`. */
static void the_open_reports(const char *want, int64_t want_fsn) {
    qsf_sender *s = sender_to(NOWHERE);
    qsf_errinfo e;
    char buf[16];
    size_t len;
    int64_t fsn;
    assert_int_equal(qsf_source_position(s, buf, sizeof buf, &len, &fsn, &e), 0);
    assert_int_equal(fsn, want_fsn);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(buf, want, len);
    qsf_close(s, &e);
}

/* After three flushes ("row 1".."row 3", FSNs 0..2) and change_frame(fsn,
 * valid): inspect (text, with `expect` too, and JSON) and dump show the
 * position an open keeps, "row <kept>" at FSN kept - 1, and not the ones it
 * drops; and the open reports it. */
static void tools_and_open_agree(int64_t fsn, bool valid, int kept, const char *expect) {
    three_flushes();
    char path[700], args[1024], want[128], row[8];
    snprintf(path, sizeof path, "%s/s", it_dir);
    change_frame(path, fsn, valid);
    snprintf(row, sizeof row, "row %d", kept);

    snprintf(args, sizeof args, "slot inspect '%s'", path);
    assert_int_equal(ct_run(it_dir, args), 0);
    expect_out(expect);
    snprintf(want, sizeof want, "published: FSN %d, 5 bytes \"%s\" (hex 726f77203%d)", kept - 1,
             row, kept);
    expect_out(want);
    snprintf(want, sizeof want, "source positions: 3 records, 103 bytes, %d dropped by an open",
             3 - kept);
    expect_out(want);
    snprintf(args, sizeof args, "slot inspect --json '%s'", path);
    assert_int_equal(ct_run(it_dir, args), 0);
    snprintf(want, sizeof want, "\"dropped_on_open\":%d", 3 - kept);
    expect_out(want);
    snprintf(want, sizeof want, "\"published\":{\"fsn\":%d,\"hex\":\"726f77203%d\"}", kept - 1,
             kept);
    expect_out(want);
    snprintf(args, sizeof args, "slot dump '%s'", path);
    assert_int_equal(ct_run(it_dir, args), 0);
    snprintf(want, sizeof want, "\n  source position: 5 bytes \"%s\"", row);
    expect_out(want);
    for (int i = kept + 1; i <= 3; i++) {
        snprintf(want, sizeof want, "\"row %d\"", i);
        if (strstr(ct_out, want))
            fail_msg("dump shows %s, a position an open drops:\n%s", want, ct_out);
    }
    the_open_reports(row, kept - 1);
}

/* Another valid frame stands at FSN 2, where "row 3" was committed: an open
 * drops that record and reports "row 2" at FSN 1. */
static void a_position_whose_frame_was_replaced_is_not_shown(void **state) {
    (void) state;
    tools_and_open_agree(2, true, 2, "segments: 1 live, FSN 0..2");
}

/* The frame at FSN 1 is damaged: recovery gives up FSNs 1..2 (the flushes
 * from the damage on), and the records naming them go with them. */
static void a_position_of_a_flush_given_up_is_not_shown(void **state) {
    (void) state;
    tools_and_open_agree(1, false, 1, "never sent: 2 retired");
}

int main(int argc, char **argv) {
    if (ct_init(argc, argv) != 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(inspect_and_drain_keep_the_position, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_position_whose_frame_was_replaced_is_not_shown,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_position_of_a_flush_given_up_is_not_shown, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
