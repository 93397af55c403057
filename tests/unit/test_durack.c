/* Durable-ack matching under a hostile server (docs/PROTOCOL.md §8.5:
 * bounded work per byte received): tables named by the thousand cost work
 * linear in the entries, never in their product. */
#include "testutil.h"

#include "bytes.h"
#include "io/durack.h"
#include "qwp/response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDE 65535

/* An OK (status 0x00, sequence seq) or a durable ack (0x02) naming n tables
 * "<prefix><i>" for i = from, from + step, ... with seqTxn txn. */
static uint8_t *build(int status, int64_t seq, const char *prefix, int from, int step, int n,
                      int64_t txn, qsf_response *r) {
    size_t cap = 11 + (size_t) n * (2 + 32 + 8);
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    size_t o = 0;
    b[o++] = (uint8_t) status;
    if (status == 0x00) {
        qsf_put_i64(b + o, seq);
        o += 8;
    }
    qsf_put_u16(b + o, (uint16_t) n);
    o += 2;
    for (int i = 0, k = from; i < n; i++, k += step) {
        char name[32];
        int l = snprintf(name, sizeof name, "%s%d", prefix, k);
        qsf_put_u16(b + o, (uint16_t) l);
        memcpy(b + o + 2, name, (size_t) l);
        qsf_put_i64(b + o + 2 + l, txn);
        o += 2 + (size_t) l + 8;
    }
    char why[160];
    if (qsf_response_parse(b, o, r, why, sizeof why) != 0)
        fail_msg("test response does not parse: %s", why);
    return b;
}

/* One OK naming 65,535 tables, then one durable ack naming them all (in the
 * opposite order and another case): one pass over each. */
static void wide_ok_and_wide_durable_ack_cost_linear_work(void **state) {
    (void) state;
    qsf_durack *d = qsf_durack_new();
    qsf_response ok, dack;
    uint8_t *b1 = build(0x00, 0, "table_", 0, 1, WIDE, 7, &ok);
    uint8_t *b2 = build(0x02, -1, "TABLE_", WIDE - 1, -1, WIDE, 7, &dack);
    assert_int_equal(qsf_durack_push_ok(d, 41, &ok), 0);
    assert_int_equal(qsf_durack_apply(d, &dack), 41);
    assert_int_equal(qsf_durack_pending(d), 0);
    if (qsf_durack_work(d) > 4u * WIDE)
        fail_msg("%llu steps for 2 x %d table entries", (unsigned long long) qsf_durack_work(d),
                 WIDE);
    free(b1);
    free(b2);
    qsf_durack_free(d);
}

/* The head OK waits on 65,535 tables and each durable ack covers one more of
 * them: the tables already covered are not looked at again. */
static void durable_acks_one_table_at_a_time_cost_linear_work(void **state) {
    (void) state;
    qsf_durack *d = qsf_durack_new();
    qsf_response ok, one;
    uint8_t *b1 = build(0x00, 0, "t", 0, 1, WIDE, 3, &ok);
    assert_int_equal(qsf_durack_push_ok(d, 9, &ok), 0);
    for (int i = 0; i < WIDE; i++) {
        uint8_t *b = build(0x02, -1, "t", i, 1, 1, 3, &one);
        assert_int_equal(qsf_durack_apply(d, &one), i == WIDE - 1 ? 9 : -1);
        free(b);
    }
    if (qsf_durack_work(d) > 6u * WIDE)
        fail_msg("%llu steps for %d table entries", (unsigned long long) qsf_durack_work(d),
                 2 * WIDE);
    free(b1);
    qsf_durack_free(d);
}

/* Durable acks naming tables no OK waits for yet keep their watermark (as
 * many as the widest OK so far named): an OK that arrives after its tables
 * became durable pops at the next durable ack. */
static void watermarks_before_the_ok_count(void **state) {
    (void) state;
    qsf_durack *d = qsf_durack_new();
    qsf_response first, ok, early, late;
    uint8_t *b0 = build(0x00, 0, "a", 0, 1, 100, 1, &first);
    uint8_t *b1 = build(0x02, -1, "x", 0, 1, 100, 5, &early);
    uint8_t *b2 = build(0x00, 1, "X", 0, 1, 100, 5, &ok);
    uint8_t *b3 = build(0x02, -1, "a", 0, 1, 100, 1, &late);
    assert_int_equal(qsf_durack_push_ok(d, 2, &first), 0);
    assert_int_equal(qsf_durack_apply(d, &early), -1);
    assert_int_equal(qsf_durack_push_ok(d, 3, &ok), 0);
    assert_int_equal(qsf_durack_apply(d, &late), 3);
    free(b0);
    free(b1);
    free(b2);
    free(b3);
    qsf_durack_free(d);
}

/* A server naming never-seen tables in durable acks (200 acks of 1,000 new
 * names each, after OKs naming one table) must not grow the client's memory:
 * an ack naming more new tables than any OK did is a protocol violation, and
 * the map keeps what the OKs named. Before, every name was kept (200,001). */
static void never_seen_tables_are_a_violation_not_memory(void **state) {
    (void) state;
    qsf_durack *d = qsf_durack_new();
    qsf_response ok, wide, one;
    uint8_t *b0 = build(0x00, 0, "t", 0, 1, 1, 1, &ok);
    assert_int_equal(qsf_durack_push_ok(d, 0, &ok), 0);
    for (int i = 0; i < 200; i++) {
        uint8_t *b = build(0x02, -1, "never_", i * 1000, 1, 1000, 1, &wide);
        assert_int_equal(qsf_durack_apply(d, &wide), -3);
        free(b);
    }
    assert_true(qsf_durack_names(d) <= 2);
    /* one early name is within the widest OK; a second one in all is not */
    uint8_t *b1 = build(0x02, -1, "early_", 0, 1, 1, 1, &one);
    qsf_durack_reset(d);
    assert_int_equal(qsf_durack_push_ok(d, 0, &ok), 0);
    assert_int_equal(qsf_durack_apply(d, &one), -1);
    free(b1);
    b1 = build(0x02, -1, "early_", 1, 1, 1, 1, &one);
    assert_int_equal(qsf_durack_apply(d, &one), -3);
    free(b1);
    free(b0);
    qsf_durack_free(d);
}

/* An OK naming no table (a commit of nothing) waits on nothing: the first durable
 * ack pops it, also when no OK before it named a table (and the ack names
 * none: a table no OK named, with no OK naming any, would be a violation). */
static void an_ok_naming_no_table_pops_at_the_next_durable_ack(void **state) {
    (void) state;
    qsf_durack *d = qsf_durack_new();
    qsf_response ok, dack;
    uint8_t *b1 = build(0x00, 0, "t", 0, 1, 0, 0, &ok);
    uint8_t *b2 = build(0x02, -1, "t", 0, 1, 0, 1, &dack); /* no table: no OK named one */
    assert_int_equal(qsf_durack_push_ok(d, 4, &ok), 0);
    assert_int_equal(qsf_durack_apply(d, &dack), 4);
    assert_int_equal(qsf_durack_pending(d), 0);
    free(b1);
    free(b2);
    qsf_durack_free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wide_ok_and_wide_durable_ack_cost_linear_work),
        cmocka_unit_test(never_seen_tables_are_a_violation_not_memory),
        cmocka_unit_test(durable_acks_one_table_at_a_time_cost_linear_work),
        cmocka_unit_test(watermarks_before_the_ok_count),
        cmocka_unit_test(an_ok_naming_no_table_pops_at_the_next_durable_ack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
