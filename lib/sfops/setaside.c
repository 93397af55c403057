/* Setting frames aside (setaside.h): the operator's open of the slot, the
 * plan of recovery over it (dry run: it was just recovered, so nothing is left
 * to repair), the checks of the span, then the record, the rewrite and the
 * DONE record. */
#include "sfops/setaside.h"

#include "err.h"
#include "log.h"
#include "os/os.h"
#include "qwp/types.h"
#include "qwp/utf8.h"
#include "sf/recover_view.h"
#include "sf/operator.h"
#include "sf/segfmt.h"
#include "sf/sfio.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STOP 1 /* a walk callback's "enough" */

typedef struct sa {
    const qsf_setaside_req *req;
    qsf_setaside_result *res;
    qsf_slot_recovered rec;
    qsf_rv *v;                 /* recovery's plan of the slot */
    const qsf_rv_result *plan; /* what it found */
    /* what the walk over the span found */
    int64_t group_start; /* first FSN of the flush holding the FSN walked */
    int64_t span_start;  /* group_start when req->from was reached */
    int64_t end;         /* the committing FSN that ends the flush holding req->to */
    uint32_t given_up;   /* FSNs of the span already given up */
    uint32_t empty;      /* frames of the span without tables (placeholders, empty commits) */
    int64_t first_empty; /* the first of them */
    bool deltas;         /* a frame of the span introduces symbols */
    uint32_t *crcs;      /* per FSN of the span: its stored CRC (intact, not given up) */
    bool *gone;          /* per FSN of the span: given up already */
    const qsf_rejected_rec *prepared; /* the interrupted set-aside of this span */
    uint8_t *buf;                     /* a frame's bytes, for the record */
    size_t cap;
} sa;

/* ---- the text ---- */

static bool printable_line(const char *s, size_t max) {
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max || !qsf_utf8_valid(s, n))
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

static int check_req(const qsf_setaside_req *r, qsf_errinfo *err) {
    if (r->from < 0 || r->to < r->from)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "FSN span %lld..%lld is empty or negative",
                           (long long) r->from, (long long) r->to);
    if (!printable_line(r->reason, 1000))
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "a set-aside needs a reason: one line of printable text, at most "
                           "1000 bytes");
    if (r->detail && !printable_line(r->detail, 1000))
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "the detail must be one line of printable text");
    return QSF_OK;
}

static void iso_time(int64_t us, char *out, size_t cap) {
    time_t t = (time_t) (us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, cap, "%s.%06lldZ", day, (long long) (us % 1000000));
}

static void who(char *out, size_t cap) {
    struct passwd pw, *res = NULL;
    char buf[1024], host[256] = "?";
    uid_t uid = geteuid();
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) != 0)
        res = NULL;
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    snprintf(out, cap, "%.64s (uid %ld) on %.100s, pid %ld", res ? res->pw_name : "?", (long) uid,
             host, (long) getpid());
}

static void audit_line(sa *a, int64_t at_us) {
    const qsf_setaside_req *r = a->req;
    qsf_setaside_result *res = a->res;
    char when[64], by[256], uncounted[64] = "";
    iso_time(at_us, when, sizeof when);
    who(by, sizeof by);
    if (res->uncounted)
        snprintf(uncounted, sizeof uncounted, ", %u frames not counted", res->uncounted);
    snprintf(res->audit, sizeof res->audit,
             "%s set aside FSN %lld..%lld (%u frames, %llu bytes, %llu rows%s%s%.1000s) of slot "
             "%.1000s by %s: %.1000s\n",
             when, (long long) r->from, (long long) r->to, res->frames,
             (unsigned long long) res->bytes, (unsigned long long) res->rows, uncounted,
             r->detail ? "; " : "", r->detail ? r->detail : "", a->rec.slot.path, by, r->reason);
}

/* ---- the plan of the locked slot ---- */

