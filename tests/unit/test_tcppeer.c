/* What the kernel knows of a TCP peer (lib/io/tcppeer.h, docs/PROTOCOL.md
 * §8.6): the verdicts that tell a frozen server from a gone host, and the
 * reading of a real loopback connection, whose peer acknowledges. */
#include "testutil.h"

#include "io/tcppeer.h"

#include <unistd.h>

static qsf_tcp_peer peer(int64_t last_ack_ms, uint32_t unacked, uint32_t retrans, uint32_t probes) {
    return (qsf_tcp_peer){last_ack_ms, unacked, retrans, probes, 50};
}

static void a_recent_ack_is_a_host_that_is_there(void **state) {
    (void) state;
    qsf_tcp_peer p = peer(10, 3, 0, 0); /* data in flight, acknowledged 10 ms ago */
    assert_int_equal(qsf_tcp_peer_judge(&p, 1000), QSF_PEER_ACKS);
    p = peer(999, 0, 0, 1); /* a window probe out, the last answered 999 ms ago */
    assert_int_equal(qsf_tcp_peer_judge(&p, 1000), QSF_PEER_ACKS);
}

static void something_unacknowledged_for_the_timeout_is_a_host_that_is_gone(void **state) {
    (void) state;
    qsf_tcp_peer p = peer(1000, 2, 3, 0); /* retransmitted, no ACK for 1 s */
    assert_int_equal(qsf_tcp_peer_judge(&p, 1000), QSF_PEER_GONE);
    p = peer(5000, 0, 0, 4); /* unanswered window probes (a local qdisc drop too) */
    assert_int_equal(qsf_tcp_peer_judge(&p, 1000), QSF_PEER_GONE);
    p = peer(5000, 1, 0, 0);
    assert_int_equal(qsf_tcp_peer_judge(&p, 1000), QSF_PEER_GONE);
}

/* A frozen server's full window is probed further and further apart (up to
 * 2 min): between probes nothing waits for an ACK, and an old last ACK says
 * nothing. */
static void nothing_waiting_and_an_old_ack_says_nothing(void **state) {
    (void) state;
    qsf_tcp_peer p = peer(25000, 0, 0, 0);
    assert_int_equal(qsf_tcp_peer_judge(&p, 15000), QSF_PEER_IDLE);
}

static void a_loopback_peer_acknowledges(void **state) {
    (void) state;
    int c, s;
    tu_tcp_pair(&c, &s);
    assert_int_equal(write(c, "ping", 4), 4);
    char b[4];
    assert_int_equal(read(s, b, 4), 4); /* delivered, so acknowledged */
    qsf_tcp_peer p;
    assert_int_equal(qsf_tcp_peer_read(c, &p), 0);
    assert_int_equal(p.unacked, 0);
    assert_int_equal(p.retransmits, 0);
    assert_true(p.last_ack_ms < 1000);
    assert_int_equal(qsf_tcp_peer_judge(&p, 1000), QSF_PEER_ACKS);
    assert_int_equal(qsf_tcp_peer_read(-1, &p), -1);
    close(s);
    close(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_recent_ack_is_a_host_that_is_there),
        cmocka_unit_test(something_unacknowledged_for_the_timeout_is_a_host_that_is_gone),
        cmocka_unit_test(nothing_waiting_and_an_old_ack_says_nothing),
        cmocka_unit_test(a_loopback_peer_acknowledges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
