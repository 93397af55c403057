/* qwp-sink: a faithful QWP ingress endpoint for offline tests (see
 * docs/QWP-SINK.md). Prints a one-line JSON summary on SIGINT/SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault.h"
#include "sink.h"

static const char USAGE[] =
    "usage: qwp-sink [options]\n"
    "  --host ADDR             listen address (default 127.0.0.1; ::1 for IPv6)\n"
    "  --port N                listen port (default 9000; 0 = any free port)\n"
    "  --auth-basic USER:PASS  require HTTP Basic auth (401 otherwise)\n"
    "  --auth-bearer TOKEN     require Bearer auth (401 otherwise)\n"
    "  --role ROLE             X-QuestDB-Role (default STANDALONE; REPLICA and\n"
    "                          PRIMARY_CATCHUP refuse upgrades with 421)\n"
    "  --zone ZONE             X-QuestDB-Zone on a 421\n"
    "  --recv-buf BYTES        receive buffer; larger frames get CLOSE 1009 (default 2097152)\n"
    "  --max-batch BYTES       advertised X-QWP-Max-Batch-Size (default recv-buf - 14)\n"
    "  --no-max-batch          do not send X-QWP-Max-Batch-Size (older servers)\n"
    "  --durable               grant durable acks when the client asks\n"
    "  --durable-lag-commits N durable watermark lags N commits per table\n"
    "  --durable-lag-ms MS     ... and commits younger than MS\n"
    "  --ack batched|per-frame cumulative OK every 8 frames and per read (default), or per frame\n"
    "  --legacy                keep processing after an error (older servers)\n"
    "  --append FILE           append committed rows to FILE as JSON lines, written\n"
    "                          (write(2)) before any OK or durable ack that covers them\n"
    "  --append-sync           ... and fdatasync'ed before it (survives a host crash)\n"
    "  --ack-only              benchmarks: acknowledge a one-table message after reading\n"
    "                          its header, table name and row count, without decoding or\n"
    "                          validating it (rows are counted, nothing else is kept)\n"
    "  --key-column NAME       keep this column's values and report duplicate keys per\n"
    "                          table in the summary\n"
    "  --tls-cert PEM          serve wss with this certificate chain\n"
    "  --tls-key PEM           ... and this private key\n"
    "  --fault 'LINE'          add a fault (repeatable)\n"
    "  --fault-file FILE       add the faults listed in FILE, one per line\n"
    "  --stats-every SEC       print the JSON summary every SEC seconds\n"
    "  --help                  this text\n"
    "\n"
    "Fault lines: ACTION[=ARG] [conn=N|N+|N-M] [after=FRAMES|bytes=BYTES|seq=N|*] [times=K]\n"
    "  close=CODE[:REASON]   final acks, CLOSE with CODE, FIN, drain 5 s\n"
    "  rst                   TCP reset (bytes=N resets in the middle of a frame)\n"
    "  fin                   final acks, then FIN without a CLOSE frame\n"
    "  stall                 stop reading\n"
    "  silent                process frames, never answer (no OK, error, durable ack)\n"
    "  delay-ok=MS           send each OK MS milliseconds after it is due\n"
    "  withhold-ok           never send OKs (errors, PONGs still go out)\n"
    "  status=CODE[:MSG]     answer frame seq=N (or seq=*, every frame) with this status\n"
    "  reject=HTTP           refuse the next upgrade(s) (times=K, default 1) with 401, 403,\n"
    "                        404, 421 (role=R zone=Z; no role= leaves the header out), 426,\n"
    "                        500, 503, ...\n"
    "  upgrade=no-version|version:V|no-durable|batch:N|no-batch   a non-standard 101\n"
    "  fragment=BYTES[:ping] split responses into BYTES-sized fragments (PING between)\n"
    "  malformed=bad-length|trailing|text|masked|rsv|bad-close     the next response\n"
    "  forged-ok[=SEQ]       an unsolicited OK (default SEQ 0)\n"
    "  restart               drop every connection and dictionary, keep rows\n"
    "  random=RATE[:SEED]    per frame, with probability RATE: close 1011/1001, rst, fin,\n"
    "                        status 0x06 or 0x09 (seeded, reproducible)\n"
    "Defaults: every connection (conn=1+), right after the upgrade (after=0), unlimited\n"
    "times (reject: 1). Example: --fault 'close=1011 conn=2 after=5'\n";

enum {
    O_HOST = 1000,
    O_PORT,
    O_BASIC,
    O_BEARER,
    O_ROLE,
    O_ZONE,
    O_RECV,
    O_BATCH,
    O_NOBATCH,
    O_DURABLE,
    O_LAGC,
    O_LAGMS,
    O_ACK,
    O_LEGACY,
    O_APPEND,
    O_CERT,
    O_KEY,
    O_FAULT,
    O_FFILE,
    O_STATS,
    O_HELP,
    O_KEY_COL,
    O_APPEND_SYNC,
    O_ACK_ONLY,
};

static const struct option LONGOPTS[] = {
    {"host", 1, 0, O_HOST},
    {"port", 1, 0, O_PORT},
    {"auth-basic", 1, 0, O_BASIC},
    {"auth-bearer", 1, 0, O_BEARER},
    {"role", 1, 0, O_ROLE},
    {"zone", 1, 0, O_ZONE},
    {"recv-buf", 1, 0, O_RECV},
    {"max-batch", 1, 0, O_BATCH},
    {"no-max-batch", 0, 0, O_NOBATCH},
    {"durable", 0, 0, O_DURABLE},
    {"durable-lag-commits", 1, 0, O_LAGC},
    {"durable-lag-ms", 1, 0, O_LAGMS},
    {"ack", 1, 0, O_ACK},
    {"legacy", 0, 0, O_LEGACY},
    {"append", 1, 0, O_APPEND},
    {"tls-cert", 1, 0, O_CERT},
    {"tls-key", 1, 0, O_KEY},
    {"fault", 1, 0, O_FAULT},
    {"fault-file", 1, 0, O_FFILE},
    {"stats-every", 1, 0, O_STATS},
    {"help", 0, 0, O_HELP},
    {"key-column", 1, 0, O_KEY_COL},
    {"append-sync", 0, 0, O_APPEND_SYNC},
    {"ack-only", 0, 0, O_ACK_ONLY},
    {0, 0, 0, 0},
};

struct cli {
    qsink_opts o;
    const char *faults[256];
    int nfaults;
    const char *fault_files[16];
    int nfiles;
    long stats_every;
};

static long num(const char *opt, const char *v, long lo, long hi) {
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < lo || n > hi) {
        fprintf(stderr, "qwp-sink: --%s needs a number in %ld..%ld, got '%s'\n", opt, lo, hi, v);
        exit(2);
    }
    return n;
}

static void set_ack(struct cli *c, const char *v) {
    if (strcmp(v, "batched") == 0)
        c->o.ack_mode = QSINK_ACK_BATCHED;
    else if (strcmp(v, "per-frame") == 0)
        c->o.ack_mode = QSINK_ACK_PER_FRAME;
    else {
        fprintf(stderr, "qwp-sink: --ack must be batched or per-frame, got '%s'\n", v);
        exit(2);
    }
}

static void parse_one(struct cli *c, int opt, const char *v) {
    switch (opt) {
    case O_HOST:
        c->o.host = v;
        break;
    case O_PORT:
        c->o.port = (uint16_t) num("port", v, 0, 65535);
        break;
    case O_BASIC:
        c->o.auth_basic = v;
        break;
    case O_BEARER:
        c->o.auth_bearer = v;
        break;
    case O_ROLE:
        c->o.role = v;
        break;
    case O_ZONE:
        c->o.zone = v;
        break;
    case O_RECV:
        c->o.recv_buf = (size_t) num("recv-buf", v, 64, 1L << 30);
        break;
    case O_BATCH:
        c->o.max_batch = num("max-batch", v, 1, 1L << 30);
        break;
    case O_NOBATCH:
        c->o.max_batch = -1;
        break;
    case O_DURABLE:
        c->o.durable = 1;
        break;
    case O_LAGC:
        c->o.durable_lag_commits = (int) num("durable-lag-commits", v, 0, 1 << 30);
        break;
    case O_LAGMS:
        c->o.durable_lag_ms = (int) num("durable-lag-ms", v, 0, 1 << 30);
        break;
    case O_ACK:
        set_ack(c, v);
        break;
    case O_LEGACY:
        c->o.legacy = 1;
        break;
    case O_APPEND:
        c->o.append_path = v;
        break;
    case O_APPEND_SYNC:
        c->o.append_sync = 1;
        break;
    case O_ACK_ONLY:
        c->o.ack_only = 1;
        break;
    case O_KEY_COL:
        c->o.key_column = v;
        break;
    case O_CERT:
        c->o.tls_cert = v;
        break;
    case O_KEY:
        c->o.tls_key = v;
        break;
    case O_FAULT:
        if (c->nfaults < 256)
            c->faults[c->nfaults++] = v;
        break;
    case O_FFILE:
        if (c->nfiles < 16)
            c->fault_files[c->nfiles++] = v;
        break;
    case O_STATS:
        c->stats_every = num("stats-every", v, 1, 86400);
        break;
    case O_HELP:
        fputs(USAGE, stdout);
        exit(0);
    default:
        fputs(USAGE, stderr);
        exit(2);
    }
}

/* Checks every fault line before the sink starts, so a typo fails fast. */
static int add_faults(qsink *s, const struct cli *c) {
    char err[600];
    for (int i = 0; i < c->nfaults; i++)
        if (qsink_fault(s, c->faults[i], err, sizeof err) != 0) {
            fprintf(stderr, "qwp-sink: %s\n", err);
            return -1;
        }
    for (int i = 0; i < c->nfiles; i++) {
        struct fault_set fs = {0};
        if (fault_parse_file(&fs, c->fault_files[i], err, sizeof err) != 0) {
            fprintf(stderr, "qwp-sink: %s\n", err);
            fault_clear(&fs);
            return -1;
        }
        fault_clear(&fs);
        FILE *f = fopen(c->fault_files[i], "r");
        char line[1024];
        while (f && fgets(line, sizeof line, f))
            qsink_fault(s, line, err, sizeof err);
        if (f)
            fclose(f);
    }
    return 0;
}

