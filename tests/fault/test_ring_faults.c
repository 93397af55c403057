/* The ring under syscall faults: ENOSPC while preallocating a spare, EIO from
 * a periodic checkpoint, short writes, and failing unlinks / directory syncs
 * during trim. Each must surface as the documented error or backpressure,
 * keep every unacknowledged frame, and recover once the fault goes away. */
#include "ring_testutil.h"

#include "log.h"
#include "os/os.h"
#include "sf/ring.h"
#include "sf/segfmt.h"
#include "sf/sfa.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static qsf_ring_opts sf_opts(uint64_t seg, int durability) {
    qsf_ring_opts o = {0};
    o.sf_dir = rt_dir;
    o.sender_id = "f";
    o.segment_bytes = seg;
    o.total_bytes = 1 << 20;
    o.durability = durability;
    o.sync_interval_ms = 5;
    /* A producer waits this long for a spare: ample on a loaded machine,
     * where the spare thread may not run for hundreds of milliseconds. A
     * test that wants QSF_E_FULL sets its own. */
    o.append_deadline_ms = 10000;
    return o;
}

/* Frame f: 8 bytes of FSN then filler, 100 bytes in all. */
static int append_frame(qsf_ring *r, int64_t f, qsf_errinfo *e) {
    uint8_t buf[100];
    memset(buf, (int) (f & 0xff), sizeof buf);
    memcpy(buf, &f, 8);
    int64_t got = -2;
    int rc = qsf_ring_append(r, buf, sizeof buf, &got, e);
    if (rc == QSF_OK && got != f)
        fail_msg("frame %" PRId64 " got FSN %" PRId64, f, got);
    return rc;
}

static void append_ok(qsf_ring *r, int64_t from, int64_t to) {
    for (int64_t f = from; f < to; f++) {
        qsf_errinfo e;
        if (append_frame(r, f, &e) != QSF_OK)
            fail_msg("append %" PRId64 ": %s", f, e.msg);
    }
}

/* Every frame from `from` to published is present, in order, intact. */
static void check_frames(qsf_ring *r, int64_t from) {
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, from), 0);
    const uint8_t *p;
    uint32_t len;
    int64_t fsn, expect = from, v;
    while (qsf_ring_cursor_next(r, &c, &p, &len, &fsn) == 1) {
        memcpy(&v, p, 8);
        if (fsn != expect || v != expect || len != 100)
            fail_msg("frame %" PRId64 ": fsn %" PRId64 " payload %" PRId64, expect, fsn, v);
        expect++;
    }
    qsf_ring_cursor_release(r, &c);
    assert_int_equal(expect, qsf_ring_published_fsn(r) + 1);
}

/* Reopens the closed slot: it must open as itself (not set aside), end at
 * `published` and hold every frame from `from` on; then drains and closes it. */
static void reopen_expect(const qsf_ring_opts *o, int64_t published, int64_t from) {
    qsf_ring *r = NULL;
    qsf_recovery_report rep;
    qsf_errinfo e;
    if (qsf_ring_open(o, &r, &rep, &e) != QSF_OK)
        fail_msg("reopen: %s", e.msg);
    assert_string_equal(rep.quarantined_slot, "");
    assert_int_equal(rep.published_fsn, published);
    check_frames(r, from);
    qsf_ring_acknowledge(r, published);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* ---- ENOSPC when preallocating a spare ---- */

static _Atomic int nospace;
static int maybe_enospc(int fd, off_t off, off_t len) {
    if (atomic_load(&nospace))
        return ENOSPC;
    return posix_fallocate(fd, off, len);
}

/* Waits until the ring holds its active segment and a spare (the file
 * exists a moment before the manager registers it), then fills the disk: no
 * further spare can be created. */
static void disk_full_after_a_spare(qsf_ring *r, uint64_t seg) {
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") == 2 && qsf_ring_owned_bytes(r) >= 2 * seg);
    atomic_store(&nospace, 1);
    QSF_OS->fallocate = maybe_enospc;
}

static _Atomic int64_t fake_now;
static int64_t fake_clock(void) {
    return atomic_fetch_add(&fake_now, 50 * 1000000); /* 50 ms per reading */
}

static void enospc_spare_is_backpressure_then_retried(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    o.append_deadline_ms = 5000;
    qsf_ring *r = rt_open(&o);
    disk_full_after_a_spare(r, 4096);
    QSF_OS->mono_ns = fake_clock; /* the deadline passes without real waiting */
    /* 37 frames of 108 bytes fill a 4 KiB segment; the spare takes the next 37. */
    qsf_errinfo e;
    int64_t f = 0;
    int rc;
    while ((rc = append_frame(r, f, &e)) == QSF_OK)
        f++;
    assert_int_equal(f, 74);
    assert_int_equal(rc, QSF_E_FULL);
    assert_true(e.flags & QSF_ERRF_RETRIABLE);
    assert_non_null(strstr(e.msg, "cannot create a new segment"));
    assert_non_null(strstr(e.msg, "pre-allocation failed"));
    /* No partial spare left behind: the spare thread retries after its backoff, and a
     * retry's file exists only for the moment of its failed attempt. */
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") == 2);
    check_frames(r, 0);

    qsf_os_reset();            /* real clock and fallocate again */
    atomic_store(&nospace, 0); /* the manager retries on its next tick */
    append_ok(r, f, f + 100);
    check_frames(r, 0);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* A full disk with everything acknowledged never keeps the ring full: the
 * acknowledged active segment is reused in place (it returned QSF_E_FULL for
 * as long as the disk stayed full: observed for over 120 s). */
static void acknowledged_segment_is_reused_when_no_spare_can_be_made(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    qsf_ring *r = rt_open(&o);
    disk_full_after_a_spare(r, 4096);
    append_ok(r, 0, 74); /* fills the active segment and the spare */
    qsf_ring_acknowledge(r, 73);
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") == 1); /* the sealed one is trimmed */
    qsf_errinfo e;
    for (int64_t f = 74; f < 296; f++) { /* six times what the segment holds (37 frames) */
        int rc = append_frame(r, f, &e);
        if (rc != QSF_OK)
            fail_msg("append %" PRId64 " with every frame acknowledged: %s", f, e.msg);
        if (f < 286) /* the last ten stay unacknowledged */
            qsf_ring_acknowledge(r, f);
    }
    /* never a second segment: the spare thread's retry makes a spare file only for
     * the moment of its failed attempt (it may be there right now) */
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") == 1);
    int64_t acked = qsf_ring_acked_fsn(r);
    check_frames(r, acked + 1);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    qsf_os_reset();
    atomic_store(&nospace, 0);
    qsf_recovery_report rep;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, &e), QSF_OK);
    assert_int_equal(rep.published_fsn, 295);
    assert_true(rep.acked_fsn >= acked);
    check_frames(r, rep.acked_fsn + 1);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

static _Atomic int manifest_write_fails;

static ssize_t eio_manifest_pwrite(int fd, const void *buf, size_t n, off_t off) {
    if (atomic_load(&manifest_write_fails) && tu_fd_path_ends_with(fd, QSF_NAME_MANIFEST)) {
        errno = EIO;
        return -1;
    }
    return pwrite(fd, buf, n, off);
}

/* Reusing the acknowledged active segment in place fails at its last step
 * (the manifest record cannot be written): the segment already starts at
 * the new baseSeq but the manifest still names the old one. Until a retry
 * succeeds no frame may go into it; a close with frames unacknowledged and a
 * reopen must find every one of them. */
static void failed_manifest_step_of_a_reuse_is_owed(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    o.append_deadline_ms = 0;
    qsf_ring *r = rt_open(&o);
    disk_full_after_a_spare(r, 4096);
    append_ok(r, 0, 74); /* fills the active segment and the spare */
    qsf_ring_acknowledge(r, 73);
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") == 1); /* the sealed one is trimmed */
    QSF_OS->pwrite = eio_manifest_pwrite;
    atomic_store(&manifest_write_fails, 1);
    qsf_errinfo e;
    assert_int_equal(append_frame(r, 74, &e), QSF_E_FULL); /* the reuse's manifest step failed */
    atomic_store(&manifest_write_fails, 0);
    /* the owed step is redone in the background; with a deadline of 0 the
     * append says QSF_E_FULL until it is */
    RT_WAIT_UNTIL(append_frame(r, 74, &e) == QSF_OK);
    append_ok(r, 75, 80); /* unacknowledged */
    check_frames(r, 74);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK); /* the tail stays */
    qsf_os_reset();
    atomic_store(&nospace, 0);
    reopen_expect(&o, 79, 74);
}

