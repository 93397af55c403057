/* .source-positions (lib/sf/srcpos.c, docs/FORMAT.md §4a): the record codec
 * and its vector, a torn tail and records above what recovery kept dropped
 * at open (the file rewritten), a wrong header started anew, a record taken
 * back; and in a ring (append mode), a failing sync of the log fails the
 * flush with nothing of it published and its position taken back. */
#include "testutil.h"

#include "ring_testutil.h"

#include "crc32c.h"
#include "os/os.h"
#include "sf/ring.h"
#include "sf/srcpos.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];
static int dirfd_;

static int setup(void **state) {
    (void) state;
    tu_mkdtemp(dir, sizeof dir);
    dirfd_ = open(dir, O_RDONLY | O_DIRECTORY);
    return dirfd_ < 0;
}

static int teardown(void **state) {
    (void) state;
    close(dirfd_);
    tu_rmtree(dir);
    return 0;
}

static uint64_t file_size(void) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, QSF_NAME_SRCPOS);
    struct stat st;
    return stat(p, &st) == 0 ? (uint64_t) st.st_size : 0;
}

static void append_ok(qsf_srcpos_log *l, int64_t fsn, const char *pos) {
    uint64_t mark;
    assert_int_equal(qsf_srcpos_append(l, fsn, pos, (uint32_t) strlen(pos), &mark, NULL), 0);
}

/* The example of docs/FORMAT.md §4a.1, byte for byte. */
static void record_vector(void **state) {
    (void) state;
    uint8_t rec[32];
    size_t n = qsf_srcpos_encode(rec, 5, "ab", 2);
    static const uint8_t want[] = {0x02, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x61, 0x62, 0xBB, 0xCD, 0x9D, 0x25};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(rec, want, sizeof want);
    qsf_srcpos_rec r;
    assert_int_equal(qsf_srcpos_decode(rec, n, &r), n);
    assert_int_equal(r.fsn, 5);
    rec[13] ^= 1; /* a flipped bit: no record */
    assert_int_equal(qsf_srcpos_decode(rec, n, &r), 0);
}

static void torn_tail_and_records_above_are_dropped(void **state) {
    (void) state;
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL), 0);
    append_ok(&l, 3, "three");
    append_ok(&l, 7, "seven");
    append_ok(&l, 9, "nine");
    uint64_t full = l.end;
    qsf_srcpos_close(&l);
    /* a torn write after the last record */
    int fd = openat(dirfd_, QSF_NAME_SRCPOS, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "\x05\x00\x00", 3, (off_t) full), 3);
    close(fd);
    /* recovery kept FSN 0..8: "nine" (FSN 9) is dropped, and the tail */
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 8, NULL), 0);
    assert_int_equal(l.dropped, 1);
    const qsf_srcpos_rec *r = qsf_srcpos_find(&l, 8);
    assert_non_null(r);
    assert_int_equal(r->fsn, 7);
    assert_memory_equal(r->bytes, "seven", 5);
    assert_int_equal(qsf_srcpos_find(&l, 4)->fsn, 3);
    assert_null(qsf_srcpos_find(&l, 2));
    qsf_srcpos_close(&l);
    assert_int_equal(file_size(), QSF_SRCPOS_HEADER_SIZE + 2 * QSF_SRCPOS_REC_FIXED + 5 + 5);
}

static void wrong_header_starts_anew(void **state) {
    (void) state;
    int fd = openat(dirfd_, QSF_NAME_SRCPOS, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not a position log", 18), 18);
    close(fd);
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL), 0);
    assert_null(qsf_srcpos_find(&l, 100));
    append_ok(&l, 1, "one");
    qsf_srcpos_close(&l);
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL), 0);
    assert_int_equal(qsf_srcpos_find(&l, 100)->fsn, 1);
    qsf_srcpos_close(&l);
}

