/* Source positions of the public API (include/qsf.h, "Resuming your
 * source"): the position set is carried by the next commit into the ring
 * (sf/ring_srcpos.c), where it is persisted with that flush. */
#include "sender/internal.h"

#include "err.h"

QSF_API int qsf_set_source_position(qsf_sender *s, const void *pos, size_t len, qsf_errinfo *err) {
    int rc = qsf_sender_enter(s, err);
    if (rc != QSF_OK)
        return rc;
    rc = qsf_ring_srcpos_stage(s->ring, pos, len, err);
    qsf_sender_leave(s);
    return rc;
}

/* qsf_flush with nothing to publish still commits a position set before it. */
int qsf_sender_srcpos_empty(qsf_sender *s, qsf_errinfo *err) {
    int rc = qsf_ring_srcpos_commit_empty(s->ring, err);
    return rc == QSF_OK ? QSF_OK : qsf_sender_failed(s, rc, err);
}

static int position(qsf_sender *s, bool acked, void *buf, size_t cap, size_t *len, int64_t *fsn,
                    qsf_errinfo *err) {
    int rc = qsf_sender_enter(s, err);
    if (rc != QSF_OK)
        return rc;
    rc = qsf_ring_source_position(s->ring, acked, buf, cap, len, fsn, err);
    qsf_sender_leave(s);
    return rc;
}

QSF_API int qsf_source_position(qsf_sender *s, void *buf, size_t cap, size_t *len, int64_t *fsn,
                                qsf_errinfo *err) {
    return position(s, false, buf, cap, len, fsn, err);
}

QSF_API int qsf_acked_source_position(qsf_sender *s, void *buf, size_t cap, size_t *len,
                                      int64_t *fsn, qsf_errinfo *err) {
    return position(s, true, buf, cap, len, fsn, err);
}
