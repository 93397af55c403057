/* Sender integration test helpers (see itest.h). */
#include "itest.h"

#include "os/os.h"
#include "sender/internal.h"
#include "sf/segfmt.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sched.h>
#include <time.h>

qsink *it_sink(const qsink_opts *opts) {
    qsink_opts def;
    memset(&def, 0, sizeof def);
    char err[256] = "";
    qsink *s = qsink_start(opts ? opts : &def, err, sizeof err);
    if (!s)
        fail_msg("qsink_start: %s", err);
    return s;
}

const char *it_conf(char *buf, size_t cap, uint16_t port, const char *extra) {
    snprintf(buf, cap, "ws::addr=127.0.0.1:%u;%s", port, extra ? extra : "");
    return buf;
}

qsf_sender *it_sender(const char *conf) {
    qsf_sender *s = NULL;
    qsf_errinfo e;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    if (rc != QSF_OK)
        fail_msg("qsf_sender_new(%s): %s: %s", conf, qsf_err_name(rc), e.msg);
    return s;
}

qsf_sender *it_offline_sender(const char *id) {
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=%s;initial_connect_retry=async;close_flush_timeout_millis=0;"
             "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;",
             it_dir, id);
    return it_sender(it_conf(conf, sizeof conf, 1, extra));
}

static void check(int rc, const qsf_errinfo *e, const char *what) {
    if (rc != QSF_OK)
        fail_msg("%s: %s: %s", what, qsf_err_name(rc), e->msg);
}

static const char *SYMS[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"};

int64_t it_publish(qsf_sender *s, const char *table, int64_t from, int64_t to, int per_flush) {
    qsf_errinfo e;
    int64_t fsn = -1;
    for (int64_t i = from; i < to; i++) {
        const char *sym = SYMS[i % 7];
        check(qsf_table(s, table, strlen(table), &e), &e, "qsf_table");
        check(qsf_col_i64(s, "k", 1, i, &e), &e, "qsf_col_i64");
        check(qsf_symbol(s, "sym", 3, sym, strlen(sym), &e), &e, "qsf_symbol");
        check(qsf_col_f64(s, "v", 1, (double) i * 0.5, &e), &e, "qsf_col_f64");
        check(qsf_at_micros(s, 1700000000000000ll + i, &e), &e, "qsf_at_micros");
        if (per_flush > 0 && (i - from + 1) % per_flush == 0)
            check(qsf_flush(s, &fsn, &e), &e, "qsf_flush");
    }
    check(qsf_flush(s, &fsn, &e), &e, "qsf_flush");
    return fsn;
}

int it_add_row(qsf_sender *s, const char *table, int64_t k, const char *sym, size_t pad,
               qsf_errinfo *err) {
    static const uint8_t zeros[4096];
    assert_true(pad <= sizeof zeros);
    int rc = qsf_table(s, table, strlen(table), err);
    if (rc == QSF_OK)
        rc = qsf_col_i64(s, "k", 1, k, err);
    if (rc == QSF_OK)
        rc = qsf_symbol(s, "sym", 3, sym, strlen(sym), err);
    if (rc == QSF_OK)
        rc = qsf_col_binary(s, "blob", 4, zeros, pad, err);
    if (rc == QSF_OK)
        rc = qsf_at_micros(s, 1700000000000000ll + k, err);
    return rc;
}

/* Milliseconds on the real monotonic clock: the no-progress guards must not
 * follow QSF_OS->mono_ns, which it_clock_advance_ms shifts. */
static int64_t real_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The level of qsf_wait whose watermark qsf_acked_fsn reads: the ring's acked
 * FSN is the DURABLE watermark when durable acks are asked for; otherwise the
 * I/O thread raises it right after the OK watermark, in the same step
 * (lib/io/ack.c), and DURABLE is refused. */
static int acked_level(const qsf_sender *s) {
    return s->conf->request_durable_ack ? QSF_WAIT_DURABLE : QSF_WAIT_OK;
}

void it_wait_acked(qsf_sender *s, int64_t fsn) {
    int level = acked_level(s), rc = QSF_OK;
    int64_t mark = qsf_acked_fsn(s), since = real_ms();
    qsf_errinfo e = {0};
    for (int64_t a; (a = qsf_acked_fsn(s)) < fsn;) {
        if (a != mark) {
            mark = a;
            since = real_ms();
        } else if (real_ms() - since >= IT_NO_PROGRESS_MS) {
            break; /* on the real clock: a test may shift the library's */
        }
        rc = qsf_wait(s, fsn, level, IT_NO_PROGRESS_MS, &e);
        if (rc == QSF_OK)
            sched_yield(); /* OK level reached: the ring's watermark follows it */
        else if (rc != QSF_E_TIMEOUT)
            break; /* a latched error or qsf_close: acknowledged before, or never */
    }
    if (qsf_acked_fsn(s) >= fsn)
        return;
    if (rc == QSF_OK)
        snprintf(e.msg, sizeof e.msg, "the OK watermark reached it, the ring's stood still");
    fail_msg("acked fsn %lld did not reach %lld: %s: %s", (long long) qsf_acked_fsn(s),
             (long long) fsn, qsf_err_name(rc), e.msg);
}

void it_poll_acked(qsf_sender *s, int64_t fsn) {
    int64_t mark = qsf_acked_fsn(s), since = real_ms();
    for (int64_t a; (a = qsf_acked_fsn(s)) < fsn;) {
        if (a != mark) {
            mark = a;
            since = real_ms();
        } else if (real_ms() - since >= IT_NO_PROGRESS_MS) {
            fail_msg("acked fsn %lld did not reach %lld: no progress for %d ms", (long long) a,
                     (long long) fsn, IT_NO_PROGRESS_MS);
        }
        it_sleep_ms(1);
    }
}

void it_assert_rows(qsink *sink, const char *table, int64_t n, bool allow_dups) {
    if (qsink_wait_rows(sink, table, n, IT_NO_PROGRESS_MS) != 0)
        fail_msg("sink has %lld rows of %s, expected %lld", (long long) qsink_rows(sink, table),
                 table, (long long) n);
    int64_t rows = qsink_rows(sink, table);
    if (!allow_dups) {
        assert_int_equal(rows, n);
        assert_int_equal(qsink_first_out_of_order(sink, table, "k"), -1);
    }
    uint8_t *seen = calloc((size_t) n + 1, 1);
    assert_non_null(seen);
    char cell[64];
    for (int64_t r = 0; r < rows; r++) {
        assert_int_equal(qsink_cell(sink, table, r, "k", cell, sizeof cell), 0);
        long long k = strtoll(cell, NULL, 10);
        if (k < 0 || k >= n)
            fail_msg("row %lld has key %s outside 0..%lld", (long long) r, cell, (long long) n - 1);
        seen[k] = 1;
    }
    for (int64_t k = 0; k < n; k++)
        if (!seen[k])
            fail_msg("key %lld never reached the sink (%lld rows)", (long long) k,
                     (long long) rows);
    free(seen);
    /* one spot check of the symbol column of the standard shape */
    if (qsink_column_type(sink, table, "sym") >= 0) {
        assert_int_equal(qsink_cell(sink, table, 0, "sym", cell, sizeof cell), 0);
        assert_true(strlen(cell) > 0);
    }
}

static _Atomic int64_t clock_offset_ns;

static int64_t shifted_mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec + atomic_load(&clock_offset_ns);
}

