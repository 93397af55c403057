/* Read-only walk over a slot's frames (dump.h), riding on the inspection's
 * dry-run state: the chain walk of recovery (recover_walk.c) with the plan's
 * verdict on each FSN. */
#include "sfops/dump.h"

#include "err.h"
#include "os/os.h"
#include "qwp/peek.h"
#include "sf/recover_view.h"
#include "sf/segfmt.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STOP 1 /* a walk callback's "enough": not an error */

const char *qsf_frame_state_name(int state) {
    static const char *const names[] = {"acked", "pending", "retired", "cut"};
    return state >= 0 && state <= QSF_FRAME_CUT ? names[state] : "?";
}

typedef struct walk {
    const qsf_walk_opts *o;
    const qsf_slot_inspection *in;
    uint64_t shown;
    uint8_t *buf; /* payload copy */
    size_t cap;
    int user_rc;              /* what the caller's callback returned */
    int64_t cut_from, cut_to; /* the interrupted flush an open cuts (from > to: none) */
} walk;

static int state_of(const qsf_rv *v, const walk *w, int64_t fsn) {
    if (fsn <= w->in->acked_fsn)
        return QSF_FRAME_ACKED;
    if (w->cut_from <= w->cut_to && fsn >= w->cut_from)
        return QSF_FRAME_CUT;
    return qsf_rv_given_up(v, fsn) ? QSF_FRAME_RETIRED : QSF_FRAME_PENDING;
}

/* The payload of an intact frame into w->buf, checked against its CRC: the
 * file may have changed since the scan. */
static int read_payload(walk *w, const qsf_rv_frame *s, qsf_errinfo *err) {
    if (s->len > w->cap) {
        uint8_t *nb = realloc(w->buf, s->len);
        if (!nb)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a %u-byte frame", s->len);
        w->buf = nb;
        w->cap = s->len;
    }
    uint8_t env[QSF_SFA_FRAME_OVERHEAD];
    int rc = qsf_read_at(s->fd, env, sizeof env, s->off, s->dir, s->segment, err);
    if (rc == QSF_OK && s->len)
        rc = qsf_read_at(s->fd, w->buf, s->len, s->off + sizeof env, s->dir, s->segment, err);
    if (rc == QSF_OK && (qsf_sfa_frame_len(env) != s->len ||
                         qsf_sfa_frame_crc(w->buf, s->len) != qsf_sfa_frame_stored_crc(env)))
        rc = qsf_err_set(err, QSF_E_IO, 0, 0,
                         "frame FSN %lld in %s/%s changed while it was read (a live sender)",
                         (long long) s->fsn, s->dir, s->segment);
    return rc;
}

static int describe(const qsf_rv_frame *s, qsf_dump_frame *f, qsf_errinfo *err) {
    const uint8_t *p;
    size_t got;
    int rc = qsf_rv_envelope(s, &p, &got, err);
    if (rc != QSF_OK)
        return rc;
    f->crc = got == QSF_SFA_FRAME_OVERHEAD ? qsf_sfa_frame_stored_crc(p) : 0;
    qsf_rv_kind k;
    rc = qsf_rv_frame_kind(s, &k, err);
    f->qwp = k.qwp;
    f->flags = k.flags;
    f->tables = k.tables;
    f->placeholder = k.placeholder;
    f->empty_commit = k.qwp && k.commits && k.tables == 0;
    return rc;
}

static int on_slot(qsf_rv *v, const qsf_rv_frame *s, void *user, qsf_errinfo *err) {
    walk *w = user;
    if (w->o->limit && w->shown >= w->o->limit)
        return STOP;
    qsf_dump_frame f = {.fsn = s->fsn,
                        .state = state_of(v, w, s->fsn),
                        .intact = s->intact,
                        .segment = s->segment,
                        .offset = s->off,
                        .len = s->intact ? s->len : 0};
    int rc = s->intact ? describe(s, &f, err) : QSF_OK;
    if (rc == QSF_OK && s->intact && w->o->payloads) {
        rc = read_payload(w, s, err);
        f.payload = w->buf;
    }
    if (rc != QSF_OK)
        return rc;
    w->shown++;
    w->user_rc = w->o->frame ? w->o->frame(w->o->user, &f) : 0;
    return w->user_rc ? STOP : QSF_OK;
}

