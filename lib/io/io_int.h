/* Internals of the I/O thread, shared by its files:
 *
 *   io.c      the thread: creation, the loop, commands, the tick, the API of io.h
 *   state.c   the connection state machine: set_state() and its transitions
 *   notify.c  what the application hears of each transition: a log line and
 *             a connection event, with what the transition carries
 *   conn.c    a connection's life: attempts, the upgrade, closes, what comes next
 *   send.c    what goes out: dictionary catch-up, replay, live frames, keepalive
 *   ack.c     what comes in: OKs, durable acks, errors, poison strikes, retirement
 *   live.c    liveness: PINGs, and the deadlines that find a connection dead
 *   report.c  error records, the terminal latch, the status line
 *   progress.c  the "no progress for T" warning of a stuck sender
 *
 * The state of a qsf_io has three lifetimes, kept apart:
 *   qsf_io_shared  read and written by other threads too (atomics, or under mu)
 *   qsf_io_loop    the I/O thread's own, for the life of the sender
 *   qsf_conn       one connection's, from the attempt to its end (conn_begin /
 *                  conn_end); nothing of it survives into the next connection
 *
 * Event handlers (the ws hooks) decide and return a verdict; only the
 * functions of conn.c close a connection, and only set_state() changes the
 * state. */
#ifndef QSF_IO_INT_H
#define QSF_IO_INT_H

#include "io/backoff.h"
#include "io/durack.h"
#include "io/hosts.h"
#include "io/io.h"
#include "io/policy.h"
#include "io/wiremap.h"
#include "io/ws.h"
#include "latch.h"
#include "qwp/encoder.h"
#include "qwp/response.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define QSF_IO_TICK_US      20000        /* timer cadence: deadlines, keepalive, safety wake */
#define QSF_IO_MS           1000000ll    /* nanoseconds per millisecond */
#define QSF_IO_CLOSE_NS     500000000ll  /* an orderly close may take this long */
#define QSF_IO_PAUSE_NS     2000000000ll /* qsf_pause waits this long at most */
#define QSF_IO_WATERMARK_NS 1000000ll    /* .ack-watermark writes: at most this often */
/* The timer for a pending watermark write: the tick may come QSF_WS_TICK_EARLY_US
 * early (ws.h), and must still come after the interval. */
#define QSF_IO_WATERMARK_TICK_US (QSF_IO_WATERMARK_NS / 1000 + QSF_WS_TICK_EARLY_US)
#define QSF_IO_DAMAGED_KEPT      16 /* frames given up for a CRC mismatch, remembered */

/* The connection state machine (state.c draws it). */
enum qsf_io_state {
    QSF_IO_WAIT,       /* no connection; the next attempt is due at next_attempt_ns */
    QSF_IO_CONNECTING, /* TCP, TLS and the upgrade under way */
    QSF_IO_OPEN,       /* upgraded: sending and receiving */
    QSF_IO_CLOSING,    /* we are closing it; conn.why says what comes after */
    QSF_IO_PAUSED,     /* qsf_pause: no connection, no attempts */
    QSF_IO_TERMINAL,   /* the latch is set: no connection, no attempts */
    QSF_IO_STOPPED,    /* no attempts any more (stopping, or the initial connect gave up) */
    QSF_IO_NSTATES
};

/* Why we close a connection, which decides the state after it. */
enum qsf_close_why {
    QSF_WHY_NONE,     /* the peer closed or the connection was lost */
    QSF_WHY_RETRY,    /* reconnect after conn.retry_delay_ms */
    QSF_WHY_OTHER,    /* another host first (the host was demoted), after the delay */
    QSF_WHY_TERMINAL, /* the latch is set */
    QSF_WHY_PAUSE,
    QSF_WHY_STOP,
};

