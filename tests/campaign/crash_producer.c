/* crash-producer: the producer of the crash campaign (scripts/crash-campaign,
 * docs/RELIABILITY.md). Publishes numbered rows into a store-and-forward slot
 * through the public API only, and journals every flush so that the campaign's
 * oracle knows, after the SIGKILL that ends this process, what each flush
 * returned.
 *
 * Journal: one line per record, each written with one write(2) and then
 * fdatasync'ed before the program goes on, so a record that was written
 * survives a kill at any later moment:
 *
 *   <name> open returned <code> published <fsn> acked <fsn>
 *   <name> positions published <pos> fsn <f> acked <pos> fsn <f>   (after an open)
 *   <name> begin flush ids [a,b] rows <n> big <0|1> us <t>         before qsf_flush
 *   <name> flush [a,b] returned <code> fsn <f> flags <x> us <t>     after it
 *                                       (t: CLOCK_MONOTONIC in microseconds)
 *   <name> error category <c> policy <p> fsn [f,t] <message>
 *   <name> close after error                          (--close-on-error)
 *   <name> idle after <n> flushes
 *   <name> drained returned <code> published <fsn> acked <fsn>   (--drain)
 *   <name> close returned <code>
 *
 * --self-kill N:F dies by SIGKILL in its Nth big flush, F quarters (1..3) of the
 * time the previous big flush took after it began (selfkill.h): the campaign's
 * way to kill inside a split flush, while its frames are being written.
 *
 * After a flush error the program exits at once, or with --close-on-error
 * calls qsf_close first: close flushes the rows the failed flush left buffered
 * (and may commit a deferred group it left open), so that flush is then in
 * doubt whatever its flags said.
 *
 * Every flush carries a source position: the decimal text of its last id.
 * Right after a successful open the program journals the published and the
 * acknowledged position qsf reports (<pos>: the id, "none" when there is
 * none, "bad:<hex>" for bytes that are not an id, "error:<code>" when the
 * call failed), so the oracle can check which flush they name.
 *
 * Ids continue the journal: the first id is one past the highest id any
 * earlier "begin" record named, whether that flush returned or not. Every
 * value of a row is a function of its id (see row_values), so the oracle can
 * check what the sink stored. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qsf.h"
#include "selfkill.h"

#define TS_BASE_US 1700000000000000LL

struct opts {
    const char *journal, *name, *conf;
    uint64_t seed;
    int drain;
    int close_on_error;
    long max_flushes;
    int big_pct; /* percentage of flushes that are big */
    long big_min, big_max, small_max;
    long pause_us;    /* up to this long between flushes */
    long kill_big;    /* --self-kill N:F: in the Nth big flush (1-based) ... */
    long kill_frames; /* ... F quarters of a big flush's time into it (selfkill.h) */
};

static int JFD = -1;

/* One journal record: one write(2), then fdatasync. A failure ends the
 * program: a journal that does not say what happened is worthless. */
static void jr(const struct opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jr(const struct opts *o, const char *fmt, ...) {
    char line[1400];
    int n = snprintf(line, sizeof line, "%s ", o->name);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t) n - 1, fmt, ap);
    va_end(ap);
    if (n > (int) sizeof line - 2)
        n = (int) sizeof line - 2;
    line[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w = write(JFD, line + off, (size_t) (n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            perror("crash-producer: journal write");
            _exit(4);
        }
        off += (int) w;
    }
    if (fdatasync(JFD) != 0) {
        perror("crash-producer: journal fdatasync");
        _exit(4);
    }
}

/* Opens the journal; returns the next id (1 for an empty journal). A torn last
 * line (a kill inside a write) is closed with a newline first. */
static int64_t journal_open(const char *path) {
    JFD = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (JFD < 0) {
        perror(path);
        exit(2);
    }
    FILE *f = fopen(path, "r");
    char line[1400];
    int64_t next = 1;
    int torn = 0;
    while (f && fgets(line, sizeof line, f)) {
        long long a, b;
        const char *p = strstr(line, " begin flush ids [");
        torn = line[strlen(line) - 1] != '\n';
        if (p && sscanf(p, " begin flush ids [%lld,%lld]", &a, &b) == 2 && b + 1 > next)
            next = b + 1;
    }
    if (f)
        fclose(f);
    if (torn && write(JFD, "\n", 1) != 1)
        exit(4);
    return next;
}