/* A reader spinning at the end of the published frames, as the I/O thread
 * does when it is caught up: every frame it gets must be published, with
 * the FSN it was published under. */
typedef struct spin_reader {
    qsf_ring *r;
    int64_t from;
    _Atomic int stop;
    _Atomic int64_t bad_fsn; /* first frame returned that was not published, or -1 */
    int64_t bad_payload, bad_published;
    _Atomic int64_t next; /* FSN after the last frame read */
} spin_reader;

static void *spin_read(void *arg) {
    spin_reader *sr = arg;
    qsf_ring_cursor c = {0};
    if (qsf_ring_cursor_seek(sr->r, &c, sr->from) != 0)
        return NULL;
    atomic_store(&sr->next, sr->from);
    while (!atomic_load(&sr->stop) && atomic_load(&sr->bad_fsn) < 0) {
        const uint8_t *p;
        uint32_t len;
        int64_t fsn, v = -1;
        if (qsf_ring_cursor_next(sr->r, &c, &p, &len, &fsn) != 1)
            continue;
        /* the producer stores the segment's published offset, then the
         * ring's published FSN: a frame may be seen a moment before its FSN */
        int64_t pub = qsf_ring_published_fsn(sr->r);
        for (int k = 0; k < 1000000 && pub < fsn; k++) {
            sched_yield();
            pub = qsf_ring_published_fsn(sr->r);
        }
        if (len >= 8)
            memcpy(&v, p, 8);
        if (fsn > pub || v != fsn) {
            sr->bad_payload = v;
            sr->bad_published = pub;
            atomic_store(&sr->bad_fsn, fsn);
        }
        atomic_store(&sr->next, fsn + 1);
    }
    qsf_ring_cursor_release(sr->r, &c);
    return NULL;
}

/* Reusing the acknowledged active segment in place while the reader waits
 * at its end: the reader may see the new epoch before the published offset
 * goes back to the header (qsf_seg_reset_in_place bumps the epoch, zeroes
 * the frames, then stores the offsets). It must never read the zeroed bytes
 * below the old offset as frames: it returned them as FSN 62, 63, ... that
 * nobody had published (the I/O thread would send them, and an OK for them
 * would acknowledge the real frames 62.. unsent). */
static void reader_never_reads_a_segment_being_reused(void **state) {
    (void) state;
    const uint64_t seg = 32 << 20;
    const size_t frame = 1 << 20; /* 31 fit a segment */
    qsf_ring_opts o = sf_opts(seg, QSF_DUR_MEMORY);
    o.total_bytes = 1ull << 30;
    o.append_deadline_ms = 5000;
    qsf_ring *r = rt_open(&o);
    disk_full_after_a_spare(r, seg);
    uint8_t *buf = calloc(1, frame);
    assert_non_null(buf);
    for (int64_t f = 0; f < 62; f++) { /* fill the active segment and the spare */
        memcpy(buf, &f, 8);
        assert_int_equal(qsf_ring_append(r, buf, frame, NULL, NULL), QSF_OK);
    }
    qsf_ring_acknowledge(r, 61);
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") == 1); /* the sealed one is trimmed */
    spin_reader sr = {.r = r, .from = 62};
    atomic_init(&sr.stop, 0);
    atomic_init(&sr.bad_fsn, -1);
    atomic_init(&sr.next, 62);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, spin_read, &sr), 0);
    /* Eight reuses: each frame is read, then acknowledged, so whenever the
     * segment is full everything in it is acknowledged and the reader waits
     * at its end. */
    for (int64_t f = 62; f < 62 + 8 * 31 && atomic_load(&sr.bad_fsn) < 0; f++) {
        memcpy(buf, &f, 8);
        qsf_errinfo e;
        if (qsf_ring_append(r, buf, frame, NULL, &e) != QSF_OK)
            fail_msg("append %" PRId64 ": %s", f, e.msg);
        RT_WAIT_UNTIL(atomic_load(&sr.bad_fsn) >= 0 || atomic_load(&sr.next) > f);
        qsf_ring_acknowledge(r, f);
    }
    atomic_store(&sr.stop, 1);
    pthread_join(th, NULL);
    int64_t bad = atomic_load(&sr.bad_fsn);
    if (bad >= 0)
        fail_msg("the reader got FSN %" PRId64 " (payload says %" PRId64
                 ") while the published FSN was %" PRId64,
                 bad, sr.bad_payload, sr.bad_published);
    free(buf);
    qsf_os_reset();
    atomic_store(&nospace, 0);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* ---- EIO from a periodic checkpoint ---- */

