/* Documented results of the reference slot files (see sfref.h). */
#include "sfref.h"

#include "sftest.h"
#include "testutil.h"

#include "os/os.h"
#include "sf/segment.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const three[] = {"one", "two", "three"};

static int slot_dir(void) {
    int fd = open(st_slot, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    return fd;
}

static void expect_frame(const uint8_t *img, uint64_t off, const char *payload) {
    uint32_t len = (uint32_t) strlen(payload);
    assert_int_equal(qsf_sfa_frame_len(img + off), len);
    assert_memory_equal(img + off + QSF_SFA_FRAME_AT_PAYLOAD, payload, len);
    assert_int_equal(qsf_sfa_frame_stored_crc(img + off), qsf_sfa_frame_crc(payload, len));
}

/* Writes img as `name` in st_slot and recovers the slot. */
static void recover_image(const uint8_t *img, size_t n, const char *name, qsf_slot_recovered *r) {
    tu_write_file(st_path(st_slot, name), img, n);
    st_open_ok(st_sfdir, r);
}

void sr_expect_two_frame_segment(const uint8_t *img, size_t n) {
    assert_int_equal(n, 64);
    qsf_sfa_header h;
    assert_int_equal(qsf_sfa_header_decode(img, &h), QSF_SFA_OK);
    assert_int_equal(h.version, 1);
    assert_int_equal(h.flags, 0);
    assert_int_equal(h.base_seq, 42);
    assert_int_equal(h.created_micros, SR_CREATED_MICROS);
    expect_frame(img, QSF_SFA_HEADER_SIZE, "one");
    expect_frame(img, 35, "two-two");
    assert_int_equal(qsf_sfa_frame_stored_crc(img + QSF_SFA_HEADER_SIZE), 0x49cb0ea6);
    assert_int_equal(qsf_sfa_frame_stored_crc(img + 35), 0x0700f63a);
    for (size_t i = 50; i < n; i++)
        assert_int_equal(img[i], 0);
    qsf_slot_recovered r;
    recover_image(img, n, QSF_NAME_INITIAL, &r);
    assert_int_equal(r.segment_count, 1);
    const qsf_seg_info *s = &r.segments[0];
    assert_int_equal(s->base_seq, 42);
    assert_int_equal(s->frame_count, 2);
    assert_int_equal(s->last_good, 50);
    assert_int_equal(r.report.torn_bytes, 0);
    assert_int_equal(r.published_fsn, 43); /* FSNs 42 and 43 */
    assert_int_equal(r.acked_fsn, 41);
    qsf_slot_release(&r);
    size_t got;
    uint8_t *after = tu_read_file(st_path(st_slot, QSF_NAME_INITIAL), &got);
    expect_frame(after, QSF_SFA_HEADER_SIZE, "one");
    expect_frame(after, 35, "two-two");
    free(after);
}

void sr_expect_two_frame_torn(const uint8_t *img, size_t n) {
    qsf_slot_recovered r;
    recover_image(img, n, QSF_NAME_INITIAL, &r);
    const qsf_seg_info *s = &r.segments[0];
    assert_int_equal(s->frame_count, 1);
    assert_int_equal(s->last_good, 35);
    assert_int_equal(r.report.torn_bytes, 29);
    assert_int_equal(r.published_fsn, 42);
    qsf_slot_release(&r);
    size_t got;
    uint8_t *after = tu_read_file(st_path(st_slot, QSF_NAME_INITIAL), &got);
    expect_frame(after, QSF_SFA_HEADER_SIZE, "one");
    for (size_t i = 35; i < got; i++) /* nothing after the bad frame survives */
        assert_int_equal(after[i], 0);
    free(after);
}

void sr_expect_same(uint8_t *got, size_t n, uint8_t *want, size_t wn) {
    assert_int_equal(n, wn);
    assert_memory_equal(got, want, n);
    free(got);
    free(want);
}

void sr_expect_ids(const qsf_symdict *d, int n, const char *const *want) {
    assert_int_equal(qsf_symdict_size(d), n);
    for (int i = 0; i < n; i++)
        assert_string_equal(qsf_symdict_entry(d, (uint32_t) i, NULL), want[i]);
}

/* Writes img as .symbol-dict and opens it into *d. */
static void open_dict(const uint8_t *img, size_t n, qsf_symdict *d) {
    tu_write_file(st_path(st_slot, QSF_NAME_SYMDICT), img, n);
    int dfd = slot_dir();
    assert_int_equal(qsf_symdict_open(d, dfd, st_slot, NULL), QSF_OK);
    close(dfd);
}

void sr_expect_two_chunk_dict(const uint8_t *img, size_t n) {
    assert_int_equal(n, 34);
    qsf_symdict d;
    open_dict(img, n, &d);
    sr_expect_ids(&d, 3, three);
    assert_int_equal(d.chunks, 2);
    assert_int_equal(d.torn_bytes, 0);
    qsf_symdict_destroy(&d);
}

void sr_expect_two_chunk_torn(const uint8_t *img, size_t n) {
    qsf_symdict d;
    open_dict(img, n, &d);
    sr_expect_ids(&d, 1, three);   /* only chunk 0 */
    assert_int_equal(d.chunks, 1); /* the torn chunk is dropped ... */
    assert_int_equal(d.valid_end, 18);
    assert_int_equal(d.torn_bytes, 16); /* ... and reported */
    qsf_symdict_destroy(&d);
}

static int64_t fixed_clock(void) {
    return SR_CREATED_MICROS;
}

uint8_t *sr_write_two_frame_segment(size_t *n) {
    int dfd = slot_dir();
    int64_t (*clock)(void) = QSF_OS->wall_us;
    QSF_OS->wall_us = fixed_clock; /* the header's createdMicros */
    qsf_segment *s;
    int rc = qsf_seg_create_file(dfd, st_slot, QSF_NAME_INITIAL, 0, 64, 42, 0, &s, NULL);
    QSF_OS->wall_us = clock;
    assert_int_equal(rc, QSF_OK);
    assert_true(qsf_seg_append(s, "one", 3));
    assert_true(qsf_seg_append(s, "two-two", 7));
    qsf_seg_destroy(s);
    close(dfd);
    return tu_read_file(st_path(st_slot, QSF_NAME_INITIAL), n);
}

uint8_t *sr_write_two_chunk_dict(size_t *n) {
    int dfd = slot_dir();
    qsf_symdict d;
    assert_int_equal(qsf_symdict_create(&d, dfd, st_slot, NULL), QSF_OK);
    assert_int_equal(qsf_symdict_append(&d, 0, 1, three, (uint32_t[]){3}, NULL), QSF_OK);
    assert_int_equal(qsf_symdict_append(&d, 1, 2, three + 1, (uint32_t[]){3, 5}, NULL), QSF_OK);
    qsf_symdict_destroy(&d);
    close(dfd);
    return tu_read_file(st_path(st_slot, QSF_NAME_SYMDICT), n);
}
