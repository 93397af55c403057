/* Setting frames aside (sfops/setaside.h): the frames go to .rejected, byte for
 * byte, with an audit line; the slot then retires them at every open (never
 * sent); only whole flushes above the acknowledged watermark can be set
 * aside; an interrupted set-aside is finished by running it again, without a
 * second copy; a slot in use is refused with its holder's pid. */
#include "testutil.h"

#include "sftest.h"

#include "os/os.h"
#include "sf/recover.h"
#include "sfops/rejected.h"
#include "sfops/setaside.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEG 4096

static qsf_setaside_req req(int64_t from, int64_t to) {
    return (qsf_setaside_req){.from = from, .to = to, .reason = "LONG[] column: SCHEMA_MISMATCH"};
}

static int set_aside(int64_t from, int64_t to, qsf_setaside_result *res, qsf_errinfo *e) {
    qsf_setaside_req r = req(from, to);
    return qsf_slot_set_aside(st_slot, &r, res, e);
}

static void set_aside_ok(int64_t from, int64_t to, qsf_setaside_result *res) {
    qsf_errinfo e;
    if (set_aside(from, to, res, &e) != QSF_OK)
        fail_msg("set-aside %lld..%lld: %s", (long long) from, (long long) to, e.msg);
}

/* The message of a refused set-aside (static). */
static const char *refused(int64_t from, int64_t to, int code) {
    static qsf_errinfo e;
    qsf_setaside_result res;
    assert_int_equal(set_aside(from, to, &res, &e), code);
    return e.msg;
}

static qsf_rejected_list records(void) {
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_rejected_list l;
    qsf_errinfo e;
    if (qsf_rejected_read(dfd, st_slot, &l, &e) != QSF_OK)
        fail_msg("reading .rejected: %s", e.msg);
    close(dfd);
    return l;
}

/* The payloads of a record, concatenated with their lengths, into out. */
typedef struct collect {
    int n;
    uint8_t p[8][64];
    uint32_t len[8];
} collect;

static int on_frame(void *user, uint32_t crc, const uint8_t *payload, uint32_t len) {
    (void) crc;
    collect *c = user;
    assert_true(c->n < 8 && len <= 64);
    memcpy(c->p[c->n], payload, len);
    c->len[c->n++] = len;
    return 0;
}

static collect frames_of(const qsf_rejected_rec *r) {
    collect c = {0};
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    assert_int_equal(qsf_rejected_frames(dfd, st_slot, r, on_frame, &c, NULL), QSF_OK);
    close(dfd);
    return c;
}

static void open_slot(qsf_slot_recovered *r) {
    st_open_ok(st_sfdir, r);
}

/* The committed flush FSN 2..3 (deferred + commit) of five frames is set
 * aside: .rejected holds both frames as they were with an audit line and the
 * DONE record; every open retires 2..3 (placeholder, empty commit) and keeps
 * the rest. */
static void a_flush_is_set_aside_and_retired(void **state) {
    (void) state;
    st_segment_flushes(st_gen(1), SEG, 0, "CCDCC", 5);
    st_manifest(st_slot, 1, 0, 0);
    st_frames before;
    st_read_frames(st_path(st_slot, st_gen(1)), &before);
    qsf_setaside_result res;
    set_aside_ok(2, 3, &res);
    assert_int_equal(res.frames, 2);
    assert_int_equal(res.rows, 10);
    assert_int_equal(res.bytes, 2 * 48);
    assert_false(res.resumed);
    assert_int_equal(res.rewritten, 1);
    assert_non_null(strstr(res.audit, "set aside FSN 2..3 (2 frames, 96 bytes, 10 rows)"));
    assert_non_null(strstr(res.audit, ": LONG[] column: SCHEMA_MISMATCH\n"));
    assert_non_null(strstr(res.audit, "(uid "));

    qsf_rejected_list l = records();
    assert_int_equal(l.n, 2);
    assert_int_equal(l.v[0].kind, QSF_RJR_SET_ASIDE);
    assert_true(l.v[0].done);
    assert_int_equal(l.v[0].from, 2);
    assert_int_equal(l.v[0].to, 3);
    assert_int_equal(l.v[0].rows, 10);
    assert_string_equal(l.v[0].audit, res.audit);
    assert_int_equal(l.v[1].kind, QSF_RJR_DONE);
    collect c = frames_of(&l.v[0]);
    assert_int_equal(c.n, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(c.len[i], before.len[2 + i]);
        assert_memory_equal(c.p[i], before.p[2 + i], c.len[i]);
    }
    qsf_rejected_list_free(&l);

    st_frames after;
    st_read_frames(st_path(st_slot, st_gen(1)), &after);
    assert_int_equal(after.n, 5);
    assert_true(st_is_placeholder(after.p[2], after.len[2]));
    assert_true(st_is_empty_commit(after.p[3], after.len[3]));
    for (int i = 0; i < 5; i += i == 1 ? 3 : 1)
        assert_memory_equal(after.p[i], before.p[i], before.len[i]);
    st_frames_free(&after);
    st_frames_free(&before);
    for (int k = 0; k < 2; k++) { /* the same at every open */
        qsf_slot_recovered r;
        open_slot(&r);
        assert_int_equal(r.n_retired, 1);
        assert_int_equal(r.retired[0].from, 2);
        assert_int_equal(r.retired[0].to, 3);
        assert_int_equal(r.published_fsn, 4);
        assert_int_equal(r.n_losses, 0);
        qsf_slot_release(&r);
    }
}

