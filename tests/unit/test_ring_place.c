/* Frames written in place (qsf_seg_place / qsf_ring_txn_place, the sender's
 * zero-copy path, memory mode): the same bytes as a copied frame, nothing
 * written for a frame that does not fit, a given-up room zeroed, flushes of
 * placed frames (mixed with appended ones across rotations) read back and
 * aborted like any other, in memory mode and in an SF ring (reopened), and
 * no room lent with `append` durability, whose frames go by pwrite. */
#include "ring_testutil.h"

#include "sf/ring.h"
#include "sf/segment.h"
#include "sf/sfa.h"

#include "bytes.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void placed_frame_has_the_bytes_of_a_written_one(void **state) {
    (void) state;
    qsf_segment *a, *b;
    assert_int_equal(qsf_seg_new_mem(256, 42, &a, NULL), QSF_OK);
    assert_int_equal(qsf_seg_new_mem(256, 42, &b, NULL), QSF_OK);
    assert_true(qsf_seg_write(a, "one", 3));
    assert_true(qsf_seg_write(a, "two-two", 7));
    uint8_t *p = qsf_seg_place(b, 3);
    assert_non_null(p);
    memcpy(p, "one", 3);
    qsf_seg_write_placed(b, 3);
    p = qsf_seg_place(b, 100); /* room for more than the frame turns out to need */
    assert_non_null(p);
    memcpy(p, "two-two", 7);
    qsf_seg_write_placed(b, 7);
    assert_int_equal(b->append_off, a->append_off);
    assert_int_equal(b->frame_count, 2);
    assert_int_equal(atomic_load(&b->written_off), a->append_off);
    assert_memory_equal(b->base + QSF_SFA_HEADER_SIZE, a->base + QSF_SFA_HEADER_SIZE,
                        256 - QSF_SFA_HEADER_SIZE);
    qsf_seg_destroy(a);
    qsf_seg_destroy(b);
}

static void place_refuses_what_does_not_fit(void **state) {
    (void) state;
    qsf_segment *s;
    assert_int_equal(qsf_seg_new_mem(64, 0, &s, NULL), QSF_OK);
    assert_null(qsf_seg_place(s, 33)); /* 64 - header 24 - frame overhead 8 = 32 */
    assert_null(qsf_seg_place(s, (uint64_t) UINT32_MAX + 1));
    assert_null(qsf_seg_place(s, (uint64_t) INT32_MAX + 1)); /* a length's top bit is invalid */
    for (int i = QSF_SFA_HEADER_SIZE; i < 64; i++)
        assert_int_equal(s->base[i], 0);
    assert_non_null(qsf_seg_place(s, 32));
    assert_int_equal(s->append_off, QSF_SFA_HEADER_SIZE);
    qsf_seg_destroy(s);
}

/* The room's envelope is written before anything else: the writer's marker
 * and the room's length, so that a crash while the payload is built leaves
 * a frame recovery knows was being written, over the whole room
 * (docs/FORMAT.md §2.4). The frame's own length replaces the room's when it
 * is sealed, before its CRC. */
static void placed_room_is_marked_as_being_written(void **state) {
    (void) state;
    qsf_segment *s;
    assert_int_equal(qsf_seg_new_mem(256, 0, &s, NULL), QSF_OK);
    const uint8_t *f = s->base + QSF_SFA_HEADER_SIZE;
    uint8_t *p = qsf_seg_place(s, 100);
    assert_non_null(p);
    assert_int_equal(qsf_get_u32(f + QSF_SFA_FRAME_AT_CRC), QSF_SFA_FRAME_WRITING);
    assert_int_equal(qsf_get_u32(f + QSF_SFA_FRAME_AT_LEN), 100);
    for (int i = 0; i < 100; i++)
        assert_int_equal(p[i], 0);
    memcpy(p, "seven!!", 7);
    qsf_seg_write_placed(s, 7);
    assert_int_equal(qsf_get_u32(f + QSF_SFA_FRAME_AT_LEN), 7);
    assert_int_not_equal(qsf_get_u32(f + QSF_SFA_FRAME_AT_CRC), QSF_SFA_FRAME_WRITING);
    qsf_seg_destroy(s);
}

