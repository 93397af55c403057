/* Fuzz target: the server-side QWP decoder on arbitrary bytes. The input is
 * decoded twice against one connection dictionary (the second pass exercises
 * overlap / redefinition and rollback), and every value of a successful decode
 * is read through the accessors. Must never crash, hang or read out of bounds. */
#include "qwpdec/decoder.h"

#include <stdint.h>
#include <stdlib.h>

static void touch_values(const qsf_qwp_msg *m) {
    volatile uint64_t sink = 0;
    for (uint32_t i = 0; i < qsf_qwp_msg_table_count(m); i++) {
        const qsf_qwp_dtable *t = qsf_qwp_msg_table(m, i);
        for (uint32_t c = 0; c < t->col_count; c++) {
            const qsf_qwp_dcol *col = &t->cols[c];
            for (uint32_t r = 0; r < t->row_count; r++) {
                int64_t vi = qsf_qwp_dcol_value_index(col, r);
                if (vi < 0)
                    continue;
                const uint8_t *p;
                size_t len;
                qsf_qwp_dcol_bytes(col, (uint32_t) vi, &p, &len);
                for (size_t k = 0; k < len; k++)
                    sink += p[k];
                if (col->type == QSF_QWP_FLOAT || col->type == QSF_QWP_DOUBLE)
                    sink += (uint64_t) (qsf_qwp_dcol_f64(col, (uint32_t) vi) != 0);
                else if (qsf_qwp_type_width(col->type) <= 8)
                    sink += (uint64_t) qsf_qwp_dcol_i64(col, (uint32_t) vi);
            }
        }
    }
    (void) sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    qsf_qwp_dict *d = qsf_qwp_dict_new();
    qsf_qwp_decode_result res;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t before = qsf_qwp_dict_size(d);
        int st = qsf_qwp_decode(m, d, data, size, NULL, &res);
        if (st == QSF_QWP_STATUS_OK)
            touch_values(m);
        else if (qsf_qwp_dict_size(d) != before)
            abort(); /* a failed frame must leave the dictionary as it was */
    }
    qsf_qwp_dict_free(d);
    qsf_qwp_msg_free(m);
    return 0;
}
