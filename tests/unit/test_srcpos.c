/* .source-positions (lib/sf/srcpos.c, docs/FORMAT.md §4a): the record codec
 * and its vectors (versions 2 and 1), a torn tail and records above what
 * recovery kept dropped at open (the file rewritten), records whose flushes
 * did not survive dropped back to the newest that did, a version 1 file read
 * and rewritten as version 2, a wrong header started anew, a record taken
 * back; and in a ring (append mode), a failing sync of the log fails the
 * flush with nothing of it published and its position taken back, and a
 * position whose committing frame was replaced by another is dropped. */
#include "testutil.h"

#include "ring_testutil.h"

#include "crc32c.h"
#include "os/os.h"
#include "sf/ring.h"
#include "sf/segfmt.h"
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

static struct stat file_stat(void) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, QSF_NAME_SRCPOS);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    return st;
}

/* The end of the log's records; only zeros (the room kept ahead) follow. */
static uint64_t records_end(void) {
    bool present, valid;
    uint64_t size, end, torn;
    assert_int_equal(
        qsf_srcpos_read_slot(dir, NULL, NULL, &present, &valid, &size, &end, &torn, NULL), 0);
    assert_true(present && valid);
    assert_int_equal(torn, 0);
    assert_true(size > end);
    return end;
}

/* A record at fsn naming the frame CRC fsn * 1000 (none for fsn < 0). */
static qsf_srcpos_rec rec_of(int64_t fsn, const char *pos) {
    qsf_srcpos_rec r = {.fsn = fsn,
                        .has_frame = fsn >= 0,
                        .frame_crc = (uint32_t) fsn * 1000u,
                        .len = (uint32_t) strlen(pos)};
    memcpy(r.bytes, pos, r.len);
    return r;
}

static void append_ok(qsf_srcpos_log *l, int64_t fsn, const char *pos) {
    uint64_t mark;
    qsf_srcpos_rec r = rec_of(fsn, pos);
    assert_int_equal(qsf_srcpos_append(l, &r, &mark, NULL), 0);
}

/* The examples of docs/FORMAT.md §4a.1, byte for byte. */
static void record_vector(void **state) {
    (void) state;
    uint8_t rec[32];
    qsf_srcpos_rec in = {.fsn = 5, .has_frame = true, .frame_crc = 0x12345678, .len = 2};
    memcpy(in.bytes, "ab", 2);
    size_t n = qsf_srcpos_encode(rec, &in);
    static const uint8_t want[] = {0x02, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12, 0x01, 0x00,
                                   0x00, 0x00, 0x61, 0x62, 0x08, 0x39, 0x23, 0xDF};
    assert_int_equal(n, sizeof want);
    assert_memory_equal(rec, want, sizeof want);
    qsf_srcpos_rec r;
    assert_int_equal(qsf_srcpos_decode(rec, n, QSF_SRCPOS_VERSION, &r), n);
    assert_int_equal(r.fsn, 5);
    assert_true(r.has_frame);
    assert_int_equal(r.frame_crc, 0x12345678);
    assert_memory_equal(r.bytes, "ab", 2);
    rec[13] ^= 1; /* a flipped bit: no record */
    assert_int_equal(qsf_srcpos_decode(rec, n, QSF_SRCPOS_VERSION, &r), 0);
    /* version 1: no frame CRC, no flags */
    static const uint8_t v1[] = {0x02, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x61, 0x62, 0xBB, 0xCD, 0x9D, 0x25};
    assert_int_equal(qsf_srcpos_decode(v1, sizeof v1, QSF_SRCPOS_VERSION_1, &r), sizeof v1);
    assert_int_equal(r.fsn, 5);
    assert_false(r.has_frame);
    assert_memory_equal(r.bytes, "ab", 2);
    assert_int_equal(qsf_srcpos_decode(v1, sizeof v1, QSF_SRCPOS_VERSION, &r), 0);
}

/* qsf_srcpos_survived_fn of the tests: the frame kept at FSN f is stored
 * with CRC f * 1000, except at the FSNs listed in `other` (another frame
 * there), and the FSNs in [gave_from, gave_to] were given up. */
typedef struct kept_frames {
    int64_t other[4];
    int64_t gave_from, gave_to;
    uint32_t checked, asked;
} kept_frames;

static bool frames_survived(void *user, const qsf_srcpos_rec *rec, bool check_frame) {
    kept_frames *k = user;
    k->asked++;
    if (rec->fsn >= k->gave_from && rec->fsn <= k->gave_to)
        return false;
    if (!check_frame || !rec->has_frame)
        return true;
    k->checked++;
    for (int i = 0; i < 4; i++)
        if (k->other[i] == rec->fsn)
            return false;
    return true;
}