static void given_up_room_is_zeroed(void **state) {
    (void) state;
    qsf_segment *s;
    assert_int_equal(qsf_seg_new_mem(128, 0, &s, NULL), QSF_OK);
    assert_true(qsf_seg_write(s, "kept", 4));
    uint64_t end = s->append_off;
    uint8_t *p = qsf_seg_place(s, 40);
    memset(p, 0xAB, 40);
    qsf_seg_unplace(s, 40);
    for (uint64_t i = end; i < 128; i++)
        if (s->base[i])
            fail_msg("byte %" PRIu64 " past the last frame is %u, not zero", i, s->base[i]);
    assert_int_equal(s->append_off, end);
    assert_int_equal(s->frame_count, 1);
    qsf_seg_destroy(s);
}

/* ---- the ring ---- */

static qsf_ring_opts opts(bool sf) {
    qsf_ring_opts o = {0};
    o.sf_dir = sf ? rt_dir : NULL;
    o.sender_id = "t";
    o.segment_bytes = 1024;
    o.total_bytes = 64 * 1024;
    o.durability = QSF_DUR_MEMORY;
    o.sync_interval_ms = 1000;
    o.append_deadline_ms = 10000;
    return o;
}

/* Frame fsn: its FSN, then a pattern; lengths from 8 to 64 bytes. */
static size_t payload(int64_t fsn, uint8_t *buf) {
    size_t len = 8 + (size_t) (fsn * 13 % 57);
    memcpy(buf, &fsn, 8);
    for (size_t i = 8; i < len; i++)
        buf[i] = (uint8_t) (fsn * 3 + i);
    return len;
}

/* One flush of frames [from, from + n): placed where the active segment has
 * room (the room asked for is 16 bytes more than the frame, as the encoder's
 * bound may be), appended where it has not, which rotates. Counts both. */
static void flush_placed(qsf_ring *r, int64_t from, int64_t n, int *placed, int *appended) {
    qsf_errinfo e;
    assert_int_equal(qsf_ring_txn_begin(r, &e), QSF_OK);
    for (int64_t f = from; f < from + n; f++) {
        uint8_t buf[64];
        size_t len = payload(f, buf);
        int64_t got = -1;
        uint8_t *p = qsf_ring_txn_place(r, len + 16);
        if (p) {
            memcpy(p, buf, len);
            qsf_ring_txn_append_placed(r, len, &got);
            (*placed)++;
        } else {
            assert_int_equal(qsf_ring_txn_append(r, buf, len, &got, &e), QSF_OK);
            (*appended)++;
        }
        assert_int_equal(got, f);
    }
    assert_int_equal(qsf_ring_txn_commit(r, &e), QSF_OK);
}

static void check_payload(int64_t fsn, const uint8_t *p, uint32_t len) {
    uint8_t want[64];
    size_t n = payload(fsn, want);
    if (len != n || memcmp(p, want, n) != 0)
        fail_msg("frame %" PRId64 ": wrong contents (len %u, want %zu)", fsn, len, n);
}

static int64_t read_back(qsf_ring *r, int64_t from) {
    return rt_read_all(r, from, check_payload);
}

