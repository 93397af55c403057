/* Writes the stats of a sender in a known state for check_metrics.py: a
 * store-and-forward sender with no server, paused (so no counter moves),
 * holding FLUSHES unacknowledged frames.
 *
 *   metrics_dump DIR    writes DIR/stats.txt (qsf_stats_get, "name value"
 *                       lines), DIR/stats.json and DIR/metrics.prom, taken
 *                       in that order; exit 0 on success
 */
#include "qsf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSHES 5
#define ROWS    40 /* per flush */

static void die(const char *what, const qsf_errinfo *e) {
    fprintf(stderr, "metrics_dump: %s: %s\n", what, e ? e->msg : "");
    exit(1);
}

static void publish(qsf_sender *s) {
    qsf_errinfo e;
    for (int f = 0; f < FLUSHES; f++) {
        for (int i = 0; i < ROWS; i++) {
            if (qsf_table(s, "t", 1, &e) || qsf_col_i64(s, "k", 1, f * ROWS + i, &e) ||
                qsf_at_micros(s, 1700000000000000ll + f * ROWS + i, &e))
                die("row", &e);
        }
        if (qsf_flush(s, NULL, &e))
            die("qsf_flush", &e);
    }
}

static void write_file(const char *dir, const char *name, const char *text) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        die(p, NULL);
}

/* The struct as the program sees it, for the checker to compare with. */
static void write_struct(const char *dir, const qsf_stats *st) {
    char t[2048];
    snprintf(t, sizeof t,
             "flushes %d\npublished_fsn %" PRId64 "\nacked_fsn %" PRId64 "\npending_frames %" PRIu64
             "\npending_bytes %" PRIu64 "\noldest_unacked_age_ms %" PRId64
             "\nreconnect_attempts %" PRIu64
             "\nlast_error_code %d\nconnected %d\npaused %d\nframes_sent %" PRIu64 "\n",
             FLUSHES, st->published_fsn, st->acked_fsn, st->pending_frames, st->pending_bytes,
             st->oldest_unacked_age_ms, st->reconnect_attempts, st->last_error_code, st->connected,
             st->paused, st->frames_sent);
    write_file(dir, "stats.txt", t);
}

/* Calls f twice: once to measure, once into a buffer of exactly that size. */
static void write_text(const char *dir, const char *name,
                       size_t (*f)(const qsf_sender *, char *, size_t), const qsf_sender *s) {
    size_t need = f(s, NULL, 0) + 256; /* room for a counter that grows meanwhile */
    char *b = malloc(need + 1);
    if (!b)
        die("malloc", NULL);
    size_t got = f(s, b, need + 1);
    if (got > need)
        die("the text outgrew its buffer", NULL);
    write_file(dir, name, b);
    free(b);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: metrics_dump DIR\n");
        return 2;
    }
    char conf[1024];
    /* port 1 of the loopback: nothing listens, every connection is refused */
    snprintf(conf, sizeof conf,
             "ws::addr=127.0.0.1:1;sf_dir=%s;sender_id=metrics-test;auto_flush=off;"
             "initial_connect_retry=async;close_flush_timeout_millis=0;",
             argv[1]);
    qsf_sender *s;
    qsf_errinfo e;
    if (qsf_sender_new(conf, strlen(conf), &s, &e))
        die("qsf_sender_new", &e);
    qsf_pause(s);
    publish(s);
    qsf_stats st;
    qsf_stats_get(s, &st);
    write_struct(argv[1], &st);
    write_text(argv[1], "stats.json", qsf_stats_json, s);
    write_text(argv[1], "metrics.prom", qsf_metrics_prometheus, s);
    int rc = qsf_close(s, &e);
    if (rc != QSF_E_TIMEOUT) /* the frames stay in the slot */
        die("qsf_close", &e);
    return 0;
}