static int open_and_plan(sa *a, const char *slot_path, qsf_errinfo *err) {
    int rc = qsf_slot_open_operator(slot_path, QSF_DUR_APPEND, QSF_SLOT_DEFAULT_SEGMENT_BYTES,
                                    QSF_WM_JAVA16, &a->rec, err);
    if (rc != QSF_OK)
        return rc;
    bool empty = false;
    rc = qsf_rv_open(&a->v, &a->rec, NULL) == QSF_OK
             ? qsf_rv_scan(a->v, err)
             : qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to plan the set-aside");
    if (rc == QSF_OK)
        rc = qsf_rv_chain(a->v, &empty, err);
    if (rc == QSF_OK && empty)
        rc = qsf_err_set(err, QSF_E_INVAL, 0, 0, "slot %s holds no frame", a->rec.slot.path);
    if (rc == QSF_OK)
        rc = qsf_rv_plan(a->v, a->rec.watermark.present ? a->rec.watermark.fsn : -1, err);
    if (rc == QSF_OK && !(a->plan = qsf_rv_findings(a->v)))
        rc = qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to plan the set-aside");
    if (rc == QSF_OK && (a->plan->repairs || a->plan->rerun))
        rc = qsf_err_set(err, QSF_E_IO, 0, 0,
                         "slot %s changed right after it was recovered; try again",
                         a->rec.slot.path);
    return rc;
}

static void close_plan(sa *a) {
    qsf_rv_close(a->v);
    free(a->buf);
    free(a->crcs);
    free(a->gone);
    qsf_slot_release(&a->rec);
}

/* ---- the checks ---- */

static int64_t published(const qsf_rv_result *plan) {
    const qsf_rv_file *active = &plan->files[plan->active];
    return active->info.base_seq + (int64_t) active->info.frame_count - 1;
}

static int delta_count(const qsf_rv_frame *s, uint64_t *start, uint64_t *count, qsf_errinfo *err) {
    qsf_rv_kind k;
    *start = *count = 0;
    int rc = qsf_rv_frame_kind(s, &k, err);
    if (rc != QSF_OK || !k.qwp || !(k.flags & QSF_QWP_FLAG_DELTA_SYMBOL_DICT))
        return rc;
    bool bad = false;
    return qsf_rv_delta(s, start, count, &bad, err);
}

static int in_span(sa *a, const qsf_rv_frame *s, qsf_errinfo *err) {
    qsf_setaside_result *res = a->res;
    uint64_t i = (uint64_t) (s->fsn - a->req->from);
    if (s->fsn == a->req->from)
        a->span_start = a->group_start;
    if (!s->intact || qsf_rv_given_up(a->v, s->fsn)) {
        a->given_up++;
        a->gone[i] = true;
        return QSF_OK;
    }
    const uint8_t *p;
    size_t got;
    int rc0 = qsf_rv_envelope(s, &p, &got, err);
    if (rc0 != QSF_OK)
        return rc0;
    a->crcs[i] = qsf_sfa_frame_stored_crc(p);
    uint64_t rows = 0, start = 0, count = 0; /* as they stay when a read fails */
    bool countable = true;
    int rc = qsf_rv_frame_rows(s, &rows, &countable, err);
    if (rc == QSF_OK)
        rc = delta_count(s, &start, &count, err);
    res->frames++;
    res->bytes += QSF_SFA_FRAME_OVERHEAD + (uint64_t) s->len;
    res->rows += rows;
    res->uncounted += countable ? 0 : 1;
    a->deltas |= count > 0;
    return rc;
}

static int on_check(qsf_rv *v, const qsf_rv_frame *s, void *user, qsf_errinfo *err) {
    sa *a = user;
    qsf_rv_kind k = {.commits = true};
    int rc = s->intact ? qsf_rv_frame_kind(s, &k, err) : QSF_OK;
    (void) v;
    bool inside = s->fsn >= a->req->from && s->fsn <= a->req->to;
    if (inside && k.qwp && k.tables == 0 && a->empty++ == 0)
        a->first_empty = s->fsn;
    if (rc == QSF_OK && inside)
        rc = in_span(a, s, err);
    if (rc != QSF_OK || !k.commits)
        return rc;
    a->group_start = s->fsn + 1;
    if (s->fsn >= a->req->to) {
        a->end = s->fsn;
        return STOP;
    }
    return QSF_OK;
}

static int check_bounds(const sa *a, qsf_errinfo *err) {
    const qsf_setaside_req *r = a->req;
    int64_t acked = a->plan->acked, last = published(a->plan);
    const char *p = a->rec.slot.path;
    if (r->to <= acked)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "slot %s: FSN %lld..%lld is acknowledged already (ackedFsn %lld): "
                           "nothing to set aside",
                           p, (long long) r->from, (long long) r->to, (long long) acked);
    if (r->from <= acked)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "slot %s: FSN %lld..%lld reaches into what is acknowledged (ackedFsn "
                           "%lld); the frames still to send start at FSN %lld",
                           p, (long long) r->from, (long long) r->to, (long long) acked,
                           (long long) acked + 1);
    if (r->to > last)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "slot %s: FSN %lld is beyond the last frame (FSN %lld)", p,
                           (long long) r->to, (long long) last);
    return QSF_OK;
}

