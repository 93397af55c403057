/* Spares (lib/sf/spares.c): an SF ring creates its next segment on a thread
 * of its own, so a producer does not wait for one while the manager is busy
 * with a slow trim. (That it sleeps while idle: tests/integration/test_idle_threads.c.) */
#include "ring_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>

#define SEG   (64 << 10)
#define FRAME 1000

/* A trim's unlink of a segment file blocks until the test opens the gate,
 * like a directory on a disk that has stopped answering for a while. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_open;
static atomic_int unlinks_blocked;

static int gated_unlinkat(int dirfd, const char *path, int flags) {
    if (strncmp(path, "sf-", 3) == 0) {
        pthread_mutex_lock(&gate_mu);
        atomic_fetch_add(&unlinks_blocked, 1);
        while (!gate_open)
            pthread_cond_wait(&gate_cv, &gate_mu);
        pthread_mutex_unlock(&gate_mu);
    }
    return unlinkat(dirfd, path, flags);
}

/* From now on a trim's unlink of a segment file waits for open_gate. */
static void close_gate(void) {
    gate_open = false;
    atomic_store(&unlinks_blocked, 0);
    QSF_OS->unlinkat = gated_unlinkat;
}

static void open_gate(void) {
    pthread_mutex_lock(&gate_mu);
    gate_open = true;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static qsf_ring_opts opts(void) {
    qsf_ring_opts o = {0};
    o.sf_dir = rt_dir;
    o.sender_id = "t";
    o.segment_bytes = SEG;
    o.total_bytes = 64 * SEG;
    o.durability = QSF_DUR_MEMORY;
    o.sync_interval_ms = 1000;
    o.append_deadline_ms = 3000;
    return o;
}

/* Appends frames until n more rotations have happened; fails with the ring's
 * message if an append gives up (its deadline passed waiting for a spare). */
static void append_rotations(qsf_ring *r, int n) {
    static uint8_t buf[FRAME];
    int frames = n * (int) ((SEG - 64) / (FRAME + 8)) + 1;
    for (int i = 0; i < frames; i++) {
        qsf_errinfo e;
        if (qsf_ring_append(r, buf, sizeof buf, NULL, &e) != QSF_OK)
            fail_msg("append %d of %d: %s", i + 1, frames, e.msg);
    }
}

/* The manager trims the first segment and hangs in its unlink. Before spares
 * had a thread of their own, the producer's next rotation found no spare and
 * its append gave up after the 3 s deadline ("no spare segment ..."). */
static void spares_come_while_the_manager_hangs_in_a_trim(void **state) {
    (void) state;
    close_gate();
    qsf_ring_opts o = opts();
    qsf_ring *r = rt_open(&o);
    append_rotations(r, 1);
    qsf_ring_acknowledge(r, qsf_ring_published_fsn(r));
    RT_WAIT_UNTIL(atomic_load(&unlinks_blocked) > 0);

    append_rotations(r, 8); /* an append that waited out its 3 s deadline fails */
    assert_int_equal(atomic_load(&unlinks_blocked), 1); /* the manager is still in it */

    open_gate();
    qsf_ring_acknowledge(r, qsf_ring_published_fsn(r));
    qsf_errinfo e;
    assert_int_equal(qsf_ring_close(r, &e), QSF_OK);
}

/* A memory-mode ring's manager provisions its spares: no thread for them. */
static void a_memory_ring_has_no_spare_thread(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    o.sf_dir = NULL;
    o.sender_id = NULL;
    qsf_ring *r = rt_open(&o);
    append_rotations(r, 3);
    assert_int_equal(qsf_ring_spare_passes(r), 0);
    qsf_errinfo e;
    assert_int_equal(qsf_ring_close(r, &e), QSF_OK);
}

/* Once armed, every preallocation of a segment file fails, as on a full disk
 * (installed before the ring's threads start, so the table never changes
 * under them). */
static atomic_int sfa_fallocate_armed, sfa_fallocate_failures;

static int sfa_fallocate_enospc(int fd, off_t off, off_t len) {
    if (atomic_load(&sfa_fallocate_armed) && tu_fd_path_ends_with(fd, ".sfa")) {
        atomic_fetch_add(&sfa_fallocate_failures, 1);
        return ENOSPC;
    }
    return posix_fallocate(fd, off, len);
}

/* A creation failed (the disk was full), then the cap stopped allowing a
 * spare at all (here the symbol dictionary grew; a ring full of
 * unacknowledged frames does the same). The spare thread must go back to
 * sleeping until it is kicked. Its failed creation's backoff, long over, made
 * it wait 0 ms instead: 3,801 passes in 300 ms (5 once fixed), a core spent
 * until a trim made room. */
static void a_spare_that_does_not_fit_is_not_retried_flat_out(void **state) {
    (void) state;
    qsf_ring_opts o = opts();
    o.total_bytes = 3 * SEG + 4096; /* the active segment, its spare, one more */
    atomic_store(&sfa_fallocate_armed, 0);
    atomic_store(&sfa_fallocate_failures, 0);
    QSF_OS->fallocate = sfa_fallocate_enospc;
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) >= 2 * SEG);     /* the spare */
    assert_true(qsf_ring_owned_bytes(r) - 2 * SEG < 4096); /* the dictionary file so far */
    atomic_store(&sfa_fallocate_armed, 1);
    append_rotations(r, 1); /* into the spare: the next one fits, but cannot be made */
    RT_WAIT_UNTIL(atomic_load(&sfa_fallocate_failures) > 0);

    static char sym[8192];
    memset(sym, 'x', sizeof sym);
    const char *strs[1] = {sym};
    uint32_t lens[1] = {sizeof sym};
    qsf_errinfo e;
    assert_int_equal(qsf_ring_symdict_append(r, 0, 1, strs, lens, &e), QSF_OK);
    assert_true(qsf_ring_owned_bytes(r) + SEG > o.total_bytes); /* no spare fits now */

    usleep(50000); /* past the 4 ms backoff of the failed creation */
    uint64_t before = qsf_ring_spare_passes(r);
    usleep(300000);
    uint64_t passes = qsf_ring_spare_passes(r) - before;
    /* Idle it wakes every 64 ms: about 5 passes here. */
    if (passes > 100)
        fail_msg("the spare thread ran %" PRIu64 " passes in 300 ms with nothing to do", passes);
    atomic_store(&sfa_fallocate_armed, 0);
    assert_int_equal(qsf_ring_close(r, &e), QSF_OK);
}

