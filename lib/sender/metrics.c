/* qsf_stats as text: one JSON object, and the Prometheus text exposition
 * format 0.0.4 (docs/METRICS.md). Both are written from one snapshot and one
 * table of fields, so they always hold the same numbers under the same names
 * (Prometheus adds the qsf_ prefix, and _total to counters).
 *
 * Prometheus lines (one family per field):
 *
 *   # HELP qsf_acks_total OK responses processed.
 *   # TYPE qsf_acks_total counter
 *   qsf_acks_total{sender_id="main"} 1234
 */
#include "sender/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum kind { COUNTER, GAUGE };
enum type { U64, I64, INT };

typedef struct field {
    const char *name; /* the qsf_stats field and JSON key */
    enum kind kind;
    enum type type;
    size_t off;
    const char *help;
} field;

#define F(k, t, f, h)                                                                              \
    { #f, k, t, offsetof(qsf_stats, f), h }

static const field FIELDS[] = {
    F(COUNTER, U64, frames_sent, "Binary data frames sent (catch-up frames not included)."),
    F(COUNTER, U64, frames_replayed, "Frames sent again after a reconnect (possible duplicates)."),
    F(COUNTER, U64, acks, "OK responses processed."),
    F(COUNTER, U64, durable_acks, "Durable-ack responses processed."),
    F(COUNTER, U64, durable_trim_advances, "Advances of the acked FSN caused by durable acks."),
    F(COUNTER, U64, server_errors, "Server rejections, any policy."),
    F(COUNTER, U64, reconnect_attempts, "Connection attempts after the first one."),
    F(COUNTER, U64, reconnects_succeeded, "Successful reconnects."),
    F(COUNTER, U64, backpressure_stalls, "Append calls that had to wait for ring space."),
    F(COUNTER, U64, error_notifications_dropped, "Error notifications dropped (inbox full)."),
    F(COUNTER, U64, error_notifications_delivered, "Error notifications delivered to a handler."),
    F(GAUGE, I64, published_fsn, "Highest FSN published into the ring (-1: none)."),
    F(GAUGE, I64, acked_fsn, "Highest FSN acknowledged (-1: none)."),
    F(GAUGE, I64, highest_ok_fsn, "Highest FSN the server answered OK (-1: none)."),
    F(GAUGE, INT, connected, "1 while a connection is up."),
    F(GAUGE, INT, paused, "1 while the wire is paused (qsf_pause)."),
    F(GAUGE, INT, ever_connected, "1 once a connection was ever up."),
    F(GAUGE, U64, pending_frames, "Published frames not acknowledged yet."),
    F(GAUGE, U64, pending_bytes, "Bytes of the frames not acknowledged yet."),
    F(GAUGE, I64, oldest_unacked_age_ms,
      "Age in ms of the oldest unacknowledged frame (-1: nothing pending)."),
    F(GAUGE, INT, last_error_code, "QSF_E_* code of the last reported error (0: none)."),
    F(GAUGE, INT, active_drainers, "Orphan drainers working on a slot."),
    F(COUNTER, U64, drainers_succeeded, "Orphan slots fully drained."),
    F(COUNTER, U64, drainers_failed, "Orphan slots given up on (marked .failed)."),
    F(COUNTER, U64, connections_lost, "Connections that ended without an orderly close."),
    F(COUNTER, U64, liveness_timeouts, "Lost connections that qsf found dead."),
    F(COUNTER, U64, data_losses, "Places where accepted data was given up."),
    F(COUNTER, U64, frames_lost, "Frames given up, where they could be counted."),
    F(COUNTER, U64, rows_lost, "Rows given up, where they could be counted."),
    F(GAUGE, INT, orphans_queued, "Orphan slots waiting for a drainer."),
    F(GAUGE, INT, failed_slots, "Slots of sf_dir marked .failed (seen at creation or since)."),
    F(GAUGE, INT, terminal_error_code, "QSF_E_* code of the latched terminal error (0: none)."),
    F(COUNTER, U64, events_delivered, "Connection events handed to the event handler."),
    F(COUNTER, U64, events_dropped,
      "Connection events dropped (inbox full, or closed undelivered)."),
};

#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

/* A bounded writer with snprintf's contract: `need` counts every byte the
 * whole text takes, whatever fits. */
typedef struct out {
    char *buf;
    size_t cap, need;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(out *o, const char *fmt, ...) {
    size_t room = o->need < o->cap ? o->cap - o->need : 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(room ? o->buf + o->need : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->need += (size_t) n;
}

static void finish(out *o) {
    if (o->cap)
        o->buf[o->need < o->cap ? o->need : o->cap - 1] = 0;
}

static void put_value(out *o, const qsf_stats *st, const field *f) {
    const char *p = (const char *) st + f->off;
    if (f->type == U64)
        put(o, "%" PRIu64, *(const uint64_t *) p);
    else if (f->type == I64)
        put(o, "%" PRId64, *(const int64_t *) p);
    else
        put(o, "%d", *(const int *) p);
}

/* A string in double quotes, escaped for JSON (json) or for a Prometheus
 * label value (backslash, quote and newline only). */
static void put_quoted(out *o, const char *s, bool json) {
    put(o, "\"");
    for (const unsigned char *c = (const unsigned char *) s; *c; c++) {
        if (*c == '"' || *c == '\\')
            put(o, "\\%c", *c);
        else if (*c == '\n')
            put(o, "\\n");
        else if (json && *c < 0x20)
            put(o, "\\u%04x", *c);
        else
            put(o, "%c", *c);
    }
    put(o, "\"");
}

static const char *sender_id(const qsf_sender *s) {
    return s && s->conf->sender_id ? s->conf->sender_id : "default";
}

QSF_API size_t qsf_stats_json(const qsf_sender *s, char *buf, size_t cap) {
    out o = {buf, buf ? cap : 0, 0};
    qsf_stats st;
    qsf_sender_stats(s, &st);
    put(&o, "{\"sender_id\":");
    put_quoted(&o, sender_id(s), true);
    for (size_t i = 0; i < NFIELDS; i++) {
        put(&o, ",\"%s\":", FIELDS[i].name);
        put_value(&o, &st, &FIELDS[i]);
    }
    put(&o, ",\"current_host\":");
    put_quoted(&o, st.current_host, true);
    put(&o, "}\n");
    finish(&o);
    return o.need;
}

QSF_API size_t qsf_metrics_prometheus(const qsf_sender *s, char *buf, size_t cap) {
    out o = {buf, buf ? cap : 0, 0};
    qsf_stats st;
    qsf_sender_stats(s, &st);
    out label = {NULL, 0, 0}; /* measured once, written per sample */
    char lab[3 * 200 + 32];
    label.buf = lab;
    label.cap = sizeof lab;
    put(&label, "{sender_id=");
    put_quoted(&label, sender_id(s), false);
    put(&label, "}");
    finish(&label);
    for (size_t i = 0; i < NFIELDS; i++) {
        const field *f = &FIELDS[i];
        const char *suffix = f->kind == COUNTER ? "_total" : "";
        put(&o, "# HELP qsf_%s%s %s\n", f->name, suffix, f->help);
        put(&o, "# TYPE qsf_%s%s %s\n", f->name, suffix, f->kind == COUNTER ? "counter" : "gauge");
        put(&o, "qsf_%s%s%s ", f->name, suffix, lab);
        put_value(&o, &st, f);
        put(&o, "\n");
    }
    finish(&o);
    return o.need;
}
