/* Planned rotation (lib/sf/rotation_plan.c): the manager writes and syncs the
 * spare's header ahead of need with the FSN the active segment is expected to
 * end at, and the producer switches at that FSN. Checked through the slot's
 * files: which baseSeq each segment got and how many frames it holds. */
#include "ring_testutil.h"

#include "bytes.h"
#include "sf/sfa.h"

#include <fcntl.h>
#include <inttypes.h>

#define SEG   4096
#define FRAME 200 /* 208 bytes with the frame header: 19 fit in a segment */

static qsf_ring_opts opts(void) {
    qsf_ring_opts o = {0};
    o.sf_dir = rt_dir;
    o.sender_id = "t";
    o.segment_bytes = SEG;
    o.total_bytes = 1 << 20;
    o.durability = QSF_DUR_MEMORY;
    o.sync_interval_ms = 1000;
    o.append_deadline_ms = 10000;
    return o;
}

static void append_sized(qsf_ring *r, int64_t from, int n, size_t len) {
    uint8_t buf[1024];
    for (int64_t f = from; f < from + n; f++) {
        memset(buf, (int) (f & 0xff), len);
        memcpy(buf, &f, sizeof f);
        int64_t got;
        qsf_errinfo e;
        if (qsf_ring_append(r, buf, len, &got, &e) != QSF_OK)
            fail_msg("append %" PRId64 ": %s", f, e.msg);
        assert_int_equal(got, f);
    }
}

/* Frames in the slot's segment whose header says baseSeq == base (read from
 * the file, as recovery would: the page cache holds what the mapping wrote),
 * or -1 if no segment has that baseSeq. A spare may carry the same
 * provisional baseSeq as a segment with frames; the most frames win. */
static int frames_in_segment(int64_t base) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/t", rt_dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 4 || strcmp(de->d_name + n - 4, ".sfa") != 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        uint8_t seg[SEG];
        int fd = open(p, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(pread(fd, seg, sizeof seg, 0), (ssize_t) sizeof seg);
        close(fd);
        if (qsf_get_i64(seg + 8) != base)
            continue;
        int frames = 0;
        for (size_t off = QSF_SFA_HEADER_SIZE; off + 8 <= SEG; frames++) {
            uint32_t len = qsf_get_u32(seg + off + 4);
            if (len == 0 || off + 8 + len > SEG)
                break;
            off += 8 + len;
        }
        if (frames > found)
            found = frames;
    }
    closedir(d);
    return found;
}

static void read_in_order(qsf_ring *r, int64_t from, int64_t to) {
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, from), 0);
    const uint8_t *p;
    uint32_t len;
    int64_t fsn, expect = from;
    while (qsf_ring_cursor_next(r, &c, &p, &len, &fsn) == 1) {
        int64_t inside;
        memcpy(&inside, p, sizeof inside);
        assert_int_equal(fsn, expect);
        assert_int_equal(inside, expect);
        expect++;
    }
    qsf_ring_cursor_release(r, &c);
    assert_int_equal(expect, to + 1);
}

/* Uniform frames: after the first rotation (19 frames of 208 bytes) the spare
 * is planned for FSN 19 + 18 (the guess keeps 1/32 of the room as slack), its
 * header reaches the file before the producer gets there, and the producer
 * switches at FSN 37 although a 19th frame would still fit. */
static void uniform_frames_rotate_at_the_planned_fsn(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    qsf_ring *r = rt_open(&o);
    append_sized(r, 0, 20, FRAME); /* 19 in sf-initial.sfa, FSN 19 starts the next */
    assert_int_equal(frames_in_segment(0), 19);
    RT_WAIT_UNTIL(qsf_ring_planned_fsn(r) == 37);
    assert_int_equal(frames_in_segment(37), 0); /* the planned spare, header on file */

    append_sized(r, 20, 18, FRAME);              /* FSNs 20..37 */
    assert_int_equal(frames_in_segment(19), 18); /* room for one more, left unused */
    assert_int_equal(frames_in_segment(37), 1);
    assert_int_equal(qsf_ring_planned_fsn(r), -1); /* used up */
    read_in_order(r, 0, 37);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);

    qsf_recovery_report rep;
    r = NULL;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, NULL), QSF_OK);
    assert_int_equal(rep.published_fsn, 37);
    read_in_order(r, 0, 37);
    append_sized(r, 38, 40, FRAME);
    read_in_order(r, 0, 77);
    qsf_ring_acknowledge(r, 77);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* Frames that grow after the plan fill the segment before the planned FSN:
 * rotation rewrites and syncs the spare's header as usual, and nothing is
 * lost or reordered, also across a reopen. */
static void larger_frames_fall_back_to_an_ordinary_rotation(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    qsf_ring *r = rt_open(&o);
    append_sized(r, 0, 20, FRAME);
    RT_WAIT_UNTIL(qsf_ring_planned_fsn(r) == 37);

    append_sized(r, 20, 12, 3 * FRAME); /* 6 fit after FSN 19: the segment fills at 26 */
    assert_int_equal(frames_in_segment(19), 7);
    assert_int_equal(frames_in_segment(37), -1); /* rebased to 26 */
    assert_true(frames_in_segment(26) >= 1);
    read_in_order(r, 0, 31);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);

    r = NULL;
    assert_int_equal(qsf_ring_open(&o, &r, NULL, NULL), QSF_OK);
    read_in_order(r, 0, 31);
    qsf_ring_acknowledge(r, 31);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(uniform_frames_rotate_at_the_planned_fsn, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(larger_frames_fall_back_to_an_ordinary_rotation, rt_setup,
                                        rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
