/* Encoder behaviour beyond the byte vectors: splitting into frames under a cap,
 * the too-large row, write-ahead ordering, emit failures and re-carried symbol
 * ids, catch-up splitting and the cap gap, steady-state reuse. */
#include "testutil.h"

#include "qwp_fixture.h"
#include "qwp/batch.h"
#include "qwpdec/decoder.h"
#include "qwp/enc_int.h"
#include "qwp/encoder.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

#define OK(x) assert_int_equal((x), QSF_OK)

/* Row i of table "t<i%2>": id = i, a symbol "s<i%50>", a varchar, ts = i. */
static void add_rows(fx *f, int from, int to) {
    fx_add_rows(f, from, to, 2, 50);
}

/* Decodes frames [from, n) in order and checks ids per table are consecutive from
 * next[t]; returns the number of rows seen. */
static int decode_ids(fx *f, size_t from, int next[2]) {
    int rows = 0;
    for (size_t i = from; i < f->cap.n; i++) {
        qsf_qwp_decode_result res;
        int st = qsf_qwp_decode(f->msg, f->dict, f->cap.f[i].p, f->cap.f[i].len, NULL, &res);
        if (st != 0)
            fail_msg("frame %zu: %s", i, res.message);
        for (uint32_t k = 0; k < qsf_qwp_msg_table_count(f->msg); k++) {
            const qsf_qwp_dtable *t = qsf_qwp_msg_table(f->msg, k);
            int tn = t->name[1] - '0';
            for (uint32_t r = 0; r < t->row_count; r++, rows++) {
                assert_int_equal(qsf_qwp_dcol_i64(&t->cols[0], r), next[tn]);
                const uint8_t *p;
                size_t len;
                qsf_qwp_dcol_bytes(&t->cols[1], r, &p, &len);
                char want[8];
                snprintf(want, sizeof want, "s%d", next[tn] % 50);
                assert_int_equal(len, strlen(want));
                assert_memory_equal(p, want, len);
                next[tn] += 2;
            }
        }
    }
    return rows;
}

static void split_under_a_small_cap(void **state) {
    fx *f = *state;
    add_rows(f, 0, 2000);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 4096;
    qsf_qwp_encode_result res;
    OK(qsf_qwp_encode(f->e, f->b, &o, NULL, qc_emit, &f->cap, &res, &f->err));
    assert_true(f->cap.n > 10);
    assert_int_equal(res.frames, f->cap.n);
    assert_int_equal(res.rows_consumed, 2000);
    assert_int_equal(res.rows_left, 0);
    assert_int_equal(qsf_qwp_batch_rows(f->b), 0);
    for (size_t i = 0; i < f->cap.n; i++) {
        assert_true(f->cap.f[i].len <= 4096);
        /* frames are filled: all but the last are at least half full */
        if (i + 1 < f->cap.n && f->cap.f[i].len <= 2048)
            fail_msg("frame %zu of %zu holds only %zu bytes", i, f->cap.n, f->cap.f[i].len);
        uint8_t want = 0x0C | (i + 1 < f->cap.n ? 0x01 : 0);
        assert_int_equal(f->cap.f[i].p[5], want);
        assert_int_equal(f->cap.f[i].last, i + 1 == f->cap.n);
    }
    int next[2] = {0, 1};
    assert_int_equal(decode_ids(f, 0, next), 2000);
    assert_int_equal(next[0], 2000);
    assert_int_equal(next[1], 2001);
}

/* A table with more than 1,000,000 rows continues in a second block / frame. */
static void row_limit_per_block(void **state) {
    fx *f = *state;
    for (int i = 0; i < 1000005; i++) {
        OK(qsf_qwp_batch_table(f->b, "big", 3, NULL));
        OK(qsf_qwp_batch_col_i8(f->b, "x", 1, (int8_t) i, NULL));
        OK(qsf_qwp_batch_at_now(f->b, NULL));
    }
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 16u << 20;
    OK(qsf_qwp_encode(f->e, f->b, &o, NULL, qc_emit, &f->cap, NULL, &f->err));
    assert_int_equal(f->cap.n, 2);
    qsf_qwp_decode_result res;
    OK(qsf_qwp_decode(f->msg, f->dict, f->cap.f[0].p, f->cap.f[0].len, NULL, &res));
    assert_int_equal(qsf_qwp_msg_table(f->msg, 0)->row_count, 1000000);
    OK(qsf_qwp_decode(f->msg, f->dict, f->cap.f[1].p, f->cap.f[1].len, NULL, &res));
    const qsf_qwp_dtable *t = qsf_qwp_msg_table(f->msg, 0);
    assert_int_equal(t->row_count, 5);
    assert_int_equal(qsf_qwp_dcol_i64(&t->cols[0], 0), (int8_t) 1000000);
}

