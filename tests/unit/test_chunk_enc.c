/* The chunk encoder against the row buffer's: random tables of every column
 * kind, random NULLs, Arrow offsets and symbol sets give byte-identical
 * frames through both; splits over many frames decode to every row once,
 * deferred but the last; a row no frame holds and a failing emit leave the
 * symbol table as it was. */
#include "testutil.h"

#include "chunk/chunk_enc.h"
#include "chunk_table.h"
#include "qwp/batch.h"
#include "qwp/encoder.h"
#include "qwp/types.h"
#include "qwp_capture.h"
#include "qwpdec/decoder.h"

CT_DEFINE_FEED(feed_row, qsf_qwp_batch, qsf_qwp_batch_)

typedef struct fx {
    qsf_symtab *st_rows, *st_chunk;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *e;
    qsf_chunk *c;
    qc_cap rows, chunk;
    qsf_errinfo err;
} fx;

static int setup(void **state) {
    fx *f = calloc(1, sizeof *f);
    assert_int_equal(qsf_symtab_new(&f->st_rows, NULL), QSF_OK);
    assert_int_equal(qsf_symtab_new(&f->st_chunk, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_new(f->st_rows, NULL, &f->b, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_encoder_new(&f->e, NULL), QSF_OK);
    assert_int_equal(qsf_chunk_new("t", 1, &f->c, NULL), QSF_OK);
    qc_init(&f->rows);
    qc_init(&f->chunk);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    qc_free(&f->rows);
    qc_free(&f->chunk);
    qsf_chunk_free(f->c);
    qsf_qwp_encoder_free(f->e);
    qsf_qwp_batch_free(f->b);
    qsf_symtab_free(f->st_rows);
    qsf_symtab_free(f->st_chunk);
    free(f);
    return 0;
}

static int chunk_encode(fx *f, const qsf_qwp_enc_opts *o, qsf_qwp_encode_result *res) {
    qsf_chunk_out out = {qc_syms, qc_emit, NULL, &f->chunk};
    return qsf_chunk_encode(f->c, f->st_chunk, o, &out, res, &f->err);
}

/* One table, both ways, in one frame each: the same bytes. */
static void same_frame_as_rows(fx *f, uint64_t seed, bool all_kinds, int null_pct) {
    ct_table t;
    ct_make(&t, 1 + seed % 300, seed, null_pct, all_kinds);
    for (size_t r = 0; r < t.rows; r++)
        if (feed_row(f->b, "t", &t, r, &f->err) != QSF_OK)
            fail_msg("seed %llu row %zu: %s", (unsigned long long) seed, r, f->err.msg);
    qc_clear(&f->rows);
    qc_clear(&f->chunk);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 8u << 20;
    assert_int_equal(qsf_qwp_encode(f->e, f->b, &o, qc_syms, qc_emit, &f->rows, NULL, &f->err),
                     QSF_OK);
    qsf_chunk_clear(f->c);
    if (ct_to_chunk(&t, f->c, &f->err) != QSF_OK)
        fail_msg("seed %llu: %s", (unsigned long long) seed, f->err.msg);
    qsf_qwp_encode_result res;
    if (chunk_encode(f, &o, &res) != QSF_OK)
        fail_msg("seed %llu: %s", (unsigned long long) seed, f->err.msg);
    assert_int_equal(f->rows.n, 1);
    assert_int_equal(f->chunk.n, 1);
    assert_int_equal(res.rows_consumed, t.rows);
    size_t n = f->rows.f[0].len < f->chunk.f[0].len ? f->rows.f[0].len : f->chunk.f[0].len;
    for (size_t i = 0; i < n; i++)
        if (f->rows.f[0].p[i] != f->chunk.f[0].p[i])
            fail_msg("seed %llu (%zu rows, %d columns): frames differ at byte %zu of %zu/%zu",
                     (unsigned long long) seed, t.rows, t.ncols, i, f->rows.f[0].len,
                     f->chunk.f[0].len);
    assert_int_equal(f->rows.f[0].len, f->chunk.f[0].len);
    /* the same ids were written ahead, in the same calls */
    assert_int_equal(qsf_symtab_size(f->st_rows), qsf_symtab_size(f->st_chunk));
    assert_int_equal(qsf_symtab_persisted(f->st_chunk), qsf_symtab_size(f->st_chunk));
    assert_int_equal(qsf_symtab_published(f->st_chunk), qsf_symtab_size(f->st_chunk));
    ct_free(&t);
}

static void identical_to_row_path(void **state) {
    fx *f = *state;
    for (uint64_t seed = 1; seed <= 60; seed++)
        same_frame_as_rows(f, seed, seed % 2 == 0, (int) (seed * 7 % 60));
}

/* A column NULL in every row of a frame is left out, as the row path leaves
 * out a column no row sets: the same bytes. */
static void all_null_column_left_out(void **state) {
    fx *f = *state;
    int64_t a[3] = {1, 2, 3}, ts[3] = {10, 20, 30};
    uint8_t none = 0;
    for (int r = 0; r < 3; r++) {
        assert_int_equal(qsf_qwp_batch_table(f->b, "t", 1, NULL), QSF_OK);
        assert_int_equal(qsf_qwp_batch_col_i64(f->b, "a", 1, a[r], NULL), QSF_OK);
        assert_int_equal(qsf_qwp_batch_at_micros(f->b, ts[r], NULL), QSF_OK);
    }
    assert_int_equal(qsf_qwp_encode(f->e, f->b, NULL, qc_syms, qc_emit, &f->rows, NULL, &f->err),
                     QSF_OK);
    assert_int_equal(qsf_chunk_i64(f->c, "a", 1, a, NULL, 0, 3, &f->err), QSF_OK);
    assert_int_equal(
        qsf_chunk_varchar(f->c, "b", 1, (const int32_t[]){0, 0, 0, 0}, NULL, &none, 0, 3, &f->err),
        QSF_OK);
    assert_int_equal(qsf_chunk_bool(f->c, "c", 1, &none, &none, 0, 3, &f->err), QSF_OK);
    assert_int_equal(qsf_chunk_at(f->c, ts, QSF_UNIT_MICROS, 0, 3, &f->err), QSF_OK);
    qsf_qwp_encode_result res;
    assert_int_equal(chunk_encode(f, NULL, &res), QSF_OK);
    assert_int_equal(f->rows.f[0].len, f->chunk.f[0].len);
    assert_memory_equal(f->rows.f[0].p, f->chunk.f[0].p, f->rows.f[0].len);
}

/* Many frames: each within the cap, every one but the last deferred, the
 * dictionary continuous (each decodes after the one before), every row once. */
static void splits_over_frames(void **state) {
    fx *f = *state;
    ct_table t;
    ct_make(&t, 3000, 77, 20, true);
    assert_int_equal(ct_to_chunk(&t, f->c, &f->err), QSF_OK);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 4096;
    qsf_qwp_encode_result res;
    if (chunk_encode(f, &o, &res) != QSF_OK)
        fail_msg("%s", f->err.msg);
    assert_true(f->chunk.n > 20);
    assert_int_equal(res.frames, f->chunk.n);
    assert_int_equal(res.rows_consumed, 3000);
    qsf_qwp_dict *d = qsf_qwp_dict_new();
    qsf_qwp_msg *m = qsf_qwp_msg_new();
    uint64_t rows = 0, bytes = 0;
    for (size_t i = 0; i < f->chunk.n; i++) {
        assert_true(f->chunk.f[i].len <= o.max_frame);
        qsf_qwp_decode_result dr;
        assert_int_equal(qsf_qwp_decode(m, d, f->chunk.f[i].p, f->chunk.f[i].len, NULL, &dr), 0);
        bool deferred = qsf_qwp_msg_flags(m) & QSF_QWP_FLAG_DEFER_COMMIT;
        assert_int_equal(deferred, i + 1 < f->chunk.n);
        assert_int_equal(f->chunk.f[i].last, i + 1 == f->chunk.n);
        rows += qsf_qwp_msg_table(m, 0)->row_count;
        bytes += f->chunk.f[i].len;
    }
    assert_int_equal(rows, 3000);
    assert_int_equal(bytes, res.bytes);
    /* defer_last: the last one too (a transaction's staged frames) */
    qc_clear(&f->chunk);
    o.defer_last = true;
    assert_int_equal(chunk_encode(f, &o, &res), QSF_OK);
    assert_true(f->chunk.f[f->chunk.n - 1].p[5] & QSF_QWP_FLAG_DEFER_COMMIT);
    qsf_qwp_msg_free(m);
    qsf_qwp_dict_free(d);
    ct_free(&t);
}

/* The one-loop case of the symbol interning: a chunk's only SYMBOL column,
 * plain strings with 32-bit offsets, no validity, read from an offset. Its
 * strings include the empty one, short ones, ones that share their last 8
 * bytes and length (one memo slot: only their first bytes tell them apart)
 * and ones longer than 16 that differ only between their first and last 8.
 * The same frame bytes and ids as the row path. */
static void one_plain_symbol_column_as_rows(void **state) {
    fx *f = *state;
    static const char *const set[] = {"",
                                      "a",
                                      "ab",
                                      "abcd",
                                      "SYM000042",
                                      "xSYM000001",
                                      "ySYM000001",
                                      "abcde",
                                      "0123456789abcdefgh",
                                      "01234567X9abcdefgh"};
    enum { ROWS = 3000, SKIP = 3, NSET = sizeof set / sizeof set[0] };
    static char data[ROWS * 32];
    static int32_t offs[ROWS + SKIP + 1];
    static int64_t ts[ROWS];
    int32_t at = 0;
    for (size_t r = 0; r < ROWS + SKIP; r++) {
        const char *v = set[(r * 7 + r / 5) % NSET];
        offs[r] = at;
        memcpy(data + at, v, strlen(v));
        at += (int32_t) strlen(v);
    }
    offs[ROWS + SKIP] = at;
    for (size_t r = 0; r < ROWS; r++) {
        size_t j = r + SKIP;
        ts[r] = 1700000000000000ll + (int64_t) r;
        assert_int_equal(qsf_qwp_batch_table(f->b, "t", 1, &f->err), QSF_OK);
        assert_int_equal(qsf_qwp_batch_symbol(f->b, "s", 1, data + offs[j],
                                              (size_t) (offs[j + 1] - offs[j]), &f->err),
                         QSF_OK);
        assert_int_equal(qsf_qwp_batch_at_micros(f->b, ts[r], &f->err), QSF_OK);
    }
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 8u << 20;
    assert_int_equal(qsf_qwp_encode(f->e, f->b, &o, qc_syms, qc_emit, &f->rows, NULL, &f->err),
                     QSF_OK);
    assert_int_equal(qsf_chunk_symbol(f->c, "s", 1, offs, data, NULL, SKIP, ROWS, &f->err), QSF_OK);
    assert_int_equal(qsf_chunk_at(f->c, ts, QSF_UNIT_MICROS, 0, ROWS, &f->err), QSF_OK);
    qsf_qwp_encode_result res;
    assert_int_equal(chunk_encode(f, &o, &res), QSF_OK);
    assert_int_equal(f->rows.n, 1);
    assert_int_equal(f->chunk.n, 1);
    assert_int_equal(f->rows.f[0].len, f->chunk.f[0].len);
    assert_memory_equal(f->rows.f[0].p, f->chunk.f[0].p, f->rows.f[0].len);
    assert_int_equal(qsf_symtab_size(f->st_chunk), NSET);
    assert_int_equal(qsf_symtab_size(f->st_rows), NSET);
}

/* A row that no frame holds is refused before any frame or symbol. */
static void row_too_large(void **state) {
    fx *f = *state;
    static char big[5000];
    memset(big, 'x', sizeof big);
    int32_t offs[4] = {0, 1, 5000, 5000};
    const char *syms = "abc";
    int32_t soffs[4] = {0, 1, 2, 3};
    assert_int_equal(qsf_chunk_symbol(f->c, "s", 1, soffs, syms, NULL, 0, 3, &f->err), QSF_OK);
    assert_int_equal(qsf_chunk_varchar(f->c, "v", 1, offs, big, NULL, 0, 3, &f->err), QSF_OK);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 4096;
    qsf_qwp_encode_result res;
    assert_int_equal(chunk_encode(f, &o, &res), QSF_E_TOO_LARGE);
    assert_non_null(strstr(f->err.msg, "row 1 needs up to"));
    assert_non_null(strstr(f->err.msg, "(4096)"));
    assert_int_equal(f->chunk.n, 0);
    assert_int_equal(f->chunk.sym_calls, 0);
    assert_int_equal(qsf_symtab_size(f->st_chunk), 0);
    assert_int_equal(qsf_chunk_rows_fit(f->c, 4096, &f->err), QSF_E_TOO_LARGE);
    assert_non_null(strstr(f->err.msg, "row 1 needs up to"));
    assert_int_equal(qsf_chunk_rows_fit(f->c, 8192, &f->err), QSF_OK);
}

/* An emit that fails: the published watermark goes back, the ids the encode
 * interned beyond what was written ahead are dropped. */
static void failed_emit_restores_symbols(void **state) {
    fx *f = *state;
    ct_table t;
    ct_make(&t, 2000, 5, 10, true);
    assert_int_equal(ct_to_chunk(&t, f->c, &f->err), QSF_OK);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 4096;
    f->chunk.fail_at = 3;
    qsf_qwp_encode_result res;
    assert_int_equal(chunk_encode(f, &o, &res), QSF_E_FULL);
    assert_int_equal(res.frames, 3);
    assert_int_equal(qsf_symtab_published(f->st_chunk), 0);
    assert_int_equal(qsf_symtab_size(f->st_chunk), qsf_symtab_persisted(f->st_chunk));
    /* again, whole: the same ids, every frame */
    qc_clear(&f->chunk);
    f->chunk.fail_at = -1;
    assert_int_equal(chunk_encode(f, &o, &res), QSF_OK);
    assert_int_equal(res.rows_consumed, 2000);
    ct_free(&t);
}

/* DICT_FULL names the column and row, and leaves nothing interned. */
static void dictionary_full(void **state) {
    fx *f = *state;
    qsf_symtab_set_cap(f->st_chunk, 2);
    const char *syms = "abc";
    int32_t soffs[4] = {0, 1, 2, 3};
    assert_int_equal(qsf_chunk_symbol(f->c, "s", 1, soffs, syms, NULL, 0, 3, &f->err), QSF_OK);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    qsf_qwp_encode_result res;
    assert_int_equal(chunk_encode(f, &o, &res), QSF_E_DICT_FULL);
    assert_non_null(strstr(f->err.msg, "column \"s\": row 2"));
    assert_int_equal(qsf_symtab_size(f->st_chunk), 0);
    assert_int_equal(f->chunk.n, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(identical_to_row_path, setup, teardown),
        cmocka_unit_test_setup_teardown(all_null_column_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(splits_over_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(one_plain_symbol_column_as_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(row_too_large, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_emit_restores_symbols, setup, teardown),
        cmocka_unit_test_setup_teardown(dictionary_full, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
