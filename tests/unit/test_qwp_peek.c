/* lib/qwp/peek: the header, the delta section, placeholders and the first
 * table of stored messages, over whole messages and over prefixes (SHORT says
 * how far to read), with every malformed form answered BAD, never read past. */
#include "testutil.h"

#include "qwp_fixture.h"
#include "qwp/peek.h"

#include <string.h>

static const uint8_t placeholder[] = {0x51, 0x57, 0x50, 0x31, 0x01, 0x09, 0x00,
                                      0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00};
static const uint8_t empty_commit[] = {0x51, 0x57, 0x50, 0x31, 0x01, 0x08, 0x00,
                                       0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00};
/* docs/PROTOCOL.md §13.5: catch-up frame registering ["a","b"] */
static const uint8_t catchup_ab[] = {0x51, 0x57, 0x50, 0x31, 0x01, 0x09, 0x00, 0x00, 0x06,
                                     0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x61, 0x01, 0x62};

static void placeholder_and_empty_commit_vectors(void **state) {
    (void) state;
    uint8_t b[QSF_QWP_PLACEHOLDER_LEN];
    assert_int_equal(qsf_qwp_placeholder(b), 14);
    assert_memory_equal(b, placeholder, 14);
    assert_int_equal(qsf_qwp_empty_commit(b), 14);
    assert_memory_equal(b, empty_commit, 14);
    qsf_qwp_hdr h;
    assert_int_equal(qsf_qwp_peek_header(placeholder, 14, &h), QSF_QWP_PEEK_OK);
    assert_int_equal(h.version, 1);
    assert_int_equal(h.flags, 0x09);
    assert_int_equal(h.table_count, 0);
    assert_int_equal(h.payload_length, 2);
    assert_true(qsf_qwp_peek_consistent(&h, 14));
    assert_false(qsf_qwp_peek_consistent(&h, 15));
    assert_true(qsf_qwp_peek_is_placeholder(&h));
    assert_int_equal(qsf_qwp_peek_header(empty_commit, 14, &h), QSF_QWP_PEEK_OK);
    assert_false(qsf_qwp_peek_is_placeholder(&h)); /* it commits */
    qsf_qwp_table_info t;
    assert_int_equal(qsf_qwp_peek_first_table(empty_commit, 14, &t), QSF_QWP_PEEK_BAD);
}

static void header_rejects_short_and_foreign_bytes(void **state) {
    (void) state;
    qsf_qwp_hdr h;
    assert_int_equal(qsf_qwp_peek_header(placeholder, 11, &h), QSF_QWP_PEEK_SHORT);
    assert_int_equal(qsf_qwp_peek_header((const uint8_t *) "one-two-three", 13, &h),
                     QSF_QWP_PEEK_BAD);
    uint8_t v2[14];
    memcpy(v2, placeholder, 14);
    v2[4] = 2;
    assert_int_equal(qsf_qwp_peek_header(v2, 14, &h), QSF_QWP_PEEK_OK);
    assert_false(qsf_qwp_peek_consistent(&h, 14)); /* version 1 only */
}

static void delta_entries_whole_and_in_pieces(void **state) {
    (void) state;
    qsf_qwp_hdr h;
    qsf_qwp_delta_info d;
    size_t need = 0;
    assert_int_equal(qsf_qwp_peek_header(catchup_ab, sizeof catchup_ab, &h), QSF_QWP_PEEK_OK);
    assert_int_equal(qsf_qwp_peek_delta(catchup_ab, sizeof catchup_ab, &h, &d, &need),
                     QSF_QWP_PEEK_OK);
    assert_int_equal(d.start, 0);
    assert_int_equal(d.count, 2);
    assert_int_equal(d.entries, 14);
    uint64_t pos = d.entries, str, slen;
    assert_int_equal(
        qsf_qwp_peek_delta_entry(catchup_ab, sizeof catchup_ab, 0, &h, &pos, &str, &slen, &need),
        QSF_QWP_PEEK_OK);
    assert_int_equal(slen, 1);
    assert_int_equal(catchup_ab[str], 'a');
    /* a prefix that ends inside the second entry's bytes */
    assert_int_equal(qsf_qwp_peek_delta_entry(catchup_ab, 17, 0, &h, &pos, &str, &slen, &need),
                     QSF_QWP_PEEK_SHORT);
    assert_int_equal(need, 18);
    assert_int_equal(slen, 1); /* the length is known: a caller can read the bytes itself */
    assert_int_equal(pos, 16);
    size_t off;
    assert_int_equal(qsf_qwp_peek_tables(catchup_ab, sizeof catchup_ab, &h, &off, &need),
                     QSF_QWP_PEEK_OK);
    assert_int_equal(off, 18);
    /* a prefix that ends inside the varints */
    assert_int_equal(qsf_qwp_peek_delta(catchup_ab, 12, &h, &d, &need), QSF_QWP_PEEK_SHORT);
    assert_int_equal(need, 18); /* up to ten bytes, bounded by the message end */
}