/* Whole flushes only: the flush holding `from` starts there, the one holding
 * `to` ends there. Otherwise the span they make up is named. */
static int check_flushes(const sa *a, qsf_errinfo *err) {
    const qsf_setaside_req *r = a->req;
    if (a->span_start == r->from && a->end == r->to)
        return QSF_OK;
    char end[48] = "(no committing frame yet)";
    if (a->end >= r->to)
        snprintf(end, sizeof end, "%lld", (long long) a->end);
    return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                       "slot %s: FSN %lld..%lld is not whole flushes: the flushes holding them "
                       "span FSN %lld..%s, and a flush is delivered or set aside whole",
                       a->rec.slot.path, (long long) r->from, (long long) r->to,
                       (long long) a->span_start, end);
}

/* An interrupted set-aside of this span: a SET_ASIDE record without its DONE
 * whose frames are the span's, where the slot still holds them (the rest it
 * replaced already). */
typedef struct match {
    const sa *a;
    uint32_t i;
    bool same;
} match;

static int on_recorded(void *user, uint32_t crc, const uint8_t *payload, uint32_t len) {
    (void) payload;
    (void) len;
    match *m = user;
    m->same &= m->a->gone[m->i] || m->a->crcs[m->i] == crc;
    m->i++;
    return 0;
}

static int find_prepared(sa *a, const qsf_rejected_list *l, qsf_errinfo *err) {
    uint64_t n = (uint64_t) (a->req->to - a->req->from + 1);
    for (uint32_t i = l->n; i-- > 0;) {
        const qsf_rejected_rec *r = &l->v[i];
        if (r->kind != QSF_RJR_SET_ASIDE || r->done || r->from != a->req->from ||
            r->to != a->req->to || r->frames != n)
            continue;
        match m = {.a = a, .same = true};
        int rc = qsf_rejected_frames(a->rec.slot.dirfd, a->rec.slot.path, r, on_recorded, &m, err);
        if (rc != QSF_OK)
            return rc;
        if (m.same) {
            a->prepared = r;
            return QSF_OK;
        }
    }
    return QSF_OK;
}

/* Recovery retires a span given up (placeholders) by itself: only the rest of
 * an interrupted set-aside of the span is finished; any other is refused. */
static int check_given_up(sa *a, const qsf_rejected_list *l, qsf_errinfo *err) {
    int rc = find_prepared(a, l, err);
    if (rc != QSF_OK)
        return rc;
    if (a->prepared) {
        const qsf_rejected_rec *r = a->prepared;
        a->res->resumed = true;
        a->res->frames = r->frames;
        a->res->rows = r->rows;
        a->res->uncounted = r->uncounted;
        a->res->bytes = r->offset + r->len - 4 - r->frames_off;
        return QSF_OK;
    }
    if (a->given_up > 0)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "slot %s: %u FSNs of %lld..%lld are given up already (a damaged "
                           "flush, or an earlier set-aside): they are never sent",
                           a->rec.slot.path, a->given_up, (long long) a->req->from,
                           (long long) a->req->to);
    if (a->empty > 0) /* qsf stores no table-less frame but these */
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "slot %s: FSN %lld holds no tables: it is what an earlier set-aside "
                           "or recovery left in place of a frame (nothing to set aside)",
                           a->rec.slot.path, (long long) a->first_empty);
    return QSF_OK;
}

/* A slot without a usable .symbol-dict has only the frames to rebuild the
 * dictionary from: a later frame may need the symbols one of the span
 * introduces, and would then be given up (docs/FORMAT.md §6.9). Refused
 * rather than losing frames nobody asked to set aside. */
static int on_later_delta(qsf_rv *v, const qsf_rv_frame *s, void *user, qsf_errinfo *err) {
    uint64_t start = 0, count; /* 0: no delta read (a given-up or damaged frame) */
    bool look = s->intact && !qsf_rv_given_up(v, s->fsn);
    int rc = look ? delta_count(s, &start, &count, err) : QSF_OK;
    if (rc != QSF_OK || start == 0)
        return rc;
    *(int64_t *) user = s->fsn;
    return STOP;
}