/* What an event asks of the connection. */
typedef enum qsf_verdict_kind {
    QSF_V_CONTINUE, /* nothing changes */
    QSF_V_RETRY,    /* close; reconnect (the same round) after the backoff */
    QSF_V_OTHER,    /* close; demote the host, try another first, after the backoff */
    QSF_V_TERMINAL, /* the latch was set: close, no further attempts */
} qsf_verdict_kind;

/* How long the reconnect after a failed connection waits (backoff.h). */
typedef enum qsf_pace {
    QSF_PACE_NONE,    /* an attempt failed: the next host of the round at once */
    QSF_PACE_LOSS,    /* the connection was lost: the first reconnect is immediate */
    QSF_PACE_REFUSAL, /* the server refused something: back off from the start */
    QSF_PACE_LONGEST, /* nothing will change soon: reconnect_max_backoff_millis */
} qsf_pace;

typedef struct qsf_verdict {
    qsf_verdict_kind kind;
    qsf_pace pace;
    bool abort; /* drop at once (the frame was lost on the wire) instead of CLOSE 1000 */
} qsf_verdict;

static inline qsf_verdict qsf_v_continue(void) {
    return (qsf_verdict){QSF_V_CONTINUE, QSF_PACE_LOSS, false};
}

static inline qsf_verdict qsf_v_terminal(void) {
    return (qsf_verdict){QSF_V_TERMINAL, QSF_PACE_LOSS, false};
}

typedef struct qsf_send_frame {
    uint8_t *buf; /* qsf_ws_pre() bytes of headroom, then the payload */
    size_t len;
} qsf_send_frame;

typedef struct qsf_io_shared {
    atomic_bool wake_pending;
    atomic_int stop_req, pause_req;
    _Atomic int64_t highest_ok, max_batch;
    atomic_int connected, paused, ever_connected, durable_on;
    _Atomic uint64_t frames_sent, frames_replayed, acks, durable_acks, durable_trims, server_errors,
        reconnect_attempts, reconnects_ok, connections_lost, liveness_timeouts;
    _Atomic uint64_t loop_turns;  /* turns of the I/O loop (qsf_io_loop_turns) */
    _Atomic uint64_t empty_waits; /* of them, waits that found nothing to do */
    _Atomic uint64_t spins;       /* spins begun after a turn with work (qsf_io_spins) */
    atomic_int waiters;
    atomic_int last_error_code; /* QSF_E_* of the last error record queued */
    pthread_mutex_t mu;         /* everything below, and the progress condition */
    pthread_cond_t cv;
    int init_state; /* 0 pending, 1 connected, -1 failed */
    qsf_errinfo init_err;
    char cur_host[262];
    char last_error[256];
    int64_t down_since_us;
    uint64_t attempts_since_down;
    bool pause_applied; /* the I/O thread reached PAUSED */
} qsf_io_shared;

/* Why the open connection ends, noted by whoever decides it (the first
 * reason stands) and reported by notify.c once it has ended. */
typedef struct qsf_conn_end {
    bool set;
    bool logged;    /* an error record's line said it already (qsf_io_report) */
    int level;      /* of that line */
    int code;       /* qsf_event.code: 0 in order, else QSF_E_* */
    char text[512]; /* qsf_event.cause */
} qsf_conn_end;

