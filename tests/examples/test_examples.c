/* The examples of examples/ run as a user runs them, against in-process
 * qwp-sinks on 127.0.0.1, port 0; each test then asks the sink what arrived.
 * Arguments: NAME=PATH of each example binary (cpp_wrapper only when C++ is
 * built). */
#include "itest.h"

#include "exrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EXAMPLES 16

static struct { const char *name, *path; } examples[MAX_EXAMPLES];
static int n_examples;
static char out[1 << 16];

static const char *example(const char *name) {
    for (int i = 0; i < n_examples; i++)
        if (strcmp(examples[i].name, name) == 0)
            return examples[i].path;
    fail_msg("no example %s among the test's arguments", name);
    return NULL;
}

/* Runs an example with these arguments; returns its exit code. */
static int run(const char *name, const char *a1, const char *a2, const char *a3) {
    const char *argv[] = {example(name), a1, a2, a3, NULL};
    int rc = ex_run(argv, NULL, out, sizeof out);
    printf("# %s %s %s: exit %d\n", name, a1 ? a1 : "", a2 ? a2 : "", rc);
    ex_print_comment(out);
    return rc;
}

/* Every id 0..n-1 is a value of col in table (duplicates allowed). */
static void assert_ids(qsink *sink, const char *table, const char *col, int64_t n) {
    int64_t rows = qsink_rows(sink, table);
    uint8_t *seen = calloc((size_t) n, 1);
    assert_non_null(seen);
    for (int64_t r = 0; r < rows; r++) {
        char v[64];
        assert_int_equal(qsink_cell(sink, table, r, col, v, sizeof v), 0);
        int64_t id = atoll(v);
        if (id < 0 || id >= n) /* fail_msg does not return; cmocka 1.1 does not say so */
            fail_msg("%s.%s: unexpected id %s in row %lld", table, col, v, (long long) r);
        else
            seen[id] = 1;
    }
    for (int64_t id = 0; id < n; id++)
        if (!seen[id])
            fail_msg("%s.%s: id %lld missing (%lld rows)", table, col, (long long) id,
                     (long long) rows);
    free(seen);
}

static void quickstart(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[256];
    assert_int_equal(run("quickstart", it_conf(conf, sizeof conf, qsink_port(sink), ""), 0, 0), 0);
    assert_int_equal(qsink_rows(sink, "sensors"), 10);
    qsink_stop(sink);
}

static void cpp_wrapper(void **state) {
    (void) state;
    for (int i = 0; i < n_examples; i++)
        if (strcmp(examples[i].name, "cpp_wrapper") == 0) {
            qsink *sink = it_sink(NULL);
            char conf[256];
            it_conf(conf, sizeof conf, qsink_port(sink), "");
            assert_int_equal(run("cpp_wrapper", conf, 0, 0), 0);
            assert_int_equal(qsink_rows(sink, "sensors"), 100);
            assert_int_equal(qsink_first_out_of_order(sink, "sensors", "reading"), -1);
            qsink_stop(sink);
            return;
        }
    skip(); /* built without a C++ compiler */
}

/* The first run dies with its rows in the slot while the server refuses
 * every connection; the second sends them, and its own. */
static void store_and_forward(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1+ times=0");
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=orders;initial_connect_retry=async;",
             it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    assert_int_equal(run("store_and_forward", conf, "crash", 0), 128 + 9); /* SIGKILL */
    assert_int_equal(qsink_rows(sink, "orders"), 0);
    qsink_fault_clear(sink);
    assert_int_equal(run("store_and_forward", conf, "resume", 0), 0);
    assert_ids(sink, "orders", "order_id", 2000);
    qsink_stop(sink);
}

/* Server A commits the first frames without making them durable, then goes
 * away; B must get every row, those A committed included. */
static void failover(void **state) {
    (void) state;
    qsink_opts a_opts = {.durable = 1, .durable_lag_commits = 1000000}, b_opts = {.durable = 1};
    qsink *a = it_sink(&a_opts), *b = it_sink(&b_opts);
    it_fault(a, "close=1001 conn=1 after=5");
    it_fault(a, "reject=503 conn=2+ times=0");
    char conf[1024], expect[128];
    snprintf(conf, sizeof conf,
             "ws::addr=127.0.0.1:%u,127.0.0.1:%u;request_durable_ack=on;sf_dir=%s;"
             "sender_id=fills;",
             qsink_port(a), qsink_port(b), it_dir);
    assert_int_equal(run("failover", conf, 0, 0), 0);
    snprintf(expect, sizeof expect, "failed over from 127.0.0.1:%u to 127.0.0.1:%u", qsink_port(a),
             qsink_port(b));
    assert_non_null(strstr(out, expect));
    assert_true(qsink_rows(a, "fills") > 0); /* committed there, never durable */
    assert_ids(b, "fills", "fill_id", 2000);
    qsink_stop(a);
    qsink_stop(b);
}

