/* A row call that returns an error leaves the row out (include/qsf.h "Rows"):
 * when the auto-flush inside qsf_at_* fails (a full disk under .symbol-dict,
 * a ring that stays full, in SF and in memory mode), the row it ended is never
 * sent, qsf_buffered_rows does not count it, and qsf_close counts only the
 * rows that were accepted. Each attempt carries its own key, so the oracle is
 * exact: the sink holds every key whose qsf_at_* returned QSF_OK and none
 * whose call failed. */
#include "itest.h"

#include "os/os.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_KEYS 20000

/* The outcome of each attempt, by key. */
typedef struct attempts {
    uint8_t ok[MAX_KEYS];
    int64_t n, n_ok, n_failed;
} attempts;

/* One row with key k and a symbol of its own (a new dictionary entry each);
 * `pad` bytes of binary. Records the outcome; returns the code. */
static int attempt(qsf_sender *s, attempts *a, size_t pad, qsf_errinfo *e) {
    int64_t k = a->n++;
    assert_true(k < MAX_KEYS);
    char sym[64];
    snprintf(sym, sizeof sym, "symbol-of-row-%lld", (long long) k);
    int rc = it_add_row(s, "t", k, sym, pad, e);
    if (rc == QSF_OK) {
        a->ok[k] = 1;
        a->n_ok++;
    } else {
        a->n_failed++;
        qsf_row_cancel(s); /* what an application does on an error; nothing is open */
    }
    return rc;
}

/* The sink holds exactly the keys that were accepted (replays may repeat
 * one), and no key of a failed call. */
static void assert_only_accepted(qsink *sink, const attempts *a) {
    if (qsink_wait_rows(sink, "t", a->n_ok, 20000) != 0)
        fail_msg("sink has %lld rows, %lld were accepted", (long long) qsink_rows(sink, "t"),
                 (long long) a->n_ok);
    uint8_t *seen = calloc(MAX_KEYS, 1);
    assert_non_null(seen);
    int64_t rows = qsink_rows(sink, "t");
    char cell[64];
    for (int64_t r = 0; r < rows; r++) {
        assert_int_equal(qsink_cell(sink, "t", r, "k", cell, sizeof cell), 0);
        long long k = strtoll(cell, NULL, 10);
        assert_true(k >= 0 && k < a->n);
        if (!a->ok[k])
            fail_msg("key %lld reached the sink but its qsf_at_micros failed", k);
        seen[k] = 1;
    }
    for (int64_t k = 0; k < a->n; k++)
        if (a->ok[k] && !seen[k])
            fail_msg("key %lld was accepted and never reached the sink", (long long) k);
    free(seen);
}

/* ---- ENOSPC under .symbol-dict (SF mode) ---- */

static atomic_int dict_enospc;

static bool is_symbol_dict(int fd) {
    char link[64], path[1024];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return false;
    path[n] = 0;
    return strstr(path, ".symbol-dict") != NULL;
}

static ssize_t full_dict_pwrite(int fd, const void *buf, size_t n, off_t off) {
    if (atomic_load(&dict_enospc) && is_symbol_dict(fd)) {
        errno = ENOSPC;
        return -1;
    }
    return pwrite(fd, buf, n, off);
}

/* Per test: the disk takes writes (a failed test leaves it as it was). */
static int setup(void **state) {
    atomic_store(&dict_enospc, 0);
    qsf_os_reset();
    return it_setup_dir(state);
}

static qsf_sender *sf_sender(qsink *sink, const char *extra) {
    char conf[1024], ex[800];
    snprintf(ex, sizeof ex,
             "sf_dir=%s;sender_id=r;auto_flush_rows=10;auto_flush_interval=off;"
             "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;%s",
             it_dir, extra);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ex));
}

/* Before: the 10th row's auto-flush failed with QSF_E_NOSPC, the row stayed
 * in the batch (qsf_row_cancel had no open row to drop), and so did every
 * later failed row: once the disk took writes again all of them were sent,
 * and the retried ones twice. */
