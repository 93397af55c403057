/* Frame capture for encoder tests and fuzz targets (header only): an emit
 * callback that copies each frame, can fail on the Nth call, and a write-ahead
 * callback that records which ids were persisted, in order. */
#ifndef QSF_QWP_CAPTURE_H
#define QSF_QWP_CAPTURE_H

#include "qwp/encoder.h"

#include <stdlib.h>
#include <string.h>

typedef struct qc_frame {
    uint8_t *p;
    size_t len;
    bool last;
} qc_frame;

typedef struct qc_cap {
    qc_frame *f;
    size_t n, cap;
    long fail_at; /* emit call index (0-based) that fails; -1 never */
    long calls;
    long sym_fail_at; /* on_new_symbols call index that fails; -1 never */
    long sym_calls;
    uint32_t sym_ids[64]; /* (first, count) pairs of write-ahead calls */
    size_t nsym;
    size_t frames_at_sym[32]; /* frames emitted when each write-ahead call happened */
} qc_cap;

static inline void qc_init(qc_cap *c) {
    memset(c, 0, sizeof *c);
    c->fail_at = -1;
    c->sym_fail_at = -1;
}

static inline void qc_clear(qc_cap *c) {
    for (size_t i = 0; i < c->n; i++)
        free(c->f[i].p);
    c->n = 0;
}

static inline void qc_free(qc_cap *c) {
    qc_clear(c);
    free(c->f);
}

static inline int qc_emit(void *user, const uint8_t *frame, size_t len, bool last,
                          qsf_errinfo *err) {
    qc_cap *c = user;
    if (c->calls++ == c->fail_at) {
        if (err) {
            err->code = QSF_E_FULL;
            strcpy(err->msg, "test: emit refused");
        }
        return QSF_E_FULL;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->f = realloc(c->f, c->cap * sizeof *c->f);
    }
    c->f[c->n].p = malloc(len);
    memcpy(c->f[c->n].p, frame, len);
    c->f[c->n].len = len;
    c->f[c->n].last = last;
    c->n++;
    return QSF_OK;
}

static inline int qc_syms(void *user, uint32_t first, uint32_t count, const char *const *strs,
                          const size_t *lens, qsf_errinfo *err) {
    qc_cap *c = user;
    (void) strs;
    (void) lens;
    if (c->sym_calls++ == c->sym_fail_at) {
        if (err)
            err->code = QSF_E_IO;
        return QSF_E_IO;
    }
    if (c->nsym + 2 <= 64) {
        c->frames_at_sym[c->nsym / 2 < 32 ? c->nsym / 2 : 31] = c->n;
        c->sym_ids[c->nsym++] = first;
        c->sym_ids[c->nsym++] = count;
    }
    return QSF_OK;
}

#endif