static _Atomic int sync_fails;
/* A checkpoint is an msync of the data range then an fdatasync of the file,
 * both on the manager's thread: the fdatasync decides whether the range
 * msynced since the previous one failed or succeeded (the flag may flip
 * between the two calls), and consumes it, so that a retry that msyncs
 * nothing counts as covering nothing. */
static _Atomic uint64_t last_msync_len, failed_msync_len, ok_msync_after_fail_len;
static bool is_segment(int fd) {
    struct stat st; /* segment files only (1 MiB), not the dictionary */
    return fstat(fd, &st) == 0 && st.st_size == 1 << 20;
}
static void note_ok_after_fail(void) {
    uint64_t len = atomic_exchange(&last_msync_len, 0);
    uint64_t cur = atomic_load(&ok_msync_after_fail_len);
    while (cur < len && !atomic_compare_exchange_weak(&ok_msync_after_fail_len, &cur, len))
        ;
}
static int maybe_eio_fdatasync(int fd) {
    if (!is_segment(fd))
        return fdatasync(fd);
    if (atomic_load(&sync_fails)) {
        uint64_t len = atomic_exchange(&last_msync_len, 0);
        if (len > atomic_load(&failed_msync_len)) /* the largest failed range */
            atomic_store(&failed_msync_len, len);
        errno = EIO;
        return -1;
    }
    int rc = fdatasync(fd);
    if (rc == 0 && atomic_load(&failed_msync_len))
        note_ok_after_fail(); /* the largest successful retry */
    return rc;
}
static int maybe_eio_fdatasync_any(int fd) {
    if (atomic_load(&sync_fails)) {
        errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}
static int record_msync(void *addr, size_t len, int flags) {
    atomic_store(&last_msync_len, len);
    return msync(addr, len, flags);
}

static void periodic_eio_latched_then_cleared(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(1 << 20, QSF_DUR_PERIODIC);
    qsf_ring *r = rt_open(&o);
    QSF_OS->msync = record_msync;
    QSF_OS->fdatasync = maybe_eio_fdatasync;
    atomic_store(&sync_fails, 1);
    /* frames until the checkpoint (every 5 ms) fails and latches: on a busy
     * machine that may come after the first few */
    qsf_errinfo e;
    int rc;
    int64_t f = 0;
    RT_WAIT_UNTIL((rc = append_frame(r, f, &e)) != QSF_OK || (f++, false));
    assert_int_equal(rc, QSF_E_DURABILITY);
    assert_non_null(strstr(e.msg, "fdatasync"));
    assert_non_null(strstr(e.msg, "Input/output error"));
    assert_int_equal(append_frame(r, f, &e), QSF_E_DURABILITY); /* stays latched */
    uint64_t failed = atomic_load(&failed_msync_len);
    assert_true(failed >= 108); /* at least the first frame's range */

    atomic_store(&sync_fails, 0); /* retried after min(interval, 1 s) */
    RT_WAIT_UNTIL(append_frame(r, f, &e) == QSF_OK);
    /* The retry covered the whole failed range again (re-dirtied, not skipped). */
    assert_true(atomic_load(&ok_msync_after_fail_len) >= failed);
    check_frames(r, 0);
    qsf_os_reset();
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* A rotation waits for the full segment's checkpoint; when that fails the
 * waiting append gets the sync error, not a "ring full" at its deadline. */
static void rotation_waiting_for_failed_checkpoint(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_PERIODIC);
    o.sync_interval_ms = 60000; /* only the rotation asks for a checkpoint */
    o.append_deadline_ms = 60000;
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") == 2 && qsf_ring_owned_bytes(r) >= 2 * 4096);
    QSF_OS->fdatasync = maybe_eio_fdatasync_any;
    atomic_store(&sync_fails, 1);
    qsf_errinfo e;
    int64_t f = 0;
    int rc;
    while ((rc = append_frame(r, f, &e)) == QSF_OK)
        f++;
    assert_int_equal(f, 37); /* one segment; the rotation needed a checkpoint */
    assert_int_equal(rc, QSF_E_DURABILITY);
    assert_null(strstr(e.msg, "ring full"));
    atomic_store(&sync_fails, 0);
    RT_WAIT_UNTIL(append_frame(r, f, &e) == QSF_OK); /* retried within min(interval, 1 s) */
    check_frames(r, 0);
    qsf_os_reset();
    qsf_ring_close(r, NULL);
}

/* ---- short writes ---- */

static ssize_t short_pwrite(int fd, const void *buf, size_t n, off_t off) {
    return pwrite(fd, buf, n > 7 ? 7 : n, off);
}

static void short_writes_are_completed(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_APPEND);
    QSF_OS->pwrite = short_pwrite; /* every side-file write arrives 7 bytes at a time */
    qsf_ring *r = rt_open(&o);
    const char *strs[] = {"alpha", "beta", "gamma"};
    uint32_t lens[] = {5, 4, 5};
    assert_int_equal(qsf_ring_symdict_append(r, 0, 3, strs, lens, NULL), QSF_OK);
    append_ok(r, 0, 200); /* several rotations: manifest writes; each one a durable flush */
    qsf_ring_acknowledge(r, 99);
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") <= 5); /* trim: watermark + manifest writes */
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);

    qsf_recovery_report rep;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, NULL), QSF_OK);
    assert_int_equal(qsf_ring_published_fsn(r), 199);
    assert_true(qsf_ring_acked_fsn(r) >= 99);
    assert_int_equal(qsf_ring_symdict_size(r), 3);
    uint32_t len;
    assert_string_equal(qsf_ring_symdict_entry(r, 2, &len), "gamma");
    check_frames(r, qsf_ring_acked_fsn(r) + 1);
    qsf_ring_close(r, NULL);
}