typedef struct qsf_io_loop {
    enum qsf_io_state st;
    int64_t next_attempt_ns, init_deadline_ns;
    int prev_host;  /* the host of the last connection that opened, -1 */
    bool attempted; /* an attempt was made: every later one counts as a reconnect attempt */
    qsf_hosts hosts;
    qsf_poison poison;
    qsf_backoff backoff;   /* every reconnect's delay; reset by progress only */
    bool down_reported;    /* this outage was reported (record + WARN); progress ends it */
    int quiet_closes;      /* orderly closes in a row that confirmed nothing (conn.c) */
    int outage_level;      /* the loudest line about the outage so far: the reconnect's level */
    int64_t down_since_ns; /* when the last connection ended */
    char down_cause[160];  /* ... with this cause: a new cause is reported again */
    int durable_gaps;      /* hosts of this round that did not grant durable ack */
    int role_rounds;       /* rounds in a row in which every host was role-rejected (421) */
    /* a drainer's escalation budgets (qsf_io_opts.drainer) */
    int gap_streak, cap_gap_streak;
    int64_t gap_since_ns, cap_gap_since_ns;
    /* the highest FSN any connection of this sender sent (at start, the slot's
     * recovered published FSN: a previous process may have sent those): a frame
     * at or below it that goes out is a resend, counted in frames_replayed */
    int64_t highest_sent_fsn;
    /* frames given up for a CRC mismatch (send.c), the last QSF_IO_DAMAGED_KEPT */
    int64_t damaged[QSF_IO_DAMAGED_KEPT];
    uint32_t n_damaged;
    int64_t last_warn_ns; /* reconnect warning throttle */
    /* the progress watch (progress.c) */
    int64_t seen_ok, seen_acked; /* the watermarks at the last look */
    int64_t progress_ns;         /* when they last moved, or nothing waited */
    int64_t stuck_step_ms, stuck_next_ns;
    int64_t wm_write_ns;         /* when ackedFsn was last written to .ack-watermark */
    bool wm_pending;             /* an advance not written yet: the next tick writes it */
    const qsf_fsn_span *retired; /* flushes recovery gave up (the ring's), sorted */
    uint32_t n_retired, next_retired;
    uint8_t *sbuf; /* a ring frame copied behind the ws headroom */
    size_t scap;
    qsf_qwp_encoder *enc; /* catch-up frames */
} qsf_io_loop;

typedef struct qsf_conn {
    int host; /* index into addrs of the current or last attempt, -1 before the first */
    bool durable, sent_data, cursor_ok;
    bool accepted;         /* an OK arrived on it (docs/PROTOCOL.md §9.3) */
    bool progressed;       /* ... and one confirmed ring frames not confirmed before */
    int64_t err_wire;      /* wireSeq of the first error on it, -1 */
    int64_t replay_target; /* frames up to it were unacknowledged at the upgrade (REPLAY_DONE) */
    int64_t replay_from;   /* the first of them (ackedFsn + 1 at the upgrade) */
    uint64_t replayed;     /* ... sent so far on this connection */
    bool replaying;        /* REPLAY_DONE is owed */
    qsf_ws_hs hs;          /* what the upgrade negotiated */
    qsf_conn_end end;
    int64_t last_sent_fsn;
    int64_t last_send_ns;
    int64_t deadline_ns; /* of the attempt, or of our close */
    /* liveness (live.c) */
    int64_t last_rx_ns;      /* anything received: a message or a PONG */
    int64_t last_ping_ns;    /* our last PING */
    int64_t await_since_ns;  /* an answer is owed since then (0: none) */
    int64_t ack_since_ns;    /* frames unacknowledged since then, without an OK (0: none) */
    bool ping_due;           /* a PING was asked for; the next writable callback sends it */
    int64_t frozen_since_ns; /* silent, its host acknowledging: waited for since (0: no) */
    int64_t gone_since_ns;   /* silent, its host not acknowledging since (0: no) */
    uint32_t dict_known;     /* symbol ids the server knows on it */
    qsf_wiremap map;
    qsf_durack *dur;
    qsf_ring_cursor cur;
    qsf_send_frame *catchup;
    size_t n_catchup, next_catchup, cap_catchup;
    enum qsf_close_why why;
    qsf_pace pace; /* of the reconnect after our close */
} qsf_conn;

struct qsf_io {
    qsf_io_opts o;
    qsf_io_addr *addrs;
    char *strs; /* copies of every string of o */
    qsf_ring *ring;
    qsf_inbox *inbox;
    qsf_latch *latch;
    const qsf_ws_ops *ws_ops;
    qsf_ws *ws;
    pthread_t thr;
    bool thr_started, subscribed;
    qsf_io_shared x;
    qsf_io_loop l;
    qsf_conn c;
};

