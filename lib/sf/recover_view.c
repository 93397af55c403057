/* Recovery as the operator tooling sees it (recover_view.h): thin wrappers
 * over recovery's passes (recover_int.h) on a dry-run state, and a copy of
 * what they found in plain structs. The one file outside recovery that reads
 * its internal state. */
#include "sf/recover_view.h"

#include "err.h"
#include "sf/recover_int.h"
#include "sf/sfa.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(QSF_RV_PLACEHOLDER_BYTES == RC_MIN_FRAME, "a placeholder's size");
_Static_assert((int) QSF_RV_KEEP == (int) RC_KEEP && (int) QSF_RV_DELETE == (int) RC_DELETE &&
                   (int) QSF_RV_QUARANTINE == (int) RC_QUARANTINE &&
                   (int) QSF_RV_DEBRIS == (int) RC_DEBRIS,
               "the fates of recover_int.h");

struct qsf_rv {
    rc_state st;
    rc_carry carry;
    qsf_rv_result res; /* the last qsf_rv_result; its arrays below */
    qsf_rv_file *files;
    uint32_t *chain;
    qsf_rv_span *spans;
};

/* What a walk's callback reads through: the reader and the slot of the FSN. */
struct qsf_rv_pos {
    rc_reader *r;
    const rc_slot *s;
};

int qsf_rv_open(qsf_rv **out_v, qsf_slot_recovered *out, qsf_errinfo *err) {
    qsf_rv *v = calloc(1, sizeof *v);
    uint8_t *buf = malloc(QSF_RECOVER_BUF);
    *out_v = NULL;
    if (!v || !buf) {
        free(v);
        free(buf);
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to plan the recovery of %s",
                           out->slot.path);
    }
    v->st = (rc_state){.out = out,
                       .carry = &v->carry,
                       .buf = buf,
                       .dry_run = true,
                       .wm = -1,
                       .new_head = -1,
                       .new_active = -1};
    *out_v = v;
    return QSF_OK;
}

void qsf_rv_close(qsf_rv *v) {
    if (!v)
        return;
    qsf_rc_state_free(&v->st);
    free(v->carry.losses);
    free(v->files);
    free(v->chain);
    free(v->spans);
    free(v);
}

int qsf_rv_scan(qsf_rv *v, qsf_errinfo *err) {
    int rc = qsf_rc_enumerate(&v->st, err);
    return rc == QSF_OK ? qsf_rc_scan_all(&v->st, err) : rc;
}

int qsf_rv_chain(qsf_rv *v, bool *empty, qsf_errinfo *err) {
    *empty = false;
    return qsf_rc_build_chain(&v->st, empty, err);
}

int qsf_rv_plan(qsf_rv *v, int64_t watermark_fsn, qsf_errinfo *err) {
    v->st.wm = watermark_fsn;
    int rc = qsf_rc_dict_begin(&v->st, err);
    return rc == QSF_OK ? qsf_rc_plan(&v->st, err) : rc;
}

int qsf_rv_publish(qsf_rv *v, qsf_errinfo *err) {
    return qsf_rc_publish_chain(&v->st, err);
}

int64_t qsf_rv_seed_acked(const qsf_rv *v, int64_t lowest_base, int64_t published, bool *ignored) {
    return qsf_rc_seed_acked(lowest_base, published, v->st.wm, ignored);
}

int64_t qsf_rv_watermark(const qsf_rv *v) {
    return v->st.wm;
}

int qsf_rv_dict_finish(qsf_rv *v, qsf_errinfo *err) {
    return qsf_rc_dict_finish(&v->st, err);
}

uint32_t qsf_rv_dict_known(const qsf_rv *v) {
    return qsf_rc_dict_known(&v->st);
}

const char *qsf_rv_dict_entry(const qsf_rv *v, uint32_t id, uint32_t *len) {
    return qsf_rc_dict_entry(&v->st, id, len);
}

bool qsf_rv_given_up(const qsf_rv *v, int64_t fsn) {
    return qsf_rc_given_up(&v->st, fsn);
}

/* ---- the result ---- */

static qsf_rv_file file_of(const rc_seg *s) {
    return (qsf_rv_file){.info = s->info,
                         .corrupt = s->corrupt,
                         .fate = s->fate,
                         .torn_bytes = s->torn_bytes,
                         .residue_end = s->residue_end,
                         .rewrite = s->rewrite,
                         .unsalvaged = s->unsalvaged};
}

static qsf_rv_span span_of(const rc_span *sp) {
    return (qsf_rv_span){.from = sp->from,
                         .to = sp->to,
                         .destroyed = sp->destroyed,
                         .retired = sp->retired,
                         .rows = sp->rows,
                         .uncounted = sp->uncounted,
                         .exact = sp->exact,
                         .segment = sp->seg ? sp->seg->info.name : NULL,
                         .what = sp->what};
}

/* The chain's members (sealed oldest first, the active one last) as indices
 * of st->segs. */
static uint32_t chain_of(const rc_state *st, uint32_t *v) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < st->ndata; i++)
        if (st->data[i] != st->active)
            v[n++] = (uint32_t) (st->data[i] - st->segs);
    if (st->active)
        v[n++] = (uint32_t) (st->active - st->segs);
    return n;
}