/* A host crash lost the committing frames of the flushes at FSN 9 and 12,
 * and salvage put other frames at those FSNs; FSN 5 was given up. The
 * position falls back to FSN 7, the newest record whose frame is there; the
 * record at FSN 5 goes too (given up), the one at 3 stays; the frames below
 * FSN 7 are not read. The file is rewritten to what was kept. */
static void records_of_lost_flushes_fall_back(void **state) {
    (void) state;
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL, NULL, NULL), 0);
    append_ok(&l, 3, "three");
    append_ok(&l, 5, "five");
    append_ok(&l, 7, "seven");
    append_ok(&l, 9, "nine");
    append_ok(&l, 12, "twelve");
    qsf_srcpos_close(&l);
    kept_frames k = {.other = {9, 12, -2, -2}, .gave_from = 5, .gave_to = 5};
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 20, frames_survived, &k, NULL), 0);
    assert_int_equal(l.dropped, 3);
    assert_int_equal(k.asked, 5);
    assert_int_equal(k.checked, 3); /* 12, 9, 7: then no more frames are read */
    assert_int_equal(l.n, 2);
    assert_int_equal(qsf_srcpos_find(&l, 20)->fsn, 7);
    assert_int_equal(qsf_srcpos_find(&l, 6)->fsn, 3);
    qsf_srcpos_close(&l);
    assert_int_equal(records_end(), QSF_SRCPOS_HEADER_SIZE + 2 * QSF_SRCPOS_REC_FIXED + 5 + 5);
    kept_frames all = {.other = {-2, -2, -2, -2}, .gave_from = -2, .gave_to = -2};
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 20, frames_survived, &all, NULL), 0);
    assert_int_equal(l.dropped, 0);
    assert_int_equal(qsf_srcpos_find(&l, 20)->fsn, 7);
    assert_int_equal(qsf_srcpos_find(&l, 20)->frame_crc, 7000);
    qsf_srcpos_close(&l);
}

/* A version 1 file (no frame CRC) is read, its records kept without a frame
 * to check, and rewritten as version 2 before anything is appended. */
static void version_1_is_read_and_rewritten(void **state) {
    (void) state;
    static const uint8_t v1[] = {0x53, 0x50, 0x4C, 0x31, 0x01, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
                                 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x61, 0x62, 0xBB, 0xCD, 0x9D, 0x25};
    int fd = openat(dirfd_, QSF_NAME_SRCPOS, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, v1, sizeof v1), (ssize_t) sizeof v1);
    close(fd);
    kept_frames k = {.other = {5, -2, -2, -2}, .gave_from = -2, .gave_to = -2};
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, frames_survived, &k, NULL), 0);
    assert_int_equal(l.dropped, 0); /* nothing to check it with: kept, as version 1 did */
    const qsf_srcpos_rec *r = qsf_srcpos_find(&l, 100);
    assert_non_null(r);
    assert_int_equal(r->fsn, 5);
    assert_false(r->has_frame);
    append_ok(&l, 6, "six");
    qsf_srcpos_close(&l);
    uint8_t img[128];
    fd = openat(dirfd_, QSF_NAME_SRCPOS, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, img, sizeof img);
    close(fd);
    assert_int_equal(n, sizeof img); /* the records, then zeros */
    assert_int_equal(records_end(), QSF_SRCPOS_HEADER_SIZE + 2 * QSF_SRCPOS_REC_FIXED + 2 + 3);
    assert_int_equal(img[4], QSF_SRCPOS_VERSION);
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL, NULL, NULL), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(qsf_srcpos_find(&l, 5)->fsn, 5);
    assert_int_equal(qsf_srcpos_find(&l, 100)->frame_crc, 6000);
    qsf_srcpos_close(&l);
}

static void torn_tail_and_records_above_are_dropped(void **state) {
    (void) state;
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL, NULL, NULL), 0);
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
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 8, NULL, NULL, NULL), 0);
    assert_int_equal(l.dropped, 1);
    const qsf_srcpos_rec *r = qsf_srcpos_find(&l, 8);
    assert_non_null(r);
    assert_int_equal(r->fsn, 7);
    assert_memory_equal(r->bytes, "seven", 5);
    assert_int_equal(qsf_srcpos_find(&l, 4)->fsn, 3);
    assert_null(qsf_srcpos_find(&l, 2));
    qsf_srcpos_close(&l);
    assert_int_equal(records_end(), QSF_SRCPOS_HEADER_SIZE + 2 * QSF_SRCPOS_REC_FIXED + 5 + 5);
}

static void wrong_header_starts_anew(void **state) {
    (void) state;
    int fd = openat(dirfd_, QSF_NAME_SRCPOS, O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not a position log", 18), 18);
    close(fd);
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL, NULL, NULL), 0);
    assert_null(qsf_srcpos_find(&l, 100));
    append_ok(&l, 1, "one");
    qsf_srcpos_close(&l);
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL, NULL, NULL), 0);
    assert_int_equal(qsf_srcpos_find(&l, 100)->fsn, 1);
    qsf_srcpos_close(&l);
}

