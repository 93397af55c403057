/* Fault scripts: parsing of the grammar documented in docs/QWP-SINK.md and the
 * matching of faults to connections and trigger points.
 *
 * A fault is one line of space-separated tokens, the action first:
 *
 *   close=1011:going down conn=2 after=5
 *   └─ action=arg ──────┘ └─ selector ┘ └─ trigger ┘
 *
 * Connections are numbered from 1 in accept order. */
#ifndef QSINK_FAULT_H
#define QSINK_FAULT_H

#include <stddef.h>
#include <stdint.h>

enum fault_action {
    FA_CLOSE = 1,
    FA_RST,
    FA_FIN,
    FA_STALL,
    FA_SILENT,
    FA_DELAY_OK,
    FA_WITHHOLD_OK,
    FA_STATUS,
    FA_REJECT,
    FA_UPGRADE,
    FA_FRAGMENT,
    FA_MALFORMED,
    FA_FORGED_OK,
    FA_RESTART,
    FA_RANDOM,
    FA_HALF_FRAME,
    FA_WIDE_DURABLE,
};

enum upgrade_variant { UV_NO_VERSION = 1, UV_VERSION, UV_NO_DURABLE, UV_BATCH, UV_NO_BATCH };

enum malformed_kind {
    MK_BAD_LENGTH = 1,
    MK_TRAILING,
    MK_TEXT,
    MK_MASKED,
    MK_RSV,
    MK_BAD_CLOSE,
    MK_OPCODE,
    MK_CTL_OPCODE,
    MK_CTL_FRAGMENTED,
    MK_CTL_LEN16,
    MK_CTL_LEN64,
    MK_CONT,
    MK_NO_FIN,
    MK_LEN_B63,
    MK_EMPTY,
    MK_CLOSE_UTF8,
};

/* Where a fault fires: at the upgrade, once `at` binary frames were received,
 * once `at` inbound WebSocket bytes were received, or for the frame whose wireSeq
 * is `at` (-1 = every frame). */
enum fault_trigger { FT_UPGRADE = 1, FT_FRAMES, FT_BYTES, FT_SEQ };

struct fault {
    int action;
    int code;       /* close code, status byte, HTTP status, ms, bytes, variant, kind */
    int64_t arg;    /* batch size, forged seq, fragment PING flag, random seed */
    double rate;    /* random: probability per frame */
    char text[256]; /* close reason, status message, version text */
    char role[32];  /* reject=421: X-QuestDB-Role ("" = leave out) */
    char zone[32];  /* reject=421: X-QuestDB-Zone ("" = leave out) */
    int conn_from;  /* first connection (1-based) */
    int conn_to;    /* last connection, 0 = no upper bound */
    int trig;
    int64_t at;
    int times;    /* firings left, -1 = unlimited */
    uint64_t rng; /* random: generator state */
};

struct fault_set {
    struct fault *f;
    int n;
};

/* Parses one fault line and appends it. Returns 0, or -1 with a message naming
 * the bad token in err. Lines that are empty or start with '#' are ignored. */
int fault_parse(struct fault_set *fs, const char *line, char *err, size_t cap);

/* Parses a file of fault lines. */
int fault_parse_file(struct fault_set *fs, const char *path, char *err, size_t cap);

void fault_clear(struct fault_set *fs);

/* Copies into out (up to max) the faults that fire for connection `conn` at
 * trigger `trig` with value `v`, using up one of their firings. Random faults
 * fire at FT_SEQ with their probability and come back as a concrete action. */
int fault_take(struct fault_set *fs, int conn, int trig, int64_t v, struct fault *out, int max);

/* The smallest FT_BYTES threshold above `bytes` for this connection, or -1. */
int64_t fault_next_bytes(const struct fault_set *fs, int conn, int64_t bytes);

#endif
