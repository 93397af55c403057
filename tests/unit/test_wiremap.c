/* wireSeq -> FSN run FIFO and durable-ack matching (docs/PROTOCOL.md §8.3, §8.5). */
#include "testutil.h"

#include "io/durack.h"
#include "io/wiremap.h"
#include "qwp/response.h"

#include <string.h>

static void catchup_then_data_maps_like_the_reference_arithmetic(void **state) {
    (void) state;
    qsf_wiremap m;
    qsf_wiremap_init(&m);
    /* 3 catch-up frames, then FSNs 40..43 */
    for (int i = 0; i < 3; i++)
        assert_int_equal(qsf_wiremap_push(&m, -1), i);
    for (int f = 40; f < 44; f++)
        qsf_wiremap_push(&m, f);
    assert_int_equal(m.count, 2); /* one control run, one data run */
    assert_int_equal(qsf_wiremap_lookup(&m, 1), -1);
    assert_int_equal(qsf_wiremap_lookup(&m, 5), 42);
    assert_int_equal(qsf_wiremap_lookup(&m, 9), -2);
    /* an OK covering only catch-up frames moves nothing */
    assert_int_equal(qsf_wiremap_ack(&m, 2), -1);
    assert_int_equal(qsf_wiremap_ack(&m, 4), 41);
    assert_int_equal(qsf_wiremap_ack(&m, 4), -1); /* repeated: nothing new */
    assert_int_equal(qsf_wiremap_ack(&m, 6), 43);
    assert_int_equal(m.count, 0);
    qsf_wiremap_free(&m);
}

static void gap_from_a_skipped_tail_starts_a_new_run(void **state) {
    (void) state;
    qsf_wiremap m;
    qsf_wiremap_init(&m);
    qsf_wiremap_push(&m, 10);
    qsf_wiremap_push(&m, 11);
    qsf_wiremap_push(&m, 20); /* 12..19 retired, never sent */
    qsf_wiremap_push(&m, 21);
    assert_int_equal(m.count, 2);
    assert_int_equal(qsf_wiremap_lookup(&m, 2), 20);
    assert_int_equal(qsf_wiremap_ack(&m, 2), 20);
    assert_int_equal(qsf_wiremap_ack(&m, 3), 21);
    qsf_wiremap_reset(&m);
    assert_int_equal(qsf_wiremap_push(&m, 22), 0); /* wireSeq restarts per connection */
    qsf_wiremap_free(&m);
}

static void many_runs_grow_the_fifo(void **state) {
    (void) state;
    qsf_wiremap m;
    qsf_wiremap_init(&m);
    for (int i = 0; i < 1000; i++) /* alternate control and data: 1000 runs */
        qsf_wiremap_push(&m, i % 2 ? -1 : i);
    assert_int_equal(m.count, 1000);
    assert_int_equal(qsf_wiremap_ack(&m, 998), 998);
    assert_int_equal(qsf_wiremap_ack(&m, 999), -1);
    qsf_wiremap_free(&m);
}

static qsf_response parse(const char *hex, uint8_t *buf) {
    size_t n = tu_hex(hex, buf, 256);
    qsf_response r;
    assert_int_equal(qsf_response_parse(buf, n, &r, NULL, 0), 0);
    return r;
}

static void durable_ack_pops_only_covered_oks_in_order(void **state) {
    (void) state;
    uint8_t b1[256], b2[256], b3[256], d1[256], d2[256];
    qsf_durack *d = qsf_durack_new();
    /* OK sensors->42 (fsn 5), OK with no tables (fsn 6), OK SENSORS->43 (fsn 7) */
    qsf_response ok1 = parse("00 07 00 00 00 00 00 00 00 01 00 07 00 73 65 6E 73 6F 72 73 "
                             "2A 00 00 00 00 00 00 00",
                             b1);
    qsf_response ok2 = parse("00 08 00 00 00 00 00 00 00 00 00", b2);
    qsf_response ok3 = parse("00 09 00 00 00 00 00 00 00 01 00 07 00 53 45 4E 53 4F 52 53 "
                             "2B 00 00 00 00 00 00 00",
                             b3);
    assert_int_equal(qsf_durack_push_ok(d, 5, &ok1), 0);
    assert_int_equal(qsf_durack_push_ok(d, 6, &ok2), 0);
    assert_int_equal(qsf_durack_push_ok(d, 7, &ok3), 0);
    /* durable sensors->40: nothing covered */
    qsf_response da = parse("02 01 00 07 00 73 65 6E 73 6F 72 73 28 00 00 00 00 00 00 00", d1);
    assert_int_equal(qsf_durack_apply(d, &da), -1);
    assert_int_equal(qsf_durack_pending(d), 3);
    /* durable sensors->42: pops OK 5 and the table-less OK 6, not OK 7 (needs 43) */
    qsf_response db = parse("02 01 00 07 00 73 65 6E 73 6F 72 73 2A 00 00 00 00 00 00 00", d2);
    assert_int_equal(qsf_durack_apply(d, &db), 6);
    assert_int_equal(qsf_durack_pending(d), 1);
    qsf_durack_reset(d);
    assert_int_equal(qsf_durack_pending(d), 0);
    /* after a reset the watermark is gone: the same OK is not durable */
    assert_int_equal(qsf_durack_push_ok(d, 7, &ok3), 0);
    assert_int_equal(qsf_durack_apply(d, &da), -1);
    qsf_durack_free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(catchup_then_data_maps_like_the_reference_arithmetic),
        cmocka_unit_test(gap_from_a_skipped_tail_starts_a_new_run),
        cmocka_unit_test(many_runs_grow_the_fifo),
        cmocka_unit_test(durable_ack_pops_only_covered_oks_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
