/* Helpers of the sender integration tests: an in-process qwp-sink on
 * 127.0.0.1:0, a standard row shape, and the delivery oracle. */
#ifndef QSF_ITEST_H
#define QSF_ITEST_H

#include "testutil.h"

#include "qsf.h"
#include "sink.h"

#include <stdbool.h>
#include <stdint.h>

/* Starts a sink with opts (may be NULL); fails the test on error. */
qsink *it_sink(const qsink_opts *opts);

/* "ws::addr=127.0.0.1:<port>;<extra>" into buf. */
const char *it_conf(char *buf, size_t cap, uint16_t port, const char *extra);

/* Creates a sender; fails the test on error. */
qsf_sender *it_sender(const char *conf);

/* A sender of slot `id` under it_dir that cannot reach any server (port 1 of
 * the loopback): what it publishes stays on disk, and qsf_close returns
 * QSF_E_TIMEOUT at once with the frames kept. */
qsf_sender *it_offline_sender(const char *id);

/* Publishes rows [from, to) into table `table`: k (LONG) = row number, sym
 * (SYMBOL, 7 distinct values), v (DOUBLE), designated timestamp. Flushes every
 * `per_flush` rows (0 = leave it to auto-flush) and once at the end. Returns the
 * FSN of the last flush. */
int64_t it_publish(qsf_sender *s, const char *table, int64_t from, int64_t to, int per_flush);

/* One complete row of `table`: k (LONG) = k, sym (SYMBOL) = sym, blob
 * (BINARY) = `pad` zero bytes, designated timestamp from k. Stops at the first
 * failing call and returns its code (err says what). */
int it_add_row(qsf_sender *s, const char *table, int64_t k, const char *sym, size_t pad,
               qsf_errinfo *err);

/* How long the shared waits let what they wait for stand still before they
 * fail: a bound on a stall, not on the wait, so a loaded machine (or a
 * sanitizer build) only makes them longer. */
#define IT_NO_PROGRESS_MS 60000

/* Waits in qsf_wait until the sender's acked FSN (qsf_acked_fsn) reaches fsn.
 * Fails, naming both FSNs, when it has not advanced for IT_NO_PROGRESS_MS or
 * the wait ends otherwise (a latched error, qsf_close). */
void it_wait_acked(qsf_sender *s, int64_t fsn);

/* The same wait without entering qsf_wait: it polls qsf_acked_fsn, so the
 * I/O thread sees nobody waiting (tests counting its spins need that). */
void it_poll_acked(qsf_sender *s, int64_t fsn);

/* The oracle: the sink holds every key 0..n-1 of `table`. Without allow_dups
 * exactly once each and in order; with it, duplicates are tolerated (replays
 * after a connection loss) but nothing is missing and no foreign key appears. */
void it_assert_rows(qsink *sink, const char *table, int64_t n, bool allow_dups);

/* Closes the sender (expecting QSF_OK), checks the rows with it_assert_rows and
 * stops the sink: the common end of a delivery test. */
void it_close_and_check(qsf_sender *s, qsink *sink, const char *table, int64_t n, bool allow_dups);

/* A fresh private directory per test (cmocka setup / teardown). */
extern char it_dir[512];
int it_setup_dir(void **state);
int it_teardown_dir(void **state);

/* Adds a sink fault; fails the test if the line does not parse. */
void it_fault(qsink *s, const char *line);
/* Takes every queued error record; returns how many matched category and
 * (when not NULL) contain `needle`, copying the first match to *first. */
int it_records(qsf_sender *s, int category, const char *needle, qsf_error_record *first);

void it_sleep_ms(int ms);

/* A throwaway CA and a server certificate for 127.0.0.1 made by the openssl
 * CLI in a new temporary directory (dir); the paths go to ca, cert and key
 * (cap bytes each). The directory also holds other-ca.pem, a CA that signed
 * nothing. Fails the test when the CLI cannot make them. */
void it_make_pki(char *dir, size_t dircap, char *ca, char *cert, char *key, size_t cap);

/* A sink serving wss with that certificate chain and key. */
qsink *it_tls_sink(const char *cert, const char *key);

/* Segment files (*.sfa) in a slot directory; *lowest gets the smallest name
 * (NULL allowed). -1 when the directory does not exist. */
int it_count_segments(const char *slot, char *lowest, size_t cap);

/* Replaces QSF_OS->mono_ns with real time + an offset tests can advance. */
void it_clock_install(void);
void it_clock_advance_ms(int64_t ms);

#endif