static void nospc_in_auto_flush_leaves_the_row_out(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    QSF_OS->pwrite = full_dict_pwrite; /* before any thread reads the table */
    qsf_sender *s = sf_sender(sink, "");
    static attempts a;
    memset(&a, 0, sizeof a);
    qsf_errinfo e;
    for (int i = 0; i < 5; i++)
        assert_int_equal(attempt(s, &a, 0, &e), QSF_OK);
    atomic_store(&dict_enospc, 1);
    for (int i = 0; i < 4; i++) /* rows 6..9: under auto_flush_rows */
        assert_int_equal(attempt(s, &a, 0, &e), QSF_OK);
    for (int i = 0; i < 20; i++) { /* each one triggers the auto-flush, which fails */
        assert_int_equal(attempt(s, &a, 0, &e), QSF_E_NOSPC);
        assert_int_equal(qsf_buffered_rows(s), 9); /* the accepted ones, no more */
        assert_non_null(strstr(e.msg, "this row was not buffered"));
        assert_non_null(strstr(e.msg, ".symbol-dict"));
    }
    atomic_store(&dict_enospc, 0);
    /* the disk takes writes again: the failed rows are sent again, as new
     * attempts, and arrive once */
    for (int i = 0; i < 20; i++)
        assert_int_equal(attempt(s, &a, 0, &e), QSF_OK);
    int64_t fsn;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    it_wait_acked(s, fsn);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    assert_only_accepted(sink, &a);
    assert_int_equal(qsink_rows(sink, "t"), a.n_ok); /* one connection: no replay */
    qsink_stop(sink);
    qsf_os_reset();
}

/* Before: close said "29 buffered rows dropped" where 9 were accepted. */
static void close_counts_only_accepted_rows(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    QSF_OS->pwrite = full_dict_pwrite;
    qsf_sender *s = sf_sender(sink, "");
    static attempts a;
    memset(&a, 0, sizeof a);
    qsf_errinfo e;
    atomic_store(&dict_enospc, 1);
    for (int i = 0; i < 29; i++)
        (void) attempt(s, &a, 0, &e);
    assert_int_equal(a.n_ok, 9);
    assert_int_equal(qsf_buffered_rows(s), 9);
    qsf_close_info ci = {.struct_size = sizeof ci};
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_DATA_LOSS); /* the flush fails too */
    atomic_store(&dict_enospc, 0);
    assert_int_equal(ci.rows_unpublished, 9);
    assert_non_null(strstr(e.msg, "9 buffered rows dropped"));
    qsink_stop(sink);
    qsf_os_reset();
}

/* ---- QSF_E_FULL (retriable) from the auto-flush ---- */

/* The ring fills while the sender is paused (nothing sent, nothing
 * acknowledged) until auto-flushes fail with QSF_E_FULL; each failed row is
 * retried, as a retriable error invites, once the sender resumes. Before, the
 * failed rows stayed buffered and the retries sent them twice. */
static void full_ring_in_auto_flush_leaves_the_row_out(const char *mode) {
    qsink *sink = it_sink(NULL);
    char conf[1024], ex[800];
    snprintf(ex, sizeof ex,
             "%s%s%ssf_max_segment_bytes=64k;sf_max_total_bytes=1m;sf_append_deadline_millis=50;"
             "auto_flush_rows=100;auto_flush_interval=off;"
             "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;",
             mode ? "sf_dir=" : "", mode ? it_dir : "", mode ? ";sender_id=f;" : "");
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ex));
    assert_int_equal(qsf_pause(s), QSF_OK);
    static attempts a;
    memset(&a, 0, sizeof a);
    qsf_errinfo e;
    int64_t failed = 0;
    while (failed < 3) {
        int rc = attempt(s, &a, 1000, &e);
        if (rc == QSF_OK)
            continue;
        assert_int_equal(rc, QSF_E_FULL);
        assert_true(e.flags & QSF_ERRF_RETRIABLE);
        assert_int_equal(qsf_buffered_rows(s), 99);
        assert_non_null(strstr(e.msg, "this row was not buffered"));
        failed++;
    }
    assert_int_equal(qsf_resume(s), QSF_OK);
    for (int64_t i = 0; i < failed; i++) /* the retries: new attempts, retried until taken */
        while (attempt(s, &a, 1000, &e) != QSF_OK)
            assert_int_equal(e.code, QSF_E_FULL);
    int64_t fsn;
    int rc;
    while ((rc = qsf_flush(s, &fsn, &e)) == QSF_E_FULL)
        ;
    assert_int_equal(rc, QSF_OK);
    it_wait_acked(s, fsn);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    assert_only_accepted(sink, &a);
    qsink_stop(sink);
}

static void full_ring_sf(void **state) {
    (void) state;
    full_ring_in_auto_flush_leaves_the_row_out("sf");
}

static void full_ring_memory(void **state) {
    (void) state;
    full_ring_in_auto_flush_leaves_the_row_out(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(nospc_in_auto_flush_leaves_the_row_out, setup,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(close_counts_only_accepted_rows, setup, it_teardown_dir),
        cmocka_unit_test_setup_teardown(full_ring_sf, setup, it_teardown_dir),
        cmocka_unit_test_setup_teardown(full_ring_memory, setup, it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
