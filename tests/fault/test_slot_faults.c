/* Syscall-table faults during slot open: EIO on pread never reads as "empty"
 * and touches no file; ENOSPC while creating a fresh slot leaves no partial
 * file; a listing error is operational; quarantine renames that fail. */
#include "testutil.h"

#include "sftest.h"

#include "os/os.h"
#include "sf/recover.h"
#include "sf/symdict.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEG 4096
#define F   QSF_SFA_FLAG_MANIFEST_REQUIRED

/* ---- fault wrappers ---- */

static int calls, fail_at;
static ssize_t eio_pread(int fd, void *buf, size_t n, off_t off) {
    if (++calls == fail_at) {
        errno = EIO;
        return -1;
    }
    return pread(fd, buf, n, off);
}

static void clean_slot(void) {
    const char *a[] = {"a", "b", "c"}, *b[] = {"d"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 3, a);
    st_segment_str(st_slot, "sf-0000000000000002.sfa", SEG, F, 3, 1, b);
    st_manifest(st_slot, 2, 0, 3);
    st_watermark(st_slot, 1, 1);
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_symdict d;
    assert_int_equal(qsf_symdict_create(&d, dfd, st_slot, NULL), QSF_OK);
    qsf_symdict_destroy(&d);
    close(dfd);
}

static void eio_on_any_pread_aborts_untouched(void **state) {
    (void) state;
    clean_slot();
    st_snap before;
    st_snap_take(&before);
    QSF_OS->pread = eio_pread;
    int failures = 0;
    for (fail_at = 1;; fail_at++) {
        calls = 0;
        qsf_slot_recovered r;
        qsf_errinfo e;
        int rc = qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e);
        if (calls < fail_at) { /* the fault was never reached: a clean open */
            assert_int_equal(rc, QSF_OK);
            qsf_slot_release(&r);
            break;
        }
        assert_int_equal(rc, QSF_E_IO); /* never "empty", never a fresh st_slot */
        assert_non_null(strstr(e.msg, st_slot));
        failures++;
        st_snap_expect_same(&before);
    }
    assert_true(failures >= 5); /* header, frames, manifest, watermark, dictionary */
    st_snap_free(&before);
}

static int fallocs, falloc_fail_size;
static int nospc_fallocate(int fd, off_t off, off_t len) {
    fallocs++;
    if (len == falloc_fail_size)
        return ENOSPC;
    return posix_fallocate(fd, off, len);
}

static void enospc_creating_fresh_slot(void **state) {
    (void) state;
    QSF_OS->fallocate = nospc_fallocate;
    falloc_fail_size = SEG;
    qsf_slot_recovered r;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e),
                     QSF_E_NOSPC);
    assert_non_null(strstr(e.msg, "sf-initial.sfa"));
    assert_false(st_exists(st_path(st_slot, "sf-initial.sfa")));
    assert_false(st_exists(st_path(st_slot, QSF_NAME_MANIFEST)));
    /* the watermark is the first file created */
    falloc_fail_size = QSF_AKW_COMPACT_SIZE; /* the default form: the Java client's 16 bytes */
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e),
                     QSF_E_NOSPC);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_WATERMARK)));
    assert_false(st_exists(st_path(st_slot, "sf-initial.sfa")));
    /* space comes back: the next open starts cleanly */
    qsf_os_reset();
    st_open_ok(st_sfdir, &r);
    assert_true(r.fresh);
    qsf_slot_release(&r);
}

static struct dirent *eio_readdir(DIR *d) {
    (void) d;
    errno = EIO;
    return NULL;
}

static void readdir_failure_is_operational(void **state) {
    (void) state;
    clean_slot();
    st_snap before;
    st_snap_take(&before);
    QSF_OS->readdir = eio_readdir;
    qsf_slot_recovered r;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e),
                     QSF_E_IO);
    assert_non_null(strstr(e.msg, "cannot list slot directory"));
    st_snap_expect_same(&before);
    st_snap_free(&before);
    /* an empty-looking directory must not have produced a fresh slot */
    assert_false(st_exists(st_path(st_slot, "sf-initial.sfa")));
}

static int fail_unlink;
static int eio_renameat(int od, const char *o, int nd, const char *n) {
    (void) od;
    (void) o;
    (void) nd;
    (void) n;
    errno = EIO;
    return -1;
}
static int maybe_unlinkat(int dfd, const char *p, int flags) {
    if (fail_unlink) {
        errno = EIO;
        return -1;
    }
    return unlinkat(dfd, p, flags);
}