/* A plain connect string (one server, no durable acks): the rows are
 * committed, which is all such a server gives. */
static void failover_plain(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=fills;", it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    assert_int_equal(run("failover", conf, 0, 0), 0);
    assert_non_null(strstr(out, "2000 rows committed"));
    assert_ids(sink, "fills", "fill_id", 2000);
    qsink_stop(sink);
}

/* A slot left with 500 unsent rows by a sender that is gone; the example,
 * another sender_id on the same sf_dir, drains it at startup. */
static void drain_orphans(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1+ times=0");
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=gone;initial_connect_retry=async;close_flush_timeout_millis=0;",
             it_dir);
    qsf_sender *gone = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    it_publish(gone, "old_rows", 0, 500, 100);
    qsf_errinfo e;
    assert_int_equal(qsf_close(gone, &e), QSF_E_TIMEOUT); /* the rows stay in its slot */
    qsink_fault_clear(sink);
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=ingest-2;drain_orphans=on;", it_dir);
    assert_int_equal(
        run("drain_orphans", it_conf(conf, sizeof conf, qsink_port(sink), extra), 0, 0), 0);
    assert_non_null(strstr(out, "orphan slots drained 1, failed 0"));
    it_assert_rows(sink, "old_rows", 500, true);
    assert_int_equal(qsink_rows(sink, "heartbeats"), 100);
    qsink_stop(sink);
}

/* Two runs over overlapping input: every copy of a payment is identical
 * (same id, same designated timestamp, same values), which is what lets
 * DEDUP UPSERT KEYS(ts, payment_id) keep one. */
static void idempotent(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=pay;", it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    assert_int_equal(run("idempotent", conf, "0", "100"), 0);
    assert_int_equal(run("idempotent", conf, "50", "100"), 0);
    assert_int_equal(qsink_rows(sink, "payments"), 200);
    assert_int_equal(qsink_duplicates(sink, "payments", "payment_id"), 50);
    assert_ids(sink, "payments", "payment_id", 150);
    for (int64_t r = 0; r < 200; r++) {
        char id[32], ts[32], amount[64], want_ts[32], want_amount[64];
        assert_int_equal(qsink_cell(sink, "payments", r, "payment_id", id, sizeof id), 0);
        assert_int_equal(qsink_cell(sink, "payments", r, "timestamp", ts, sizeof ts), 0);
        assert_int_equal(qsink_cell(sink, "payments", r, "amount", amount, sizeof amount), 0);
        int64_t n = atoll(id);
        snprintf(want_ts, sizeof want_ts, "%lld", (long long) (1767225600000000 + n * 1000));
        snprintf(want_amount, sizeof want_amount, "%.17g", (double) (n % 97) * 1.25);
        assert_string_equal(ts, want_ts);
        assert_string_equal(amount, want_amount);
    }
    qsink_stop(sink);
}

/* The README's quick start, with its own sf_dir (qdb-sf, relative) in a
 * fresh working directory and the sink's address in place of localhost:9000. */
static void readme_quickstart(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[256], cwd[1024], slot[1024];
    it_conf(conf, sizeof conf, qsink_port(sink),
            "sf_dir=qdb-sf;sender_id=ingest-1;initial_connect_retry=async;");
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(it_dir), 0);
    int rc = run("readme_quickstart", conf, 0, 0);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(qsink_rows(sink, "trades"), 1);
    snprintf(slot, sizeof slot, "%s/qdb-sf/ingest-1", it_dir);
    assert_int_equal(access(slot, F_OK), 0);
    qsink_stop(sink);
}

/* docs/ARROW.md's "Example": three rows into "trades", "sym" asked as
 * SYMBOL, row 1's price null. */
static void arrow_doc_example(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[256], v[64];
    assert_int_equal(
        run("arrow_doc_example", it_conf(conf, sizeof conf, qsink_port(sink), ""), 0, 0), 0);
    assert_int_equal(qsink_rows(sink, "trades"), 3);
    assert_int_equal(qsink_column_type(sink, "trades", "sym"), 0x09); /* SYMBOL */
    assert_int_equal(qsink_cell(sink, "trades", 1, "px", v, sizeof v), 0);
    assert_string_equal(v, "null");
    assert_int_equal(qsink_cell(sink, "trades", 2, "sym", v, sizeof v), 0);
    assert_string_equal(v, "IBM");
    qsink_stop(sink);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc && n_examples < MAX_EXAMPLES; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "usage: test_examples NAME=PATH...\n");
            return 2;
        }
        *eq = '\0';
        examples[n_examples].name = argv[i];
        examples[n_examples++].path = eq + 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quickstart),
        cmocka_unit_test(cpp_wrapper),
        cmocka_unit_test_setup_teardown(store_and_forward, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(failover, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(failover_plain, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(drain_orphans, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(idempotent, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(readme_quickstart, it_setup_dir, it_teardown_dir),
        cmocka_unit_test(arrow_doc_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
