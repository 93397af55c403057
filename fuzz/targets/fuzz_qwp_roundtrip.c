/* Fuzz target: differential encode -> decode. The input drives the row model of
 * tests/support/qwp_model.h (schema, rows, values, cancels, frame cap, Gorilla);
 * the batch is encoded and every frame decoded and compared with the model.
 * Any difference aborts. */
#include "../../tests/support/qwp_capture.h"
#include "../../tests/support/qwp_model.h"

#include <stdio.h>
#include <stdlib.h>

static void check(qm_model *m, qc_cap *cc) {
    qsf_qwp_msg *msg = qsf_qwp_msg_new();
    qsf_qwp_dict *dict = qsf_qwp_dict_new();
    for (size_t i = 0; i < cc->n; i++)
        if (qm_check_frame(m, msg, dict, cc->f[i].p, cc->f[i].len) != 0) {
            fprintf(stderr, "frame %zu: %s\n", i, m->err);
            abort();
        }
    if (qm_check_done(m) != 0) {
        fprintf(stderr, "%s\n", m->err);
        abort();
    }
    qsf_qwp_dict_free(dict);
    qsf_qwp_msg_free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qm_src src = {.data = data, .len = size};
    qm_model m;
    qm_init(&m, &src);
    size_t max_frame = 400 + qm_below(&src, 8000);
    bool gorilla = qm_below(&src, 2);
    qsf_symtab *st;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *e;
    qsf_symtab_new(&st, NULL);
    qsf_qwp_batch_opts bo = {.max_row_frame = max_frame};
    qsf_qwp_batch_new(st, &bo, &b, NULL);
    qsf_qwp_encoder_new(&e, NULL);
    qc_cap cc;
    qc_init(&cc);
    qsf_errinfo err;
    while (src.pos < src.len)
        if (qm_row_build(&m, &src, b, &err) != 0) {
            fprintf(stderr, "row call failed: %s\n", err.msg);
            abort();
        }
    qsf_qwp_enc_opts eo = {.max_frame = max_frame, .gorilla = gorilla};
    if (qsf_qwp_encode(e, b, &eo, NULL, qc_emit, &cc, NULL, &err) != QSF_OK) {
        fprintf(stderr, "encode failed: %s\n", err.msg);
        abort();
    }
    for (size_t i = 0; i < cc.n; i++)
        if (cc.f[i].len > max_frame)
            abort();
    check(&m, &cc);
    qc_free(&cc);
    qsf_qwp_encoder_free(e);
    qsf_qwp_batch_free(b);
    qsf_symtab_free(st);
    qm_free(&m);
    return 0;
}
