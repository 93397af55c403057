/* qsf demo: store-and-forward through a server outage.
 *
 * Starts the bundled qwp-sink on a free loopback port, publishes rows of a
 * trades schema through a store-and-forward sender, takes the sink away for a
 * few seconds midway (every connection dropped, new ones refused) while the
 * producer keeps publishing, brings it back, and prints the throughput, the
 * outage, the frames replayed and the rows lost as counted by the sink. With
 * --conf it publishes to a real QuestDB instead and counts there (USAGE).
 * The exit code is the summary's verdict (USAGE lists them).
 *
 * Not built from an install: it embeds the bundled sink (tools/qwp-sink/sink.h
 * and its library, which are not installed) and demo_exec.c. Build it in the
 * source tree: `ninja -C build examples/demo`, or scripts/demo.sh.
 */
#include "demo_exec.h"
#include "qsf.h"
#include "sink.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OUTAGE_MS 2500

static const char USAGE[] =
    "usage: demo [ROWS [SF_DIR]]\n"
    "       demo --conf CONNECT_STRING [--exec HOST:PORT | --no-count] [ROWS]\n"
    "\n"
    "Publishes ROWS trades (default 4000000) through a qsf sender and says how many\n"
    "arrived. Without --conf: into the bundled qwp-sink on a free 127.0.0.1 port,\n"
    "through a store-and-forward slot in SF_DIR (default: a new directory under /tmp),\n"
    "with a 2.5 s outage of the sink a fifth of the way in; the sink counts the rows.\n"
    "\n"
    "  --conf CONF       publish to the server of this connect string instead, as given\n"
    "                    (no outage is staged), into a new table qsf_demo_<time>\n"
    "  --exec HOST:PORT  count the rows there with SELECT count() through QuestDB's\n"
    "                    HTTP /exec endpoint at HOST:PORT (plain HTTP, no credentials;\n"
    "                    default: the first addr of CONF)\n"
    "  --no-count        do not count: the summary says the rows were not checked\n"
    "  --help            this text\n"
    "\n"
    "Exit code: 0 every row acknowledged and, unless not checked, found at the server;\n"
    "1 an error stopped the demo; 2 rows lost; 3 the rows could not be counted.\n";

static const char *SYMBOLS[] = {"BTC-USD", "ETH-USD",  "SOL-USD", "XRP-USD",
                                "ADA-USD", "DOGE-USD", "DOT-USD", "AVAX-USD"};
static const char *VENUES[] = {"coinbase", "kraken", "bitstamp", "binance-us"};

/* What the command line asked for. */
typedef struct demo_args {
    int64_t rows;
    char dir[256];    /* sink mode: the SF directory */
    bool own_dir;     /* ... made by the demo (removed when drained) */
    const char *conf; /* --conf, or NULL for the bundled sink */
    const char *exec; /* --exec */
    bool no_count;    /* --no-count */
    char table[64];   /* where the trades go */
} demo_args;

/* How many rows arrived, as far as the demo could tell. */
typedef struct demo_count {
    int checked;    /* 1 counted, 0 not checked (said why), -1 counting failed */
    int64_t rows;   /* rows the server holds */
    int64_t unique; /* distinct trade ids among them */
    char how[400];  /* where and how they were counted, or why not */
} demo_count;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc, const qsf_errinfo *e) {
    fprintf(stderr, "\ndemo: %s failed: %s: %s\n", what, qsf_err_name(rc), e ? e->msg : "");
    exit(1);
}

