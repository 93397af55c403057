/* addr: host[:port] entries, IPv6 in brackets with zones, default port 9000,
 * accumulation order, empty entries and duplicates. */
#include "conf_testutil.h"

#include <stdlib.h>

static void assert_addr(const qsf_conf *c, size_t i, const char *host, int port, bool ipv6) {
    assert_true(i < c->n_addrs);
    assert_string_equal(c->addrs[i].host, host);
    assert_int_equal(c->addrs[i].port, port);
    assert_int_equal(c->addrs[i].ipv6, ipv6);
}

static void default_port_is_9000_for_ws_and_wss(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=db;");
    assert_addr(c, 0, "db", 9000, false);
    qsf_conf_free(c);
    c = conf_ok("wss::addr=db;");
    assert_addr(c, 0, "db", 9000, false);
    qsf_conf_free(c);
}

static void hosts_and_ports(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=127.0.0.1:1,node-a.example.com:65535,my_host:09000;");
    assert_int_equal(c->n_addrs, 3);
    assert_addr(c, 0, "127.0.0.1", 1, false);
    assert_addr(c, 1, "node-a.example.com", 65535, false);
    assert_addr(c, 2, "my_host", 9000, false);
    qsf_conf_free(c);
    conf_bad("ws::addr=a:0;", "addr: 'a:0' at position 9 has a port outside 1..65535");
    conf_bad("ws::addr=a:65536;", "has a port outside 1..65535");
    conf_bad("ws::addr=a:99999999999999999999;", "has a port outside 1..65535");
    conf_bad("ws::addr=a:;", "addr: 'a:' at position 9 has an empty port");
    conf_bad("ws::addr=a:-1;", "has a port that is not a decimal number");
    conf_bad("ws::addr=a:90 00;", "has a port that is not a decimal number");
    conf_bad("ws::addr=:9000;", "addr: ':9000' at position 9 has an empty host");
    conf_bad("ws::addr=a b:1;", "has an invalid character in the host");
    conf_bad("ws::addr=a/b;", "has an invalid character in the host");
    conf_bad("ws::addr=300.1.1.1;", "is not a valid IPv4 address");
    conf_bad("ws::addr=1.2.3;", "is not a valid IPv4 address");
}

static void ipv6_needs_brackets(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=[::1]:9001,[::1],[2001:db8::7]:443,[fe80::1%eth0]:1,"
                          "[fe80::1%eth0];");
    assert_int_equal(c->n_addrs, 5); /* all distinct: ports and zones differ */
    assert_addr(c, 0, "::1", 9001, true);
    assert_addr(c, 1, "::1", 9000, true);
    assert_addr(c, 2, "2001:db8::7", 443, true);
    assert_addr(c, 3, "fe80::1%eth0", 1, true);
    assert_addr(c, 4, "fe80::1%eth0", 9000, true);
    qsf_conf_free(c);
    conf_bad("ws::addr=::1;", "addr: '::1' at position 9 is an IPv6 literal without brackets");
    conf_bad("ws::addr=fe80::1:9000;", "IPv6 literal without brackets");
    conf_bad("ws::addr=[::1;", "has an unclosed '['");
    conf_bad("ws::addr=[]:1;", "is not a valid IPv6 literal");
    conf_bad("ws::addr=[nothex::1];", "is not a valid IPv6 literal");
    conf_bad("ws::addr=[127.0.0.1];", "is not a valid IPv6 literal");
    conf_bad("ws::addr=[::1]x;", "has unexpected text after the host");
    conf_bad("ws::addr=[::1]:;", "has an empty port");
    conf_bad("ws::addr=[fe80::1%];", "has an invalid IPv6 zone");
    conf_bad("ws::addr=[fe80::1%e/0];", "has an invalid IPv6 zone");
}

static void long_hosts(void **state) {
    (void) state;
    char s[1024], host[300];
    memset(host, 'h', 255);
    host[255] = '\0';
    snprintf(s, sizeof s, "ws::addr=%s:1;", host);
    qsf_conf *c = conf_ok(s);
    assert_int_equal(strlen(c->addrs[0].host), 255);
    qsf_conf_free(c);
    host[255] = 'h', host[256] = '\0';
    snprintf(s, sizeof s, "ws::addr=%s:1;", host);
    conf_bad(s, "has a host longer than 255 bytes");
    /* a bracketed literal with a long zone cannot overflow the host either */
    memset(host, 'z', 290);
    host[290] = '\0';
    snprintf(s, sizeof s, "ws::addr=[fe80::1%%%s]:1;", host);
    conf_bad(s, "has a host longer than 255 bytes");
}

static void entries_accumulate_in_order(void **state) {
    (void) state;
    qsf_conf *c = conf_ok("ws::addr=c:1,b:2;sender_id=x;addr=a:3;addr=d,e:5;");
    assert_int_equal(c->n_addrs, 5);
    assert_addr(c, 0, "c", 1, false);
    assert_addr(c, 1, "b", 2, false);
    assert_addr(c, 2, "a", 3, false);
    assert_addr(c, 3, "d", 9000, false);
    assert_addr(c, 4, "e", 5, false);
    assert_true(qsf_conf_is_set(c, QSF_CONF_KEY_addr));
    qsf_conf_free(c);
}

static void empty_entries_are_rejected(void **state) {
    (void) state;
    conf_bad("ws::addr=a:9000,,b:9000;", "addr: empty addr entry at position 16");
    conf_bad("ws::addr=,a;", "empty addr entry at position 9");
    conf_bad("ws::addr=a,;", "empty addr entry at position 11");
    conf_bad("ws::addr=,;", "empty addr entry at position 9");
}

static void duplicates_after_default_port_and_case(void **state) {
    (void) state;
    conf_bad("ws::addr=a;addr=a:9000;", "duplicate addr entry: a:9000 at position 16");
    conf_bad("ws::addr=a,A:9000;", "duplicate addr entry: A:9000");
    conf_bad("ws::addr=Node-1:5,x,node-1:5;", "duplicate addr entry: node-1:5");
    conf_bad("ws::addr=[::1],[::1]:9000;", "duplicate addr entry: [::1]:9000");
    conf_bad("ws::addr=[FE80::1%eth0],[fe80::1%ETH0];", "duplicate addr entry");
    /* same host, other port: two endpoints */
    qsf_conf *c = conf_ok("ws::addr=a,a:9001;");
    assert_int_equal(c->n_addrs, 2);
    qsf_conf_free(c);
}

static void many_entries_detect_a_late_duplicate(void **state) {
    (void) state;
    size_t cap = 64 * 1024;
    char *s = malloc(cap);
    size_t n = (size_t) sprintf(s, "ws::addr=h0");
    for (int i = 1; i < 5000; i++)
        n += (size_t) sprintf(s + n, ",h%d:%d", i, 1 + i % 60000);
    sprintf(s + n, ";addr=H2500:2501;");
    conf_bad(s, "duplicate addr entry: H2500:2501");
    free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_port_is_9000_for_ws_and_wss),
        cmocka_unit_test(hosts_and_ports),
        cmocka_unit_test(ipv6_needs_brackets),
        cmocka_unit_test(long_hosts),
        cmocka_unit_test(entries_accumulate_in_order),
        cmocka_unit_test(empty_entries_are_rejected),
        cmocka_unit_test(duplicates_after_default_port_and_case),
        cmocka_unit_test(many_entries_detect_a_late_duplicate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