static void rename_failure_during_quarantine(void **state) {
    (void) state;
    const char *a[] = {"a"};
    st_segment_str(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, a);
    st_manifest(st_slot, 1, 0, 0);
    tu_write_file(st_path(st_slot, "junk.sfa"), "junk-junk-junk-junk-junk-junk", 29);
    QSF_OS->renameat = eio_renameat;
    QSF_OS->unlinkat = maybe_unlinkat;
    fail_unlink = 1; /* neither rename nor removal works: the open fails */
    qsf_slot_recovered r;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e),
                     QSF_E_IO);
    assert_non_null(strstr(e.msg, "junk.sfa"));
    assert_true(st_exists(st_path(st_slot, "junk.sfa")));
    fail_unlink = 0; /* rename fails, removal works (docs/FORMAT.md §5.4) */
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e), QSF_OK);
    assert_int_equal(r.report.quarantined_files, 1);
    qsf_slot_release(&r);
    assert_false(st_exists(st_path(st_slot, "junk.sfa")));
    assert_false(st_exists(st_path(st_slot, "junk.sfa.corrupt")));
}

static void unreplayable_slot_rename_failure(void **state) {
    (void) state;
    st_unreplayable_segment("sf-0000000000000001.sfa", SEG);
    st_manifest(st_slot, 1, 0, 0);
    QSF_OS->renameat = eio_renameat;
    qsf_slot_recovered r;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e),
                     QSF_E_IO);
    assert_non_null(strstr(e.msg, "cannot rename slot"));
    assert_true(st_exists(st_path(st_slot, "sf-0000000000000001.sfa"))); /* nothing lost */
    assert_false(st_exists(st_path(st_sfdir, "default.unreplayable-1")));
#ifdef QSF_FAULT_INJECTION
    /* a failure right after the rename (directory not synced yet) is reported too */
    qsf_os_reset();
    qsf_fault_arm(QSF_FP_QUARANTINE_RENAMED, 1, QSF_FA_FAIL);
    assert_int_equal(qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e),
                     QSF_E_IO);
    assert_true(st_exists(st_path(st_sfdir, "default.unreplayable-1/sf-0000000000000001.sfa")));
#endif
}

static int fsyncs, fsync_fail_at;
static int eio_fsync(int fd) {
    if (++fsyncs == fsync_fail_at) {
        errno = EIO;
        return -1;
    }
    return fsync(fd);
}

static void every_create_barrier_failure_fails_the_open(void **state) {
    (void) state;
    QSF_OS->fsync = eio_fsync;
    for (fsync_fail_at = 1;; fsync_fail_at++) {
        fsyncs = 0;
        tu_rmtree(st_slot);
        qsf_slot_recovered r;
        qsf_errinfo e;
        int rc = qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e);
        if (fsyncs < fsync_fail_at) {
            assert_int_equal(rc, QSF_OK);
            qsf_slot_release(&r);
            break;
        }
        assert_true(rc == QSF_E_IO || rc == QSF_E_DURABILITY);
        /* whatever is left recovers to a valid state */
        QSF_OS->fsync = fsync;
        st_open_ok(st_sfdir, &r);
        assert_int_equal(r.published_fsn, -1);
        qsf_slot_release(&r);
        QSF_OS->fsync = eio_fsync;
    }
    assert_true(fsync_fail_at > 5);
}

static int open_errno;
static int failing_dict_openat(int dirfd, const char *path, int flags, mode_t mode) {
    if (strcmp(path, QSF_NAME_SYMDICT) == 0) {
        errno = open_errno;
        return -1;
    }
    return openat(dirfd, path, flags, mode);
}

/* An existing .symbol-dict that cannot be opened because of the environment
 * (EMFILE, EIO, EACCES, ...) is an operational error, not a missing file: read
 * as "no dictionary", the frame below (its delta starts at id 1, id 0 is in the
 * file) would make a healthy slot unreplayable and set it aside. */
static void dictionary_open_error_is_operational(void **state) {
    (void) state;
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_symdict d;
    const char *one[] = {"one"}, *two[] = {"two"};
    uint32_t len1 = 3;
    assert_int_equal(qsf_symdict_create(&d, dfd, st_slot, NULL), QSF_OK);
    assert_int_equal(qsf_symdict_append(&d, 0, 1, one, &len1, NULL), QSF_OK);
    qsf_symdict_destroy(&d);
    close(dfd);
    uint8_t p[64];
    const uint8_t *pp[1] = {p};
    uint32_t l[1] = {(uint32_t) st_qwp(p, 0x08, 1, 1, two)};
    st_segment(st_slot, "sf-0000000000000001.sfa", SEG, F, 0, 1, pp, l);
    st_manifest(st_slot, 1, 0, 0);
    st_watermark(st_slot, 1, -1);
    st_snap before;
    st_snap_take(&before);
    const int errs[] = {EMFILE, EIO, EACCES};
    QSF_OS->openat = failing_dict_openat;
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        open_errno = errs[i];
        qsf_slot_recovered r;
        qsf_errinfo e;
        int rc = qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e);
        assert_int_not_equal(rc, QSF_OK);
        assert_non_null(strstr(e.msg, QSF_NAME_SYMDICT));
        assert_false(st_exists(st_path(st_sfdir, "default.unreplayable-1")));
        st_snap_expect_same(&before);
    }
    qsf_os_reset();
    /* a missing or symlinked file still falls back (tested in recover_hostile) */
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_false(r.data_loss);
    assert_int_equal(qsf_symdict_size(&r.symdict), 2);
    qsf_slot_release(&r);
    st_snap_free(&before);
}