/* One trade. Keys are dense so the server's count says what arrived. */
static int add_trade(qsf_sender *s, const char *table, int64_t id, qsf_errinfo *e) {
    const char *sym = SYMBOLS[id % 8], *venue = VENUES[(id / 8) % 4];
    int rc = qsf_table(s, table, strlen(table), e);
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

/* The progress line is rewritten in place ("\r"); a line printed meanwhile,
 * by the demo or by qsf's log from its own threads, first ends it. The lock
 * keeps a log line from coming between a progress line and its flag. */
static pthread_mutex_t stderr_mu = PTHREAD_MUTEX_INITIALIZER;
static bool progress_open;

static void end_progress_line_locked(void) {
    if (progress_open)
        fputc('\n', stderr);
    progress_open = false;
}

static void end_progress_line(void) {
    pthread_mutex_lock(&stderr_mu);
    end_progress_line_locked();
    pthread_mutex_unlock(&stderr_mu);
}

/* qsf's log lines, as qsf prints them ("qsf WARN ..."), each on its own line. */
static void on_log(void *user, int level, const char *line) {
    static const char *const names[] = {"OFF", "ERROR", "WARN", "INFO", "DEBUG"};
    (void) user;
    pthread_mutex_lock(&stderr_mu);
    end_progress_line_locked();
    fprintf(stderr, "qsf %s %s\n", level >= 0 && level <= QSF_LOG_DEBUG ? names[level] : "?", line);
    pthread_mutex_unlock(&stderr_mu);
}

/* The backlogs that new connections replayed, from the REPLAY_DONE events:
 * the frames, and the FSNs from the first one's start to the last one's end
 * (what qsf's "replaying FSN a..b" log lines name). */
typedef struct replays {
    int n;
    uint64_t frames;
    int64_t from_fsn, to_fsn;
} replays;

static void take_events(qsf_sender *s, replays *r) {
    qsf_event ev = {.struct_size = sizeof ev};
    while (qsf_poll_event(s, &ev) == 1) {
        if (ev.kind == QSF_EVENT_REPLAY_DONE) {
            if (r->n++ == 0)
                r->from_fsn = ev.from_fsn;
            r->to_fsn = ev.to_fsn;
            r->frames += ev.frames;
        }
        ev.struct_size = sizeof ev;
    }
}

static void progress(qsf_sender *s, int64_t published, double t0, const char *phase) {
    qsf_stats st;
    qsf_stats_get(s, &st);
    double el = now_s() - t0;
    pthread_mutex_lock(&stderr_mu);
    fprintf(stderr,
            "\r%-9s %9" PRId64 " rows  %8.0f rows/s  fsn acked %6" PRId64 " / published %6" PRId64
            "  %-12s  backlog %5" PRIu64 " frames   ",
            phase, published, published / (el > 0 ? el : 1), st.acked_fsn, st.published_fsn,
            st.connected ? "connected" : "disconnected", st.pending_frames);
    progress_open = true;
    pthread_mutex_unlock(&stderr_mu);
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

static qsf_sender *start_sender(const char *conf) {
    qsf_sender *s = NULL;
    qsf_errinfo e;
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    if (rc != QSF_OK)
        die("qsf_sender_new", rc, &e);
    return s;
}

static qsf_sender *start_sink_sender(uint16_t port, const char *dir) {
    char conf[1024];
    snprintf(
        conf, sizeof conf,
        "ws::addr=127.0.0.1:%u;sf_dir=%s;sender_id=demo;initial_connect_retry=on;"
        "reconnect_max_backoff_millis=500;sf_max_total_bytes=1g;close_flush_timeout_millis=30000;",
        port, dir);
    return start_sender(conf);
}

/* The outage: starts at a fifth of the rows, ends OUTAGE_MS later. Without a
 * sink (--conf) there is none: the phase is "after" from the start. */
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
        end_progress_line();
        fprintf(stderr, "*** sink down: every connection dropped, new ones refused\n");
    } else if (o->phase == 1 && now_s() - o->down_at >= OUTAGE_MS / 1000.0) {
        qsink_fault_clear(o->sink); /* and comes back */
        o->up_at = now_s();
        o->phase = 2;
        end_progress_line();
        fprintf(stderr, "*** sink back after %.1f s\n", o->up_at - o->down_at);
    }
}

static void count_at_sink(qsink *sink, demo_count *c) {
    int64_t dups = qsink_duplicates(sink, "trades", "trade_id");
    c->checked = 1;
    c->rows = qsink_rows(sink, "trades");
    c->unique = c->rows - (dups > 0 ? dups : 0); /* -1: no table, so no rows */
    snprintf(c->how, sizeof c->how, "counted by the bundled qwp-sink");
}

