/* qwp-sink embedding API: a faithful QWP ingress endpoint (docs/QWP-SINK.md §2)
 * that tests start in-process on 127.0.0.1 (or ::1), port 0.
 *
 * Threads: qsink_start() runs one event-loop thread. Every other function may be
 * called from any thread at any time between qsink_start() and qsink_stop();
 * they take the sink's lock. Strings passed in are copied. */
#ifndef QSINK_SINK_H
#define QSINK_SINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qsink qsink;

enum qsink_ack_mode {
    QSINK_ACK_BATCHED = 0,  /* cumulative OK every 8 frames and at the end of each read */
    QSINK_ACK_PER_FRAME = 1 /* one OK per committing frame */
};

/* Options; zero-initialise and set what you need. */
typedef struct qsink_opts {
    const char *host;        /* "127.0.0.1" (default) or "::1" */
    uint16_t port;           /* 0 = any free port (see qsink_port) */
    const char *auth_basic;  /* "user:password": require Basic auth */
    const char *auth_bearer; /* token: require Bearer auth */
    const char *role;        /* X-QuestDB-Role; default STANDALONE; REPLICA and
                                PRIMARY_CATCHUP refuse upgrades with 421 */
    const char *zone;        /* X-QuestDB-Zone on a 421 */
    size_t recv_buf;         /* receive buffer (frame limit, close 1009); 0 = 2 MiB */
    long max_batch;          /* 0 = min(recv_buf - 14, 16 MiB); < 0 = header not sent;
                                > 0 = this value */
    int durable;             /* grant durable acks when asked */
    int durable_lag_commits; /* durable watermark lags this many commits per table */
    int durable_lag_ms;      /* ... and commits younger than this */
    int ack_mode;            /* enum qsink_ack_mode */
    int legacy;              /* keep processing after an error (older servers) */
    int no_values;           /* count rows but do not keep values ... */
    const char *key_column;  /* ... except this column's (qsink_duplicates,
                                qsink_first_out_of_order on large volumes) */
    int record_payloads;     /* keep a copy of every received frame */
    int no_frame_log;        /* keep no per-frame log (qsink_frames returns 0) */
    const char *tls_cert;    /* PEM certificate (chain): serve wss */
    const char *tls_key;     /* PEM private key */
    const char *append_path; /* append committed rows as JSON lines to this file; they
                                are written to it before any ack that covers them */
    int append_sync;         /* ... and fdatasync'ed before that ack */
    int ack_only;            /* benchmarks: a message of one table is acknowledged after
                                reading its header and its table's name and row count,
                                without decoding or validating it (no values, no
                                dictionary, no schema); others are decoded as usual */
} qsink_opts;

/* Starts a sink. Returns NULL on failure with a message in err (if non-NULL). */
qsink *qsink_start(const qsink_opts *opts, char *err, size_t errcap);

/* Stops the loop, closes every connection gracefully and frees. NULL is a no-op. */
void qsink_stop(qsink *s);

/* The bound port. */
uint16_t qsink_port(const qsink *s);

/* Adds a fault (grammar in docs/QWP-SINK.md). Returns 0, or -1 with a message. */
int qsink_fault(qsink *s, const char *line, char *err, size_t errcap);

/* Removes every fault and ends the per-connection fault states already applied. */
void qsink_fault_clear(qsink *s);

/* Drops every connection and dictionary (no CLOSE frame); keeps stored rows. */
void qsink_restart(qsink *s);

/* Counters. */
typedef struct qsink_stats {
    int64_t accepted;     /* TCP connections accepted */
    int64_t upgrades;     /* 101 responses sent */
    int64_t rejected;     /* upgrades refused */
    int64_t frames;       /* binary frames received */
    int64_t bytes;        /* WebSocket bytes received */
    int64_t rows;         /* committed rows, all tables */
    int64_t oks;          /* OK responses sent */
    int64_t errors;       /* error responses sent */
    int64_t durable_acks; /* durable acks sent */
    int64_t closes;       /* CLOSE frames sent */
    int64_t open;         /* connections currently open */
} qsink_stats;

