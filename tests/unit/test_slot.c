/* Slot directory, flock locks across processes, .failed, quarantine, names. */
#include "testutil.h"

#include "sftest.h"

#include "os/os.h"
#include "sf/slot.h"

#include <fcntl.h>
#include <signal.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[512];
static char sfdir[600];

static int setup(void **state) {
    (void) state;
    tu_mkdtemp(root, sizeof root);
    snprintf(sfdir, sizeof sfdir, "%s/sf", root);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    tu_rmtree(root);
    return 0;
}

static void sender_ids(void **state) {
    (void) state;
    qsf_errinfo e;
    assert_int_equal(qsf_sender_id_check("default", &e), QSF_OK);
    assert_int_equal(qsf_sender_id_check("orders_eu-1", &e), QSF_OK);
    const char *bad[] = {"", ".", "a.b", "a/b", "a b", "..", "x\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(qsf_sender_id_check(bad[i], &e), QSF_E_INVAL);
    assert_int_equal(qsf_sender_id_check("a b", &e), QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "position 1"));
    /* docs/CONFIGURATION.md, "Keys": 1..200 bytes, the same bound the connect string checks */
    char longid[202];
    memset(longid, 'a', 200);
    longid[200] = 0;
    assert_int_equal(qsf_sender_id_check(longid, &e), QSF_OK);
    longid[200] = 'a', longid[201] = 0;
    assert_int_equal(qsf_sender_id_check(longid, &e), QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "1..200 bytes long, got 201"));
}

/* A 200-byte sender_id (the longest the connect string accepts) opens a slot,
 * and its lock names and quarantine name fit. */
static void longest_sender_id_opens_a_slot(void **state) {
    (void) state;
    char id[201];
    memset(id, 'z', 200);
    id[200] = 0;
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, id, &s, &e), QSF_OK);
    assert_string_equal(s.name, id);
    char lock[300];
    snprintf(lock, sizeof lock, ".slot-locks/%s.lock.pid", id);
    assert_true(st_exists(st_path(sfdir, lock)));
    char path[700], want[300];
    assert_int_equal(qsf_slot_quarantine_slot(&s, "x", path, sizeof path, &e), QSF_OK);
    snprintf(want, sizeof want, "%s.unreplayable-1", id);
    assert_string_equal(path, st_path(sfdir, want));
    qsf_slot_close(&s);
}

static void acquire_creates_private_dirs_and_pid(void **state) {
    (void) state;
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, NULL, &s, &e), QSF_OK);
    struct stat st;
    assert_int_equal(stat(sfdir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(st_path(sfdir, "default"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_string_equal(s.path, st_path(sfdir, "default"));
    size_t n;
    uint8_t *pid = tu_read_file(st_path(s.path, ".lock.pid"), &n);
    char want[32];
    snprintf(want, sizeof want, "%ld\n", (long) getpid());
    assert_int_equal(n, strlen(want));
    assert_memory_equal(pid, want, n);
    free(pid);
    assert_true(st_exists(st_path(sfdir, ".slot-locks/default.lock")));
    assert_true(st_exists(st_path(sfdir, ".slot-locks/default.lock.pid")));
    /* a second open file description in the same process is refused too */
    qsf_slot s2;
    assert_int_equal(qsf_slot_acquire(sfdir, NULL, &s2, &e), QSF_E_LOCKED);
    qsf_slot_close(&s);
    assert_true(st_exists(st_path(s.path, ".lock"))); /* never deleted */
    assert_int_equal(qsf_slot_acquire(sfdir, NULL, &s2, &e), QSF_OK);
    qsf_slot_close(&s2);
}

static void sf_dir_is_created_one_level_only(void **state) {
    (void) state;
    char deep[700];
    snprintf(deep, sizeof deep, "%s/missing/sf", root);
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(deep, "default", &s, &e), QSF_E_IO);
    assert_non_null(strstr(e.msg, "parent must exist"));
    assert_int_equal(s.lock_fd, -1);
    assert_int_equal(qsf_slot_acquire(sfdir, "bad id", &s, &e), QSF_E_INVAL);
    assert_false(st_exists(sfdir)); /* nothing created for an invalid id */
}

/* The child takes the slot, reports through the pipe, then waits to be killed. */
static pid_t spawn_holder(void) {
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        qsf_slot s;
        char ok = qsf_slot_acquire(sfdir, "default", &s, NULL) == QSF_OK ? 'y' : 'n';
        qsf_slot_unlock_logical(&s);
        if (write(p[1], &ok, 1) != 1)
            _exit(2);
        for (;;)
            pause();
    }
    close(p[1]);
    char ok = 0;
    assert_int_equal(read(p[0], &ok, 1), 1);
    close(p[0]);
    assert_int_equal(ok, 'y');
    return pid;
}

static void lock_contention_across_processes(void **state) {
    (void) state;
    pid_t child = spawn_holder();
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s, &e), QSF_E_LOCKED);
    char want[700];
    snprintf(want, sizeof want,
             "sf slot already in use by another process [slot=%s/default, holder=pid=%ld]", sfdir,
             (long) child);
    assert_string_equal(e.msg, want);
    assert_int_equal(s.lock_fd, -1);
    assert_int_equal(s.logical_lock_fd, -1);
    /* the kernel drops the lock when the holder dies, even by SIGKILL */
    kill(child, SIGKILL);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s, &e), QSF_OK);
    qsf_slot_close(&s);
}