/* QuestDB makes committed rows visible a little later (WAL apply): polls until
 * every id is there, or the count stood still for 5 s. */
static void count_at_server(const demo_args *a, demo_count *c) {
    char addr[300], why[400] = "";
    if (a->exec)
        snprintf(addr, sizeof addr, "%s", a->exec);
    else if (demo_first_addr(a->conf, addr, sizeof addr) != 0) {
        c->checked = -1;
        snprintf(c->how, sizeof c->how, "no addr= in --conf to count at; pass --exec");
        return;
    }
    double still_since = now_s();
    int64_t last = -1;
    c->checked = -1;
    while (now_s() - still_since < 5.0) {
        int64_t rows, unique;
        if (demo_exec_count(addr, a->table, &rows, &unique, why, sizeof why) == 0) {
            c->checked = 1, c->rows = rows, c->unique = unique;
            if (unique >= a->rows)
                break;
        }
        if (c->checked == 1 && c->rows != last)
            last = c->rows, still_since = now_s();
        usleep(250000);
    }
    if (c->checked == 1)
        snprintf(c->how, sizeof c->how, "counted with SELECT count() through %s/exec", addr);
    else
        snprintf(c->how, sizeof c->how, "counting through %s/exec failed: %s", addr, why);
}

static void count_rows(const demo_args *a, qsink *sink, demo_count *c) {
    memset(c, 0, sizeof *c);
    if (sink)
        count_at_sink(sink, c);
    else if (a->no_count)
        snprintf(c->how, sizeof c->how, "not checked (--no-count)");
    else if (!a->exec && strncmp(a->conf, "wss", 3) == 0)
        snprintf(c->how, sizeof c->how,
                 "not checked: the server speaks TLS and the demo counts over plain HTTP only "
                 "(--exec HOST:PORT names a plain-HTTP endpoint)");
    else
        count_at_server(a, c);
}

/* Prints the summary and returns the exit code it stands for. */
static int report(const demo_args *a, const qsf_stats *st, const replays *r, const demo_count *c,
                  double t0, double published_at, double done, const outage *o) {
    end_progress_line();
    printf("\nrows published       %" PRId64 " (table %s)\n", a->rows, a->table);
    printf("publish rate         %.0f rows/s (%.2f s%s)\n", a->rows / (published_at - t0),
           published_at - t0, o->sink ? ", outage included" : "");
    printf("end-to-end rate      %.0f rows/s (last row acknowledged after %.2f s)\n",
           a->rows / (done - t0), done - t0);
    if (o->sink)
        printf("outage               %.2f s\n", o->up_at - o->down_at);
    else
        printf("outage               none staged (--conf)\n");
    printf("frames sent          %" PRIu64 " (reconnects %" PRIu64 ")\n", st->frames_sent,
           st->reconnects_succeeded);
    if (r->n == 0)
        printf("backlog replayed     none\n");
    else /* frames_replayed: those of the backlog that an earlier connection had sent */
        printf("backlog replayed     FSN %" PRId64 "..%" PRId64 ", %" PRIu64
               " frames after %d reconnect%s (%" PRIu64 " of them sent before the outage too)\n",
               r->from_fsn, r->to_fsn, r->frames, r->n, r->n == 1 ? "" : "s", st->frames_replayed);
    if (c->checked != 1) {
        printf("rows lost            unknown: %s\n", c->how);
        return c->checked == 0 ? 0 : 3;
    }
    printf("rows at the server   %" PRId64 " (%" PRId64 " duplicates from replay; %s)\n", c->rows,
           c->rows - c->unique, c->how);
    printf("rows lost            %" PRId64 "\n", a->rows - c->unique);
    return a->rows - c->unique == 0 ? 0 : 2;
}

static int64_t parse_rows(const char *s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "demo: ROWS must be a number >= 0, got '%s'\n%s", s, USAGE);
        exit(1);
    }
    return v;
}