static void delta_malformed_forms_are_bad(void **state) {
    (void) state;
    qsf_qwp_hdr h;
    qsf_qwp_delta_info d;
    size_t need;
    uint64_t pos, str, slen;
    uint8_t m[32];
    /* count larger than the bytes left */
    memcpy(m, catchup_ab, sizeof catchup_ab);
    m[13] = 9;
    qsf_qwp_peek_header(m, sizeof catchup_ab, &h);
    assert_int_equal(qsf_qwp_peek_delta(m, sizeof catchup_ab, &h, &d, &need), QSF_QWP_PEEK_BAD);
    /* a string running past payload_length, even though buf holds more bytes */
    memcpy(m, catchup_ab, sizeof catchup_ab);
    m[16] = 5;
    memset(m + sizeof catchup_ab, 'x', sizeof m - sizeof catchup_ab);
    qsf_qwp_peek_header(m, sizeof m, &h);
    assert_int_equal(qsf_qwp_peek_delta(m, sizeof m, &h, &d, &need), QSF_QWP_PEEK_OK);
    pos = 16;
    assert_int_equal(qsf_qwp_peek_delta_entry(m, sizeof m, 0, &h, &pos, &str, &slen, &need),
                     QSF_QWP_PEEK_BAD);
    /* an overlong varint */
    memcpy(m, catchup_ab, 12);
    memset(m + 12, 0xFF, 11);
    m[8] = 11;
    qsf_qwp_peek_header(m, 23, &h);
    assert_int_equal(qsf_qwp_peek_delta(m, 23, &h, &d, &need), QSF_QWP_PEEK_BAD);
    /* no delta flag: no section */
    memcpy(m, catchup_ab, sizeof catchup_ab);
    m[5] = 0x01;
    qsf_qwp_peek_header(m, sizeof catchup_ab, &h);
    assert_int_equal(qsf_qwp_peek_delta(m, sizeof catchup_ab, &h, &d, &need), QSF_QWP_PEEK_BAD);
    size_t off;
    assert_int_equal(qsf_qwp_peek_tables(m, sizeof catchup_ab, &h, &off, &need), QSF_QWP_PEEK_OK);
    assert_int_equal(off, 12);
}

static int emit_count;
static uint8_t frame[4096];
static size_t frame_len;
static int keep_first(void *user, const uint8_t *f, size_t len, bool is_last, qsf_errinfo *err) {
    (void) user;
    (void) is_last;
    (void) err;
    if (emit_count++ == 0 && len <= sizeof frame) {
        memcpy(frame, f, len);
        frame_len = len;
    }
    return QSF_OK;
}

/* A frame from the real encoder: two tables, symbols in the delta section. */
static void first_table_of_an_encoded_frame(void **state) {
    fx *f = *state;
    for (int i = 0; i < 5; i++) {
        const char *tn = i < 3 ? "trades" : "quotes";
        assert_int_equal(qsf_qwp_batch_table(f->b, tn, strlen(tn), NULL), QSF_OK);
        assert_int_equal(qsf_qwp_batch_symbol(f->b, "sym", 3, i % 2 ? "ab" : "cd", 2, NULL),
                         QSF_OK);
        assert_int_equal(qsf_qwp_batch_col_i64(f->b, "id", 2, i, NULL), QSF_OK);
        assert_int_equal(qsf_qwp_batch_at_micros(f->b, 1000 + i, NULL), QSF_OK);
    }
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    emit_count = 0;
    assert_int_equal(qsf_qwp_encode(f->e, f->b, &o, NULL, keep_first, NULL, NULL, NULL), QSF_OK);
    assert_int_equal(emit_count, 1);
    qsf_qwp_hdr h;
    assert_int_equal(qsf_qwp_peek_header(frame, frame_len, &h), QSF_QWP_PEEK_OK);
    assert_true(qsf_qwp_peek_consistent(&h, frame_len));
    assert_int_equal(h.table_count, 2);
    assert_false(qsf_qwp_peek_is_placeholder(&h));
    qsf_qwp_table_info t;
    assert_int_equal(qsf_qwp_peek_first_table(frame, frame_len, &t), QSF_QWP_PEEK_OK);
    assert_int_equal(t.name_len, 6);
    assert_memory_equal(frame + t.name, "trades", 6);
    assert_int_equal(t.rows, 3);
    /* the same through a prefix: SHORT until the row count is in */
    size_t off, need = 0;
    assert_int_equal(qsf_qwp_peek_tables(frame, frame_len, &h, &off, &need), QSF_QWP_PEEK_OK);
    assert_int_equal(qsf_qwp_peek_table_at(frame, off + 3, 0, &h, off, &t, &need),
                     QSF_QWP_PEEK_SHORT);
    assert_true(need > off + 3);
    assert_int_equal(qsf_qwp_peek_table_at(frame, need, 0, &h, off, &t, &need), QSF_QWP_PEEK_OK);
    assert_int_equal(t.rows, 3);
    /* through a window that starts at the table block */
    assert_int_equal(qsf_qwp_peek_table_at(frame + off, frame_len - off, off, &h, off, &t, &need),
                     QSF_QWP_PEEK_OK);
    assert_int_equal(t.name, off + 1);
    assert_int_equal(
        qsf_qwp_peek_table_at(frame + off, frame_len - off, off + 1, &h, off, &t, &need),
        QSF_QWP_PEEK_BAD); /* off lies before the window */
    /* a whole message is required by first_table */
    assert_int_equal(qsf_qwp_peek_first_table(frame, frame_len - 1, &t), QSF_QWP_PEEK_BAD);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(placeholder_and_empty_commit_vectors),
        cmocka_unit_test(header_rejects_short_and_foreign_bytes),
        cmocka_unit_test(delta_entries_whole_and_in_pieces),
        cmocka_unit_test(delta_malformed_forms_are_bad),
        cmocka_unit_test_setup_teardown(first_table_of_an_encoded_frame, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