static void holder_unknown_without_pid_file(void **state) {
    (void) state;
    qsf_slot s, s2;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s, &e), QSF_OK);
    qsf_slot_unlock_logical(&s);
    unlink(st_path(s.path, ".lock.pid"));
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s2, &e), QSF_E_LOCKED);
    assert_non_null(strstr(e.msg, "holder=pid=unknown]"));
    qsf_slot_close(&s);
}

static void failed_marker_and_file_quarantine(void **state) {
    (void) state;
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s, &e), QSF_OK);
    assert_int_equal(qsf_slot_write_failed(s.dirfd, s.path, "dictionary gap at FSN 7", &e), QSF_OK);
    size_t n;
    uint8_t *txt = tu_read_file(st_path(s.path, ".failed"), &n);
    assert_int_equal(n, strlen("dictionary gap at FSN 7\n"));
    assert_memory_equal(txt, "dictionary gap at FSN 7\n", n);
    free(txt);
    tu_write_file(st_path(s.path, "bad.sfa"), "xx", 2);
    assert_int_equal(qsf_slot_quarantine_file(s.dirfd, s.path, "bad.sfa", NULL, &e), QSF_OK);
    assert_false(st_exists(st_path(s.path, "bad.sfa")));
    assert_true(st_exists(st_path(s.path, "bad.sfa.corrupt")));
    /* every quarantine name taken: the oldest go (only 8 are kept), the new
     * one takes a free name, no file is replaced by another */
    for (int i = 2; i <= 64; i++) {
        char n[64];
        snprintf(n, sizeof n, "bad.sfa.corrupt-%d", i);
        tu_write_file(st_path(s.path, n), "old", 3);
    }
    tu_write_file(st_path(s.path, "bad.sfa"), "new!", 4);
    uint32_t pruned = 0;
    assert_int_equal(qsf_slot_quarantine_file(s.dirfd, s.path, "bad.sfa", &pruned, &e), QSF_OK);
    assert_int_equal(pruned, 64 - 7);
    assert_false(st_exists(st_path(s.path, "bad.sfa")));
    assert_int_equal(st_count_names(s.path, "bad.sfa.corrupt", ""), 8);
    int found = 0;
    for (int i = 1; i <= 64; i++) {
        char n[64];
        snprintf(n, sizeof n, i == 1 ? "bad.sfa.corrupt" : "bad.sfa.corrupt-%d", i);
        if (st_exists(st_path(s.path, n)) && st_size(st_path(s.path, n)) == 4)
            found++;
    }
    assert_int_equal(found, 1);
    qsf_slot_close(&s);
}

static void slot_quarantine_picks_first_free_number(void **state) {
    (void) state;
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s, &e), QSF_OK);
    assert_int_equal(mkdir(st_path(sfdir, "default.unreplayable-1"), 0700), 0); /* empty, taken */
    tu_write_file(st_path(s.path, "sf-initial.sfa"), "data", 4);
    char path[700];
    assert_int_equal(qsf_slot_quarantine_slot(&s, "unreplayable: test", path, sizeof path, &e),
                     QSF_OK);
    assert_string_equal(path, st_path(sfdir, "default.unreplayable-2"));
    assert_true(st_exists(st_path(path, "sf-initial.sfa")));
    assert_true(st_exists(st_path(path, ".failed")));
    assert_false(st_exists(st_path(sfdir, "default")));
    assert_int_equal(qsf_slot_recreate(&s, &e), QSF_OK);
    assert_true(st_exists(st_path(sfdir, "default/.lock")));
    qsf_slot_close(&s);
}

/* 64 slots set aside already (names 1..64 all taken; the 65th open failed
 * with "unreplayable-1..64 are all taken"): the oldest are removed, the
 * newest QSF_MAX_SET_ASIDE_KEPT - 1 and the one in use stay, and the slot is
 * set aside under a freed name. */