static void print_summary(qsink *s) {
    char buf[65536];
    qsink_summary_json(s, buf, sizeof buf);
    printf("%s\n", buf);
    fflush(stdout);
}

int main(int argc, char **argv) {
    /* The command line keeps counts only: nothing grows per frame or per row. */
    struct cli c = {.o = {.port = 9000, .no_values = 1, .no_frame_log = 1}};
    int opt;
    while ((opt = getopt_long(argc, argv, "h", LONGOPTS, NULL)) != -1)
        parse_one(&c, opt == 'h' ? O_HELP : opt, optarg);
    if (optind < argc) {
        fprintf(stderr, "qwp-sink: unexpected argument '%s'\n%s", argv[optind], USAGE);
        return 2;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the loop thread inherits the mask */
    char err[600];
    qsink *s = qsink_start(&c.o, err, sizeof err);
    if (!s) {
        fprintf(stderr, "qwp-sink: %s\n", err);
        return 1;
    }
    if (add_faults(s, &c) != 0) {
        qsink_stop(s);
        return 2;
    }
    fprintf(stderr, "qwp-sink: listening on %s:%u (%s)\n", c.o.host ? c.o.host : "127.0.0.1",
            qsink_port(s), c.o.tls_cert ? "wss" : "ws");
    for (;;) {
        struct timespec ts = {c.stats_every > 0 ? c.stats_every : 3600, 0};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM)
            break;
        if (sig < 0 && errno == EAGAIN && c.stats_every > 0)
            print_summary(s);
    }
    print_summary(s);
    qsink_stop(s);
    return 0;
}