/* splitmix64 */
static uint64_t rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static long between(uint64_t *s, long lo, long hi) {
    return hi <= lo ? lo : lo + (long) (rnd(s) % (uint64_t) (hi - lo + 1));
}

/* The values of row id (the oracle computes the same): a symbol from a pool
 * that grows with the ids, so flushes keep adding dictionary entries, and a
 * varchar of varying length. */
static void row_values(int64_t id, char *sym, size_t scap, char *var, size_t vcap) {
    uint64_t pool = 1 + (uint64_t) id / 64;
    snprintf(sym, scap, "s%" PRIu64, ((uint64_t) id * 2654435761u) % pool);
    int pad = (int) (((uint64_t) id * 31) % 97);
    int n = snprintf(var, vcap, "v%" PRId64 "-", id);
    for (int i = 0; i < pad && n + 1 < (int) vcap; i++)
        var[n++] = 'x';
    var[n] = '\0';
}

static int add_row(qsf_sender *s, int64_t id, qsf_errinfo *e) {
    char sym[32], var[160];
    row_values(id, sym, sizeof sym, var, sizeof var);
    int rc = qsf_table(s, "t", 1, e);
    if (rc == QSF_OK)
        rc = qsf_symbol(s, "s", 1, sym, strlen(sym), e);
    if (rc == QSF_OK)
        rc = qsf_col_i64(s, "id", 2, id, e);
    if (rc == QSF_OK)
        rc = qsf_col_varchar(s, "v", 1, var, strlen(var), e);
    if (rc == QSF_OK)
        rc = qsf_at_micros(s, TS_BASE_US + id, e);
    return rc;
}