/* A row in table "a" may use a symbol another table interned before it: no frame
 * holds that row until the other table's row (with the symbol) is out. Each row
 * fits a frame on its own, so the batch goes out whole, whatever the table order. */
static void a_later_tables_symbol_goes_first(void **state) {
    fx *f = *state;
    qsf_qwp_batch_set_max_row_frame(f->b, 400);
    char big_b[300], big_a[300];
    memset(big_b, 'b', sizeof big_b);
    memset(big_a, 'a', sizeof big_a);
    const struct {
        const char *table, *sym;
        size_t len;
    } rows[] = {{"a", "k", 1}, {"b", big_b, sizeof big_b}, {"a", big_a, sizeof big_a}};
    for (int i = 0; i < 3; i++) {
        OK(qsf_qwp_batch_table(f->b, rows[i].table, 1, &f->err));
        OK(qsf_qwp_batch_symbol(f->b, "s", 1, rows[i].sym, rows[i].len, &f->err));
        OK(qsf_qwp_batch_at_micros(f->b, i, &f->err));
    }
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 400;
    qsf_qwp_encode_result res;
    OK(qsf_qwp_encode(f->e, f->b, &o, NULL, qc_emit, &f->cap, &res, &f->err));
    assert_int_equal(res.rows_consumed, 3);
    uint32_t seen = 0;
    for (size_t i = 0; i < f->cap.n; i++) {
        assert_true(f->cap.f[i].len <= 400);
        qsf_qwp_decode_result dr;
        if (qsf_qwp_decode(f->msg, f->dict, f->cap.f[i].p, f->cap.f[i].len, NULL, &dr) != 0)
            fail_msg("frame %zu: %s", i, dr.message);
        for (uint32_t k = 0; k < qsf_qwp_msg_table_count(f->msg); k++)
            seen += qsf_qwp_msg_table(f->msg, k)->row_count;
    }
    assert_int_equal(seen, 3);
}

/* A row that no frame can hold fails the encode before anything is emitted, and
 * the batch keeps every row. */
static void too_large_row_keeps_the_batch(void **state) {
    fx *f = *state;
    add_rows(f, 0, 10);
    char big[3000];
    memset(big, 'b', sizeof big);
    OK(qsf_qwp_batch_table(f->b, "t0", 2, NULL));
    OK(qsf_qwp_batch_col_i64(f->b, "id", 2, 10, NULL));
    OK(qsf_qwp_batch_col_varchar(f->b, "v", 1, big, sizeof big, NULL));
    OK(qsf_qwp_batch_at_micros(f->b, 5, NULL));
    add_rows(f, 11, 20);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 2048;
    qsf_qwp_encode_result res;
    assert_int_equal(qsf_qwp_encode(f->e, f->b, &o, qc_syms, qc_emit, &f->cap, &res, &f->err),
                     QSF_E_TOO_LARGE);
    assert_non_null(strstr(f->err.msg, "table \"t0\", buffered row 5"));
    assert_int_equal(f->cap.n, 0);
    assert_int_equal(f->cap.nsym, 0);
    assert_int_equal(res.rows_left, 20);
    assert_int_equal(qsf_qwp_batch_rows(f->b), 20);
    /* with a larger cap the same batch goes out whole */
    o.max_frame = 8192;
    OK(qsf_qwp_encode(f->e, f->b, &o, NULL, qc_emit, &f->cap, &res, &f->err));
    assert_int_equal(res.rows_consumed, 20);
}

