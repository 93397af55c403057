/* qsf slot drain SLOT --conf '...' [--dry-run] [--timeout S] [--every S]:
 * sends what a slot has left to a server, the way an orphan drainer does
 * (sender/replay.h), and removes the slot's files once everything is
 * acknowledged. Also a .failed slot or a quarantined <id>.unreplayable-<N>
 * one once its cause is fixed (sf/operator.h: such a slot is never moved or
 * marked by this). A slot in use is refused, naming the pid. */
#include "cmd.h"
#include "out.h"
#include "progress.h"
#include "slot.h"

#include "args.h"
#include "err.h"
#include "log.h"
#include "conf/conf.h"
#include "sender/opts.h"
#include "sender/replay.h"
#include "sfops/dump.h"
#include "sf/ring.h"
#include "sf/sfa.h"
#include "sfops/slotdir.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void drain_usage(FILE *out) {
    fprintf(out, "usage: qsf slot drain <slot-dir> --conf '<connect string>' [--dry-run]\n"
                 "                      [--timeout SECONDS] [--every SECONDS]\n"
                 "\n"
                 "Sends every frame the slot has left to the server of the connect string (its\n"
                 "addresses, credentials, TLS and durable-ack settings; sf_dir and sender_id are\n"
                 "not used: the slot is <slot-dir>), waits until all are acknowledged, then\n"
                 "removes the slot's files (.lock, .lock.pid and .rejected stay). Works on a slot\n"
                 "marked .failed (the marker is removed once the slot is drained) and on a\n"
                 "quarantined <sender_id>.unreplayable-<N> once the cause is fixed. A slot in use\n"
                 "by another process is refused, naming its pid.\n"
                 "Progress goes to stderr: a bar on a terminal, otherwise a line every --every\n"
                 "seconds (default 10). Ctrl-C stops; what is not acknowledged stays in the slot.\n"
                 "--dry-run  only say what would be sent, and where\n"
                 "--timeout  give up when nothing is acknowledged for this many seconds\n"
                 "           (default: wait for as long as it takes)\n"
                 "A frame the server rejects for good stops the drain and is named by its FSN;\n"
                 "see qsf slot set-aside.\n"
                 "Exit codes: 0 drained (or nothing to drain), 1 not drained (rejected, no\n"
                 "connection, stopped: the rest stays in the slot), 2 invalid connect string or\n"
                 "slot, 3 the slot is in use, 64 bad command line.\n");
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
    (void) sig;
    interrupted = 1;
}

typedef struct drain {
    const char *path;
    const qsf_conf *conf;
    qsf_ring *ring;
    qsf_recovery_report rep; /* what the open's recovery found */
    int64_t start_acked, target, timeout_us, last_acked, last_move_us;
    uint64_t bytes_total;
    progress bar;
    qsf_error_record last; /* the last error the connection reported */
    bool have_last;
} drain;

/* ---- the hooks ---- */

static void print_record(drain *d, const qsf_error_record *rec) {
    progress_end(&d->bar);
    fprintf(stderr, "drain: ");
    if (rec->from_fsn >= 0 && rec->status >= 0) {
        fprintf(stderr, "the server rejected FSN %" PRId64, rec->from_fsn);
        if (rec->to_fsn != rec->from_fsn)
            fprintf(stderr, "..%" PRId64, rec->to_fsn);
        fprintf(stderr, " (status 0x%02x", rec->status);
        if (rec->table[0]) {
            fprintf(stderr, ", table ");
            out_str(stderr, rec->table);
        }
        fprintf(stderr, "): ");
    }
    out_str(stderr, rec->message);
    fprintf(stderr, "\n");
}

static void on_error(void *user, const qsf_error_record *rec) {
    drain *d = user;
    d->last = *rec;
    d->have_last = true;
    print_record(d, rec);
}

static void on_progress(void *user, qsf_io *io) {
    drain *d = user;
    int64_t acked = qsf_ring_acked_fsn(d->ring), now = slot_now_us();
    if (acked != d->last_acked) {
        d->last_acked = acked;
        d->last_move_us = now;
    }
    qsf_stats st;
    memset(&st, 0, sizeof st);
    qsf_io_stats(io, &st);
    char state[300];
    if (st.connected) { /* the host name came from the connect string: escaped */
        snprintf(state, sizeof state, "sending to ");
        size_t n = strlen(state);
        qsf_text_escape(state + n, sizeof state - n, st.current_host, strlen(st.current_host));
    } else
        snprintf(state, sizeof state, "connecting (%" PRIu64 " attempts)",
                 st.reconnect_attempts + 1);
    uint64_t left = qsf_ring_pending_bytes(d->ring);
    progress_update(&d->bar, now, (uint64_t) (acked - d->start_acked),
                    d->bytes_total > left ? d->bytes_total - left : 0, state);
}

