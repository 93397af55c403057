/* An open whose manager cannot start must stop the spare thread it already
 * started before it frees the ring, and when that thread does not stop (stuck
 * on a disk that stopped answering) keep the ring and the slot lock, as close
 * does (docs/DURABILITY.md §12): freed, the thread would go on in freed
 * memory, in a slot another opener already took.
 *
 * This program replaces pthread_create to make the manager's fail: armed, it
 * lets the first thread (the spare thread) start and fails the next one, once
 * that first thread is inside its directory sync. */
#include "ring_testutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*) (void *), void *);

static atomic_int creates_armed; /* 0: pass through; else the creations left to let through + 1 */
static atomic_int dir_sync_held;
static atomic_int gate_open;
static pthread_t test_thread;
static void *spare_thread_arg; /* the ring of the armed open */

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg) {
    create_fn real = (create_fn) dlsym(RTLD_NEXT, "pthread_create");
    int armed = atomic_load(&creates_armed);
    if (armed == 1) { /* the manager: once the spare thread is stuck */
        atomic_store(&creates_armed, 0);
        while (!atomic_load(&dir_sync_held))
            usleep(500);
        return EAGAIN;
    }
    if (armed > 1) {
        atomic_fetch_sub(&creates_armed, 1);
        spare_thread_arg = arg;
    }
    return real(t, a, fn, arg);
}

/* A directory sync from any thread but the test's blocks until the gate
 * opens: the spare thread's, after it created the first spare. */
static int stuck_dir_fsync(int fd) {
    struct stat st;
    if (!pthread_equal(pthread_self(), test_thread) && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        atomic_store(&dir_sync_held, 1);
        while (!atomic_load(&gate_open))
            usleep(500);
    }
    return fsync(fd);
}

static qsf_ring_opts opts(void) {
    qsf_ring_opts o = {0};
    o.sf_dir = rt_dir;
    o.sender_id = "t";
    o.segment_bytes = 64 << 10;
    o.total_bytes = 0;
    o.durability = QSF_DUR_MEMORY;
    o.sync_interval_ms = 1000;
    o.append_deadline_ms = 1000;
    return o;
}

/* Takes 5 s: the bound close and open wait for a ring thread. */
static void a_failed_open_keeps_the_slot_of_a_spare_thread_that_did_not_stop(void **state) {
    (void) state;
    test_thread = pthread_self();
    atomic_store(&dir_sync_held, 0);
    atomic_store(&gate_open, 0);
    qsf_ring_opts o = opts();
    qsf_ring *r = NULL;
    qsf_errinfo e;
    QSF_OS->fsync = stuck_dir_fsync;
    atomic_store(&creates_armed, 2); /* the spare thread starts, the manager does not */
    assert_int_not_equal(qsf_ring_open(&o, &r, NULL, &e), QSF_OK);
    assert_null(r);

    /* The spare thread is still in its directory sync: the slot must stay
     * locked, or a second opener would share it with that thread. */
    qsf_ring *r2 = NULL;
    int rc = qsf_ring_open(&o, &r2, NULL, &e);
    if (rc == QSF_OK) {
        fail_msg("the slot was released while the spare thread of the failed open still "
                 "works in it");
    }
    /* The test's own cleanup: once the thread can go on, the ring the open
     * kept closes like any other (the thread joined, the slot removed). */
    atomic_store(&gate_open, 1);
    assert_int_equal(qsf_ring_close(spare_thread_arg, &e), QSF_OK);
    assert_int_equal(qsf_ring_open(&o, &r2, NULL, &e), QSF_OK);
    assert_int_equal(qsf_ring_close(r2, &e), QSF_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            a_failed_open_keeps_the_slot_of_a_spare_thread_that_did_not_stop, rt_setup,
            rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