/* The write-ahead callback sees each new id exactly once, before the frame that
 * first carries it; the frame's delta section starts at the published watermark. */
static void write_ahead_before_frames(void **state) {
    fx *f = *state;
    add_rows(f, 0, 400);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 1500;
    OK(qsf_qwp_encode(f->e, f->b, &o, qc_syms, qc_emit, &f->cap, NULL, &f->err));
    assert_true(f->cap.n > 2);
    uint32_t next_id = 0;
    for (size_t k = 0; k < f->cap.nsym; k += 2) {
        assert_int_equal(f->cap.sym_ids[k], next_id); /* contiguous, never twice */
        next_id += f->cap.sym_ids[k + 1];
    }
    assert_int_equal(next_id, 50);
    /* the first call came before the first frame */
    assert_int_equal(f->cap.frames_at_sym[0], 0);
    assert_int_equal(qsf_symtab_persisted(f->st), 50);
    assert_int_equal(qsf_symtab_published(f->st), 50);
    /* delta sections chain: each starts where the previous ended */
    uint32_t start_expected = 0;
    for (size_t i = 0; i < f->cap.n; i++) {
        qsf_qwp_decode_result res;
        OK(qsf_qwp_decode(f->msg, f->dict, f->cap.f[i].p, f->cap.f[i].len, NULL, &res));
        uint32_t start, count;
        qsf_qwp_msg_delta(f->msg, &start, &count);
        assert_int_equal(start, start_expected);
        start_expected = start + count;
    }
}

/* emit fails on the 3rd frame: two frames stay emitted, their rows leave the batch,
 * the rest stays; ids of the failed frame are carried again by the next encode but
 * never persisted twice. */
static void emit_failure_recarries_ids(void **state) {
    fx *f = *state;
    add_rows(f, 0, 300);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = 1200;
    f->cap.fail_at = 2;
    qsf_qwp_encode_result res;
    assert_int_equal(qsf_qwp_encode(f->e, f->b, &o, qc_syms, qc_emit, &f->cap, &res, &f->err),
                     QSF_E_FULL);
    assert_true(f->err.flags & QSF_ERRF_IN_DOUBT);
    assert_int_equal(res.frames, 2);
    assert_int_equal(f->cap.n, 2);
    assert_true(res.rows_consumed > 0 && res.rows_consumed < 300);
    assert_int_equal(res.rows_left, 300 - res.rows_consumed);
    assert_int_equal(qsf_qwp_batch_rows(f->b), res.rows_left);
    uint32_t published = qsf_symtab_published(f->st);
    uint32_t persisted = qsf_symtab_persisted(f->st);
    assert_true(persisted >= published);
    /* more rows arrive, then the next flush succeeds */
    add_rows(f, 300, 320);
    size_t sym_calls = f->cap.nsym;
    f->cap.fail_at = -1;
    OK(qsf_qwp_encode(f->e, f->b, &o, qc_syms, qc_emit, &f->cap, &res, &f->err));
    assert_int_equal(res.rows_left, 0);
    for (size_t k = sym_calls; k < f->cap.nsym; k += 2)
        assert_true(f->cap.sym_ids[k] >= persisted); /* never written twice */
    /* the server sees every row exactly once, in order, with a gap-free dictionary
     * (the frame after the failure starts its delta at the published watermark) */
    int next[2] = {0, 1};
    assert_int_equal(decode_ids(f, 0, next), 320);
    assert_int_equal(next[0], 320);
}

/* A failing write-ahead stops the encode before the frame: nothing emitted. */
static void write_ahead_failure_emits_nothing(void **state) {
    fx *f = *state;
    add_rows(f, 0, 10);
    f->cap.sym_fail_at = 0;
    assert_int_equal(qsf_qwp_encode(f->e, f->b, NULL, qc_syms, qc_emit, &f->cap, NULL, &f->err),
                     QSF_E_IO);
    assert_int_equal(f->cap.n, 0);
    assert_int_equal(qsf_symtab_persisted(f->st), 0);
    assert_int_equal(qsf_symtab_published(f->st), 0);
    assert_int_equal(qsf_qwp_batch_rows(f->b), 10);
}