/* ---- io.c ---- */
int64_t qsf_io_now_ns(void);
void qsf_io_bump(_Atomic uint64_t *c);
/* Wakes qsf_io_wait callers (takes the lock only when someone waits). */
void qsf_io_signal_progress(qsf_io *io);
const char *qsf_io_host_name(const qsf_io *io, int i, char *buf, size_t cap);

/* ---- state.c ---- */
/* The one place the state changes: checks the transition, logs it at DEBUG,
 * and has notify.c tell the application. */
void qsf_io_set_state(qsf_io *io, enum qsf_io_state to);
const char *qsf_io_state_name(enum qsf_io_state s);

/* ---- notify.c ---- */
/* After the state changed from `from` to `to` (set_state only): the
 * bookkeeping of a connection that opened or ended (qsf_stats.connected,
 * current_host, reconnects), its log line and connection event. */
void qsf_io_notify(qsf_io *io, enum qsf_io_state from, enum qsf_io_state to);
/* The open connection ends for this reason (the first one noted stands);
 * `logged`: a line said it already. Nothing when no connection is open. */
void qsf_io_end_cause(qsf_io *io, int code, bool logged, int level, const char *text);
/* An error record was queued: while a connection is open it is why it ends
 * (every such record comes with a verdict that closes it); while none is,
 * the outage got at least that loud. */
void qsf_io_noted_record(qsf_io *io, const qsf_error_record *r, int code);
/* A ring frame went out, or nothing is left to send: the replay may be done. */
void qsf_io_replay_progress(qsf_io *io);

/* ---- report.c ---- */
void qsf_io_record_init(qsf_io *io, qsf_error_record *r, int cat, int status, int64_t wire,
                        int64_t from, int64_t to);
/* Queues a record for the application; `code` (0: derived) is remembered for
 * qsf_stats.last_error_code. */
void qsf_io_report(qsf_io *io, const qsf_error_record *r, int code);
void qsf_io_unacked_span(qsf_io *io, int64_t *from, int64_t *to);
void qsf_io_set_last_error(qsf_io *io, const char *msg);
/* A connection failed or no endpoint can be reached: an error record of
 * category CONNECTION for the unacknowledged span (the inbox logs it at WARN)
 * and the status line's last error. */
void qsf_io_report_connection(qsf_io *io, const char *msg);
/* A connection was lost or found dead: reported as above once per outage
 * (until progress); a repetition is logged at DEBUG with its DISCONNECTED
 * event, and is the status line's last error. */
void qsf_io_report_outage(qsf_io *io, const char *msg);
/* Progress, or a connection with nothing to confirm: the outage is over, the
 * next failure is reported again. */
void qsf_io_outage_over(qsf_io *io);
/* Appends to a lost connection's message the frames it sent that were not
 * confirmed: the server may have committed them, and they are replayed. */
void qsf_io_inflight_note(qsf_io *io, char *buf, size_t cap);
/* Latches a terminal error (the record is queued before anyone can see the
 * latch) and returns the verdict that ends the connection. */
qsf_verdict qsf_io_latch(qsf_io *io, int code, const qsf_error_record *rec);
qsf_verdict qsf_io_latch_violation(qsf_io *io, int code, const char *msg);
/* The initial connect (modes off/on) finished one way or the other. */
void qsf_io_init_outcome(qsf_io *io, int state, int code, const char *msg);
/* Latch subscriber (any thread). */
void qsf_io_on_latched(void *user, int code);