/* ---- unlink and directory-sync failures during trim ---- */

static _Atomic int unlink_fails, dirsync_fails;
static int maybe_failing_unlinkat(int dfd, const char *name, int flags) {
    size_t l = strlen(name);
    if (atomic_load(&unlink_fails) && l > 4 && strcmp(name + l - 4, ".sfa") == 0) {
        errno = EIO;
        return -1;
    }
    return unlinkat(dfd, name, flags);
}

static int maybe_failing_fsync(int fd) {
    struct stat st;
    if (atomic_load(&dirsync_fails) && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        errno = EIO;
        return -1;
    }
    return fsync(fd);
}

/* The generations of slot "f"'s segment files but the newest (which may be a
 * spare being created, or one a failed directory sync removes again); -1
 * ends the list. */
static void older_segments(int64_t gens[64]) {
    char p[512];
    snprintf(p, sizeof p, "%s/f", rt_dir);
    DIR *d = opendir(p);
    assert_non_null(d);
    int n = 0, newest = -1;
    struct dirent *e;
    uint64_t g;
    while ((e = readdir(d)))
        if (qsf_seg_name_parse(e->d_name, &g) == 0 && n < 63) {
            if (newest < 0 || (int64_t) g > gens[newest])
                newest = n;
            gens[n++] = (int64_t) g;
        }
    closedir(d);
    if (newest >= 0)
        gens[newest] = gens[--n];
    gens[n] = -1;
}

/* Whether slot "f" still holds sf-initial.sfa or a segment of generation
 * <= gen: a trim removes a quantum's files one by one after its barriers,
 * so a count of files says nothing of which are gone. */
static bool segments_up_to(int64_t gen) {
    char p[512];
    snprintf(p, sizeof p, "%s/f/sf-initial.sfa", rt_dir);
    if (access(p, F_OK) == 0)
        return true;
    int64_t gens[64];
    older_segments(gens);
    for (int i = 0; gens[i] >= 0; i++)
        if (gens[i] <= gen)
            return true;
    return false;
}

/* Every file of gens is still there. */
static void segments_still_there(const int64_t *gens) {
    for (; *gens >= 0; gens++) {
        char name[QSF_SEG_NAME_MAX], p[600];
        qsf_seg_name((uint64_t) *gens, name);
        snprintf(p, sizeof p, "%s/f/%s", rt_dir, name);
        if (access(p, F_OK) != 0)
            fail_msg("%s was removed", name);
    }
}

/* What the log says of a streak of failing trims: the log sink counts the
 * lines about it by level. */
static _Atomic int trim_warns, trim_debugs, trim_infos;
static char trim_warn_line[512];

static void count_trim_lines(int level, const char *line, void *user) {
    (void) user;
    if (level == QSF_LOG_WARN && strstr(line, "cannot be removed")) {
        if (atomic_fetch_add(&trim_warns, 1) == 0)
            snprintf(trim_warn_line, sizeof trim_warn_line, "%s", line);
    } else if (level == QSF_LOG_DEBUG && strstr(line, "trim deferred"))
        atomic_fetch_add(&trim_debugs, 1);
    else if (level == QSF_LOG_INFO && strstr(line, "removed again"))
        atomic_fetch_add(&trim_infos, 1);
}

/* An operator learns that acknowledged segments cannot be removed (their
 * files stay, and count against sf_max_total_bytes) from one WARN naming the
 * cause when the failures start, and from one INFO when they end; the
 * retries in between are DEBUG lines. They were all DEBUG. */
static void a_failing_trim_is_logged_when_it_starts_and_when_it_ends(void **state) {
    (void) state;
    qsf_log_set(count_trim_lines, NULL, QSF_LOG_DEBUG);
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    qsf_ring *r = rt_open(&o);
    QSF_OS->unlinkat = maybe_failing_unlinkat;
    atomic_store(&unlink_fails, 1);
    append_ok(r, 0, 370); /* 10 segments */
    qsf_ring_acknowledge(r, 184);
    RT_WAIT_UNTIL(atomic_load(&trim_debugs) >= 2); /* retried, still failing */
    assert_int_equal(atomic_load(&trim_warns), 1);
    if (!strstr(trim_warn_line, "Input/output error"))
        fail_msg("the warning does not name the cause: %s", trim_warn_line);
    assert_int_equal(atomic_load(&trim_infos), 0);

    atomic_store(&unlink_fails, 0);
    RT_WAIT_UNTIL(atomic_load(&trim_infos) == 1);
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") <= 8);
    assert_int_equal(atomic_load(&trim_warns), 1);
    qsf_os_reset();
    qsf_errinfo e;
    assert_int_equal(qsf_ring_close(r, &e), QSF_OK);
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
}

/* While trims keep failing, a pass that finds the oldest acknowledged
 * segment pinned (a reader still in it, a sync under way) trims nothing and
 * ends the streak neither: no INFO saying the segments are removed again (they
 * are not), no second WARN when the next retry fails. */