static int check_dictionary(sa *a, qsf_errinfo *err) {
    if (!a->rec.symdict.self_sufficient || !a->deltas || a->req->to >= published(a->plan))
        return QSF_OK;
    int64_t needs = -1;
    int rc = qsf_rv_walk(a->v, a->req->to + 1, published(a->plan), on_later_delta, &needs, err);
    if (rc != QSF_OK && rc != STOP)
        return rc;
    return needs < 0 ? QSF_OK
                     : qsf_err_set(err, QSF_E_INVAL, 0, 0,
                                   "slot %s has no usable %s and frame FSN %lld may need symbols "
                                   "that FSN %lld..%lld introduce: setting them aside would make "
                                   "it unreplayable",
                                   a->rec.slot.path, QSF_NAME_SYMDICT, (long long) needs,
                                   (long long) a->req->from, (long long) a->req->to);
}

/* ---- the segments of the span ---- */

static bool overlaps(const qsf_rv_file *s, int64_t from, int64_t to) {
    int64_t last = s->info.base_seq + (int64_t) s->info.frame_count - 1;
    return s->info.frame_count > 0 && s->info.base_seq <= to && last >= from;
}

/* The placeholders must fit where the frames were: a frame of fewer than 22
 * bytes (an opaque one) becomes a larger placeholder. */
typedef struct fit {
    int64_t grow;
} fit;

static int on_fit(qsf_rv *v, const qsf_rv_frame *s, void *user, qsf_errinfo *err) {
    (void) v;
    (void) err;
    if (s->intact)
        ((fit *) user)->grow +=
            QSF_RV_PLACEHOLDER_BYTES - (int64_t) (QSF_SFA_FRAME_OVERHEAD + s->len);
    return QSF_OK;
}

static int fits(sa *a, const qsf_rv_file *s, qsf_errinfo *err) {
    int64_t last = s->info.base_seq + (int64_t) s->info.frame_count - 1;
    int64_t from = a->req->from > s->info.base_seq ? a->req->from : s->info.base_seq;
    fit f = {0};
    int rc = qsf_rv_walk(a->v, from, a->req->to < last ? a->req->to : last, on_fit, &f, err);
    if (rc != QSF_OK || (int64_t) s->info.last_good + f.grow <= (int64_t) s->info.file_size)
        return rc;
    return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                       "slot %s: the placeholders for FSN %lld..%lld do not fit in %s (frames "
                       "smaller than %d bytes in a full segment)",
                       a->rec.slot.path, (long long) a->req->from, (long long) a->req->to,
                       s->info.name, QSF_RV_PLACEHOLDER_BYTES);
}

static int check_fit(sa *a, qsf_errinfo *err) {
    const qsf_rv_result *p = a->plan;
    int rc = QSF_OK;
    for (uint32_t i = 0; rc == QSF_OK && i < p->nchain; i++)
        if (overlaps(&p->files[p->chain[i]], a->req->from, a->req->to))
            rc = fits(a, &p->files[p->chain[i]], err);
    return rc;
}

static int check_span(sa *a, const qsf_rejected_list *l, qsf_errinfo *err) {
    int rc = check_bounds(a, err);
    if (rc != QSF_OK)
        return rc;
    size_t n = (size_t) (a->req->to - a->req->from + 1);
    a->crcs = calloc(n, sizeof *a->crcs);
    a->gone = calloc(n, sizeof *a->gone);
    if (!a->crcs || !a->gone)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a span of %zu frames", n);
    a->group_start = a->plan->acked + 1;
    a->span_start = a->end = -1;
    rc = qsf_rv_walk(a->v, a->plan->acked + 1, published(a->plan), on_check, a, err);
    if (rc == STOP)
        rc = QSF_OK;
    if (rc == QSF_OK)
        rc = check_flushes(a, err);
    if (rc == QSF_OK)
        rc = check_given_up(a, l, err);
    if (rc == QSF_OK && !a->res->resumed)
        rc = check_dictionary(a, err);
    if (rc == QSF_OK && !a->res->resumed)
        rc = check_fit(a, err);
    return rc;
}

/* ---- the record and the rewrite ---- */