/* The coarse clock moves with the fine one (the interval trigger reads both). */
static int64_t shifted_mono_coarse(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec + atomic_load(&clock_offset_ns);
}

void it_clock_install(void) {
    atomic_store(&clock_offset_ns, 0);
    qsf_os_table.mono_ns = shifted_mono;
    qsf_os_table.mono_coarse_ns = shifted_mono_coarse;
}

void it_clock_advance_ms(int64_t ms) {
    atomic_fetch_add(&clock_offset_ns, ms * 1000000);
}

char it_dir[512];

int it_setup_dir(void **state) {
    (void) state;
    tu_mkdtemp(it_dir, sizeof it_dir);
    return 0;
}

int it_teardown_dir(void **state) {
    (void) state;
    tu_rmtree(it_dir);
    return 0;
}

void it_fault(qsink *s, const char *line) {
    char err[256];
    if (qsink_fault(s, line, err, sizeof err) != 0)
        fail_msg("fault '%s': %s", line, err);
}

void it_sleep_ms(int ms) {
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

void it_make_pki(char *dir, size_t dircap, char *ca, char *cert, char *key, size_t cap) {
    tu_mkdtemp(dir, dircap);
    snprintf(ca, cap, "%s/ca.pem", dir);
    snprintf(cert, cap, "%s/server.pem", dir);
    snprintf(key, cap, "%s/server.key", dir);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && "
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout ca.key -out ca.pem -days 2 -subj /CN=qsf-test-ca 2>/dev/null && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null && "
             "printf 'subjectAltName=IP:127.0.0.1,DNS:127.0.0.1,DNS:localhost\\n' > ext && "
             "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
             "-out server.pem -days 2 -extfile ext 2>/dev/null && "
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout other-ca.key -out other-ca.pem -days 2 -subj /CN=qsf-other-ca 2>/dev/null",
             dir);
    if (system(cmd) != 0)
        fail_msg("openssl CLI could not make the test CA");
}

qsink *it_tls_sink(const char *cert, const char *key) {
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.tls_cert = cert;
    o.tls_key = key;
    return it_sink(&o);
}

void it_close_and_check(qsf_sender *s, qsink *sink, const char *table, int64_t n, bool allow_dups) {
    qsf_errinfo e;
    int rc = qsf_close(s, &e);
    if (rc != QSF_OK)
        fail_msg("qsf_close: %s: %s", qsf_err_name(rc), e.msg);
    it_assert_rows(sink, table, n, allow_dups);
    qsink_stop(sink);
}

int it_count_segments(const char *slot, char *lowest, size_t cap) {
    DIR *d = opendir(slot);
    if (!d)
        return -1;
    int n = 0;
    if (lowest && cap)
        lowest[0] = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (!qsf_seg_name_is_candidate(de->d_name))
            continue;
        n++;
        if (lowest && (!lowest[0] || strcmp(de->d_name, lowest) < 0))
            snprintf(lowest, cap, "%s", de->d_name);
    }
    closedir(d);
    return n;
}

int it_records(qsf_sender *s, int category, const char *needle, qsf_error_record *first) {
    qsf_error_record r;
    int n = 0;
    while (qsf_poll_error(s, &r) == 1) {
        if (r.category != category || (needle && !strstr(r.message, needle)))
            continue;
        if (n++ == 0 && first)
            *first = r;
    }
    return n;
}