static void a_pinned_segment_does_not_end_a_streak_of_failing_trims(void **state) {
    (void) state;
    trim_warns = trim_debugs = trim_infos = 0;
    qsf_log_set(count_trim_lines, NULL, QSF_LOG_DEBUG);
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    qsf_ring *r = rt_open(&o);
    QSF_OS->fsync = maybe_failing_fsync;
    append_ok(r, 0, 100); /* three segments */
    atomic_store(&dirsync_fails, 1);
    qsf_ring_acknowledge(r, 80);
    RT_WAIT_UNTIL(atomic_load(&trim_warns) == 1);
    qsf_ring_cursor c = {0};
    /* Pins the oldest segment. Each retry pass detaches the trimmable
     * segments before its barriers fail and puts them back after, so a seek
     * in that window finds FSN 0 gone for a moment: seek until it holds. */
    RT_WAIT_UNTIL(qsf_ring_cursor_seek(r, &c, 0) == 0);
    for (int i = 0; i < 600 && atomic_load(&trim_infos) == 0; i++)
        usleep(500); /* passes run every few ms */
    assert_int_equal(atomic_load(&trim_infos), 0);
    qsf_ring_cursor_release(r, &c);
    int debugs = atomic_load(&trim_debugs);
    RT_WAIT_UNTIL(atomic_load(&trim_debugs) > debugs + 1); /* retried, still failing */
    assert_int_equal(atomic_load(&trim_warns), 1);
    atomic_store(&dirsync_fails, 0);
    RT_WAIT_UNTIL(atomic_load(&trim_infos) == 1);
    assert_int_equal(atomic_load(&trim_warns), 1);
    qsf_os_reset();
    qsf_errinfo e;
    assert_int_equal(qsf_ring_close(r, &e), QSF_OK);
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
}

static void trim_unlink_failure_keeps_invariants(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    qsf_ring *r = rt_open(&o);
    QSF_OS->unlinkat = maybe_failing_unlinkat;
    atomic_store(&unlink_fails, 1);
    append_ok(r, 0, 370); /* 10 segments */
    uint64_t owned = qsf_ring_owned_bytes(r);
    qsf_ring_acknowledge(r, 184); /* segments 0..4 */
    usleep(50000);
    /* The files stay, and stay counted, while their unlink fails. */
    assert_true(rt_count_files("f", ".sfa") >= 10);
    assert_true(qsf_ring_owned_bytes(r) >= owned - 4096);
    append_ok(r, 370, 400);
    check_frames(r, 185); /* nothing unacknowledged lost */

    atomic_store(&unlink_fails, 0); /* retried with backoff */
    /* Every file of 0..184 gone (sf-initial and generations 1..4, 37 frames
     * each), not just some: a quantum still unlinking when the directory
     * syncs start failing below removes the rest, as it should. */
    RT_WAIT_UNTIL(!segments_up_to(4));
    check_frames(r, 185);

    /* A failing directory sync holds the next quantum back the same way. The
     * newest file is left out: the spare thread may be creating a spare,
     * which a failed directory sync then removes again. */
    QSF_OS->fsync = maybe_failing_fsync;
    atomic_store(&dirsync_fails, 1);
    int64_t kept[64];
    older_segments(kept);
    int before = rt_count_files("f", ".sfa");
    qsf_ring_acknowledge(r, 300);
    usleep(50000);
    segments_still_there(kept);
    check_frames(r, 301);
    atomic_store(&dirsync_fails, 0);
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") < before);
    check_frames(r, 301);
    qsf_os_reset();
    qsf_ring_acknowledge(r, 399);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    assert_int_equal(rt_count_files("f", ".sfa"), 0);
}

/* The manifest head has moved past segments whose unlink failed; a close and a
 * reopen must neither lose nor resurrect anything. */
static void close_during_failures_then_reopen(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    qsf_ring *r = rt_open(&o);
    append_ok(r, 0, 370);
    QSF_OS->unlinkat = maybe_failing_unlinkat;
    atomic_store(&unlink_fails, 1);
    qsf_ring_acknowledge(r, 184);
    usleep(30000);
    assert_true(rt_count_files("f", ".sfa") >= 10);
    qsf_errinfo e;
    assert_int_equal(qsf_ring_close(r, &e), QSF_OK); /* not drained: the tail stays */
    atomic_store(&unlink_fails, 0);
    qsf_os_reset();
    qsf_recovery_report rep;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, &e), QSF_OK);
    assert_int_equal(qsf_ring_published_fsn(r), 369);
    int64_t acked = qsf_ring_acked_fsn(r);
    assert_int_equal(acked, 184);
    assert_true(rt_count_files("f", ".sfa") <= 7); /* leftovers below the head removed */
    check_frames(r, acked + 1);
    qsf_ring_acknowledge(r, 369);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* A ring at its cap whose trims keep failing (every unlink EIO) while every
 * frame is acknowledged: the trimmed segments' files stay and stay counted,
 * so no spare fits, and the acknowledged active segment is reused in place
 * as when the disk refuses a new one. Appends went on failing with
 * QSF_E_FULL ("waiting for acknowledged segments to be removed") for as long
 * as the unlinks failed, and the message did not say why; a ring full of
 * unacknowledged frames now names the failure. */
static void acknowledged_segment_is_reused_while_trims_fail_at_the_cap(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    o.total_bytes = 3 * 4096;   /* two segments and the dictionary file */
    o.append_deadline_ms = 200; /* it ends full: waits this once */
    qsf_ring *r = rt_open(&o);
    QSF_OS->unlinkat = maybe_failing_unlinkat;
    atomic_store(&unlink_fails, 1);
    qsf_errinfo e;
    for (int64_t f = 0; f < 370; f++) { /* 10 segments' worth, each frame acknowledged */
        int rc = append_frame(r, f, &e);
        if (rc != QSF_OK)
            fail_msg("append %" PRId64 ": %s", f, e.msg);
        qsf_ring_acknowledge(r, f);
        assert_true(qsf_ring_owned_bytes(r) <= o.total_bytes);
    }
    /* Unacknowledged frames fill it: full, and the error says why */
    int64_t f = 370;
    while (append_frame(r, f, &e) == QSF_OK)
        f++;
    assert_int_equal(e.code, QSF_E_FULL);
    if (!strstr(e.msg, "cannot be removed") || !strstr(e.msg, "Input/output error"))
        fail_msg("the full ring's error does not say why: %s", e.msg);
    check_frames(r, 370);
    atomic_store(&unlink_fails, 0);
    qsf_os_reset();
    qsf_ring_acknowledge(r, f - 1);
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") <= 2);
    append_ok(r, f, f + 30);
    assert_int_equal(qsf_ring_close(r, &e), QSF_OK); /* not drained: the tail stays */
    reopen_expect(&o, f + 29, f);
}

