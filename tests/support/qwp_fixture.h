/* Shared cmocka fixture of the codec tests (header only): a symbol table, a
 * batch on it, an encoder, a frame capture, a "connection" dictionary and a
 * decode result. */
#ifndef QSF_QWP_FIXTURE_H
#define QSF_QWP_FIXTURE_H

#include "testutil.h"

#include "qwp_capture.h"
#include "qwp/batch.h"
#include "qwpdec/decoder.h"
#include "qwp/encoder.h"

#include <stdlib.h>

typedef struct fx {
    qsf_symtab *st;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *e;
    qc_cap cap;
    qsf_qwp_dict *dict;
    qsf_qwp_msg *msg;
    qsf_errinfo err;
} fx;

static inline int fx_setup_with(void **state, const qsf_qwp_batch_opts *o) {
    fx *f = calloc(1, sizeof *f);
    assert_int_equal(qsf_symtab_new(&f->st, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_new(f->st, o, &f->b, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_encoder_new(&f->e, NULL), QSF_OK);
    qc_init(&f->cap);
    f->dict = qsf_qwp_dict_new();
    f->msg = qsf_qwp_msg_new();
    *state = f;
    return 0;
}

static inline int fx_setup(void **state) {
    return fx_setup_with(state, NULL);
}

static inline int fx_teardown(void **state) {
    fx *f = *state;
    qc_free(&f->cap);
    qsf_qwp_msg_free(f->msg);
    qsf_qwp_dict_free(f->dict);
    qsf_qwp_encoder_free(f->e);
    qsf_qwp_batch_free(f->b);
    qsf_symtab_free(f->st);
    free(f);
    return 0;
}

#endif