static void slot_set_aside_keeps_the_newest(void **state) {
    (void) state;
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s, &e), QSF_OK);
    for (int i = 1; i <= 64; i++) {
        char n[64];
        snprintf(n, sizeof n, "default.unreplayable-%d", i);
        assert_int_equal(mkdir(st_path(sfdir, n), 0700), 0);
        tu_write_file(st_path(st_path(sfdir, n), "sf-initial.sfa"), "data", 4);
        tu_write_file(st_path(st_path(sfdir, n), ".lock"), "", 0);
    }
    /* an operator drains number 2 (holds its lock): it stays */
    int busy = open(st_path(st_path(sfdir, "default.unreplayable-2"), ".lock"), O_RDONLY);
    assert_int_equal(flock(busy, LOCK_EX | LOCK_NB), 0);
    char path[700];
    assert_int_equal(qsf_slot_quarantine_slot(&s, "x", path, sizeof path, &e), QSF_OK);
    assert_true(st_exists(st_path(path, ".failed")));
    int kept = 0;
    for (int i = 1; i <= 64; i++) {
        char n[64];
        snprintf(n, sizeof n, "default.unreplayable-%d", i);
        if (strcmp(st_path(sfdir, n), path) != 0)
            kept += st_exists(st_path(sfdir, n));
    }
    /* the 7 newest (by ctime, then name: timestamps are coarse), and the one
     * in use when it is not among them */
    assert_true(kept == QSF_MAX_SET_ASIDE_KEPT - 1 || kept == QSF_MAX_SET_ASIDE_KEPT);
    assert_true(st_exists(st_path(sfdir, "default.unreplayable-2/sf-initial.sfa")));
    close(busy);
    qsf_slot_close(&s);
}

static char opened_dir[4][700];
static int n_opened;
static int (*real_open)(const char *, int, mode_t);

static int recording_open(const char *path, int flags, mode_t mode) {
    if ((flags & O_DIRECTORY) && n_opened < 4)
        snprintf(opened_dir[n_opened++], sizeof opened_dir[0], "%s", path);
    return real_open(path, flags, mode);
}

/* Creating sf_dir adds an entry to its PARENT, so the parent is what must be
 * fsynced; a trailing '/' in the configured path must not make that the new
 * directory itself (the entry, and every synced file below it, could vanish
 * in a host crash). */
static void new_sf_dir_entry_is_synced_in_its_parent(void **state) {
    (void) state;
    char with_slash[700];
    snprintf(with_slash, sizeof with_slash, "%s//", sfdir);
    real_open = QSF_OS->open;
    QSF_OS->open = recording_open;
    n_opened = 0;
    qsf_slot s;
    qsf_errinfo e;
    int rc = qsf_slot_acquire(with_slash, NULL, &s, &e);
    QSF_OS->open = real_open;
    assert_int_equal(rc, QSF_OK);
    assert_int_equal(n_opened, 1); /* the parent, opened to be fsynced */
    assert_string_equal(opened_dir[0], root);
    qsf_slot_close(&s);
}

static int synced_fds[8], n_synced;
static int recording_fsync(int fd) {
    if (n_synced < 8)
        synced_fds[n_synced++] = fd;
    return fsync(fd);
}

/* .failed is what keeps orphan scans away from a slot: a new entry, so the
 * slot directory is fsynced after it (docs/DURABILITY.md §14), not only the file. */
static void failed_marker_entry_is_synced(void **state) {
    (void) state;
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s, &e), QSF_OK);
    n_synced = 0;
    QSF_OS->fsync = recording_fsync;
    int rc = qsf_slot_write_failed(s.dirfd, s.path, "gave up", &e);
    qsf_os_reset();
    assert_int_equal(rc, QSF_OK);
    assert_int_equal(n_synced, 2); /* the file, then its directory */
    assert_int_equal(synced_fds[1], s.dirfd);
    qsf_slot_close(&s);
}

static int eio_fsync(int fd) {
    (void) fd;
    errno = EIO;
    return -1;
}

/* A .failed that could not be made durable is removed: a marker that exists
 * keeps every later scan away while the give-up it stands for was reported as
 * failed. */
static void failed_marker_is_not_left_when_it_cannot_be_synced(void **state) {
    (void) state;
    qsf_slot s;
    qsf_errinfo e;
    assert_int_equal(qsf_slot_acquire(sfdir, "default", &s, &e), QSF_OK);
    QSF_OS->fsync = eio_fsync;
    int rc = qsf_slot_write_failed(s.dirfd, s.path, "gave up", &e);
    qsf_os_reset();
    assert_int_not_equal(rc, QSF_OK);
    assert_non_null(strstr(e.msg, ".failed"));
    assert_int_equal(faccessat(s.dirfd, QSF_NAME_FAILED, F_OK, AT_SYMLINK_NOFOLLOW), -1);
    qsf_slot_close(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sender_ids),
        cmocka_unit_test_setup_teardown(longest_sender_id_opens_a_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(acquire_creates_private_dirs_and_pid, setup, teardown),
        cmocka_unit_test_setup_teardown(sf_dir_is_created_one_level_only, setup, teardown),
        cmocka_unit_test_setup_teardown(new_sf_dir_entry_is_synced_in_its_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(lock_contention_across_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(holder_unknown_without_pid_file, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_marker_and_file_quarantine, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_marker_entry_is_synced, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_marker_is_not_left_when_it_cannot_be_synced, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(slot_quarantine_picks_first_free_number, setup, teardown),
        cmocka_unit_test_setup_teardown(slot_set_aside_keeps_the_newest, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
