/* transaction=on and qsf_flush called while a row is being built
 * (docs/ERRORS.md §2.1): the row being built is not part of the transaction,
 * and the call-order error (QSF_E_STATE, "end or cancel it before flushing")
 * changes nothing, as it does without transaction=on. Neither the
 * transaction nor the open row is given up. */
#include "itest.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void must(int rc, const qsf_errinfo *e, const char *what) {
    if (rc != QSF_OK)
        fail_msg("%s: %s: %s", what, qsf_err_name(rc), e->msg);
}

/* Row k of table t, complete. */
static void add_row(qsf_sender *s, int64_t k) {
    qsf_errinfo e;
    must(qsf_table(s, "t", 1, &e), &e, "qsf_table");
    must(qsf_col_i64(s, "k", 1, k, &e), &e, "qsf_col_i64");
    must(qsf_at_micros(s, 1700000000000000ll + k, &e), &e, "qsf_at_micros");
}

/* Row k, begun and not ended. */
static void open_row(qsf_sender *s, int64_t k) {
    qsf_errinfo e;
    must(qsf_table(s, "t", 1, &e), &e, "qsf_table");
    must(qsf_col_i64(s, "k", 1, k, &e), &e, "qsf_col_i64");
}

static qsf_sender *txn_sender(qsink *sink, const char *extra) {
    char conf[512], all[256];
    snprintf(all, sizeof all, "transaction=on;%s", extra);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), all));
}

/* Two rows staged, one buffered, one open: qsf_flush refuses (QSF_E_STATE)
 * and the transaction stays as it was; the row is ended and the transaction
 * commits with all four rows, once. */
static void flush_with_row_open_keeps_transaction(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = txn_sender(sink, "auto_flush_rows=2;");
    for (int64_t k = 0; k < 3; k++)
        add_row(s, k);
    open_row(s, 3);
    qsf_errinfo e;
    int64_t fsn;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_E_STATE);
    assert_non_null(strstr(e.msg, "end or cancel it before flushing"));
    assert_null(strstr(e.msg, "transaction aborted"));
    assert_int_equal(qsf_txn_rows(s), 3);
    must(qsf_at_micros(s, 1700000000000003ll, &e), &e, "ending the open row");
    must(qsf_flush(s, &fsn, &e), &e, "qsf_flush");
    it_wait_acked(s, fsn);
    assert_int_equal(qsink_commits(sink, "t"), 1);
    it_close_and_check(s, sink, "t", 4, false);
}

/* Every complete row staged, one open: qsf_flush commits the three, and the
 * open row stays open, to be ended and committed by the next qsf_flush. */
static void commit_with_row_open_keeps_row(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = txn_sender(sink, "auto_flush_rows=3;");
    for (int64_t k = 0; k < 3; k++)
        add_row(s, k);
    assert_int_equal(qsf_buffered_rows(s), 0); /* all three staged */
    open_row(s, 3);
    qsf_errinfo e;
    int64_t fsn;
    must(qsf_flush(s, &fsn, &e), &e, "qsf_flush");
    must(qsf_at_micros(s, 1700000000000003ll, &e), &e, "ending the open row");
    assert_int_equal(qsf_txn_rows(s), 1);
    must(qsf_flush(s, &fsn, &e), &e, "qsf_flush");
    it_wait_acked(s, fsn);
    assert_int_equal(qsink_commits(sink, "t"), 2);
    it_close_and_check(s, sink, "t", 4, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flush_with_row_open_keeps_transaction),
        cmocka_unit_test(commit_with_row_open_keeps_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