/* A ring at its cap: the active segment, and one sealed, acknowledged
 * segment that a trim has taken out of the chain but whose unlink hangs, so
 * its bytes are still owned. The spare made for a ring of fewer than two
 * segments must not be made then: counting only the chain, the spare thread
 * saw one segment and made a spare past the cap (test_ring's stress under
 * ASan, where trims are slow, ended with more than its cap owned). */
static void no_spare_past_the_cap_while_a_trim_is_unfinished(void **state) {
    (void) state;
    close_gate();
    qsf_ring_opts o = opts();
    o.total_bytes = 2 * SEG + 4096; /* two segments and the dictionary file */
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) >= 2 * SEG); /* the spare */
    append_rotations(r, 1);                            /* into it: no further spare fits */
    qsf_ring_acknowledge(r, qsf_ring_published_fsn(r));
    RT_WAIT_UNTIL(atomic_load(&unlinks_blocked) > 0);
    usleep(300000); /* the spare thread's idle passes, every 64 ms */
    uint64_t owned = qsf_ring_owned_bytes(r);
    open_gate();
    if (owned > o.total_bytes)
        fail_msg("owned %" PRIu64 " bytes during the trim, past the cap of %" PRIu64, owned,
                 (uint64_t) o.total_bytes);
    append_rotations(r, 1); /* once the trim gave the bytes back, a spare comes */
    assert_true(qsf_ring_owned_bytes(r) <= o.total_bytes);
    qsf_ring_acknowledge(r, qsf_ring_published_fsn(r));
    qsf_errinfo e;
    assert_int_equal(qsf_ring_close(r, &e), QSF_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(spares_come_while_the_manager_hangs_in_a_trim, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(a_memory_ring_has_no_spare_thread, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(a_spare_that_does_not_fit_is_not_retried_flat_out, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(no_spare_past_the_cap_while_a_trim_is_unfinished, rt_setup,
                                        rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
