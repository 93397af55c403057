/* A slot as an older Java sender left it (the interop README's "Slots left by
 * older Java senders"), built here byte by byte: recovered and drained
 * unchanged. It needs no file from ../shared, so it runs on any checkout. */
#include "testutil.h"

#include "sfref.h"
#include "sftest.h"

#include "bytes.h"
#include "sf/recover.h"
#include "sf/sidefile.h"
#include "sf/symdict.h"

#include <stdlib.h>
#include <string.h>

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
    assert_int_equal(r.acked_fsn, -1); /* no magic: the Java client never wrote a value */
    assert_int_equal(r.commit_boundary_fsn, 2);
    assert_false(r.watermark.reset);
    assert_true(r.watermark.compact);
    assert_false(r.watermark.present);
    assert_true(r.symdict.self_sufficient);
    sr_expect_ids(&r.symdict, 3, s3);
    assert_int_equal(r.next_generation, 1);
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, "sf-0000000000000000.sfa")));
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_WATERMARK)), 16); /* kept for Java */
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

/* A Java slot of 30 frames (FSNs 0..29) whose .ack-watermark is the 16-byte
 * file tests/golden/java-ack-watermark-fsn19.hex. */
static void java_slot_with_watermark(const char *wm_golden) {
    static uint8_t f[30][128];
    const uint8_t *p[30];
    uint32_t l[30];
    const char *s1[] = {"EURUSD"};
    for (int i = 0; i < 30; i++) {
        l[i] = java_frame(f[i], 1, s1);
        p[i] = f[i];
    }
    st_segment(st_slot, QSF_NAME_INITIAL, 1u << 20, 0, 0, 30, p, l);
    size_t n;
    uint8_t *wm = st_golden(wm_golden, &n);
    assert_int_equal(n, QSF_AKW_COMPACT_SIZE);
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), wm, n);
    free(wm);
}

/* What the Java client 1.3.x reads back: the file is 16 bytes, "AKW1", four
 * zero bytes, the FSN (its reader checks the size and the magic only). */
static void expect_java_reads(int64_t fsn) {
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, QSF_NAME_WATERMARK), &n);
    assert_int_equal(n, 16);
    assert_memory_equal(img, "AKW1\0\0\0\0", 8);
    assert_int_equal(qsf_get_i64(img + 8), fsn);
    free(img);
}

/* Handed from Java to qsf after an ack: frames 0..19 are not replayed, and
 * qsf's later acks stay in the form Java reads, so handing it back replays
 * none of them either. */
static void java_watermark_is_honoured_and_kept(void **state) {
    (void) state;
    java_slot_with_watermark("java-ack-watermark-fsn19.hex");
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.published_fsn, 29);
    assert_int_equal(r.acked_fsn, 19);
    assert_false(r.report.watermark_ignored);
    assert_true(r.watermark.compact);
    assert_false(r.watermark.reset);
    assert_int_equal(qsf_watermark_write(&r.watermark, 25, NULL), QSF_OK);
    assert_int_equal(qsf_watermark_sync(&r.watermark, NULL), QSF_OK);
    qsf_slot_release(&r);
    expect_java_reads(25);
    st_open_ok(st_sfdir, &r); /* and qsf itself reads its own 16-byte write */
    assert_int_equal(r.acked_fsn, 25);
    qsf_slot_release(&r);
}

/* The 16-byte value is a hint, clamped like the dual-slot form's: above the
 * published FSN it is ignored and everything on disk is replayed. */
static void java_watermark_above_published_is_ignored(void **state) {
    (void) state;
    java_slot_with_watermark("java-ack-watermark-fsn19.hex");
    uint8_t big[16];
    qsf_akw_compact_encode(big, 30);
    tu_write_file(st_path(st_slot, QSF_NAME_WATERMARK), big, sizeof big);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_true(r.report.watermark_ignored);
    assert_int_equal(r.acked_fsn, -1);
    qsf_slot_release(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(older_java_slot, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(java_watermark_is_honoured_and_kept, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(java_watermark_above_published_is_ignored, st_setup,
                                        st_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
