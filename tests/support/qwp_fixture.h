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

#include <stdio.h>
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

/* Rows [from, to) of tables "t0".."t<tables-1>" (row i in table i % tables):
 * id = i, a symbol "s<i % syms>", a varchar, designated timestamp 1000 + i. */
static inline void fx_add_rows(fx *f, int from, int to, int tables, int syms) {
    for (int i = from; i < to; i++) {
        char tn[4], sym[8];
        snprintf(tn, sizeof tn, "t%d", i % tables);
        int sl = snprintf(sym, sizeof sym, "s%d", i % syms);
        assert_int_equal(qsf_qwp_batch_table(f->b, tn, 2, NULL), QSF_OK);
        assert_int_equal(qsf_qwp_batch_col_i64(f->b, "id", 2, i, NULL), QSF_OK);
        assert_int_equal(qsf_qwp_batch_symbol(f->b, "sym", 3, sym, (size_t) sl, NULL), QSF_OK);
        assert_int_equal(qsf_qwp_batch_col_varchar(f->b, "v", 1, "payload-payload", 15, NULL),
                         QSF_OK);
        assert_int_equal(qsf_qwp_batch_at_micros(f->b, 1000 + i, NULL), QSF_OK);
    }
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