/* ---- a failure at any write or barrier of a repair ---- */

static int io_calls, io_fail_at;
static bool io_failed(void) {
    return ++io_calls == io_fail_at;
}
static ssize_t f_pwrite(int fd, const void *b, size_t n, off_t off) {
    if (io_failed()) {
        errno = EIO;
        return -1;
    }
    return pwrite(fd, b, n, off);
}
static int f_fsync(int fd) {
    if (io_failed()) {
        errno = EIO;
        return -1;
    }
    return fsync(fd);
}
static int f_fdatasync(int fd) {
    if (io_failed()) {
        errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}
static int f_renameat(int od, const char *o, int nd, const char *n) {
    if (io_failed()) {
        errno = EIO;
        return -1;
    }
    return renameat(od, o, nd, n);
}
static int f_fallocate(int fd, off_t off, off_t len) {
    return io_failed() ? ENOSPC : posix_fallocate(fd, off, len);
}

static void faults_on(int n) {
    io_calls = 0;
    io_fail_at = n;
    QSF_OS->pwrite = f_pwrite;
    QSF_OS->fsync = f_fsync;
    QSF_OS->fdatasync = f_fdatasync;
    QSF_OS->renameat = f_renameat;
    QSF_OS->fallocate = f_fallocate;
}

/* A damaged sealed segment (rewritten), an interrupted flush across the next
 * two (cut, activeBase moved back), a zero-filled spare (debris). */
static void damaged_slot(void) {
    st_segment_flushes(st_gen(1), SEG, 0, "CCCCCC", 2);
    st_segment_flushes(st_gen(2), SEG, 6, "CCD", 2);
    st_segment_flushes(st_gen(3), SEG, 9, "DD", 2);
    st_manifest(st_slot, 3, 0, 9);
    st_patch(st_path(st_slot, st_gen(1)), QSF_SFA_HEADER_SIZE + 2 * 48 + 30, "!", 1); /* FSN 2 */
    uint8_t zero[SEG] = {0};
    tu_write_file(st_path(st_slot, st_gen(4)), zero, SEG);
}

typedef struct outcome {
    int64_t published;
    uint32_t n_retired;
    qsf_fsn_span retired[4];
    int frames[4];
} outcome;

static void outcome_of(const qsf_slot_recovered *r, outcome *o) {
    memset(o, 0, sizeof *o);
    o->published = r->published_fsn;
    o->n_retired = r->n_retired;
    if (r->n_retired)
        memcpy(o->retired, r->retired, (r->n_retired < 4 ? r->n_retired : 4) * sizeof *o->retired);
    for (int g = 1; g <= 3 && st_exists(st_path(st_slot, st_gen(g))); g++) {
        st_frames f;
        st_read_frames(st_path(st_slot, st_gen(g)), &f);
        o->frames[g] = f.n;
        st_frames_free(&f);
    }
}

/* Every write and barrier of the repairs, failed in turn: the open fails (or
 * goes on where the failure does not matter), and the next open reaches
 * exactly the state an open without failures reaches. */
static void every_repair_step_can_fail(void **state) {
    (void) state;
    damaged_slot();
    st_snap before;
    st_snap_take(&before);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    outcome want;
    outcome_of(&r, &want);
    qsf_slot_release(&r);
    assert_int_equal(want.published, 7);
    assert_int_equal(want.n_retired, 1);
    int failed = 0;
    for (int n = 1;; n++) {
        tu_rmtree(st_slot);
        mkdir(st_slot, 0700);
        damaged_slot();
        faults_on(n);
        qsf_errinfo e;
        int rc = qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e);
        bool reached = io_calls >= n;
        qsf_os_reset();
        if (rc == QSF_OK)
            qsf_slot_release(&r);
        else
            failed++;
        if (!reached)
            break;
        st_open_ok(st_sfdir, &r);
        outcome got;
        outcome_of(&r, &got);
        qsf_slot_release(&r);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("after failing write/barrier %d (%s): the next open reached another state "
                     "(published %lld, want %lld)",
                     n, rc == QSF_OK ? "open went on" : e.msg, (long long) got.published,
                     (long long) want.published);
    }
    assert_true(failed >= 10);
    st_snap_free(&before);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(dictionary_open_error_is_operational),
        T(eio_on_any_pread_aborts_untouched),
        T(enospc_creating_fresh_slot),
        T(readdir_failure_is_operational),
        T(rename_failure_during_quarantine),
        T(unreplayable_slot_rename_failure),
        T(every_create_barrier_failure_fails_the_open),
        T(every_repair_step_can_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