/* Only whole flushes, above the watermark, within the slot, not given up
 * already, with a reason. */
static void spans_that_are_refused(void **state) {
    (void) state;
    st_segment_flushes(st_gen(1), SEG, 0, "CDDCCC", 5);
    st_manifest(st_slot, 1, 0, 0);
    st_watermark(st_slot, 1, 0);
    st_snap before;
    st_snap_take(&before);
    assert_non_null(strstr(refused(2, 3, QSF_E_INVAL), "span FSN 1..3"));
    assert_non_null(strstr(refused(1, 2, QSF_E_INVAL), "span FSN 1..3"));
    assert_non_null(strstr(refused(0, 0, QSF_E_INVAL), "acknowledged already (ackedFsn 0)"));
    assert_non_null(strstr(refused(0, 3, QSF_E_INVAL), "start at FSN 1"));
    assert_non_null(strstr(refused(5, 6, QSF_E_INVAL), "beyond the last frame (FSN 5)"));
    qsf_setaside_req r = req(4, 4);
    r.reason = "two\nlines";
    qsf_setaside_result res;
    assert_int_equal(qsf_slot_set_aside(st_slot, &r, &res, NULL), QSF_E_INVAL);
    r.reason = NULL;
    assert_int_equal(qsf_slot_set_aside(st_slot, &r, &res, NULL), QSF_E_INVAL);
    st_snap_expect_same(&before); /* nothing written, not even .rejected */
    st_snap_free(&before);
    set_aside_ok(1, 3, &res);
    assert_int_equal(res.frames, 3);
    assert_non_null(strstr(refused(1, 3, QSF_E_INVAL), "given up already"));
    assert_non_null(strstr(refused(2, 4, QSF_E_INVAL), "span FSN 1..4"));
    set_aside_ok(4, 5, &res); /* two flushes of one frame each */
    qsf_rejected_list l = records();
    assert_int_equal(l.n, 4);
    qsf_rejected_list_free(&l);
    qsf_slot_recovered rec;
    open_slot(&rec);
    assert_int_equal(rec.n_retired, 1);
    assert_int_equal(rec.retired[0].from, 1);
    assert_int_equal(rec.retired[0].to, 3);
    qsf_slot_release(&rec);
    /* a flush of one frame becomes the empty commit: sent, it carries nothing */
    st_frames f;
    st_read_frames(st_path(st_slot, st_gen(1)), &f);
    assert_int_equal(f.n, 6);
    assert_true(st_is_empty_commit(f.p[4], f.len[4]));
    assert_true(st_is_empty_commit(f.p[5], f.len[5]));
    st_frames_free(&f);
    assert_non_null(strstr(refused(4, 4, QSF_E_INVAL), "FSN 4 holds no tables"));
    assert_non_null(strstr(refused(4, 5, QSF_E_INVAL), "FSN 4 holds no tables"));
}

/* A flush across two segments: both are rewritten, the deferred member in
 * the first one first. */