static bool should_stop(void *user, qsf_io *io) {
    (void) io;
    drain *d = user;
    return interrupted || (d->timeout_us > 0 && slot_now_us() - d->last_move_us >= d->timeout_us);
}

/* ---- outcomes ---- */

static void hint_set_aside(const drain *d) {
    if (!d->have_last || d->last.from_fsn < 0 || d->last.status < 0)
        return;
    fprintf(stderr,
            "The frame stays in the slot and a drain stops at it again. If the server can never "
            "accept it (fix the table's schema first if you can), set it aside:\n"
            "  qsf slot set-aside ");
    out_str(stderr, d->path);
    fprintf(stderr, " --fsn %" PRId64 "..%" PRId64 " --reason '...'\n", d->last.from_fsn,
            d->last.to_fsn);
}

/* Once everything is acknowledged, while the ring still holds the lock: a
 * .failed marker would keep orphan scans away from a slot that is fine. */
static void remove_failed(const drain *d) {
    char p[1200], reason[1024];
    if (!slot_failed_reason(d->path, reason, sizeof reason))
        return;
    snprintf(p, sizeof p, "%s/%s", d->path, QSF_NAME_FAILED);
    if (unlink(p) == 0) {
        fprintf(stderr, "drain: removed %s (it said: ", QSF_NAME_FAILED);
        out_str(stderr, reason);
        fprintf(stderr, ")\n");
    } else
        fprintf(stderr, "drain: cannot remove %s: %s\n", p, strerror(errno));
}

static int finish(drain *d, int outcome, const qsf_errinfo *err) {
    progress_end(&d->bar);
    int64_t acked = qsf_ring_acked_fsn(d->ring);
    if (outcome == QSF_REPLAY_DONE)
        remove_failed(d);
    qsf_errinfo ce;
    int crc = qsf_ring_close(d->ring, &ce);
    char line[200];
    progress_text(&d->bar, slot_now_us(), (uint64_t) (acked - d->start_acked), d->bytes_total, line,
                  sizeof line);
    if (outcome == QSF_REPLAY_DONE && crc == QSF_OK) {
        fprintf(stderr,
                "drain: done: FSN %" PRId64 "..%" PRId64 " acknowledged; the slot's files "
                "are removed\n",
                d->start_acked + 1, d->target);
        return QSF_EXIT_OK;
    }
    if (outcome == QSF_REPLAY_DONE) {
        fprintf(stderr, "drain: everything was acknowledged, but removing the files failed: ");
        out_str(stderr, ce.msg);
        fprintf(stderr, "\n");
        return QSF_EXIT_FAIL;
    }
    fprintf(stderr, "drain: not drained: ");
    out_str(stderr, outcome == QSF_REPLAY_STOPPED
                        ? (interrupted ? "interrupted" : "nothing acknowledged within --timeout")
                        : err->msg);
    fprintf(stderr, "\n");
    if (acked > d->start_acked)
        fprintf(stderr, "drain: FSN %" PRId64 "..%" PRId64 " acknowledged; ", d->start_acked + 1,
                acked);
    else
        fprintf(stderr, "drain: nothing acknowledged; ");
    fprintf(stderr, "FSN %" PRId64 "..%" PRId64 " stays in the slot\n", acked + 1, d->target);
    if (outcome == QSF_REPLAY_FAILED)
        hint_set_aside(d);
    return QSF_EXIT_FAIL;
}

/* ---- before anything is sent ---- */

static int count_pending(void *user, const qsf_dump_frame *f) {
    uint64_t *c = user;
    if (f->state == QSF_FRAME_PENDING) {
        c[0]++;
        c[1] += 8 + (uint64_t) f->len;
    } else if (f->state == QSF_FRAME_RETIRED || f->state == QSF_FRAME_CUT)
        c[2]++;
    return 0;
}

static int dry_run(const char *path, const qsf_conf *conf) {
    uint64_t c[3] = {0};
    qsf_walk_opts o = {
        .from = -1, .to = -1, .pending_only = true, .frame = count_pending, .user = c};
    qsf_slot_inspection in;
    qsf_errinfo err;
    if (qsf_slot_walk(path, &o, &in, NULL, &err) != QSF_OK) {
        slot_error("qsf slot drain", err.msg);
        return QSF_EXIT_FAIL;
    }
    int rc = in.verdict == QSF_OK && !in.unreplayable ? QSF_EXIT_OK : QSF_EXIT_INVALID;
    char b[32];
    out_bytes(b, sizeof b, c[1]);
    if (rc == QSF_OK) {
        printf("would send %" PRIu64 " frames (%s) to", c[0], b);
        for (size_t i = 0; i < conf->n_addrs; i++) {
            printf("%s ", i ? "," : "");
            out_str(stdout, conf->addrs[i].host);
            printf(":%d", conf->addrs[i].port);
        }
        printf("; %" PRIu64 " frames are never sent (given up); then remove the slot's files\n",
               c[2]);
    } else {
        printf("cannot drain: ");
        out_str(stdout, in.verdict != QSF_OK ? in.verdict_msg : "the slot cannot be replayed");
        printf(" (see qsf slot inspect)\n");
    }
    qsf_slot_inspection_free(&in);
    return rc;
}