/* ---- a failed manifest step at rotation ---- */

static _Atomic int manifest_fsync_fails;

static int eio_manifest_fsync(int fd) {
    if (atomic_load(&manifest_fsync_fails) && tu_fd_path_ends_with(fd, QSF_NAME_MANIFEST)) {
        errno = EIO;
        return -1;
    }
    return fsync(fd);
}

static int append_len(qsf_ring *r, int64_t f, size_t len, qsf_errinfo *e) {
    uint8_t buf[200];
    memset(buf, (int) (f & 0xff), sizeof buf);
    memcpy(buf, &f, 8);
    int64_t got = -2;
    int rc = qsf_ring_append(r, buf, len, &got, e);
    if (rc == QSF_OK && got != f)
        fail_msg("frame %" PRId64 " got FSN %" PRId64, f, got);
    return rc;
}

/* The rotation's manifest record naming the spare is written but its fsync
 * fails, and the append gives up (deadline 0). The manifest may already name
 * the spare, so the next frame must not go into the old segment even though
 * it is small enough to fit: it waits for the rotation's retry. An ordinary
 * close and a reopen then see every frame, in order (before, the reopen
 * failed with an FSN gap). */
static void failed_manifest_sync_owes_the_rotation(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    o.append_deadline_ms = 0;
    qsf_ring *r = rt_open(&o);
    qsf_errinfo e;
    for (int64_t f = 0; f < 19; f++) /* 19 frames of 208 bytes fill the segment */
        assert_int_equal(append_len(r, f, 200, &e), QSF_OK);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) >= 2 * 4096); /* a spare exists */
    QSF_OS->fsync = eio_manifest_fsync;
    atomic_store(&manifest_fsync_fails, 1);
    assert_int_equal(append_len(r, 19, 200, &e), QSF_E_FULL);
    assert_non_null(strstr(e.msg, "cannot switch to a new segment"));
    assert_int_equal(append_len(r, 19, 50, &e), QSF_E_FULL); /* would fit: still refused */
    atomic_store(&manifest_fsync_fails, 0);
    assert_int_equal(append_len(r, 19, 50, &e), QSF_OK); /* the rotation went through */
    assert_int_equal(append_len(r, 20, 200, &e), QSF_OK);
    qsf_os_reset();
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);

    qsf_recovery_report rep;
    r = NULL;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, &e), QSF_OK);
    assert_int_equal(rep.published_fsn, 20);
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, 0), 0);
    const uint8_t *p;
    uint32_t len;
    int64_t fsn, expect = 0, v;
    while (qsf_ring_cursor_next(r, &c, &p, &len, &fsn) == 1) {
        memcpy(&v, p, 8);
        assert_int_equal(fsn, expect);
        assert_int_equal(v, expect);
        expect++;
    }
    qsf_ring_cursor_release(r, &c);
    assert_int_equal(expect, 21);
    qsf_ring_acknowledge(r, 20);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* ---- undoing a flush that was never published ---- */

static void txn_frames(qsf_ring *r, int64_t from, int64_t n) {
    uint8_t buf[100];
    for (int64_t f = from; f < from + n; f++) {
        memset(buf, (int) (f & 0xff), sizeof buf);
        memcpy(buf, &f, 8);
        qsf_errinfo e;
        if (qsf_ring_txn_append(r, buf, sizeof buf, NULL, &e) != QSF_OK)
            fail_msg("txn append %" PRId64 ": %s", f, e.msg);
    }
}

/* An abort that cannot make its zeros durable cannot promise the frames are
 * gone: the sender stops (the latch), never publishing them. */
static void abort_that_cannot_sync_latches(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    /* the flush's rotations wait for the spare thread: a loaded machine may
     * take longer than sf_opts' 200 ms, and no append here is meant to fail */
    o.append_deadline_ms = 60000;
    qsf_ring *r = rt_open(&o);
    append_ok(r, 0, 5);
    assert_int_equal(qsf_ring_txn_begin(r, NULL), QSF_OK);
    txn_frames(r, 5, 100); /* ~10 KiB: rotations into two more segments */
    QSF_OS->fdatasync = maybe_eio_fdatasync_any;
    atomic_store(&sync_fails, 1);
    qsf_errinfo e;
    assert_int_equal(qsf_ring_txn_abort(r, &e), QSF_E_DURABILITY);
    assert_non_null(strstr(e.msg, "cannot undo an unpublished flush"));
    assert_int_equal(qsf_latch_code(qsf_ring_latch(r)), QSF_E_DURABILITY);
    assert_int_equal(qsf_ring_published_fsn(r), 4);
    assert_int_equal(append_frame(r, 5, &e), QSF_E_DURABILITY); /* latched */
    atomic_store(&sync_fails, 0);
    qsf_os_reset();
    qsf_ring_close(r, NULL);
    assert_int_equal(qsf_ring_open(&o, &r, NULL, &e), QSF_OK);
    check_frames(r, 0); /* 0..4 intact; what the abort left recovery keeps or cuts */
    qsf_ring_close(r, NULL);
}

/* A flush's rotation fails at the manifest fsync (the record naming the
 * spare at FSN 37 is written), the flush is aborted and the rotation is
 * retried for the next flush, now at FSN 31. The manifest must then name the
 * segment at 31: a close leaves the tail on disk, and the reopen must find
 * every published frame. */