static void a_flush_across_segments(void **state) {
    (void) state;
    st_segment_flushes(st_gen(1), SEG, 0, "CD", 5);
    st_segment_flushes(st_gen(2), SEG, 2, "DCC", 5);
    st_manifest(st_slot, 1, 0, 2);
    qsf_setaside_result res;
    set_aside_ok(1, 3, &res);
    assert_int_equal(res.rewritten, 2);
    qsf_slot_recovered r;
    open_slot(&r);
    assert_int_equal(r.n_retired, 1);
    assert_int_equal(r.retired[0].from, 1);
    assert_int_equal(r.retired[0].to, 3);
    assert_int_equal(r.published_fsn, 4);
    qsf_slot_release(&r);
}

/* The slot lock is held by another open: refused, naming the holder. */
static void a_slot_in_use_is_refused(void **state) {
    (void) state;
    st_segment_flushes(st_gen(1), SEG, 0, "CC", 5);
    st_manifest(st_slot, 1, 0, 0);
    qsf_slot_recovered r;
    open_slot(&r);
    char pid[32];
    snprintf(pid, sizeof pid, "holder=pid=%ld", (long) getpid());
    assert_non_null(strstr(refused(1, 1, QSF_E_LOCKED), pid));
    qsf_slot_release(&r);
    qsf_setaside_result res;
    set_aside_ok(1, 1, &res);
}

/* The rewrite fails after the record was written: the slot is as it was and
 * .rejected holds the frames without DONE; running the set-aside again
 * finishes it and adds no second copy. */
static int fail_renames;
static int failing_renameat(int od, const char *op, int nd, const char *np) {
    size_t n = strlen(op);
    if (fail_renames && n > 8 && strcmp(op + n - 8, ".sfa.tmp") == 0) {
        errno = EIO;
        return -1;
    }
    return renameat(od, op, nd, np);
}

static void an_interrupted_set_aside_is_finished_once(void **state) {
    (void) state;
    st_segment_flushes(st_gen(1), SEG, 0, "CDC", 5);
    st_manifest(st_slot, 1, 0, 0);
    QSF_OS->renameat = failing_renameat;
    fail_renames = 1;
    qsf_setaside_result res;
    qsf_errinfo e;
    assert_int_equal(set_aside(1, 2, &res, &e), QSF_E_IO);
    assert_non_null(strstr(e.msg, "cannot rename the rewritten segment"));
    qsf_rejected_list l = records();
    assert_int_equal(l.n, 1);
    assert_false(l.v[0].done);
    qsf_rejected_list_free(&l);
    qsf_slot_recovered r;
    open_slot(&r);
    assert_int_equal(r.n_retired, 0); /* not in effect: the frames are still there */
    qsf_slot_release(&r);
    fail_renames = 0;
    set_aside_ok(1, 2, &res);
    assert_true(res.resumed);
    assert_int_equal(res.frames, 2);
    assert_int_equal(res.rows, 10);
    l = records();
    assert_int_equal(l.n, 2);
    assert_true(l.v[0].done);
    assert_int_equal(l.v[1].kind, QSF_RJR_DONE);
    qsf_rejected_list_free(&l);
    open_slot(&r);
    assert_int_equal(r.n_retired, 1);
    qsf_slot_release(&r);
}

/* A damaged .rejected is never written to (it holds frames set aside). */
static void a_damaged_rejected_file_is_left_alone(void **state) {
    (void) state;
    st_segment_flushes(st_gen(1), SEG, 0, "CDCC", 5);
    st_manifest(st_slot, 1, 0, 0);
    qsf_setaside_result res;
    set_aside_ok(1, 2, &res);
    uint64_t size = st_size(st_path(st_slot, QSF_NAME_REJECTED));
    st_patch(st_path(st_slot, QSF_NAME_REJECTED), 100, "X", 1);
    const char *msg = refused(3, 3, QSF_E_CORRUPT);
    assert_non_null(strstr(msg, "damaged at offset 8 (record CRC mismatch)"));
    assert_int_equal(st_size(st_path(st_slot, QSF_NAME_REJECTED)), size);
    qsf_slot_recovered r;
    open_slot(&r);
    assert_int_equal(r.n_retired, 1); /* FSN 3 untouched */
    assert_int_equal(r.retired[0].to, 2);
    qsf_slot_release(&r);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(a_flush_is_set_aside_and_retired),
        T(spans_that_are_refused),
        T(a_flush_across_segments),
        T(a_slot_in_use_is_refused),
        T(an_interrupted_set_aside_is_finished_once),
        T(a_damaged_rejected_file_is_left_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
