/* A WebSocket layer without a socket, for driving the real I/O thread
 * (lib/io) from a test: a qsf_ws_ops table (qsf_io_opts.ws_ops) whose
 * `service` blocks until the test queues an event, a cancel arrives or a tick
 * is due, and then calls the hooks on the I/O thread, the way lws does.
 *
 * The test thread scripts the other side: the upgrade completing (fws_open),
 * the attempt failing (fws_fail), server messages (fws_message, fws_ok,
 * fws_error), the peer closing or the connection dropping (fws_peer_close).
 * The fake answers the I/O thread's own requests by itself, as lws would:
 * after close() it ends the connection (on_closed when it was open, with 1000
 * when the peer answered our CLOSE and 1006 after an abort) or the attempt
 * (on_connect_fail); fws_hold_ends() keeps those endings back so a race can
 * be staged (an upgrade that completes after we decided to abort it), and
 * fws_set_peer_silent() makes the peer ignore our CLOSE (only an abort ends
 * it). `active` is true from connect() until the attempt failed or the
 * connection ended. on_writable follows want_writable() while the connection
 * is open, not choked (fws_set_choked) and not closing in order.
 *
 * Everything the I/O thread does through the table is recorded under one
 * lock: connects (the port of each, in order), closes (code, abort), every
 * binary frame (bytes copied, the connection and the wireSeq it went out
 * with), pings. So are the state transitions the thread logs
 * (qsf_io_set_state logs each one at debug level: the fake installs a log
 * sink for as long as it lives), and anything the I/O thread did that lws
 * would not allow (a connect while an attempt or a connection exists, a send
 * outside on_writable or on a connection that is not open): fws_misuse()
 * counts those.
 *
 * Time: fws_new() replaces QSF_OS->mono_ns with the real clock plus an offset
 * the test moves with fws_clock_advance_ms(); deadlines, backoffs and the
 * tick timer all read that clock. fws_sync() queues a tick behind everything
 * queued so far and waits until the thread has run it: afterwards the thread
 * has applied every command and event that came before.
 *
 * One fake at a time: fws_new() before any thread that reads the clock
 * starts (a ring's manager) and before qsf_io_start, whose create() adopts
 * it; fws_free() after qsf_io_free and after those threads ended. */
#ifndef QSF_FAKE_WS_H
#define QSF_FAKE_WS_H

#include "io/ws.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fake_ws fake_ws;

/* The table to put in qsf_io_opts.ws_ops. */
extern const qsf_ws_ops fws_ops;

fake_ws *fws_new(void);
void fws_free(fake_ws *f);

/* ---- what the test makes happen (any thread but the I/O thread) ---- */

/* An upgrade response: X-QWP-Version, durable ack granted, max batch size. */
qsf_ws_hs fws_hs(int version, bool durable, int64_t max_batch);

/* Every connect() is answered by this upgrade (NULL: none; the test answers). */
void fws_set_auto_open(fake_ws *f, const qsf_ws_hs *hs);
/* Every connect() fails so (reason NULL: none); auto_open goes first. */
void fws_set_auto_fail(fake_ws *f, int http_status, const char *reason);

/* Each queues an event and returns its number (fws_wait_done). */
uint64_t fws_open(fake_ws *f, const qsf_ws_hs *hs);
uint64_t fws_fail(fake_ws *f, int http_status, const char *reason);
uint64_t fws_message(fake_ws *f, const uint8_t *p, size_t n);
uint64_t fws_violation(fake_ws *f, const char *why);
uint64_t fws_peer_close(fake_ws *f, int code, const char *reason);
uint64_t fws_tick(fake_ws *f);

/* Server responses (docs/PROTOCOL.md §6.2, §6.3): OK up to wireSeq seq with no
 * table entries; an error of `status` for wireSeq seq. */
uint64_t fws_ok(fake_ws *f, int64_t seq);
uint64_t fws_error(fake_ws *f, uint8_t status, int64_t seq, const char *msg);
size_t fws_build_ok(uint8_t *out, size_t cap, int64_t seq);
size_t fws_build_error(uint8_t *out, size_t cap, uint8_t status, int64_t seq, const char *msg);

/* Waits (bounded) until event `ev` has been delivered and its hook returned. */
void fws_wait_done(fake_ws *f, uint64_t ev);
/* fws_tick + fws_wait_done. */
void fws_sync(fake_ws *f);

/* While held, the endings of our closes wait (the events queued meanwhile are
 * delivered); releasing lets them through. */
void fws_hold_ends(fake_ws *f, bool hold);
/* The peer never answers our CLOSE: only an abort ends the connection. */
void fws_set_peer_silent(fake_ws *f, bool silent);
void fws_set_choked(fake_ws *f, bool choked);

void fws_clock_advance_ms(int64_t ms);

/* ---- what the I/O thread did (any thread) ---- */

typedef struct fws_close {
    int code;
    bool abort;
    int conn;    /* 1-based number of the connect() it was for */
    bool active; /* an attempt or a connection existed when it was called */
} fws_close;

int fws_connects(fake_ws *f);
/* Port of the n-th connect (1-based). */
int fws_connect_port(fake_ws *f, int n);
int fws_closes(fake_ws *f);
fws_close fws_close_at(fake_ws *f, int i); /* 0-based */
/* Binary frames sent, all connections. */
int fws_frames(fake_ws *f);
/* Frame i (0-based): copies up to cap bytes into out, returns its length;
 * *conn and *wire (may be NULL) get its connection and wireSeq. */
size_t fws_frame(fake_ws *f, int i, uint8_t *out, size_t cap, int *conn, int64_t *wire);
/* Frames sent on connection n (1-based). */
int fws_frames_on(fake_ws *f, int conn);
int fws_pings(fake_ws *f);
bool fws_is_active(fake_ws *f);
bool fws_is_open(fake_ws *f);

/* The state the I/O thread last logged moving to ("WAIT" before any). */
bool fws_state_is(fake_ws *f, const char *state);
/* Transitions logged so far; transition i as "FROM -> TO" into buf. */
int fws_transitions(fake_ws *f);
const char *fws_transition(fake_ws *f, int i, char *buf, size_t cap);
/* Log lines of level ERROR containing needle (the first 16 are kept). */
int fws_error_lines(fake_ws *f, const char *needle);
/* cancel() calls (qsf_io_wake, pause, stop, the latch). */
int fws_cancels(fake_ws *f);
int fws_misuse(fake_ws *f);
/* Everything recorded, for a failure message. */
void fws_dump(fake_ws *f, char *buf, size_t cap);

/* Waits (bounded: 10 s of real time) until cond holds; fails the test with
 * cond's text, where it was waited for and fws_dump() otherwise. */
#define FWS_WAIT(f, cond)                                                                          \
    do {                                                                                           \
        int64_t fws_dl_ = fws_deadline();                                                          \
        while (!(cond))                                                                            \
            fws_wait_step((f), fws_dl_, #cond, __FILE__, __LINE__);                                \
    } while (0)

int64_t fws_deadline(void);
void fws_wait_step(fake_ws *f, int64_t deadline, const char *what, const char *file, int line);

#endif