static bool grow_arrays(qsf_rv *v) {
    const rc_state *st = &v->st;
    free(v->files);
    free(v->chain);
    free(v->spans);
    v->files = malloc((st->nsegs + 1) * sizeof *v->files);
    v->chain = malloc((st->ndata + 1) * sizeof *v->chain);
    v->spans = malloc((st->nspans + 1) * sizeof *v->spans);
    return v->files && v->chain && v->spans;
}

const qsf_rv_result *qsf_rv_findings(qsf_rv *v) {
    const rc_state *st = &v->st;
    if (!grow_arrays(v))
        return NULL;
    for (uint32_t i = 0; i < st->nsegs; i++)
        v->files[i] = file_of(&st->segs[i]);
    for (uint32_t i = 0; i < st->nspans; i++)
        v->spans[i] = span_of(&st->spans[i]);
    v->res = (qsf_rv_result){.files = v->files,
                             .nfiles = st->nsegs,
                             .active = st->active ? (int32_t) (st->active - st->segs) : -1,
                             .chain = v->chain,
                             .nchain = chain_of(st, v->chain),
                             .tmp = (const char(*)[256]) st->tmp,
                             .ntmp = st->ntmp,
                             .legacy = st->legacy,
                             .rerun = st->rerun,
                             .new_head = st->new_head,
                             .new_active = st->new_active,
                             .acked = st->acked,
                             .spans = v->spans,
                             .nspans = st->nspans,
                             .cut = span_of(&st->cut),
                             .repairs = qsf_rc_plan_repairs(st)};
    return &v->res;
}

/* ---- the walk ---- */

typedef struct walk_ctx {
    qsf_rv *v;
    qsf_rv_walk_fn fn;
    void *user;
} walk_ctx;

static int on_slot(rc_state *st, rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err) {
    (void) st;
    const walk_ctx *w = user;
    struct qsf_rv_pos pos = {.r = r, .s = s};
    qsf_rv_frame f = {.fsn = s->fsn,
                      .intact = s->intact,
                      .segment = s->seg->info.name,
                      .off = s->off,
                      .len = s->len,
                      .fd = r->fd,
                      .dir = r->dir,
                      .pos = &pos};
    return w->fn(w->v, &f, w->user, err);
}

int qsf_rv_walk(qsf_rv *v, int64_t from, int64_t to, qsf_rv_walk_fn fn, void *user,
                qsf_errinfo *err) {
    walk_ctx w = {.v = v, .fn = fn, .user = user};
    return qsf_rc_walk(&v->st, from, to, on_slot, &w, err);
}

int qsf_rv_frame_kind(const qsf_rv_frame *f, qsf_rv_kind *k, qsf_errinfo *err) {
    rc_frame_kind rk;
    int rc = qsf_rc_frame_kind_of(f->pos->r, f->pos->s, &rk, err);
    *k = (qsf_rv_kind){.qwp = rk.qwp,
                       .commits = rk.commits,
                       .placeholder = rk.placeholder,
                       .tables = rk.tables,
                       .flags = rk.flags};
    return rc;
}

int qsf_rv_envelope(const qsf_rv_frame *f, const uint8_t **p, size_t *got, qsf_errinfo *err) {
    return qsf_rc_read(f->pos->r, f->off, QSF_SFA_FRAME_OVERHEAD, p, got, err);
}

int qsf_rv_frame_rows(const qsf_rv_frame *f, uint64_t *rows, bool *countable, qsf_errinfo *err) {
    return qsf_rc_frame_rows(f->pos->r, f->pos->s, rows, countable, err);
}

int qsf_rv_delta(const qsf_rv_frame *f, uint64_t *start, uint64_t *count, bool *bad,
                 qsf_errinfo *err) {
    rc_delta d;
    int rc = qsf_rc_delta_open(f->pos->r, f->pos->s, &d, bad, err);
    if (rc == QSF_OK && !*bad) {
        *start = d.start;
        *count = d.count;
    }
    return rc;
}

/* ---- giving a span up ---- */

int qsf_rv_give_up(qsf_rv *v, int64_t from, int64_t to, qsf_errinfo *err) {
    rc_state *st = &v->st;
    rc_span *n = realloc(st->spans, (st->nspans + 1) * sizeof *n);
    if (!n)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the set-aside span");
    st->spans = n;
    uint32_t k = 0;
    for (uint32_t i = 0; i < st->nspans; i++)
        if (n[i].from < from || n[i].to > to)
            n[k++] = n[i];
    st->nspans = k;
    uint32_t at = 0;
    while (at < st->nspans && n[at].to < from)
        at++;
    memmove(&n[at + 1], &n[at], (st->nspans - at) * sizeof *n);
    n[at] = (rc_span){.from = from, .to = to};
    st->nspans++;
    return QSF_OK;
}

int qsf_rv_rewrite(qsf_rv *v, uint32_t file, qsf_errinfo *err) {
    if (file >= v->st.nsegs)
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "no scanned file %u to rewrite", file);
    return qsf_rc_rewrite_segment(&v->st, &v->st.segs[file], INT64_MAX, false, err);
}