/* ---- conn.c ---- */
void qsf_conn_init(qsf_conn *c);
void qsf_conn_free(qsf_io *io);
/* Applies a verdict to the open connection. */
void qsf_conn_apply(qsf_io *io, qsf_verdict v);
/* Closes the connection (or aborts the attempt) for `why`. */
void qsf_conn_close(qsf_io *io, enum qsf_close_why why, bool abort);
/* WAIT: the next attempt is due at once or after delay_ms. */
void qsf_conn_schedule(qsf_io *io, int64_t delay_ms);
void qsf_conn_start_attempt(qsf_io *io);
/* Leaves for `why` (pause, terminal, stop): closes what is open, or settles
 * at once when nothing is. */
void qsf_conn_leave(qsf_io *io, enum qsf_close_why why);
/* The latch is set: close whatever is open, no further attempts. */
void qsf_conn_enter_terminal(qsf_io *io);
/* Deadlines of the attempt and of our close. */
void qsf_conn_tick(qsf_io *io, int64_t now);
/* Fills the connection events of the ws hooks (wake and tick are io.c's). */
void qsf_conn_hooks(qsf_ws_hooks *h);

/* ---- send.c ---- */
/* The catch-up frames registering ids [0, D) (none in self-sufficient mode). */
int qsf_send_build_catchup(qsf_io *io, qsf_errinfo *err);
void qsf_send_free_catchup(qsf_conn *c);
/* Writable: sends what is due, a bounded number of frames. */
qsf_verdict qsf_send_some(qsf_io *io);
/* Durable keepalive PING while confirmations are pending (docs/PROTOCOL.md §8.6). */
void qsf_send_keepalive(qsf_io *io, int64_t now);
/* Whether the connection has more to send than it sent. */
bool qsf_send_due(const qsf_io *io);

/* ---- ack.c ---- */
qsf_verdict qsf_ack_message(qsf_io *io, const uint8_t *p, size_t n);
/* The first frame not confirmed by an OK, max(ackedFsn, highestOk) + 1, or -1
 * when every published frame is. */
int64_t qsf_ack_head_of_line(const qsf_io *io);
/* A strike against fsn (none for -1); true when it escalated to poison (the
 * latch is set). */
bool qsf_ack_strike(qsf_io *io, int64_t fsn);
/* A connection ends lost or dead: a strike against its last frame sent, which
 * escalates only once the server accepted frames during the run
 * (docs/PROTOCOL.md §9.3); true when it escalated to poison. Before the
 * connection is reset. */
bool qsf_ack_loss(qsf_io *io);
/* Retires the flushes recovery gave up once everything before them is acknowledged. */
void qsf_ack_retire_given_up(qsf_io *io);
bool qsf_ack_given_up(const qsf_io *io, int64_t fsn);
/* A pending .ack-watermark write, if one is owed. */
void qsf_ack_persist_pending(qsf_io *io);

/* ---- progress.c ---- */
/* Every tick: the "no progress for T" WARN and event while frames wait for
 * confirmation and none comes. */
void qsf_progress_tick(qsf_io *io, int64_t now);

/* ---- live.c ---- */
void qsf_live_opened(qsf_io *io, int64_t now);
/* Something arrived from a server waited for as frozen: it answers again
 * (logged before what arrived is acted on), the ack deadline starts over. */
void qsf_live_thaw(qsf_io *io, int64_t now);
/* A message or a PONG arrived. */
void qsf_live_received(qsf_io *io, int64_t now);
/* A frame was sent. */
void qsf_live_sent(qsf_io *io, int64_t now);
/* Asks for a PING (liveness or durable keepalive): the next writable callback
 * sends it. */
void qsf_live_request_ping(qsf_io *io);
/* The PING asked for went out. */
void qsf_live_pinged(qsf_io *io, int64_t now);
/* An OK confirmed frames: the acknowledgement clock restarts, or stops. */
void qsf_live_acked(qsf_io *io, int64_t now);
/* Open connection, every tick: a PING when it is due, and the verdict of the
 * deadlines. */
qsf_verdict qsf_live_tick(qsf_io *io, int64_t now);

#endif