static void self_sufficient_frames_start_at_zero(void **state) {
    fx *f = *state;
    add_rows(f, 0, 10);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.self_sufficient = true;
    OK(qsf_qwp_encode(f->e, f->b, &o, NULL, qc_emit, &f->cap, NULL, &f->err));
    add_rows(f, 0, 3);
    OK(qsf_qwp_encode(f->e, f->b, &o, NULL, qc_emit, &f->cap, NULL, &f->err));
    /* the second frame decodes on a fresh connection */
    qsf_qwp_decode_result res;
    OK(qsf_qwp_decode(f->msg, f->dict, f->cap.f[1].p, f->cap.f[1].len, NULL, &res));
    uint32_t start, count;
    qsf_qwp_msg_delta(f->msg, &start, &count);
    assert_int_equal(start, 0);
    assert_int_equal(count, 3);
}

static void open_row_refuses_encode(void **state) {
    fx *f = *state;
    OK(qsf_qwp_batch_table(f->b, "t", 1, NULL));
    assert_int_equal(qsf_qwp_encode(f->e, f->b, NULL, NULL, qc_emit, &f->cap, NULL, &f->err),
                     QSF_E_STATE);
    /* an empty batch emits nothing */
    qsf_qwp_batch_row_cancel(f->b);
    OK(qsf_qwp_encode(f->e, f->b, NULL, NULL, qc_emit, &f->cap, NULL, &f->err));
    assert_int_equal(f->cap.n, 0);
}

/* Steady state: the same rows encode to the same bytes batch after batch. */
static void reuse_gives_identical_frames(void **state) {
    fx *f = *state;
    for (int round = 0; round < 3; round++) {
        add_rows(f, 0, 100);
        OK(qsf_qwp_encode(f->e, f->b, NULL, NULL, qc_emit, &f->cap, NULL, &f->err));
    }
    assert_int_equal(f->cap.n, 3);
    /* round 1 introduced the symbols; rounds 2 and 3 are identical */
    assert_int_equal(f->cap.f[1].len, f->cap.f[2].len);
    assert_memory_equal(f->cap.f[1].p, f->cap.f[2].p, f->cap.f[1].len);
    assert_true(f->cap.f[0].len > f->cap.f[1].len);
}

static int count_emit(void *user, const uint8_t *frame, size_t len, bool last, qsf_errinfo *err) {
    (void) frame, (void) last, (void) err;
    *(size_t *) user += len;
    return 0;
}

/* Steady state: once buffers have grown, further identical batches allocate nothing
 * (the bytes in use by malloc stay exactly the same). */
static void steady_state_does_not_allocate(void **state) {
    fx *f = *state;
    size_t bytes = 0;
    for (int round = 0; round < 3; round++) {
        add_rows(f, 0, 1000);
        OK(qsf_qwp_encode(f->e, f->b, NULL, NULL, count_emit, &bytes, NULL, &f->err));
    }
    struct mallinfo2 before = mallinfo2();
    for (int round = 0; round < 5; round++) {
        add_rows(f, 0, 1000);
        OK(qsf_qwp_encode(f->e, f->b, NULL, NULL, count_emit, &bytes, NULL, &f->err));
    }
    struct mallinfo2 after = mallinfo2();
    assert_int_equal(after.uordblks, before.uordblks);
    assert_true(bytes > 0);
}

/* After recovery the table is seeded and both watermarks sit at its size: the next
 * frame carries and persists only ids from there on. */
