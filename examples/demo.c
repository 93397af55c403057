/* qsf demo: store-and-forward through a server outage.
 *
 * Starts the bundled qwp-sink on a free loopback port, publishes rows of a
 *  trades schema through a store-and-forward sender, takes the sink away for a
 * few seconds midway (every connection dropped, new ones refused) while the
 * producer keeps publishing, brings it back, and prints the throughput, the
 * outage, the frames replayed and the rows lost as counted by the sink.
 *
 *   demo [rows] [sf_dir]      (defaults: 4000000, a fresh directory under /tmp)
 */
#include "qsf.h"
#include "sink.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OUTAGE_MS 2500

static const char *SYMBOLS[] = {"BTC-USD", "ETH-USD",  "SOL-USD", "XRP-USD",
                                "ADA-USD", "DOGE-USD", "DOT-USD", "AVAX-USD"};
static const char *VENUES[] = {"coinbase", "kraken", "bitstamp", "binance-us"};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc, const qsf_errinfo *e) {
    fprintf(stderr, "\ndemo: %s failed: %s: %s\n", what, qsf_err_name(rc), e ? e->msg : "");
    exit(1);
}

/* One trade. Keys are dense so the sink can count what arrived. */
static int add_trade(qsf_sender *s, int64_t id, qsf_errinfo *e) {
    const char *sym = SYMBOLS[id % 8], *venue = VENUES[(id / 8) % 4];
    int rc = qsf_table(s, "trades", 6, e);
    if (!rc)
        rc = qsf_symbol(s, "symbol", 6, sym, strlen(sym), e);
    if (!rc)
        rc = qsf_symbol(s, "side", 4, id % 3 ? "buy" : "sell", id % 3 ? 3 : 4, e);
    if (!rc)
        rc = qsf_col_f64(s, "price", 5, 100.0 + (double) (id % 1000) * 0.25, e);
    if (!rc)
        rc = qsf_col_f64(s, "amount", 6, 0.001 * (double) (1 + id % 5000), e);
    if (!rc)
        rc = qsf_col_i64(s, "trade_id", 8, id, e);
    if (!rc)
        rc = qsf_col_varchar(s, "venue", 5, venue, strlen(venue), e);
    if (!rc)
        rc = qsf_at_micros(s, 1767225600000000ll + id * 10, e);
    return rc;
}

static void progress(qsf_sender *s, int64_t published, double t0, const char *phase) {
    qsf_stats st;
    qsf_stats_get(s, &st);
    double el = now_s() - t0;
    fprintf(stderr,
            "\r%-9s %9" PRId64 " rows  %8.0f rows/s  fsn acked %6" PRId64 " / published %6" PRId64
            "  %-12s  backlog %5" PRIu64 " frames   ",
            phase, published, published / (el > 0 ? el : 1), st.acked_fsn, st.published_fsn,
            st.connected ? "connected" : "disconnected", st.pending_frames);
}

static qsink *start_sink(void) {
    qsink_opts o;
    memset(&o, 0, sizeof o);
    char err[256];
    qsink *k = qsink_start(&o, err, sizeof err);
    if (!k) {
        fprintf(stderr, "demo: cannot start qwp-sink: %s\n", err);
        exit(1);
    }
    return k;
}

static qsf_sender *start_sender(uint16_t port, const char *dir) {
    char conf[1024];
    snprintf(
        conf, sizeof conf,
        "ws::addr=127.0.0.1:%u;sf_dir=%s;sender_id=demo;initial_connect_retry=on;"
        "reconnect_max_backoff_millis=500;sf_max_total_bytes=1g;close_flush_timeout_millis=30000;",
        port, dir);
    qsf_sender *s = NULL;
    qsf_errinfo e;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    if (rc != QSF_OK)
        die("qsf_sender_new", rc, &e);
    return s;
}

/* The outage: starts at a fifth of the rows, ends OUTAGE_MS later. */
typedef struct outage {
    qsink *sink;
    int phase; /* 0 before, 1 during, 2 after */
    double down_at, up_at;
} outage;