/* Options first, then ROWS [SF_DIR]. Exits on --help and on a mistake. */
static void parse_args(int argc, char **argv, demo_args *a) {
    memset(a, 0, sizeof *a);
    a->rows = 4000000;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "--help") == 0)
            fputs(USAGE, stdout), exit(0);
        else if (strcmp(opt, "--no-count") == 0)
            a->no_count = true;
        else if ((strcmp(opt, "--conf") == 0 || strcmp(opt, "--exec") == 0) && i + 1 < argc)
            *(opt[2] == 'c' ? &a->conf : &a->exec) = argv[++i];
        else
            fprintf(stderr, "demo: unknown option or missing value: %s\n%s", opt, USAGE), exit(1);
    }
    if (i < argc)
        a->rows = parse_rows(argv[i++]);
    if (i < argc && !a->conf)
        snprintf(a->dir, sizeof a->dir, "%s", argv[i++]);
    if (i < argc || ((a->exec || a->no_count) && !a->conf) || (a->exec && a->no_count))
        fprintf(stderr, "demo: unexpected arguments\n%s", USAGE), exit(1);
    snprintf(a->table, sizeof a->table, "trades");
    if (a->conf)
        snprintf(a->table, sizeof a->table, "qsf_demo_%lld", (long long) time(NULL));
}

int main(int argc, char **argv) {
    demo_args a;
    parse_args(argc, argv, &a);
    outage o = {NULL, 2, 0, 0};
    qsf_set_log_handler(QSF_LOG_DEFAULT, on_log, NULL);
    qsf_sender *s;
    if (a.conf) {
        fprintf(stderr, "publishing to the server of --conf, table %s\n", a.table);
        s = start_sender(a.conf);
    } else {
        if (!a.dir[0]) {
            snprintf(a.dir, sizeof a.dir, "/tmp/qsf-demo-XXXXXX");
            if (!mkdtemp(a.dir))
                return perror("mkdtemp"), 1;
            a.own_dir = true;
        }
        o.sink = start_sink();
        o.phase = 0;
        fprintf(stderr, "qwp-sink listening on 127.0.0.1:%u; store-and-forward slot in %s/demo\n",
                qsink_port(o.sink), a.dir);
        s = start_sink_sender(qsink_port(o.sink), a.dir);
    }
    qsf_errinfo e;
    replays r = {0};
    double t0 = now_s(), last = 0;
    for (int64_t id = 0; id < a.rows; id++) {
        int rc = add_trade(s, a.table, id, &e);
        if (rc != QSF_OK)
            die("publishing a row", rc, &e);
        if ((id & 1023) == 0) {
            if (o.sink)
                outage_step(&o, id, a.rows / 5);
            if (now_s() - last >= 0.25) {
                last = now_s();
                progress(s, id + 1, t0, o.phase == 1 ? "OUTAGE" : "streaming");
                take_events(s, &r);
            }
        }
    }
    int64_t fsn;
    int rc = qsf_flush(s, &fsn, &e);
    if (rc != QSF_OK)
        die("qsf_flush", rc, &e);
    double published_at = now_s();
    while (qsf_acked_fsn(s) < fsn || o.phase < 2) {
        if (o.sink)
            outage_step(&o, a.rows, a.rows / 5);
        progress(s, a.rows, t0, o.phase == 1 ? "OUTAGE" : "draining");
        take_events(s, &r);
        usleep(100000);
    }
    double done = now_s();
    progress(s, a.rows, t0, "done");
    take_events(s, &r);
    qsf_stats st;
    qsf_stats_get(s, &st);
    rc = qsf_close(s, &e);
    if (rc != QSF_OK)
        die("qsf_close", rc, &e);
    demo_count c;
    count_rows(&a, o.sink, &c);
    int verdict = report(&a, &st, &r, &c, t0, published_at, done, &o);
    qsink_stop(o.sink);
    if (a.own_dir)
        rmdir(a.dir); /* the drained slot removed its files */
    return verdict;
}
