/* The cross-client store-and-forward fixtures of ../shared/interop: every file
 * read exactly as its README states, the same bytes written by qsf for the same
 * input, and a slot as left by an older Java sender recovered unchanged. */
#include "testutil.h"

#include "sftest.h"

#include "bytes.h"
#include "sf/recover.h"
#include "sf/segfmt.h"
#include "sf/symdict.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint8_t *fixture(const char *name, size_t *len) {
    char rel[200], p[700];
    snprintf(rel, sizeof rel, "interop/%s", name);
    return tu_read_hex_file(tu_shared_path(rel, p, sizeof p), len);
}

/* Places a fixture in the slot under `as` and recovers the slot. */
static void recover_fixture(const char *name, const char *as, qsf_slot_recovered *r) {
    size_t n;
    uint8_t *img = fixture(name, &n);
    tu_write_file(st_path(st_slot, as), img, n);
    free(img);
    st_open_ok(st_sfdir, r);
}

static void expect_frame(const uint8_t *img, uint64_t off, const char *payload) {
    uint32_t len = (uint32_t) strlen(payload);
    assert_int_equal(qsf_sfa_frame_len(img + off), len);
    assert_memory_equal(img + off + QSF_SFA_FRAME_AT_PAYLOAD, payload, len);
    assert_int_equal(qsf_sfa_frame_stored_crc(img + off), qsf_sfa_frame_crc(payload, len));
}

static void java_two_frame_segment(void **state) {
    (void) state;
    qsf_slot_recovered r;
    recover_fixture("java-two-frame.sfa.hex", QSF_NAME_INITIAL, &r);
    assert_int_equal(r.segment_count, 1);
    const qsf_seg_info *s = &r.segments[0];
    assert_int_equal(s->base_seq, 42);
    assert_int_equal(s->frame_count, 2);
    assert_int_equal(s->last_good, 50);
    assert_int_equal(r.report.torn_bytes, 0);
    assert_int_equal(r.published_fsn, 43); /* FSNs 42 and 43 */
    assert_int_equal(r.acked_fsn, 41);
    qsf_slot_release(&r);
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, QSF_NAME_INITIAL), &n);
    expect_frame(img, QSF_SFA_HEADER_SIZE, "one");
    expect_frame(img, 35, "two-two");
    free(img);
}

static void java_two_frame_torn_tail(void **state) {
    (void) state;
    qsf_slot_recovered r;
    recover_fixture("java-two-frame-torn-tail.sfa.hex", QSF_NAME_INITIAL, &r);
    const qsf_seg_info *s = &r.segments[0];
    assert_int_equal(s->frame_count, 1);
    assert_int_equal(s->last_good, 35);
    assert_int_equal(r.report.torn_bytes, 29);
    assert_int_equal(r.published_fsn, 42);
    qsf_slot_release(&r);
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, QSF_NAME_INITIAL), &n);
    expect_frame(img, QSF_SFA_HEADER_SIZE, "one");
    for (size_t i = 35; i < n; i++) /* nothing after the bad frame survives */
        assert_int_equal(img[i], 0);
    free(img);
}

static void qsf_writes_the_same_segment(void **state) {
    (void) state;
    size_t n;
    uint8_t *want = fixture("java-two-frame.sfa.hex", &n);
    assert_int_equal(n, 64);
    uint8_t img[64] = {0};
    qsf_sfa_header_encode(img, 0, 42, 1234567890123);
    qsf_sfa_frame_encode(img + QSF_SFA_HEADER_SIZE, "one", 3);
    qsf_sfa_frame_encode(img + 35, "two-two", 7);
    assert_memory_equal(img, want, 64);
    free(want);
    /* the other vectors of sf-format.md §3.8 */
    uint8_t h[QSF_SFA_HEADER_SIZE], v[QSF_SFA_HEADER_SIZE];
    qsf_sfa_header_encode(h, QSF_SFA_FLAG_MANIFEST_REQUIRED, 0, 0);
    tu_hex("53 46 30 31 01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00", v, sizeof v);
    assert_memory_equal(h, v, sizeof v);
    uint8_t msg[14], frame[22], wantf[22];
    tu_hex("51 57 50 31 01 09 00 00 02 00 00 00 00 00", msg, 14);
    qsf_sfa_frame_encode(frame, msg, 14);
    tu_hex("D8 59 D7 17 0E 00 00 00 51 57 50 31 01 09 00 00 02 00 00 00 00 00", wantf, 22);
    assert_memory_equal(frame, wantf, 22);
}

static void expect_ids(const qsf_symdict *d, int n, const char *const *want) {
    assert_int_equal(qsf_symdict_size(d), n);
    for (int i = 0; i < n; i++)
        assert_string_equal(qsf_symdict_entry(d, (uint32_t) i, NULL), want[i]);
}