static void a_retracted_record_is_gone(void **state) {
    (void) state;
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL, NULL, NULL), 0);
    append_ok(&l, 1, "one");
    uint64_t mark;
    qsf_srcpos_rec two = rec_of(2, "two");
    assert_int_equal(qsf_srcpos_append(&l, &two, &mark, NULL), 0);
    assert_int_equal(qsf_srcpos_retract(&l, mark, true, NULL), 0);
    assert_int_equal(qsf_srcpos_find(&l, 100)->fsn, 1);
    append_ok(&l, 2, "deux"); /* goes in its place */
    qsf_srcpos_close(&l);
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 100, NULL, NULL, NULL), 0);
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

static qsf_ring_opts ring_opts(int durability) {
    qsf_ring_opts o = {0};
    o.sf_dir = dir;
    o.sender_id = "r";
    o.segment_bytes = 4096;
    o.total_bytes = 1 << 20;
    o.durability = durability;
    o.append_deadline_ms = 1000;
    return o;
}

static void collect_rec(void *user, const qsf_srcpos_rec *rec) {
    qsf_srcpos_rec *recs = user;
    for (int i = 0; i < 4; i++)
        if (recs[i].len == 0) {
            recs[i] = *rec;
            return;
        }
}

/* "first" (FSN 0), a flush without frames carrying "empty" (it names FSN 0),
 * "second" (FSN 1): each record names the CRC its frame is stored with. Then
 * another valid frame takes FSN 1 (as salvage can number one after a host
 * crash lost the committing frame of "second" but not its record): the open
 * drops "second" and reports "empty" at FSN 0. */
static void a_position_whose_frame_was_replaced_is_dropped(void **state) {
    (void) state;
    qsf_ring_opts o = ring_opts(QSF_DUR_APPEND);
    qsf_ring *r;
    assert_int_equal(qsf_ring_open(&o, &r, NULL, NULL), 0);
    qsf_errinfo e;
    assert_int_equal(flush_one(r, "first", &e), 0);
    assert_int_equal(qsf_ring_txn_begin(r, &e), 0);
    assert_int_equal(qsf_ring_srcpos_stage(r, "empty", 5, &e), 0);
    assert_int_equal(qsf_ring_txn_commit(r, &e), 0);
    assert_int_equal(flush_one(r, "second", &e), 0);
    assert_int_equal(qsf_ring_close(r, NULL), 0);
    char p[600];
    snprintf(p, sizeof p, "%s/r", dir);
    qsf_srcpos_rec recs[4] = {0};
    bool present, valid;
    uint64_t size, end, torn;
    assert_int_equal(
        qsf_srcpos_read_slot(p, collect_rec, recs, &present, &valid, &size, &end, &torn, NULL), 0);
    uint8_t m[64];
    memset(m, 'x', sizeof m);
    uint32_t crc = qsf_sfa_frame_crc(m, sizeof m);
    static const int64_t fsns[] = {0, 0, 1};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(recs[i].fsn, fsns[i]);
        assert_true(recs[i].has_frame);
        assert_int_equal(recs[i].frame_crc, crc);
    }
    uint8_t other[8 + sizeof m];
    memset(m, 'y', sizeof m);
    qsf_sfa_frame_encode(other, m, sizeof m);
    snprintf(p, sizeof p, "%s/r/sf-initial.sfa", dir);
    int fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    off_t frame1 = QSF_SFA_HEADER_SIZE + (off_t) sizeof other;
    assert_int_equal(pwrite(fd, other, sizeof other, frame1), (ssize_t) sizeof other);
    close(fd);
    assert_int_equal(qsf_ring_open(&o, &r, NULL, NULL), 0);
    assert_int_equal(qsf_ring_published_fsn(r), 1);
    char buf[16];
    size_t len;
    int64_t fsn;
    assert_int_equal(qsf_ring_source_position(r, false, buf, sizeof buf, &len, &fsn, NULL), 0);
    assert_int_equal(fsn, 0);
    assert_int_equal(len, 5);
    assert_memory_equal(buf, "empty", 5);
    assert_int_equal(qsf_ring_close(r, NULL), 0);
}

/* A log of "one" at FSN 1 and "two" at FSN 2; the end of its records. */
static uint64_t one_two(void) {
    qsf_srcpos_log l;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 1000, NULL, NULL, NULL), 0);
    append_ok(&l, 1, "one");
    append_ok(&l, 2, "two");
    uint64_t end = l.end;
    qsf_srcpos_close(&l);
    return end;
}

/* The log is kept ahead of its records in written zeros, so a record
 * overwrites blocks the file has: an open reads the same records from it and
 * does not rewrite it (the zeros are no torn tail); an append grows it by the
 * step once the room is used up. */