static int open_ring(drain *d) {
    qsf_ring_opts ro = qsf_ring_opts_from_conf(d->conf, NULL);
    ro.slot_path = d->path;
    qsf_errinfo err;
    int rc = qsf_ring_open(&ro, &d->ring, &d->rep, &err);
    if (rc == QSF_OK)
        return QSF_EXIT_OK;
    slot_error("qsf slot drain", err.msg);
    if (rc == QSF_E_LOCKED)
        return QSF_EXIT_BUSY;
    return rc == QSF_E_CORRUPT || rc == QSF_E_INVAL ? QSF_EXIT_INVALID : QSF_EXIT_FAIL;
}

static int check_slot(const char *path) {
    int kind;
    uint32_t n;
    qsf_errinfo err;
    if (qsf_dir_kind(path, &kind, &n, &err) != QSF_OK) {
        slot_error("qsf slot drain", err.msg);
        return QSF_EXIT_FAIL;
    }
    if (kind == QSF_DIR_SLOT)
        return slot_refuse_busy("qsf slot drain", path,
                                "stop it first: a drain never takes a slot in use");
    fprintf(stderr, "qsf slot drain: ");
    out_str(stderr, path);
    fprintf(stderr, kind == QSF_DIR_DRAINED ? ": drained already, nothing to send\n"
                                            : ": not a slot (see qsf slot list)\n");
    return kind == QSF_DIR_DRAINED ? -1 : QSF_EXIT_INVALID;
}

static int replay_it(drain *d, int64_t every_s) {
    d->start_acked = d->last_acked = qsf_ring_acked_fsn(d->ring);
    d->target = qsf_ring_published_fsn(d->ring);
    d->bytes_total = qsf_ring_pending_bytes(d->ring);
    d->last_move_us = slot_now_us();
    progress_begin(&d->bar, stderr, isatty(STDERR_FILENO), d->last_move_us,
                   (uint64_t) (d->target - d->start_acked), d->bytes_total, every_s * 1000000);
    fprintf(stderr, "drain: ");
    out_str(stderr, d->path);
    fprintf(stderr, ": FSN %" PRId64 "..%" PRId64 " to send\n", d->start_acked + 1, d->target);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    qsf_replay_hooks h = {.stop = should_stop,
                          .on_error = on_error,
                          .progress = on_progress,
                          .user = d,
                          .poll_ms = 100};
    qsf_errinfo err = {0};
    int out = d->start_acked >= d->target
                  ? QSF_REPLAY_DONE
                  : qsf_replay(d->conf, d->ring, &d->rep, d->target, &h, &err);
    return finish(d, out, &err);
}

static int run_drain(int argc, char **argv) {
    if (!getenv("QSF_LOG")) /* the connection's errors are reported here, once */
        qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    const char *path = NULL, *conf_str = NULL;
    bool dry = false;
    int64_t timeout_s = 0, every_s = 10;
    arg_opt opts[] = {{"conf", ARG_STR, &conf_str, NULL},
                      {"dry-run", ARG_FLAG, &dry, NULL},
                      {"timeout", ARG_I64, &timeout_s, NULL},
                      {"every", ARG_I64, &every_s, NULL}};
    int rc = args_parse("qsf slot drain", argc, argv, opts, 4, &path, 1);
    if (rc)
        return rc;
    if (!conf_str) {
        fprintf(stderr, "qsf slot drain: --conf is required (see --help)\n");
        return QSF_EXIT_USAGE;
    }
    qsf_conf *conf = NULL;
    qsf_errinfo err;
    if (qsf_conf_parse(conf_str, strlen(conf_str), &conf, &err) != QSF_OK) {
        fprintf(stderr, "qsf slot drain: invalid connect string: %s\n", err.msg);
        return QSF_EXIT_INVALID;
    }
    rc = check_slot(path);
    if (rc == 0 && dry)
        rc = dry_run(path, conf);
    drain d = {.path = path, .conf = conf, .timeout_us = timeout_s * 1000000};
    if (rc == 0 && !dry)
        rc = open_ring(&d);
    if (rc == 0 && !dry)
        rc = replay_it(&d, every_s > 0 ? every_s : 10);
    qsf_conf_free(conf);
    return rc < 0 ? QSF_EXIT_OK : rc;
}

const slot_sub slot_drain_cmd = {"drain", "send what a slot has left to a server, then remove it",
                                 drain_usage, run_drain};