static void seeded_table_continues_ids(void **state) {
    fx *f = *state;
    const char *rec[] = {"s0", "s1", "s2"};
    for (int i = 0; i < 3; i++)
        OK(qsf_symtab_seed(f->st, rec[i], 2, NULL));
    qsf_symtab_set_persisted(f->st, 3);
    qsf_symtab_set_published(f->st, 3);
    OK(qsf_qwp_batch_table(f->b, "t0", 2, NULL));
    OK(qsf_qwp_batch_symbol(f->b, "sym", 3, "s1", 2, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    OK(qsf_qwp_batch_table(f->b, "t0", 2, NULL));
    OK(qsf_qwp_batch_symbol(f->b, "sym", 3, "new", 3, NULL));
    OK(qsf_qwp_batch_at_now(f->b, NULL));
    OK(qsf_qwp_encode(f->e, f->b, NULL, qc_syms, qc_emit, &f->cap, NULL, &f->err));
    assert_int_equal(f->cap.nsym, 2);
    assert_int_equal(f->cap.sym_ids[0], 3); /* first id */
    assert_int_equal(f->cap.sym_ids[1], 1); /* count */
    /* delta 03 01 "new", then ids 1 and 3 */
    const uint8_t *p = f->cap.f[0].p + 12;
    assert_memory_equal(p, "\x03\x01\x03new", 6);
}

static void max_frame_rule(void **state) {
    (void) state;
    assert_int_equal(qsf_qwp_max_frame(2097138, 0), 1887424); /* 90% of the default cap */
    assert_int_equal(qsf_qwp_max_frame(0, 0), (size_t) (1.9 * 1024 * 1024));
    assert_int_equal(qsf_qwp_max_frame(2097138, 1000000), 1000000); /* segment smaller */
    assert_int_equal(qsf_qwp_max_frame(100u << 20, 0), 12 + (16u << 20));
    assert_int_equal(qsf_qwp_max_frame(3, 0), 14);
}

static int entry_cb(void *user, uint32_t id, const char **s, size_t *len) {
    static char buf[64];
    (void) user;
    *len = (size_t) snprintf(buf, sizeof buf, "entry-%06u", id);
    *s = buf;
    return 0;
}

static void catchup_splits_and_chains(void **state) {
    fx *f = *state;
    size_t frames;
    OK(qsf_qwp_catchup(f->e, 20000, entry_cb, NULL, 0, qc_emit, &f->cap, &frames, &f->err));
    assert_int_equal(frames, f->cap.n);
    assert_true(frames > 3);
    uint32_t next = 0;
    for (size_t i = 0; i < f->cap.n; i++) {
        assert_true(f->cap.f[i].len <= 65536);
        assert_int_equal(f->cap.f[i].p[5], 0x09);
        assert_int_equal(f->cap.f[i].last, i + 1 == f->cap.n);
        qsf_qwp_decode_result res;
        OK(qsf_qwp_decode(f->msg, f->dict, f->cap.f[i].p, f->cap.f[i].len, NULL, &res));
        uint32_t start, count;
        qsf_qwp_msg_delta(f->msg, &start, &count);
        assert_int_equal(start, next);
        next += count;
    }
    assert_int_equal(next, 20000);
    assert_int_equal(qsf_qwp_dict_size(f->dict), 20000);
    const char *s;
    size_t len;
    assert_true(qsf_qwp_dict_get(f->dict, 12345, &s, &len));
    assert_memory_equal(s, "entry-012345", len);
    /* an explicit cap */
    qc_clear(&f->cap);
    OK(qsf_qwp_catchup(f->e, 100, entry_cb, NULL, 200, qc_emit, &f->cap, &frames, &f->err));
    for (size_t i = 0; i < f->cap.n; i++)
        assert_true(f->cap.f[i].len <= 200);
    /* count 0: nothing */
    qc_clear(&f->cap);
    OK(qsf_qwp_catchup(f->e, 0, entry_cb, NULL, 0, qc_emit, &f->cap, &frames, &f->err));
    assert_int_equal(frames, 0);
}

static void catchup_cap_gap(void **state) {
    fx *f = *state;
    size_t frames;
    /* one entry needs 12 + 1 + 1 + (1 + 12) = 27 bytes; a 26-byte cap cannot hold one */
    assert_int_equal(
        qsf_qwp_catchup(f->e, 5, entry_cb, NULL, 26, qc_emit, &f->cap, &frames, &f->err),
        QSF_E_TOO_LARGE);
    assert_non_null(strstr(f->err.msg, "catch-up cap gap: symbol id 0 needs 27 bytes"));
    assert_int_equal(f->cap.n, 0);
    OK(qsf_qwp_catchup(f->e, 5, entry_cb, NULL, 27, qc_emit, &f->cap, &frames, &f->err));
    assert_int_equal(frames, 5);
}

/* ---- Gorilla against a bit-at-a-time reference (docs/PROTOCOL.md §5.8) ---- */

typedef struct refbits {
    uint8_t *p;
    size_t bit;
} refbits;

static void ref_put(refbits *b, uint64_t v, int bits) {
    for (int i = 0; i < bits; i++, b->bit++)
        if ((v >> i) & 1)
            b->p[b->bit / 8] |= (uint8_t) (1u << (b->bit % 8));
}

/* The encoding byte and body the protocol defines, built one bit at a time. */
static size_t ref_gorilla(uint8_t *out, const int64_t *v, uint32_t n) {
    out[0] = QSF_QWP_TS_GORILLA;
    memcpy(out + 1, &v[0], 8);
    memcpy(out + 9, &v[1], 8);
    refbits b = {out + 17, 0};
    int64_t delta = v[1] - v[0];
    for (uint32_t i = 2; i < n; i++) {
        int64_t d = v[i] - v[i - 1], dod = d - delta;
        delta = d;
        if (dod == 0)
            ref_put(&b, 0, 1);
        else if (dod >= -64 && dod <= 63)
            ref_put(&b, 0x1, 2), ref_put(&b, (uint64_t) dod, 7);
        else if (dod >= -256 && dod <= 255)
            ref_put(&b, 0x3, 3), ref_put(&b, (uint64_t) dod, 9);
        else if (dod >= -2048 && dod <= 2047)
            ref_put(&b, 0x7, 4), ref_put(&b, (uint64_t) dod, 12);
        else
            ref_put(&b, 0xF, 4), ref_put(&b, (uint64_t) dod, 32);
    }
    return 17 + (b.bit + 7) / 8;
}

/* Every bucket's edges, in runs long enough to cross many 32-bit words at
 * every bit offset: the encoder stores whole words, the reference bits. */
static void gorilla_matches_bitwise_reference(void **state) {
    (void) state;
    static const int64_t edges[] = {0,     1,     -1,     63,        -64,       64,       -65,
                                    255,   -256,  256,    -257,      2047,      -2048,    2048,
                                    -2049, 70000, -70000, INT32_MAX, INT32_MIN, 12345678, -9};
    const size_t ne = sizeof edges / sizeof edges[0];
    enum { N = 700 };
    int64_t v[N];
    uint8_t got[1 + 8 * N + 8], want[1 + 8 * N + 8];
    uint64_t rnd = 0x9E3779B97F4A7C15ull;
    for (int trial = 0; trial < 200; trial++) {
        uint32_t n = 3 + (uint32_t) (trial * 7 % (N - 3));
        v[0] = 1700000000000000 + trial;
        v[1] = v[0] + 1000;
        int64_t delta = 1000;
        for (uint32_t i = 2; i < n; i++) {
            rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
            int64_t dod = (rnd % 3 == 0) ? 0 : edges[(rnd >> 8) % ne];
            delta += dod;
            v[i] = v[i - 1] + delta;
        }
        memset(got, 0xEE, sizeof got);
        memset(want, 0, sizeof want);
        size_t wn = ref_gorilla(want, v, n);
        uint8_t *end = qsf_enc_timestamps(got, (const uint8_t *) v, n, true);
        assert_int_equal((size_t) (end - got), wn);
        assert_memory_equal(got, want, wn);
        assert_int_equal(got[wn], 0xEE); /* nothing stored past the end */
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(split_under_a_small_cap, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(row_limit_per_block, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(too_large_row_keeps_the_batch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(a_later_tables_symbol_goes_first, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(write_ahead_before_frames, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(emit_failure_recarries_ids, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(write_ahead_failure_emits_nothing, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(self_sufficient_frames_start_at_zero, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(open_row_refuses_encode, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(reuse_gives_identical_frames, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(steady_state_does_not_allocate, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(seeded_table_continues_ids, fx_setup, fx_teardown),
        cmocka_unit_test(max_frame_rule),
        cmocka_unit_test(gorilla_matches_bitwise_reference),
        cmocka_unit_test_setup_teardown(catchup_splits_and_chains, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(catchup_cap_gap, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