static int on_copy(qsf_rv *v, const qsf_rv_frame *s, void *user, qsf_errinfo *err) {
    (void) v;
    void **ctx = user;
    sa *a = ctx[0];
    size_t n = QSF_SFA_FRAME_OVERHEAD + (size_t) s->len;
    if (n > a->cap) {
        uint8_t *nb = realloc(a->buf, n);
        if (!nb)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a %zu-byte frame", n);
        a->buf = nb;
        a->cap = n;
    }
    int rc = qsf_read_at(s->fd, a->buf, n, s->off, s->dir, s->segment, err);
    if (rc == QSF_OK && qsf_sfa_frame_crc(a->buf + QSF_SFA_FRAME_OVERHEAD, s->len) !=
                            qsf_sfa_frame_stored_crc(a->buf))
        rc = qsf_err_set(err, QSF_E_IO, 0, 0, "frame FSN %lld in %s/%s no longer matches its CRC",
                         (long long) s->fsn, s->dir, s->segment);
    return rc == QSF_OK ? qsf_rejected_put(ctx[1], a->buf, n, err) : rc;
}

static int write_frames(void *user, qsf_rejected_writer *w, qsf_errinfo *err) {
    sa *a = user;
    void *ctx[2] = {a, w};
    return qsf_rv_walk(a->v, a->req->from, a->req->to, on_copy, ctx, err);
}

static int write_record(sa *a, int kind, int64_t at_us, const char *audit, qsf_errinfo *err) {
    qsf_rejected_new n = {.kind = kind,
                          .from = a->req->from,
                          .to = a->req->to,
                          .at_us = at_us,
                          .rows = kind == QSF_RJR_SET_ASIDE ? a->res->rows : 0,
                          .frames = kind == QSF_RJR_SET_ASIDE ? a->res->frames : 0,
                          .uncounted = kind == QSF_RJR_SET_ASIDE ? a->res->uncounted : 0,
                          .audit = audit,
                          .frames_bytes = kind == QSF_RJR_SET_ASIDE ? a->res->bytes : 0,
                          .write_frames = kind == QSF_RJR_SET_ASIDE ? write_frames : NULL,
                          .user = a};
    return qsf_rejected_append(a->rec.slot.dirfd, a->rec.slot.path, &n, err);
}

/* The span joins the flushes given up (flushes of it given up already, by an
 * interrupted set-aside, are folded into it), and each segment holding part
 * of it is rewritten, in chain order (setaside.h). */
static int rewrite_span(sa *a, qsf_errinfo *err) {
    int rc = qsf_rv_give_up(a->v, a->req->from, a->req->to, err);
    const qsf_rv_result *p = rc == QSF_OK ? qsf_rv_findings(a->v) : NULL;
    if (rc == QSF_OK && !p)
        rc = qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the chain");
    for (uint32_t i = 0; rc == QSF_OK && i < p->nchain; i++) {
        if (!overlaps(&p->files[p->chain[i]], a->req->from, a->req->to))
            continue;
        rc = qsf_rv_rewrite(a->v, p->chain[i], err);
        a->res->rewritten += rc == QSF_OK;
    }
    return rc;
}

static int carry_out(sa *a, qsf_errinfo *err) {
    int64_t at = QSF_OS->wall_us();
    audit_line(a, at);
    int rc = a->res->resumed ? QSF_OK : write_record(a, QSF_RJR_SET_ASIDE, at, a->res->audit, err);
    if (rc == QSF_OK)
        rc = rewrite_span(a, err);
    char done[512], when[64];
    iso_time(QSF_OS->wall_us(), when, sizeof when);
    snprintf(done, sizeof done,
             "%s done: FSN %lld..%lld replaced by placeholders in %u segments of the slot; never "
             "sent\n",
             when, (long long) a->req->from, (long long) a->req->to, a->res->rewritten);
    if (rc == QSF_OK)
        rc = write_record(a, QSF_RJR_DONE, at, done, err);
    if (rc == QSF_OK)
        QSF_LOGW("%.*s", (int) strlen(a->res->audit) - 1, a->res->audit);
    return rc;
}

int qsf_slot_set_aside(const char *slot_path, const qsf_setaside_req *req, qsf_setaside_result *res,
                       qsf_errinfo *err) {
    memset(res, 0, sizeof *res);
    sa a = {.req = req, .res = res};
    qsf_rejected_list l = {0};
    int rc = check_req(req, err);
    if (rc != QSF_OK)
        return rc;
    rc = open_and_plan(&a, slot_path, err);
    if (rc == QSF_OK)
        rc = qsf_rejected_read(a.rec.slot.dirfd, a.rec.slot.path, &l, err);
    if (rc == QSF_OK)
        rc = check_span(&a, &l, err);
    if (rc == QSF_OK)
        rc = carry_out(&a, err);
    qsf_rejected_list_free(&l);
    close_plan(&a);
    return rc;
}