void qsink_get_stats(qsink *s, qsink_stats *out);

/* Committed rows of a table (name compared case-insensitively); 0 if unknown. */
int64_t qsink_rows(qsink *s, const char *table);

/* The commit model (docs/QWP-SINK.md §2): commits of a table so far (its
 * seqTxn: a deferred group committing rows of the table counts once), and the
 * rows of the table staged by deferred frames on open connections, not
 * committed (a disconnect discards them). 0 for an unknown table. */
int64_t qsink_commits(qsink *s, const char *table);
int64_t qsink_staged_rows(qsink *s, const char *table);

/* Number of tables, and the name of table i (in creation order). */
int qsink_table_count(qsink *s);
int qsink_table_name(qsink *s, int i, char *out, size_t cap);

/* Text of one committed cell ("null" for a null; designated timestamp column is
 * "timestamp"). Returns 0, or -1 when the table/row/column does not exist. */
int qsink_cell(qsink *s, const char *table, int64_t row, const char *column, char *out, size_t cap);

/* Column type code (docs/PROTOCOL.md §5.2), or -1. */
int qsink_column_type(qsink *s, const char *table, const char *column);

/* Rows whose key column value was already seen in an earlier row (null keys
 * are not counted). -1 if the table or column does not exist or its values are
 * not kept (no_values without key_column). */
int64_t qsink_duplicates(qsink *s, const char *table, const char *key_column);

/* First row whose key is not greater than the previous row's key (numbers by
 * value, other types by their text), or -1 if the keys strictly increase; -2 if
 * the table or column does not exist or its values are not kept. */
int64_t qsink_first_out_of_order(qsink *s, const char *table, const char *key_column);

/* One received binary frame. */
typedef struct qsink_frame {
    int64_t wire_seq;
    uint32_t size;  /* whole message bytes */
    uint8_t flags;  /* QWP header flags, 0 if shorter than a header */
    uint8_t status; /* the status this frame got: 0 OK or committed later, else error;
                       0xFF = not answered (pipeline broken, deferred and discarded) */
} qsink_frame;

/* Frames received on connection `conn` (1-based accept order): fills up to cap
 * entries and returns the total count (-1 for an unknown connection). */
int64_t qsink_frames(qsink *s, int conn, qsink_frame *out, size_t cap);

/* A copy of frame i of connection conn (needs record_payloads). Returns its size,
 * or -1. Copies min(size, cap) bytes. */
int64_t qsink_frame_payload(qsink *s, int conn, int64_t i, uint8_t *out, size_t cap);

/* One error response sent. */
typedef struct qsink_error {
    int conn;
    int64_t wire_seq;
    uint8_t status;
    char msg[256];
} qsink_error;

/* Errors sent, in order: fills up to cap and returns the total. */
int64_t qsink_errors(qsink *s, qsink_error *out, size_t cap);

/* The last upgrade request head received (for header assertions). */
int qsink_last_request(qsink *s, char *out, size_t cap);

/* Waits until the table has at least n committed rows / at least n connections
 * were accepted / at least n upgrades were answered with 101 / at least n frames
 * were received. timeout_ms bounds a stall, not the wait: each change of the
 * count restarts it. Returns 0, or -1 when the count stood still for
 * timeout_ms. */
int qsink_wait_rows(qsink *s, const char *table, int64_t n, int timeout_ms);
int qsink_wait_connections(qsink *s, int64_t n, int timeout_ms);
int qsink_wait_upgrades(qsink *s, int64_t n, int timeout_ms);
int qsink_wait_frames(qsink *s, int64_t n, int timeout_ms);
/* Waits until no connection is open (e.g. the sink saw a client go away, so
 * its uncommitted rows are gone). 0, or -1 when the number of open
 * connections stood still for timeout_ms. */
int qsink_wait_idle(qsink *s, int timeout_ms);

/* The one-line JSON summary (connections, frames, rows per table, errors).
 * Returns the length it needs (like snprintf). */
int qsink_summary_json(qsink *s, char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
