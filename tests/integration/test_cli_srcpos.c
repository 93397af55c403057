/* Source positions in the qsf tool (docs/FORMAT.md §4a): `qsf slot inspect`
 * shows the position an open would report and the acknowledged one, `qsf slot
 * dump` each position beside the frame it was committed with, and `qsf slot
 * drain` keeps the last position for the next sender on the slot. */
#include "itest.h"

#include "clitest.h"

#include <stdio.h>
#include <string.h>

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

static void inspect_and_drain_keep_the_position(void **state) {
    (void) state;
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

    s = sender_to(qsink_port(sink)); /* the next sender resumes from it */
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

int main(int argc, char **argv) {
    if (ct_init(argc, argv) != 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(inspect_and_drain_keep_the_position, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