static void java_symbol_dicts(void **state) {
    (void) state;
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    size_t n;
    uint8_t *img = fixture("java-two-chunk.symbol-dict.hex", &n);
    tu_write_file(st_path(st_slot, QSF_NAME_SYMDICT), img, n);
    free(img);
    qsf_symdict d;
    assert_int_equal(qsf_symdict_open(&d, dfd, st_slot, NULL), QSF_OK);
    const char *three[] = {"one", "two", "three"};
    expect_ids(&d, 3, three);
    assert_int_equal(d.torn_bytes, 0);
    qsf_symdict_destroy(&d);
    img = fixture("java-two-chunk-torn-tail.symbol-dict.hex", &n);
    tu_write_file(st_path(st_slot, QSF_NAME_SYMDICT), img, n);
    free(img);
    assert_int_equal(qsf_symdict_open(&d, dfd, st_slot, NULL), QSF_OK);
    expect_ids(&d, 1, three);           /* only chunk 0 */
    assert_int_equal(d.chunks, 1);      /* the torn chunk is dropped ... */
    assert_int_equal(d.torn_bytes, 16); /* ... and reported */
    qsf_symdict_destroy(&d);
    close(dfd);
}

static void qsf_writes_the_same_symbol_dict(void **state) {
    (void) state;
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_symdict d;
    assert_int_equal(qsf_symdict_create(&d, dfd, st_slot, NULL), QSF_OK);
    const char *one[] = {"one"}, *rest[] = {"two", "three"};
    assert_int_equal(qsf_symdict_append(&d, 0, 1, one, (uint32_t[]){3}, NULL), QSF_OK);
    assert_int_equal(qsf_symdict_append(&d, 1, 2, rest, (uint32_t[]){3, 5}, NULL), QSF_OK);
    qsf_symdict_destroy(&d);
    close(dfd);
    size_t n, wn;
    uint8_t *got = tu_read_file(st_path(st_slot, QSF_NAME_SYMDICT), &n);
    uint8_t *want = fixture("java-two-chunk.symbol-dict.hex", &wn);
    assert_int_equal(n, wn);
    assert_memory_equal(got, want, n);
    free(got);
    free(want);
}

/* A self-sufficient frame as an older Java sender wrote it: flags 0x0C, the
 * dictionary from id 0 with every symbol it uses, one table block. */
static uint32_t java_frame(uint8_t *out, int n, const char *const *syms) {
    size_t len = st_qwp(out, 0x0C, 0, n, syms);
    static const uint8_t table[] = {6, 't', 'r', 'a', 'd', 'e',  's', 1,
                                    1, 3,   's', 'y', 'm', 0x09, 0,   0};
    memcpy(out + len, table, sizeof table);
    len += sizeof table;
    qsf_put_u16(out + 6, 1);
    qsf_put_u32(out + 8, (uint32_t) (len - 12));
    return (uint32_t) len;
}

static void older_java_slot(void **state) {
    (void) state;
    const uint64_t seg = 4u << 20;
    uint8_t f[3][128];
    const uint8_t *p[3] = {f[0], f[1], f[2]};
    uint32_t l[3];
    const char *s1[] = {"EURUSD"}, *s2[] = {"EURUSD", "GBPUSD"},
               *s3[] = {"EURUSD", "GBPUSD", "USDJPY"};
    l[0] = java_frame(f[0], 1, s1);
    l[1] = java_frame(f[1], 2, s2);
    l[2] = java_frame(f[2], 3, s3);
    uint64_t end = st_segment(st_slot, QSF_NAME_INITIAL, seg, 0, 0, 3, p, l);
    st_segment(st_slot, "sf-0000000000000000.sfa", seg, 0, 0, 0, p, l); /* hot spare */
    uint8_t legacy_wm[16] = {0};
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), legacy_wm, sizeof legacy_wm);
    tu_write_file(st_path(st_slot, ".lock"), "", 0);
    tu_write_file(st_path(st_slot, ".lock.pid"), "4242\n", 5);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.fresh);
    assert_false(r.data_loss);
    assert_int_equal(r.segment_count, 1); /* the spare is not a second segment at FSN 0 */
    assert_string_equal(r.segments[0].name, QSF_NAME_INITIAL);
    assert_int_equal(r.segments[0].frame_count, 3);
    assert_int_equal(r.segments[0].last_good, end);
    assert_int_equal(r.segments[0].file_size, seg);
    assert_int_equal(r.published_fsn, 2);
    assert_int_equal(r.acked_fsn, -1); /* the legacy watermark is never trusted */
    assert_int_equal(r.commit_boundary_fsn, 2);
    assert_true(r.watermark.reset);
    assert_true(r.symdict.self_sufficient);
    expect_ids(&r.symdict, 3, s3);
    assert_int_equal(r.next_generation, 1);
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, "sf-0000000000000000.sfa")));
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_WATERMARK)), 8192);
    assert_true(st_exists(st_path(st_slot, QSF_NAME_MANIFEST)));
    assert_false(st_exists(st_path(st_slot, QSF_NAME_SYMDICT)));
    /* every frame is still there, byte for byte */
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, QSF_NAME_INITIAL), &n);
    qsf_sfa_header h;
    assert_int_equal(qsf_sfa_header_decode(img, &h), QSF_SFA_OK);
    assert_int_equal(h.flags, QSF_SFA_FLAG_MANIFEST_REQUIRED);
    uint64_t off = QSF_SFA_HEADER_SIZE;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(qsf_sfa_frame_len(img + off), l[i]);
        assert_memory_equal(img + off + QSF_SFA_FRAME_AT_PAYLOAD, f[i], l[i]);
        off += QSF_SFA_FRAME_OVERHEAD + l[i];
    }
    free(img);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(java_two_frame_segment),          T(java_two_frame_torn_tail),
        T(qsf_writes_the_same_segment),     T(java_symbol_dicts),
        T(qsf_writes_the_same_symbol_dict), T(older_java_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