static void abort_after_failed_manifest_sync_then_rotation_reopens(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    o.append_deadline_ms = 0;
    qsf_ring *r = rt_open(&o);
    append_ok(r, 0, 31);                                /* 37 frames of 108 bytes fill a segment */
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) >= 2 * 4096); /* a spare exists */
    assert_int_equal(qsf_ring_txn_begin(r, NULL), QSF_OK);
    txn_frames(r, 31, 6); /* the segment is full */
    QSF_OS->fsync = eio_manifest_fsync;
    atomic_store(&manifest_fsync_fails, 1);
    uint8_t buf[100] = {0};
    qsf_errinfo e;
    assert_int_equal(qsf_ring_txn_append(r, buf, sizeof buf, NULL, &e), QSF_E_FULL);
    assert_non_null(strstr(e.msg, "cannot switch to a new segment"));
    assert_int_equal(qsf_ring_txn_abort(r, &e), QSF_OK);
    atomic_store(&manifest_fsync_fails, 0);
    append_ok(r, 31, 32); /* the owed rotation, now at FSN 31 */
    check_frames(r, 0);
    qsf_os_reset();
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK); /* unacknowledged: kept */

    reopen_expect(&o, 31, 0);
}

/* The same failed abort on a ring whose published frames are all
 * acknowledged: the close is a drained close. It must leave either nothing
 * or a slot that opens; it removed the manifest and the watermark but left
 * the segment holding the acknowledged frames and the flush's first frames. */
static void failed_abort_then_drained_close_leaves_a_slot_that_opens(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    qsf_ring *r = rt_open(&o);
    append_ok(r, 0, 5);
    qsf_ring_acknowledge(r, 4);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) >= 2 * 4096); /* a spare */
    assert_int_equal(qsf_ring_txn_begin(r, NULL), QSF_OK);
    txn_frames(r, 5, 100); /* rotations into two more segments */
    QSF_OS->fdatasync = maybe_eio_fdatasync_any;
    atomic_store(&sync_fails, 1);
    qsf_errinfo e;
    assert_int_equal(qsf_ring_txn_abort(r, &e), QSF_E_DURABILITY);
    atomic_store(&sync_fails, 0);
    qsf_os_reset();
    qsf_ring_close(r, NULL); /* published 4, acknowledged 4: drained */
    r = NULL;
    qsf_recovery_report rep;
    if (qsf_ring_open(&o, &r, &rep, &e) != QSF_OK)
        fail_msg("reopen after a drained close: %s", e.msg);
    assert_string_equal(rep.quarantined_slot, "");
    assert_true(qsf_ring_acked_fsn(r) >= qsf_ring_published_fsn(r)); /* nothing to replay */
    qsf_ring_close(r, NULL);
}

/* Empties slot "f" and forks: in the child, the ring opened on it. Used by
 * tests with and without fault injection. */
static qsf_ring *fork_on_fresh_slot(const qsf_ring_opts *o, pid_t *pid) {
    char slot[600];
    snprintf(slot, sizeof slot, "%s/f", rt_dir);
    tu_rmtree(slot);
    qsf_ring *r = NULL;
    if ((*pid = fork()) == 0 && qsf_ring_open(o, &r, NULL, NULL) != QSF_OK)
        _exit(2);
    return r;
}

#ifdef QSF_FAULT_INJECTION /* needs -Dfault_injection=true */

/* A process killed in the middle of undoing the rotations of an unpublished
 * flush (after each manifest record, before its fsync) leaves a slot that
 * opens, with every published frame intact. */
static void kill_while_undoing_rotations_leaves_a_valid_slot(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    for (uint64_t nth = 1; nth <= 3; nth++) {
        pid_t pid;
        qsf_ring *r = fork_on_fresh_slot(&o, &pid);
        if (pid == 0) {
            for (int64_t f = 0; f < 5; f++)
                if (append_frame(r, f, NULL) != QSF_OK)
                    _exit(3);
            if (qsf_ring_txn_begin(r, NULL) != QSF_OK)
                _exit(4);
            txn_frames(r, 5, 150); /* three rotations */
            qsf_fault_arm(QSF_FP_MANIFEST_WRITTEN, nth, QSF_FA_KILL);
            qsf_ring_txn_abort(r, NULL);
            _exit(5);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) /* killed at undo step nth */
            fail_msg("child was not killed at undo step %" PRIu64 ": status %d", nth, st);
        qsf_errinfo e;
        if (qsf_ring_open(&o, &r, NULL, &e) != QSF_OK)
            fail_msg("reopen after a kill at undo step %" PRIu64 ": %s", nth, e.msg);
        check_frames(r, 0);
        assert_true(qsf_ring_published_fsn(r) >= 4);
        qsf_ring_close(r, NULL);
    }
}

/* The child of kill_while_reusing_...: frames acknowledged one by one while
 * every unlink fails, until the armed fault point kills it. */
static void reuse_until_killed(qsf_ring *r, int point, uint64_t nth) {
    QSF_OS->unlinkat = maybe_failing_unlinkat;
    atomic_store(&unlink_fails, 1);
    qsf_fault_arm(point, nth, QSF_FA_KILL);
    for (int64_t f = 0; f < 400; f++) {
        if (append_frame(r, f, NULL) != QSF_OK)
            _exit(3);
        qsf_ring_acknowledge(r, f);
    }
    _exit(5);
}

/* Killed at the nth watermark or manifest record of a ring reusing its
 * active segment while its trims fail (the trimmed files stay below the
 * head): the slot opens, every frame past the acknowledged ones intact. */
static void kill_while_reusing_with_trims_failing_leaves_a_valid_slot(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    o.total_bytes = 3 * 4096;
    const int points[2] = {QSF_FP_WATERMARK_WRITTEN, QSF_FP_MANIFEST_WRITTEN};
    for (int p = 0; p < 2; p++)
        for (uint64_t nth = 1; nth <= 6; nth++) {
            pid_t pid;
            qsf_ring *r = fork_on_fresh_slot(&o, &pid);
            if (pid == 0)
                reuse_until_killed(r, points[p], nth);
            int st;
            assert_int_equal(waitpid(pid, &st, 0), pid);
            if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
                fail_msg("child not killed at point %d #%" PRIu64 ": status %d", points[p], nth,
                         st);
            qsf_recovery_report rep;
            qsf_errinfo e;
            if (qsf_ring_open(&o, &r, &rep, &e) != QSF_OK)
                fail_msg("reopen after a kill at point %d #%" PRIu64 ": %s", points[p], nth, e.msg);
            assert_string_equal(rep.quarantined_slot, "");
            check_frames(r, qsf_ring_acked_fsn(r) + 1);
            qsf_ring_acknowledge(r, qsf_ring_published_fsn(r));
            assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
        }
}
#endif

