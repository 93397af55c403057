/* Slots holding real rows (sfrows.h). */
#include "sfrows.h"

#include "testutil.h"

#include "qwp/batch.h"
#include "qwp/encoder.h"
#include "qwp/symtab.h"
#include "sf/segfmt.h"
#include "sf/sidefile.h"
#include "sf/symdict.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct sink {
    uint8_t *img;
    uint64_t off, size;
    int64_t frames;
    qsf_symdict dict;
} sink;

static int on_syms(void *user, uint32_t first, uint32_t count, const char *const *strs,
                   const size_t *lens, qsf_errinfo *err) {
    sink *s = user;
    uint32_t l[16];
    assert_true(count <= 16);
    for (uint32_t i = 0; i < count; i++)
        l[i] = (uint32_t) lens[i];
    return qsf_symdict_append(&s->dict, first, count, strs, l, err);
}

static int on_frame(void *user, const uint8_t *frame, size_t len, bool last, qsf_errinfo *err) {
    (void) last;
    (void) err;
    sink *s = user;
    assert_true(s->off + QSF_SFA_FRAME_OVERHEAD + len <= s->size);
    qsf_sfa_frame_encode(s->img + s->off, frame, (uint32_t) len);
    s->off += QSF_SFA_FRAME_OVERHEAD + len;
    s->frames++;
    return QSF_OK;
}

static void add_row(qsf_qwp_batch *b, const char *table, int64_t k) {
    char sym[8];
    snprintf(sym, sizeof sym, "s%d", (int) (k % 3));
    assert_int_equal(qsf_qwp_batch_table(b, table, strlen(table), NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_symbol(b, "sym", 3, sym, strlen(sym), NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_col_i64(b, "k", 1, k, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_col_f64(b, "px", 2, (double) k * 1.5, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_at_micros(b, 1700000000000000LL + k, NULL), QSF_OK);
}

int64_t sr_rows_slot(const char *slot, uint64_t size, int64_t created_us, const char *table,
                     int flushes, int rows) {
    sink s = {.img = calloc(1, size), .off = QSF_SFA_HEADER_SIZE, .size = size};
    assert_non_null(s.img);
    int dfd = open(slot, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    assert_int_equal(qsf_symdict_create(&s.dict, dfd, slot, NULL), QSF_OK);
    qsf_symtab *st;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *e;
    assert_int_equal(qsf_symtab_new(&st, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_new(st, NULL, &b, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_encoder_new(&e, NULL), QSF_OK);
    qsf_qwp_enc_opts eo;
    qsf_qwp_enc_opts_default(&eo);
    for (int f = 0; f < flushes; f++) {
        for (int r = 0; r < rows; r++)
            add_row(b, table, (int64_t) f * rows + r);
        assert_int_equal(qsf_qwp_encode(e, b, &eo, on_syms, on_frame, &s, NULL, NULL), QSF_OK);
    }
    qsf_sfa_header_encode(s.img, QSF_SFA_FLAG_MANIFEST_REQUIRED, 0, created_us);
    char p[1200];
    snprintf(p, sizeof p, "%s/sf-0000000000000001.sfa", slot);
    tu_write_file(p, s.img, size);
    qsf_manifest m;
    assert_int_equal(qsf_manifest_create(dfd, slot, 0, 0, &m, NULL), QSF_OK);
    qsf_manifest_close(&m);
    qsf_symdict_destroy(&s.dict);
    close(dfd);
    qsf_qwp_encoder_free(e);
    qsf_qwp_batch_free(b);
    qsf_symtab_free(st);
    free(s.img);
    return s.frames - 1;
}
