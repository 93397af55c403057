/* Read-only walk over a slot's frames (dump.h), riding on the inspection's
 * dry-run state: the chain walk of recovery (recover_walk.c) with the plan's
 * verdict on each FSN. */
#include "sfops/dump.h"

#include "err.h"
#include "os/os.h"
#include "qwp/peek.h"
#include "sf/recover_int.h"
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
    int user_rc; /* what the caller's callback returned */
} walk;

static int state_of(const rc_state *st, const qsf_slot_inspection *in, int64_t fsn) {
    if (fsn <= in->acked_fsn)
        return QSF_FRAME_ACKED;
    if (st->cut.from <= st->cut.to && fsn >= st->cut.from)
        return QSF_FRAME_CUT;
    return qsf_rc_given_up(st, fsn) ? QSF_FRAME_RETIRED : QSF_FRAME_PENDING;
}

/* The payload of an intact frame into w->buf, checked against its CRC: the
 * file may have changed since the scan. */
static int read_payload(walk *w, rc_reader *r, const rc_slot *s, qsf_errinfo *err) {
    if (s->len > w->cap) {
        uint8_t *nb = realloc(w->buf, s->len);
        if (!nb)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a %u-byte frame", s->len);
        w->buf = nb;
        w->cap = s->len;
    }
    uint8_t env[QSF_SFA_FRAME_OVERHEAD];
    int rc = qsf_read_at(r->fd, env, sizeof env, s->off, r->dir, r->name, err);
    if (rc == QSF_OK && s->len)
        rc = qsf_read_at(r->fd, w->buf, s->len, s->off + sizeof env, r->dir, r->name, err);
    if (rc == QSF_OK && (qsf_sfa_frame_len(env) != s->len ||
                         qsf_sfa_frame_crc(w->buf, s->len) != qsf_sfa_frame_stored_crc(env)))
        rc = qsf_err_set(err, QSF_E_IO, 0, 0,
                         "frame FSN %lld in %s/%s changed while it was read (a live sender)",
                         (long long) s->fsn, r->dir, r->name);
    return rc;
}

static int describe(rc_reader *r, const rc_slot *s, qsf_dump_frame *f, qsf_errinfo *err) {
    const uint8_t *p;
    size_t got;
    int rc = qsf_rc_read(r, s->off, QSF_SFA_FRAME_OVERHEAD, &p, &got, err);
    if (rc != QSF_OK)
        return rc;
    f->crc = got == QSF_SFA_FRAME_OVERHEAD ? qsf_sfa_frame_stored_crc(p) : 0;
    rc_frame_kind k;
    rc = qsf_rc_frame_kind_of(r, s, &k, err);
    f->qwp = k.qwp;
    f->flags = k.flags;
    f->tables = k.tables;
    f->placeholder = k.placeholder;
    f->empty_commit = k.qwp && k.commits && k.tables == 0;
    return rc;
}

static int on_slot(rc_state *st, rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err) {
    walk *w = user;
    if (w->o->limit && w->shown >= w->o->limit)
        return STOP;
    qsf_dump_frame f = {.fsn = s->fsn,
                        .state = state_of(st, w->in, s->fsn),
                        .intact = s->intact,
                        .segment = s->seg->info.name,
                        .offset = s->off,
                        .len = s->intact ? s->len : 0};
    int rc = s->intact ? describe(r, s, &f, err) : QSF_OK;
    if (rc == QSF_OK && s->intact && w->o->payloads) {
        rc = read_payload(w, r, s, err);
        f.payload = w->buf;
    }
    if (rc != QSF_OK)
        return rc;
    w->shown++;
    w->user_rc = w->o->frame ? w->o->frame(w->o->user, &f) : 0;
    return w->user_rc ? STOP : QSF_OK;
}

static int feed_dict(const rc_state *st, const qsf_walk_opts *o) {
    uint32_t n = qsf_rc_dict_known(st);
    for (uint32_t id = 0; o->dict && id < n; id++) {
        uint32_t len = 0;
        const char *s = qsf_rc_dict_entry(st, id, &len);
        int rc = s ? o->dict(o->user, id, s, len) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- times ---- */

static int64_t created_of(const rc_state *st, const rc_seg *s) {
    uint8_t h[QSF_SFA_HEADER_SIZE];
    qsf_sfa_header hd;
    int fd = qsf_open_regular(st->out->slot.dirfd, s->info.name, O_RDONLY, NULL);
    bool ok = fd >= 0 && qsf_read_at(fd, h, sizeof h, 0, "", "", NULL) == QSF_OK;
    if (fd >= 0)
        QSF_OS->close(fd);
    return ok && qsf_sfa_header_decode(h, &hd) == QSF_SFA_OK ? hd.created_micros : -1;
}

static int64_t mtime_of(const rc_state *st, const rc_seg *s) {
    struct stat sb;
    if (fstatat(st->out->slot.dirfd, s->info.name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    return (int64_t) sb.st_mtim.tv_sec * 1000000 + sb.st_mtim.tv_nsec / 1000;
}

static const rc_seg *holding(const rc_state *st, int64_t fsn) {
    for (uint32_t i = 0; i < st->ndata; i++) {
        const rc_seg *s = st->data[i];
        if (s->info.base_seq <= fsn && fsn < s->info.base_seq + (int64_t) s->info.frame_count)
            return s;
    }
    return st->active;
}

static void times_of(const rc_state *st, const qsf_slot_inspection *in, qsf_slot_times *t) {
    t->oldest_pending_us = t->newest_write_us = -1;
    if (!st->active || in->last_fsn < in->first_fsn)
        return;
    if (in->last_fsn > in->acked_fsn)
        t->oldest_pending_us = created_of(st, holding(st, in->acked_fsn + 1));
    t->newest_write_us = mtime_of(st, holding(st, in->last_fsn));
}

/* ---- the walk ---- */

typedef struct visit_ctx {
    const qsf_walk_opts *o;
    qsf_slot_times *times;
} visit_ctx;

static int visit(rc_state *st, qsf_slot_inspection *in, void *user, qsf_errinfo *err) {
    visit_ctx *v = user;
    if (v->times)
        times_of(st, in, v->times);
    if (in->verdict != QSF_OK || !st->active || in->last_fsn < in->first_fsn)
        return QSF_OK;
    walk w = {.o = v->o, .in = in};
    w.user_rc = feed_dict(st, v->o);
    int64_t from = v->o->from < in->first_fsn ? in->first_fsn : v->o->from;
    if (v->o->pending_only && from <= in->acked_fsn)
        from = in->acked_fsn + 1;
    int64_t to = v->o->to < 0 || v->o->to > in->last_fsn ? in->last_fsn : v->o->to;
    int rc = w.user_rc || from > to ? QSF_OK : qsf_rc_walk(st, from, to, on_slot, &w, err);
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