static void placed_flushes_read_back(void **state) {
    (void) state;
    qsf_ring_opts o = opts(false);
    qsf_ring *r = rt_open(&o);
    assert_null(qsf_ring_txn_place(r, 16)); /* no flush open */
    int placed = 0, appended = 0;
    for (int k = 0; k < 10; k++)
        flush_placed(r, k * 40, 40, &placed, &appended);
    assert_int_equal(qsf_ring_published_fsn(r), 399);
    assert_true(placed > appended && appended >= 10); /* ~40 bytes a frame, 1 KiB segments */
    assert_int_equal(read_back(r, 0), 400);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* Memory mode reuses trimmed buffers with their old bytes (no recovery reads
 * past a segment's frames): frames placed there, in rooms larger than they
 * turn out, past old frames' bytes, go in and read back. Each flush's frames
 * are acknowledged before the next, and the cap holds four segments, so the
 * laps run through reused buffers. */
static void placed_frames_in_reused_memory_buffers(void **state) {
    (void) state;
    qsf_ring_opts o = opts(false);
    o.total_bytes = 4 * 1024;
    qsf_ring *r = rt_open(&o);
    int placed = 0, appended = 0;
    for (int k = 0; k < 20; k++) {
        flush_placed(r, k * 40, 40, &placed, &appended);
        assert_int_equal(read_back(r, k * 40), 40);
        qsf_ring_acknowledge(r, k * 40 + 39);
    }
    assert_true(placed > appended);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* An SF ring builds its frames in place too (docs/DURABILITY.md §3.2), and
 * they read back after a reopen. */
static void sf_ring_builds_in_place(void **state) {
    (void) state;
    qsf_ring_opts o = opts(true);
    qsf_ring *r = rt_open(&o);
    int placed = 0, appended = 0;
    for (int k = 0; k < 5; k++)
        flush_placed(r, k * 40, 40, &placed, &appended);
    assert_true(placed > appended && appended >= 5);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    r = rt_open(&o); /* nothing acknowledged: every frame comes back from the files */
    assert_int_equal(qsf_ring_published_fsn(r), 199);
    assert_int_equal(read_back(r, 0), 200);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* With `append` durability frames go into the files by pwrite: no room is
 * lent, even with a flush open and room to spare, and every frame is
 * appended. */
static void append_durability_builds_nothing_in_place(void **state) {
    (void) state;
    qsf_ring_opts o = opts(true);
    o.durability = QSF_DUR_APPEND;
    qsf_ring *r = rt_open(&o);
    qsf_errinfo e;
    assert_int_equal(qsf_ring_txn_begin(r, &e), QSF_OK);
    assert_null(qsf_ring_txn_place(r, 16));
    assert_int_equal(qsf_ring_txn_abort(r, &e), QSF_OK);
    int placed = 0, appended = 0;
    for (int k = 0; k < 3; k++)
        flush_placed(r, k * 40, 40, &placed, &appended);
    assert_int_equal(placed, 0);
    assert_int_equal(appended, 120);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    r = rt_open(&o);
    assert_int_equal(read_back(r, 0), 120);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* An aborted flush of placed frames leaves nothing: the FSNs are given back
 * and the next flush starts where the last committed one ended. */
static void aborted_placed_flush_leaves_nothing(void **state) {
    (void) state;
    qsf_ring_opts o = opts(false);
    qsf_ring *r = rt_open(&o);
    int placed = 0, appended = 0;
    flush_placed(r, 0, 5, &placed, &appended);
    qsf_errinfo e;
    assert_int_equal(qsf_ring_txn_begin(r, &e), QSF_OK);
    for (int i = 0; i < 3; i++) {
        uint8_t *p = qsf_ring_txn_place(r, 32);
        assert_non_null(p);
        memset(p, 0xCD, 32);
        qsf_ring_txn_append_placed(r, 32, NULL);
    }
    uint8_t *p = qsf_ring_txn_place(r, 32); /* a fourth, given up half written */
    assert_non_null(p);
    memset(p, 0xEE, 20);
    qsf_ring_txn_unplace(r, 32);
    assert_int_equal(qsf_ring_txn_abort(r, &e), QSF_OK);
    assert_int_equal(qsf_ring_published_fsn(r), 4);
    flush_placed(r, 5, 5, &placed, &appended);
    assert_int_equal(read_back(r, 0), 10);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(placed_frame_has_the_bytes_of_a_written_one),
        cmocka_unit_test(place_refuses_what_does_not_fit),
        cmocka_unit_test(placed_room_is_marked_as_being_written),
        cmocka_unit_test(given_up_room_is_zeroed),
        cmocka_unit_test_setup_teardown(placed_flushes_read_back, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(placed_frames_in_reused_memory_buffers, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(sf_ring_builds_in_place, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(append_durability_builds_nothing_in_place, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(aborted_placed_flush_leaves_nothing, rt_setup, rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