/* A directory sync, held (at most 10 s) while `wm_hold` is set: the
 * manager's in a trim that has detached its segments and not yet moved
 * headBase (no spare fits, so no spare is being made). Only threads other
 * than `wm_main` (the producer's) are held. */
static _Atomic int wm_hold, wm_held;
static pthread_t wm_main;

static int holding_fsync(int fd) {
    struct stat st;
    if (atomic_load(&wm_hold) && !pthread_equal(pthread_self(), wm_main) && fstat(fd, &st) == 0 &&
        S_ISDIR(st.st_mode)) {
        atomic_store(&wm_held, 1);
        for (int i = 0; i < 20000 && atomic_load(&wm_hold); i++)
            usleep(500);
    }
    return maybe_failing_fsync(fd);
}

static _Atomic int reuses;
static void count_reuses(int level, const char *line, void *user) {
    (void) user;
    if (level == QSF_LOG_WARN && strstr(line, "reusing"))
        atomic_fetch_add(&reuses, 1);
}

/* The child of reuse_during_a_trim_...; exit 0 once the race ran. */
static void reuse_while_a_trim_moves_the_head(qsf_ring *r) {
    wm_main = pthread_self();
    qsf_log_set(count_reuses, NULL, QSF_LOG_WARN);
    /* the first spare, made whole (its file alone may still be growing, and
     * the disk is full from here on) */
    RT_WAIT_UNTIL(rt_count_files("f", ".sfa") >= 2 && qsf_ring_owned_bytes(r) >= 2 * 4096);
    QSF_OS->fallocate = maybe_enospc;
    atomic_store(&nospace, 1); /* no later spare can be made */
    QSF_OS->fsync = holding_fsync;
    int64_t f = 0;
    for (; f < 40; f++) /* past the first segment (37 frames): S1 sealed, S2 active */
        if (append_frame(r, f, NULL) != QSF_OK)
            _exit(3);
    atomic_store(&wm_hold, 1);
    qsf_ring_acknowledge(r, f - 1); /* the trim detaches S1 and is held */
    for (int i = 0; i < 20000 && !atomic_load(&wm_held); i++)
        usleep(500);
    if (!atomic_load(&wm_held))
        _exit(4);
    for (int64_t end = f + 40; f < end; f++) { /* S2 full, all acknowledged: reused */
        qsf_errinfo e;
        if (append_frame(r, f, &e) != QSF_OK) {
            fprintf(stderr, "append %" PRId64 ": %s\n", f, e.msg);
            _exit(5);
        }
        qsf_ring_acknowledge(r, f);
    }
    if (atomic_load(&reuses) == 0)
        _exit(7);
    atomic_store(&wm_hold, 0); /* the trim moves headBase now */
    for (int i = 0; i < 20000 && rt_count_files("f", ".sfa") > 1; i++)
        usleep(500);
    _exit(rt_count_files("f", ".sfa") == 1 ? 0 : 6);
}

/* The active segment reused in place (no spare can be made) while a trim
 * that detached the segment before it is held before its manifest step: the
 * trim then asks for headBase = the reused segment's old base, below the
 * base the reuse recorded, where no segment is any more. A manifest naming it
 * would not open ("FSN gap"; the manifest's boundaries only move forward,
 * sidefile.c); a crash right after the trim must leave a slot that opens
 * with every frame kept. */
static void reuse_during_a_trim_leaves_a_slot_that_opens(void **state) {
    (void) state;
    qsf_ring_opts o = sf_opts(4096, QSF_DUR_MEMORY);
    o.append_deadline_ms = 5000;
    pid_t pid;
    qsf_ring *r = fork_on_fresh_slot(&o, &pid);
    if (pid == 0)
        reuse_while_a_trim_moves_the_head(r);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("the child did not run the race: status %d", st);
    qsf_errinfo e;
    if (qsf_ring_open(&o, &r, NULL, &e) != QSF_OK)
        fail_msg("reopen after the race: %s", e.msg);
    assert_int_equal(qsf_ring_published_fsn(r), 79);
    qsf_ring_close(r, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(enospc_spare_is_backpressure_then_retried, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(acknowledged_segment_is_reused_when_no_spare_can_be_made,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(failed_manifest_step_of_a_reuse_is_owed, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(reader_never_reads_a_segment_being_reused, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(periodic_eio_latched_then_cleared, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(rotation_waiting_for_failed_checkpoint, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(short_writes_are_completed, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(trim_unlink_failure_keeps_invariants, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(close_during_failures_then_reopen, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(acknowledged_segment_is_reused_while_trims_fail_at_the_cap,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(a_failing_trim_is_logged_when_it_starts_and_when_it_ends,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(a_pinned_segment_does_not_end_a_streak_of_failing_trims,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(abort_that_cannot_sync_latches, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(failed_abort_then_drained_close_leaves_a_slot_that_opens,
                                        rt_setup, rt_teardown),
#ifdef QSF_FAULT_INJECTION
        cmocka_unit_test_setup_teardown(kill_while_reusing_with_trims_failing_leaves_a_valid_slot,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(kill_while_undoing_rotations_leaves_a_valid_slot, rt_setup,
                                        rt_teardown),
#endif
        cmocka_unit_test_setup_teardown(reuse_during_a_trim_leaves_a_slot_that_opens, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(failed_manifest_sync_owes_the_rotation, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(abort_after_failed_manifest_sync_then_rotation_reopens,
                                        rt_setup, rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