static void outage_step(outage *o, int64_t id, int64_t down_row) {
    if (o->phase == 0 && id >= down_row) {
        char err[128];
        qsink_fault(o->sink, "reject=503 conn=1+ times=0", err, sizeof err);
        qsink_restart(o->sink); /* the server goes away */
        o->down_at = now_s();
        o->phase = 1;
        fprintf(stderr, "\n*** sink down: every connection dropped, new ones refused\n");
    } else if (o->phase == 1 && now_s() - o->down_at >= OUTAGE_MS / 1000.0) {
        qsink_fault_clear(o->sink); /* and comes back */
        o->up_at = now_s();
        o->phase = 2;
        fprintf(stderr, "\n*** sink back after %.1f s\n", o->up_at - o->down_at);
    }
}

static void report(qsf_sender *s, qsink *sink, int64_t rows, double t0, double published_at,
                   double done, const outage *o) {
    qsf_stats st;
    qsf_stats_get(s, &st);
    qsf_errinfo e;
    int rc = qsf_close(s, &e);
    if (rc != QSF_OK)
        die("qsf_close", rc, &e);
    int64_t got = qsink_rows(sink, "trades");
    int64_t dups = qsink_duplicates(sink, "trades", "trade_id");
    int64_t unique = got - (dups > 0 ? dups : 0);
    printf("\n\nrows published       %" PRId64 "\n", rows);
    printf("publish rate         %.0f rows/s (%.2f s, outage included)\n",
           rows / (published_at - t0), published_at - t0);
    printf("end-to-end rate      %.0f rows/s (last row acknowledged after %.2f s)\n",
           rows / (done - t0), done - t0);
    printf("outage               %.2f s\n", o->up_at - o->down_at);
    printf("frames sent          %" PRIu64 " (replayed %" PRIu64 ", reconnects %" PRIu64 ")\n",
           st.frames_sent, st.frames_replayed, st.reconnects_succeeded);
    printf("rows at the sink     %" PRId64 " (%" PRId64 " duplicates from replay)\n", got,
           dups > 0 ? dups : 0);
    printf("rows lost            %" PRId64 "\n", rows - unique);
}

int main(int argc, char **argv) {
    int64_t rows = argc > 1 ? atoll(argv[1]) : 4000000;
    char dir[256] = "/tmp/qsf-demo-XXXXXX";
    if (argc > 2)
        snprintf(dir, sizeof dir, "%s", argv[2]);
    else if (!mkdtemp(dir))
        return perror("mkdtemp"), 1;
    outage o = {start_sink(), 0, 0, 0};
    fprintf(stderr, "qwp-sink listening on 127.0.0.1:%u; store-and-forward slot in %s/demo\n",
            qsink_port(o.sink), dir);
    qsf_sender *s = start_sender(qsink_port(o.sink), dir);
    qsf_errinfo e;
    double t0 = now_s(), last = 0;
    for (int64_t id = 0; id < rows; id++) {
        int rc = add_trade(s, id, &e);
        if (rc != QSF_OK)
            die("publishing a row", rc, &e);
        if ((id & 1023) == 0) {
            outage_step(&o, id, rows / 5);
            if (now_s() - last >= 0.25) {
                last = now_s();
                progress(s, id + 1, t0, o.phase == 1 ? "OUTAGE" : "streaming");
            }
        }
    }
    int64_t fsn;
    int rc = qsf_flush(s, &fsn, &e);
    if (rc != QSF_OK)
        die("qsf_flush", rc, &e);
    double published_at = now_s();
    while (qsf_acked_fsn(s) < fsn || o.phase < 2) {
        outage_step(&o, rows, rows / 5);
        progress(s, rows, t0, o.phase == 1 ? "OUTAGE" : "draining");
        usleep(100000);
    }
    double done = now_s();
    progress(s, rows, t0, "done");
    report(s, o.sink, rows, t0, published_at, done, &o);
    int64_t lost =
        rows - (qsink_rows(o.sink, "trades") - qsink_duplicates(o.sink, "trades", "trade_id"));
    qsink_stop(o.sink);
    if (argc <= 2)
        rmdir(dir); /* the drained slot removed its files */
    return lost == 0 ? 0 : 2;
}