static void a_retracted_record_is_gone(void **state) {
    (void) state;
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL), 0);
    append_ok(&l, 1, "one");
    uint64_t mark;
    assert_int_equal(qsf_srcpos_append(&l, 2, "two", 3, &mark, NULL), 0);
    assert_int_equal(qsf_srcpos_retract(&l, mark, true, NULL), 0);
    assert_int_equal(qsf_srcpos_find(&l, 100)->fsn, 1);
    append_ok(&l, 2, "deux"); /* goes in its place */
    qsf_srcpos_close(&l);
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL), 0);
    assert_int_equal(l.n, 2);
    assert_memory_equal(qsf_srcpos_find(&l, 100)->bytes, "deux", 4);
    qsf_srcpos_close(&l);
}

/* ---- in a ring ---- */

static int log_fd = -1;
static int fail_log_syncs;

static int failing_fdatasync(int fd) {
    if (fd == log_fd && fail_log_syncs > 0) {
        fail_log_syncs--;
        errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}

static int flush_one(qsf_ring *r, const char *pos, qsf_errinfo *e) {
    uint8_t m[64];
    memset(m, 'x', sizeof m);
    int rc = qsf_ring_txn_begin(r, e);
    if (rc == QSF_OK)
        rc = qsf_ring_srcpos_stage(r, pos, strlen(pos), e);
    if (rc == QSF_OK)
        rc = qsf_ring_txn_append(r, m, sizeof m, NULL, e);
    if (rc == QSF_OK)
        return qsf_ring_txn_commit(r, e);
    qsf_errinfo x;
    qsf_ring_txn_abort(r, &x);
    return rc;
}

static void a_failed_sync_of_the_log_fails_the_flush(void **state) {
    (void) state;
    qsf_ring_opts o = {0};
    o.sf_dir = dir;
    o.sender_id = "r";
    o.segment_bytes = 4096;
    o.total_bytes = 1 << 20;
    o.durability = QSF_DUR_APPEND;
    o.append_deadline_ms = 1000;
    qsf_ring *r;
    assert_int_equal(qsf_ring_open(&o, &r, NULL, NULL), 0);
    qsf_errinfo e;
    assert_int_equal(flush_one(r, "first", &e), 0);
    char p[600];
    snprintf(p, sizeof p, "%s/r/%s", dir, QSF_NAME_SRCPOS);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    for (int fd = 3; fd < 1024; fd++) { /* the log's descriptor */
        struct stat fs;
        if (fstat(fd, &fs) == 0 && fs.st_ino == st.st_ino && fs.st_dev == st.st_dev)
            log_fd = fd;
    }
    assert_true(log_fd >= 0);
    QSF_OS->fdatasync = failing_fdatasync;
    fail_log_syncs = 1;
    assert_int_equal(flush_one(r, "second", &e), QSF_E_DURABILITY);
    assert_int_equal(qsf_ring_published_fsn(r), 0);
    char buf[16];
    size_t len;
    int64_t fsn;
    assert_int_equal(qsf_ring_source_position(r, false, buf, sizeof buf, &len, &fsn, NULL), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(buf, "first", 5);
    assert_int_equal(flush_one(r, "third", &e), 0); /* a retry goes through */
    assert_int_equal(qsf_ring_source_position(r, false, buf, sizeof buf, &len, &fsn, NULL), 0);
    assert_int_equal(fsn, 1);
    assert_memory_equal(buf, "third", 5);
    QSF_OS->fdatasync = fdatasync;
    assert_int_equal(qsf_ring_close(r, NULL), 0);
    assert_int_equal(qsf_ring_open(&o, &r, NULL, NULL), 0);
    assert_int_equal(qsf_ring_source_position(r, false, buf, sizeof buf, &len, &fsn, NULL), 0);
    assert_int_equal(fsn, 1);
    assert_memory_equal(buf, "third", 5);
    assert_int_equal(qsf_ring_close(r, NULL), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_vector),
        cmocka_unit_test_setup_teardown(torn_tail_and_records_above_are_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(wrong_header_starts_anew, setup, teardown),
        cmocka_unit_test_setup_teardown(a_retracted_record_is_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(a_failed_sync_of_the_log_fails_the_flush, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