static void the_zeros_ahead_are_no_tail(void **state) {
    (void) state;
    qsf_srcpos_log l;
    uint64_t end = one_two();
    struct stat before = file_stat();
    assert_int_equal(before.st_size, 64 * 1024);
    assert_int_equal(records_end(), end);
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 1000, NULL, NULL, NULL), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.end, end);
    assert_memory_equal(qsf_srcpos_find(&l, 1000)->bytes, "two", 3);
    struct stat after = file_stat();
    assert_int_equal(after.st_ino, before.st_ino); /* not rewritten */
    char pos[QSF_SRCPOS_MAX + 1];
    memset(pos, 'p', QSF_SRCPOS_MAX);
    pos[QSF_SRCPOS_MAX] = '\0';
    for (int64_t f = 3; l.end + QSF_SRCPOS_REC_FIXED + QSF_SRCPOS_MAX <= 64 * 1024; f++)
        append_ok(&l, f, pos);
    assert_int_equal(file_stat().st_size, 64 * 1024);
    append_ok(&l, 999, pos); /* does not fit: the file grows by a step */
    assert_int_equal(file_stat().st_size, 128 * 1024);
    qsf_srcpos_close(&l);
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 1000, NULL, NULL, NULL), 0);
    assert_int_equal(qsf_srcpos_find(&l, 1000)->fsn, 999);
    assert_int_equal(file_stat().st_ino, before.st_ino);
    qsf_srcpos_close(&l);
}

/* A crash in the middle of a record's write leaves part of it in the zeros:
 * the open reads back the position before it, and rewrites the log. */
static void a_record_cut_by_a_crash_reads_back_the_old_position(void **state) {
    (void) state;
    qsf_srcpos_log l;
    uint64_t end = one_two();
    uint8_t rec[QSF_SRCPOS_REC_FIXED + 5];
    qsf_srcpos_rec three = rec_of(3, "three");
    size_t n = qsf_srcpos_encode(rec, &three);
    int fd = openat(dirfd_, QSF_NAME_SRCPOS, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, rec, n - 3, (off_t) end), (ssize_t) (n - 3)); /* no CRC yet */
    close(fd);
    ino_t ino = file_stat().st_ino;
    assert_int_equal(qsf_srcpos_open(&l, dirfd_, dir, 1000, NULL, NULL, NULL), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(qsf_srcpos_find(&l, 1000)->fsn, 2);
    assert_memory_equal(qsf_srcpos_find(&l, 1000)->bytes, "two", 3);
    append_ok(&l, 3, "three");
    qsf_srcpos_close(&l);
    assert_true(file_stat().st_ino != ino); /* rewritten: the torn bytes are gone */
    assert_int_equal(records_end(), end + n);
}

typedef struct asked {
    int64_t fsn[8];
    bool check[8];
    int n;
} asked;

/* Refuses FSN 2 when its frame is checked, accepts the rest. */
static bool refuse_2(void *user, const qsf_srcpos_rec *rec, bool check_frame) {
    asked *a = user;
    a->fsn[a->n] = rec->fsn;
    a->check[a->n++] = check_frame;
    return !(rec->fsn == 2 && check_frame);
}

/* The rule the open and the tools share: above the limit dropped unasked,
 * the rest asked newest first, the frame checked until one passes. */
static void the_rule_asks_newest_first(void **state) {
    (void) state;
    qsf_srcpos_rec recs[5] = {{.fsn = 0}, {.fsn = 1}, {.fsn = 2}, {.fsn = 3}, {.fsn = 2}};
    uint32_t n = 5;
    asked a = {0};
    assert_int_equal(qsf_srcpos_select(recs, &n, 2, refuse_2, &a), 3);
    assert_int_equal(n, 2);
    assert_int_equal(recs[0].fsn, 0);
    assert_int_equal(recs[1].fsn, 1);
    static const int64_t fsns[] = {2, 2, 1, 0};
    static const bool checks[] = {true, true, true, false};
    assert_int_equal(a.n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(a.fsn[i], fsns[i]);
        assert_int_equal(a.check[i], checks[i]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_vector),
        cmocka_unit_test(the_rule_asks_newest_first),
        cmocka_unit_test_setup_teardown(the_zeros_ahead_are_no_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(a_record_cut_by_a_crash_reads_back_the_old_position, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(torn_tail_and_records_above_are_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(records_of_lost_flushes_fall_back, setup, teardown),
        cmocka_unit_test_setup_teardown(version_1_is_read_and_rewritten, setup, teardown),
        cmocka_unit_test_setup_teardown(wrong_header_starts_anew, setup, teardown),
        cmocka_unit_test_setup_teardown(a_retracted_record_is_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(a_failed_sync_of_the_log_fails_the_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(a_position_whose_frame_was_replaced_is_dropped, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
