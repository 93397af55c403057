/* The producer guard (lib/sender/guard.h): one thread inside at a time, the
 * owner's fast path handed to another thread only when the owner is outside. */
#include "testutil.h"

#include "sender/guard.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

static qsf_guard g;

typedef struct attempt {
    bool got;
} attempt;

static void *try_once(void *arg) {
    attempt *a = arg;
    a->got = qsf_guard_enter(&g);
    if (a->got)
        qsf_guard_leave(&g);
    return NULL;
}

/* Whether another thread gets in right now (and leaves at once). */
static bool other_thread_gets_in(void) {
    attempt a = {false};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, try_once, &a), 0);
    pthread_join(t, NULL);
    return a.got;
}

static void a_second_thread_is_refused_while_the_first_is_inside(void **state) {
    (void) state;
    qsf_guard_init(&g);
    for (int round = 0; round < 3; round++) { /* 1st: slow path; then the owner's fast path */
        assert_true(qsf_guard_enter(&g));
        assert_false(other_thread_gets_in());
        qsf_guard_leave(&g);
    }
    assert_true(other_thread_gets_in()); /* outside: the guard moves to that thread */
    assert_true(qsf_guard_enter(&g));    /* and back */
    assert_false(other_thread_gets_in());
    qsf_guard_leave(&g);
    qsf_guard_destroy(&g);
}

/* A thread blocked inside while this one tries: refused, then admitted once it left. */
static pthread_mutex_t hold_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold_stage; /* 1: inside, 2: may leave */

static void *hold_inside(void *arg) {
    (void) arg;
    for (int i = 0; i < 2; i++) { /* twice, so the second entry is the fast path */
        assert_true(qsf_guard_enter(&g));
        if (i == 0)
            qsf_guard_leave(&g);
    }
    pthread_mutex_lock(&hold_mu);
    hold_stage = 1;
    pthread_cond_broadcast(&hold_cv);
    while (hold_stage != 2)
        pthread_cond_wait(&hold_cv, &hold_mu);
    pthread_mutex_unlock(&hold_mu);
    qsf_guard_leave(&g);
    return NULL;
}

static void the_owner_inside_on_its_fast_path_keeps_the_guard(void **state) {
    (void) state;
    qsf_guard_init(&g);
    assert_true(qsf_guard_enter(&g)); /* this thread was the owner before */
    qsf_guard_leave(&g);
    hold_stage = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_inside, NULL), 0);
    pthread_mutex_lock(&hold_mu);
    while (hold_stage != 1)
        pthread_cond_wait(&hold_cv, &hold_mu);
    pthread_mutex_unlock(&hold_mu);
    assert_false(qsf_guard_enter(&g)); /* takes ownership, sees the owner inside */
    assert_false(qsf_guard_enter(&g)); /* still inside: refused again */
    pthread_mutex_lock(&hold_mu);
    hold_stage = 2;
    pthread_cond_broadcast(&hold_cv);
    pthread_mutex_unlock(&hold_mu);
    pthread_join(t, NULL);
    assert_true(qsf_guard_enter(&g));
    assert_false(other_thread_gets_in());
    qsf_guard_leave(&g);
    qsf_guard_destroy(&g);
}

/* A child of fork() has no membarrier registration of its own: handing the
 * guard to another thread there must still work (and still refuse while the
 * owner is inside). */
static int child_handover(void) {
    qsf_guard_init(&g);
    int bad = !qsf_guard_enter(&g);
    qsf_guard_leave(&g);
    bad |= !qsf_guard_enter(&g) << 1; /* the fast path */
    bad |= other_thread_gets_in() << 2;
    qsf_guard_leave(&g);
    bad |= !other_thread_gets_in() << 3;
    return bad;
}

static void a_forked_child_hands_the_guard_over(void **state) {
    (void) state;
    qsf_guard_init(&g);
    assert_true(qsf_guard_enter(&g)); /* the parent registered membarrier */
    qsf_guard_leave(&g);
    qsf_guard_destroy(&g);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_handover());
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* Several threads enter and leave as fast as they can, each inside doing a
 * read-modify-write of a plain counter: the entries that succeeded must all
 * be counted and nobody may find another thread inside. */
enum { HAMMER_THREADS = 4, HAMMER_ROUNDS = 200000 };
static atomic_int inside_now, overlaps;
static long counter; /* plain: only inside the guard */
static atomic_long admitted;

static void *hammer(void *arg) {
    (void) arg;
    for (int i = 0; i < HAMMER_ROUNDS; i++) {
        if (!qsf_guard_enter(&g))
            continue;
        if (atomic_fetch_add(&inside_now, 1) != 0)
            atomic_fetch_add(&overlaps, 1);
        counter++;
        atomic_fetch_sub(&inside_now, 1);
        atomic_fetch_add(&admitted, 1);
        qsf_guard_leave(&g);
    }
    return NULL;
}

static void threads_hammering_are_never_inside_together(void **state) {
    (void) state;
    qsf_guard_init(&g);
    pthread_t t[HAMMER_THREADS];
    for (int i = 0; i < HAMMER_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, NULL), 0);
    for (int i = 0; i < HAMMER_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&overlaps), 0);
    assert_int_equal(counter, atomic_load(&admitted));
    assert_true(atomic_load(&admitted) > 0);
    qsf_guard_destroy(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_second_thread_is_refused_while_the_first_is_inside),
        cmocka_unit_test(the_owner_inside_on_its_fast_path_keeps_the_guard),
        cmocka_unit_test(a_forked_child_hands_the_guard_over),
        cmocka_unit_test(threads_hammering_are_never_inside_together),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
