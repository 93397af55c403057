/* Rows per table, as a test needs to see them.
 *
 * A store is a list of tables; each table has a schema (column name + QWP type,
 * columns in first-seen order), a row count, a per-table seqTxn counter with the
 * time of every commit (for durable-ack lag), and, when values are kept, one
 * cell per row per column:
 *
 *   table ─┬─ col[0] name/type ── cells[0..rows)   (i64 / f64 / bytes in arena)
 *          ├─ col[1] ...                            a column added later is null
 *          └─ arena: string and raw bytes            for the rows before it
 *
 * The sink keeps one committed store and one staging store per connection
 * (rows of an open deferred group); a commit merges staging into committed. */
#ifndef QSINK_STORE_H
#define QSINK_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "appendlog.h"
#include "buf.h"
#include "msg.h"

/* One value, 16 bytes; msg_value_kind(column type) says which member is used. */
struct scell {
    union {
        int64_t i;
        double d;
        struct {
            uint32_t off, len; /* bytes in the table arena */
        } b;
    } v;
    uint8_t null;
};

struct scol {
    char name[128];
    uint8_t type;
    uint8_t kept; /* values kept: all columns, or only the key column */
    struct scell *cells;
    size_t cap;
};

struct scommit {
    int64_t txn;
    int64_t ms;
};

struct stable {
    char name[128];
    int64_t rows;
    int64_t seq_txn; /* last committed txn, 0 before the first commit */
    struct scol *cols;
    int ncols;
    struct scommit *commits;
    size_t ncommits, capcommits;
    struct buf arena;
};

struct store {
    struct stable **t;
    int n;
    int keep_values;
    const char *key;          /* with keep_values 0: keep the values of this column only */
    int log_commits;          /* keep commit times for durable-ack lag */
    struct appendlog *append; /* committed rows as JSON lines, or NULL */
};

void store_init(struct store *s, int keep_values, const char *key);
void store_free(struct store *s);
void store_clear(struct store *s); /* drops every table */

struct stable *store_find(const struct store *s, const char *name, size_t len);

/* SCHEMA_MISMATCH check: 0 if every column of t has the type the store knows for
 * it (or is new); else -1 with a message naming the table, column and types. */
int store_check_schema(const struct store *s, const struct msg_table *t, char *err, size_t cap);

/* Appends the rows of a decoded table block. 0, or -1 on OOM. */
int store_add(struct store *s, const struct msg_table *t);

typedef void (*store_commit_cb)(void *user, const struct stable *t);

/* Moves every staged table into dst (one commit per table: seq_txn + 1, logged
 * with now_ms), then empties staging. For each committed table calls
 * on_commit(user, table). */
int store_commit(struct store *dst, struct store *staging, int64_t now_ms,
                 store_commit_cb on_commit, void *user);

/* The same for the tables of one message when nothing is staged: appends and
 * commits them in place (no staging copy). Tables without rows are skipped.
 * Only when store_can_commit_direct (the append file needs values dst may not
 * keep; staged rows always have them). */
int store_can_commit_direct(const struct store *dst);
int store_commit_direct(struct store *dst, const struct msg_table *t, int n, int64_t now_ms,
                        store_commit_cb on_commit, void *user);

int64_t store_rows_total(const struct store *s);

/* Appends rows [first_row, rows) of t to b as JSON lines (needs values).
 * 0, or -1 on OOM. */
int stable_append_json(struct buf *b, const struct stable *t, int64_t first_row);

/* Appends s to b as a JSON string literal (quotes and escapes included).
 * 0, or -1 on OOM. */
int json_string(struct buf *b, const char *s);

/* Column index by name (case-insensitive), or -1. */
int stable_col(const struct stable *t, const char *name);

/* The value of one cell as text ("null" for a null). Returns 0, or -1 if the
 * row or column is out of range or values are not kept. */
int stable_cell_text(const struct stable *t, int64_t row, int col, char *out, size_t cap);

/* Durable watermark: the seqTxn of the newest commit that is at least lag_count
 * commits behind the latest and at least lag_ms old. 0 = nothing durable. The
 * commit log (kept only with log_commits) is trimmed to what can still matter. */
int64_t stable_durable_txn(struct stable *t, int lag_count, int64_t lag_ms, int64_t now_ms);

#endif