/* Error notifications go into the journal (they explain what the oracle sees). */
static void journal_errors(const struct opts *o, qsf_sender *s) {
    qsf_error_record r;
    while (qsf_poll_error(s, &r) == 1) {
        for (char *p = r.message; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
        jr(o, "error category %d policy %d fsn [%" PRId64 ",%" PRId64 "] %s", r.category, r.policy,
           r.from_fsn, r.to_fsn, r.message);
    }
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static long long mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Buffers rows [a,b]. The connect string must say auto_flush=off: nothing
 * may be published before the begin record. A row call does not fail here;
 * if one does, or rows went out on their own, the program ends having
 * published none of them. */
static void buffer_rows(const struct opts *o, qsf_sender *s, int64_t a, int64_t b) {
    qsf_errinfo e = {0};
    for (int64_t id = a; id <= b; id++)
        if (add_row(s, id, &e) != QSF_OK) {
            fprintf(stderr, "crash-producer %s: row %" PRId64 ": %s\n", o->name, id, e.msg);
            _exit(5);
        }
    if (qsf_buffered_rows(s) != (size_t) (b - a + 1)) {
        fprintf(stderr,
                "crash-producer %s: rows were flushed automatically (auto_flush=off "
                "is needed)\n",
                o->name);
        _exit(5);
    }
}

/* The flush of rows up to last carries "<last>" as its source position. */
static void stage_position(const struct opts *o, qsf_sender *s, int64_t last) {
    char pos[24];
    int n = snprintf(pos, sizeof pos, "%" PRId64, last);
    qsf_errinfo e = {0};
    if (qsf_set_source_position(s, pos, (size_t) n, &e) != QSF_OK) {
        fprintf(stderr, "crash-producer %s: source position %s: %s\n", o->name, pos, e.msg);
        _exit(5);
    }
}

/* One position as a journal token (see the journal's description above). */
static void position_token(int rc, const unsigned char *p, size_t len, char *out, size_t cap) {
    size_t digits = 0;
    while (digits < len && p[digits] >= '0' && p[digits] <= '9')
        digits++;
    if (rc != QSF_OK)
        snprintf(out, cap, "error:%d", rc);
    else if (len == 0)
        snprintf(out, cap, "none");
    else if (digits == len && len < 20)
        snprintf(out, cap, "%.*s", (int) len, (const char *) p);
    else {
        int n = snprintf(out, cap, "bad:");
        for (size_t i = 0; i < len && (size_t) n + 3 < cap; i++)
            n += snprintf(out + n, cap - (size_t) n, "%02x", p[i]);
    }
}

/* Journals the positions the slot reported at the open. */
static void journal_positions(const struct opts *o, qsf_sender *s) {
    unsigned char buf[QSF_SOURCE_POSITION_MAX];
    char pub[2 * QSF_SOURCE_POSITION_MAX + 8], ack[sizeof pub];
    size_t len = 0;
    int64_t pfsn = -1, afsn = -1;
    qsf_errinfo e = {0};
    int rc = qsf_source_position(s, buf, sizeof buf, &len, &pfsn, &e);
    position_token(rc, buf, len, pub, sizeof pub);
    len = 0;
    rc = qsf_acked_source_position(s, buf, sizeof buf, &len, &afsn, &e);
    position_token(rc, buf, len, ack, sizeof ack);
    jr(o, "positions published %s fsn %" PRId64 " acked %s fsn %" PRId64, pub, pfsn, ack, afsn);
}

/* One flush of n rows from *next on. The begin record goes right before
 * qsf_flush: nothing of these rows is published earlier, so a kill while they
 * are being buffered leaves nothing to account for (the next producer numbers
 * from the last begin record on). kill_in_it arms --self-kill for it. */
/* How long the last big flush took, per row (the self-kill's yardstick). */
static int64_t big_ns_per_row = 300;

static int one_flush(const struct opts *o, qsf_sender *s, int64_t *next, long n, int big,
                     int kill_in_it) {
    int64_t a = *next, b = a + n - 1;
    buffer_rows(o, s, a, b);
    stage_position(o, s, b);
    jr(o, "begin flush ids [%" PRId64 ",%" PRId64 "] rows %ld big %d us %lld", a, b, n, big,
       mono_us());
    *next = b + 1;
    selfkill k;
    int armed = kill_in_it && selfkill_arm(&k, big_ns_per_row * n * o->kill_frames / 4) == 0;
    qsf_errinfo e = {0};
    int64_t fsn = -1;
    long long t0 = mono_us();
    int rc = qsf_flush(s, &fsn, &e);
    if (armed)
        selfkill_disarm(&k); /* it was faster this time: the producer goes on */
    if (big && rc == QSF_OK)
        big_ns_per_row = (mono_us() - t0) * 1000 / n;
    jr(o, "flush [%" PRId64 ",%" PRId64 "] returned %d fsn %" PRId64 " flags %u us %lld", a, b, rc,
       fsn, rc ? e.flags : 0u, mono_us());
    if (rc != QSF_OK)
        fprintf(stderr, "crash-producer %s: flush [%" PRId64 ",%" PRId64 "]: %s\n", o->name, a, b,
                e.msg);
    return rc;
}

/* Without --close-on-error the rows the failed flush left buffered die with
 * the process. */
static int after_error(const struct opts *o, qsf_sender *s) {
    if (o->close_on_error) {
        jr(o, "close after error");
        qsf_errinfo e = {0};
        jr(o, "close returned %d", qsf_close(s, &e));
    }
    return 3;
}

static int publish(const struct opts *o, qsf_sender *s, int64_t next) {
    uint64_t rs = o->seed;
    long bigs = 0;
    for (long i = 0; o->max_flushes < 0 || i < o->max_flushes; i++) {
        int big = between(&rs, 1, 100) <= o->big_pct;
        long n = big ? between(&rs, o->big_min, o->big_max) : between(&rs, 1, o->small_max);
        bigs += big;
        int rc = one_flush(o, s, &next, n, big, big && bigs == o->kill_big);
        journal_errors(o, s);
        if (rc != QSF_OK)
            return after_error(o, s);
        if (o->pause_us > 0)
            sleep_us(between(&rs, 0, o->pause_us));
    }
    jr(o, "idle after %ld flushes", o->max_flushes);
    for (;;)
        pause(); /* until the campaign kills it */
}

/* Waits (up to 30 s) until everything published is acknowledged. Polls the
 * acknowledged FSN rather than qsf_wait(QSF_WAIT_OK): a recovered aborted tail
 * is acknowledged locally, never by a server OK, so an OK-level wait for the
 * published FSN would not return while the slot is in fact drained. */
static int drain(const struct opts *o, qsf_sender *s) {
    int64_t pub = qsf_published_fsn(s);
    int rc = QSF_E_TIMEOUT;
    for (int i = 0; i < 6000 && rc != QSF_OK; i++) {
        if (qsf_acked_fsn(s) >= pub)
            rc = QSF_OK;
        else
            sleep_us(5000);
    }
    jr(o, "drained returned %d published %" PRId64 " acked %" PRId64, rc, pub, qsf_acked_fsn(s));
    journal_errors(o, s);
    qsf_errinfo e = {0};
    int crc = qsf_close(s, &e);
    jr(o, "close returned %d", crc);
    if (crc != QSF_OK)
        fprintf(stderr, "crash-producer %s: close: %s\n", o->name, e.msg);
    return rc == QSF_OK && crc == QSF_OK ? 0 : 1;
}

static const struct option LONGOPTS[] = {
    {"journal", 1, 0, 'j'},
    {"name", 1, 0, 'n'},
    {"conf", 1, 0, 'c'},
    {"seed", 1, 0, 's'},
    {"drain", 0, 0, 'd'},
    {"max-flushes", 1, 0, 'm'},
    {"big-pct", 1, 0, 'b'},
    {"big-rows", 1, 0, 'r'},
    {"small-rows", 1, 0, 'R'},
    {"pause-us", 1, 0, 'p'},
    {"close-on-error", 0, 0, 'e'},
    {"self-kill", 1, 0, 'k'},
    {0, 0, 0, 0}, /* one entry per line */
};

static void usage(void) {
    fprintf(stderr, "usage: crash-producer --journal FILE --name NAME --conf CONNECT-STRING\n"
                    "       [--seed N] [--drain] [--max-flushes N] [--big-pct P]\n"
                    "       [--big-rows MIN:MAX] [--small-rows MAX] [--pause-us US]\n"
                    "       [--close-on-error] [--self-kill NTH-BIG-FLUSH:FRAMES]\n");
    exit(2);
}

static void parse(int argc, char **argv, struct opts *o) {
    int c;
    while ((c = getopt_long(argc, argv, "", LONGOPTS, NULL)) != -1) {
        switch (c) {
        case 'j':
            o->journal = optarg;
            break;
        case 'n':
            o->name = optarg;
            break;
        case 'c':
            o->conf = optarg;
            break;
        case 's':
            o->seed = strtoull(optarg, NULL, 10);
            break;
        case 'd':
            o->drain = 1;
            break;
        case 'e':
            o->close_on_error = 1;
            break;
        case 'k':
            if (sscanf(optarg, "%ld:%ld", &o->kill_big, &o->kill_frames) != 2 ||
                o->kill_frames < 1 || o->kill_frames > 3)
                usage();
            break;
        case 'm':
            o->max_flushes = strtol(optarg, NULL, 10);
            break;
        case 'b':
            o->big_pct = atoi(optarg);
            break;
        case 'r':
            if (sscanf(optarg, "%ld:%ld", &o->big_min, &o->big_max) != 2)
                usage();
            break;
        case 'R':
            o->small_max = strtol(optarg, NULL, 10);
            break;
        case 'p':
            o->pause_us = strtol(optarg, NULL, 10);
            break;
        default:
            usage();
        }
    }
    if (!o->journal || !o->name || !o->conf || optind != argc)
        usage();
}

int main(int argc, char **argv) {
    struct opts o = {.max_flushes = -1,
                     .big_pct = 10,
                     .big_min = 2000,
                     .big_max = 20000,
                     .small_max = 200,
                     .pause_us = 2000};
    parse(argc, argv, &o);
    int64_t next = journal_open(o.journal);
    qsf_sender *s = NULL;
    qsf_errinfo e = {0};
    int rc = qsf_sender_new(o.conf, strlen(o.conf), &s, &e);
    jr(&o, "open returned %d published %" PRId64 " acked %" PRId64, rc,
       s ? qsf_published_fsn(s) : -1, s ? qsf_acked_fsn(s) : -1);
    if (rc != QSF_OK) {
        fprintf(stderr, "crash-producer %s: open: %s\n", o.name, e.msg);
        return 2;
    }
    journal_positions(&o, s);
    journal_errors(&o, s);
    return o.drain ? drain(&o, s) : publish(&o, s, next);
}
