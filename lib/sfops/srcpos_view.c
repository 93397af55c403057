/* The source positions an open would report, read through recovery's dry
 * run (srcpos_view.h). */
#include "sfops/srcpos_view.h"

#include "err.h"
#include "sf/segfmt.h"

#include <string.h>

typedef struct dry {
    qsf_rv *v;
    bool planned;
    int rc; /* the first error of a frame's read */
    qsf_errinfo err;
} dry;

/* What stands at one FSN of the chain. */
typedef struct at_fsn {
    bool found, intact;
    uint32_t crc; /* stored, of an intact frame */
} at_fsn;

static int frame_at(qsf_rv *v, const qsf_rv_frame *f, void *user, qsf_errinfo *err) {
    (void) v;
    at_fsn *a = user;
    a->found = true;
    if (!f->intact)
        return 1; /* an open stores a placeholder there: another frame */
    const uint8_t *p;
    size_t got = 0;
    int rc = qsf_rv_envelope(f, &p, &got, err);
    if (rc != QSF_OK)
        return rc;
    a->intact = got == QSF_SFA_FRAME_OVERHEAD;
    a->crc = a->intact ? qsf_sfa_frame_stored_crc(p) : 0;
    return 1;
}

/* qsf_srcpos_survived_fn over the plan, as flush_survived (ring_srcpos.c)
 * over the ring: a frame that is not in the chain (below its head, FSN -1)
 * leaves nothing to check. A frame that cannot be read counts as surviving,
 * and the error is the view's. */
static bool survived(void *user, const qsf_srcpos_rec *rec, bool check_frame) {
    dry *d = user;
    if (!d->planned)
        return true;
    if (qsf_rv_given_up(d->v, rec->fsn))
        return false;
    if (!check_frame || !rec->has_frame || rec->fsn < 0)
        return true;
    at_fsn a = {0};
    qsf_errinfo e;
    int rc = qsf_rv_walk(d->v, rec->fsn, rec->fsn, frame_at, &a, &e);
    if (rc < 0 && d->rc == QSF_OK) {
        d->rc = rc;
        d->err = e;
    }
    return rc < 0 || !a.found || (a.intact && a.crc == rec->frame_crc);
}

int qsf_slot_srcpos_view(qsf_rv *v, bool planned, const char *slot_path, int64_t published,
                         int64_t acked, qsf_srcpos_view *out, qsf_errinfo *err) {
    dry d = {.v = v, .planned = planned, .rc = QSF_OK};
    int rc = qsf_srcpos_view_slot(slot_path, published, acked, survived, &d, out, err);
    if (rc == QSF_OK && d.rc != QSF_OK) {
        qsf_err_copy(err, &d.err);
        qsf_srcpos_view_free(out);
        rc = d.rc;
    }
    return rc;
}
