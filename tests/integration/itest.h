/* Helpers of the sender integration tests: an in-process qwp-sink on
 * 127.0.0.1:0, a standard row shape, and the delivery oracle. */
#ifndef QSF_ITEST_H
#define QSF_ITEST_H

#include "testutil.h"

#include "qsf.h"
#include "sink.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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

/* A child of the test: this test program run anew by exec (/proc/self/exe),
 * its argv[1] the role, then the role's arguments, then the write end of its
 * report pipe (the last argument). A child forked alone would inherit the
 * locks the in-process sink's threads hold at that instant (AddressSanitizer's
 * allocator's among them), held for ever in a child that has only the forking
 * thread; so between fork and exec only async-signal-safe calls are made. The
 * child says how far it got, one line per step, with it_child_report. */
#define IT_CHILD_LINE (QSF_ERRINFO_MSG_MAX + 128)
typedef struct it_child {
    pid_t pid;
    int fd;                   /* the read end of its report pipe */
    char last[IT_CHILD_LINE]; /* its last report ("" before the first) */
    char buf[IT_CHILD_LINE];  /* what came after the last whole line */
    size_t have;
} it_child;

/* Starts the child; args ends with NULL. Fails the test on error. */
void it_child_start(it_child *c, const char *role, const char *const args[]);

/* The child's next report into c->last; false at the pipe's end (the child
 * exited or was killed, c->last keeps its last line). When it stays silent
 * for hang_ms, kills it and fails naming `what` and its last report. */
bool it_child_next(it_child *c, int hang_ms, const char *what);

/* Reads the child's reports until the pipe's end (hang_ms and `what` as in
 * it_child_next) and reaps it; returns its waitpid status. */
int it_child_end(it_child *c, int hang_ms, const char *what);

/* Reads the child's reports until `step` (hang_ms and `what` as in
 * it_child_next), then SIGKILLs and reaps it; returns its waitpid status.
 * Fails, naming its status and last report, when it ended before `step`. */
int it_child_kill_at(it_child *c, const char *step, int hang_ms, const char *what);

/* SIGKILLs the child and reaps it; returns its waitpid status. */
int it_child_kill(it_child *c);

/* In the child: one line to the parent. A parent that is gone ends it. */
void it_child_report(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* In the child: reports "what: error name: message" of a failed call and
 * exits with code. */
_Noreturn void it_child_give_up(int fd, int code, const char *what, int rc, const qsf_errinfo *e);

/* In the child: a sender of conf, reported as "sender created"; a failure
 * is reported and exits with 3. */
qsf_sender *it_child_sender(const char *conf, int fd);

#endif