static int feed_dict(const qsf_rv *v, const qsf_walk_opts *o) {
    uint32_t n = qsf_rv_dict_known(v);
    for (uint32_t id = 0; o->dict && id < n; id++) {
        uint32_t len = 0;
        const char *s = qsf_rv_dict_entry(v, id, &len);
        int rc = s ? o->dict(o->user, id, s, len) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- times ---- */

static int64_t created_of(const qsf_slot *slot, const qsf_rv_file *s) {
    uint8_t h[QSF_SFA_HEADER_SIZE];
    qsf_sfa_header hd;
    int fd = qsf_open_regular(slot->dirfd, s->info.name, O_RDONLY, NULL);
    bool ok = fd >= 0 && qsf_read_at(fd, h, sizeof h, 0, "", "", NULL) == QSF_OK;
    if (fd >= 0)
        QSF_OS->close(fd);
    return ok && qsf_sfa_header_decode(h, &hd) == QSF_SFA_OK ? hd.created_micros : -1;
}

static int64_t mtime_of(const qsf_slot *slot, const qsf_rv_file *s) {
    struct stat sb;
    if (fstatat(slot->dirfd, s->info.name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    return (int64_t) sb.st_mtim.tv_sec * 1000000 + sb.st_mtim.tv_nsec / 1000;
}

/* The chain's segment holding fsn; the active one when none does. */
static const qsf_rv_file *holding(const qsf_rv_result *st, int64_t fsn) {
    for (uint32_t i = 0; i < st->nchain; i++) {
        const qsf_rv_file *s = &st->files[st->chain[i]];
        if (s->info.base_seq <= fsn && fsn < s->info.base_seq + (int64_t) s->info.frame_count)
            return s;
    }
    return &st->files[st->active];
}

static void times_of(const qsf_rv_result *st, const qsf_slot *slot, const qsf_slot_inspection *in,
                     qsf_slot_times *t) {
    t->oldest_pending_us = t->newest_write_us = -1;
    if (st->active < 0 || in->last_fsn < in->first_fsn)
        return;
    if (in->last_fsn > in->acked_fsn)
        t->oldest_pending_us = created_of(slot, holding(st, in->acked_fsn + 1));
    t->newest_write_us = mtime_of(slot, holding(st, in->last_fsn));
}

/* ---- the walk ---- */

typedef struct visit_ctx {
    const qsf_walk_opts *o;
    qsf_slot_times *times;
} visit_ctx;

static int visit(qsf_rv *rv, const qsf_slot *slot, qsf_slot_inspection *in, void *user,
                 qsf_errinfo *err) {
    visit_ctx *v = user;
    const qsf_rv_result *st = qsf_rv_findings(rv);
    if (!st)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the plan's result");
    if (v->times)
        times_of(st, slot, in, v->times);
    if (in->verdict != QSF_OK || st->active < 0 || in->last_fsn < in->first_fsn)
        return QSF_OK;
    walk w = {.o = v->o, .in = in, .cut_from = st->cut.from, .cut_to = st->cut.to};
    w.user_rc = feed_dict(rv, v->o);
    int64_t from = v->o->from < in->first_fsn ? in->first_fsn : v->o->from;
    if (v->o->pending_only && from <= in->acked_fsn)
        from = in->acked_fsn + 1;
    int64_t to = v->o->to < 0 || v->o->to > in->last_fsn ? in->last_fsn : v->o->to;
    int rc = w.user_rc || from > to ? QSF_OK : qsf_rv_walk(rv, from, to, on_slot, &w, err);
    free(w.buf);
    if (rc == STOP)
        rc = QSF_OK;
    if (rc == QSF_OK && w.user_rc)
        rc = w.user_rc < 0 ? w.user_rc
                           : qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "the walk was stopped");
    return rc;
}

int qsf_slot_walk(const char *slot_path, const qsf_walk_opts *o, qsf_slot_inspection *in,
                  qsf_slot_times *times, qsf_errinfo *err) {
    visit_ctx v = {.o = o, .times = times};
    if (times)
        times->oldest_pending_us = times->newest_write_us = -1;
    return qsf_slot_inspect_with(slot_path, in, visit, &v, err);
}
