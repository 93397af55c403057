/* Backpressure episodes of the ring (lib/sf/ring_append.c): what a full ring
 * says it waits for, and the hook that reports each episode (ring.h) to the
 * sender, which logs one line per episode and queues its events. Memory mode,
 * segments of 1 KiB and a cap of two: 8 frames of 208 bytes fill the ring.
 * The reader's cursor pins the oldest segment, so the manager cannot free it
 * although every frame in it is acknowledged: the producer then waits for the
 * manager, not for the server. */
#include "ring_testutil.h"

#include "log.h"
#include "sf/ring.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define FRAME 200

static qsf_ring_opts opts(int64_t deadline_ms) {
    qsf_ring_opts o = {0};
    o.sender_id = "t";
    o.segment_bytes = 1024;
    o.total_bytes = 2048;
    o.durability = QSF_DUR_MEMORY;
    o.append_deadline_ms = deadline_ms;
    return o;
}

static int append(qsf_ring *r, qsf_errinfo *e) {
    uint8_t b[FRAME] = {0};
    return qsf_ring_append(r, b, sizeof b, NULL, e);
}

/* Fills the ring (FSN 0..7), pins the oldest segment with a cursor and
 * acknowledges every frame: the next append has to wait. */
static qsf_ring *full_of_acknowledged(int64_t deadline_ms, qsf_ring_cursor *pin) {
    qsf_ring_opts o = opts(deadline_ms);
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) == 2048); /* active + spare */
    qsf_errinfo e;
    for (int i = 0; i < 8; i++)
        assert_int_equal(append(r, &e), QSF_OK);
    memset(pin, 0, sizeof *pin);
    assert_int_equal(qsf_ring_cursor_seek(r, pin, 0), 0);
    assert_true(qsf_ring_acknowledge(r, 7));
    return r;
}

static const char *status(void) {
    return "connected to test:1";
}

/* Every published frame is acknowledged: a QSF_E_FULL that said
 * "acknowledgements not keeping up ... acked FSN 7 of published 7" would
 * contradict itself. */
static void a_ring_full_of_acknowledged_frames_does_not_blame_acknowledgements(void **state) {
    (void) state;
    qsf_ring_cursor pin;
    qsf_ring *r = full_of_acknowledged(100, &pin);
    qsf_errinfo e;
    assert_int_equal(append(r, &e), QSF_E_FULL);
    if (qsf_ring_full_awaits_acks(r)) /* as the sender completes it */
        qsf_ring_full_add_status(&e, status());
    if (strstr(e.msg, "not keeping up") || strstr(e.msg, "connected to"))
        fail_msg("blames the server although every frame is acknowledged: %s", e.msg);
    assert_non_null(strstr(e.msg, "acked FSN 7 of published 7"));
    assert_non_null(strstr(e.msg, "waiting for acknowledged segments to be freed"));
    qsf_ring_cursor_release(r, &pin);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* ---- the episode hook ---- */

typedef struct seen {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int phases[8];
    qsf_ring_episode eps[8];
    int n;
} seen;

static seen S;

static void on_episode(void *user, int phase, const qsf_ring_episode *ep) {
    (void) user;
    pthread_mutex_lock(&S.mu);
    if (S.n < 8) {
        S.phases[S.n] = phase;
        S.eps[S.n++] = *ep;
    }
    pthread_cond_broadcast(&S.cv);
    pthread_mutex_unlock(&S.mu);
}

static void seen_reset(void) {
    pthread_mutex_lock(&S.mu);
    S.n = 0;
    pthread_mutex_unlock(&S.mu);
}

static void wait_for_begin(void) {
    pthread_mutex_lock(&S.mu);
    while (S.n == 0)
        pthread_cond_wait(&S.cv, &S.mu);
    pthread_mutex_unlock(&S.mu);
}

typedef struct helper {
    qsf_ring *r;
    qsf_ring_cursor *pin; /* released once the episode began, or NULL */
    int64_t ack;          /* acknowledged once it began, or -1 */
} helper;

static void *unblock_main(void *arg) {
    helper *h = arg;
    wait_for_begin();
    if (h->pin)
        qsf_ring_cursor_release(h->r, h->pin);
    if (h->ack >= 0)
        qsf_ring_acknowledge(h->r, h->ack);
    return NULL;
}

static void expect_phases(int n, const int *want) {
    assert_int_equal(S.n, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(S.phases[i], want[i]);
}

/* The manager frees the segment once the reader lets go of it: the episode
 * begins and ends, once each, waiting for the manager throughout. */
static void an_episode_is_reported_when_it_begins_and_ends(void **state) {
    (void) state;
    seen_reset();
    qsf_ring_cursor pin;
    qsf_ring *r = full_of_acknowledged(10000, &pin);
    qsf_ring_set_episode_fn(r, on_episode, NULL, 60000);
    helper h = {r, &pin, -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, unblock_main, &h), 0);
    qsf_errinfo e;
    assert_int_equal(append(r, &e), QSF_OK);
    pthread_join(t, NULL);
    expect_phases(2, (const int[]){QSF_RING_EPISODE_BEGIN, QSF_RING_EPISODE_END});
    const qsf_ring_episode *b = &S.eps[0], *end = &S.eps[1];
    assert_int_equal(b->waited_ns, 0);
    assert_string_equal(b->waiting, "acknowledged segments to be freed");
    assert_non_null(strstr(b->cause, "acked FSN 7 of published 7"));
    assert_int_equal(end->rc, QSF_OK);
    assert_int_equal(end->acked_begin, 7);
    assert_int_equal(end->acked_now, 7);
    assert_int_equal(end->published, 7);
    assert_true(end->waited_ns >= 0);
    assert_string_equal(end->waiting, "acknowledged segments to be freed");
    assert_string_equal(end->cause, "");
    assert_int_equal(qsf_ring_backpressure_stalls(r), 1);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* Nothing acknowledged yet: it waits for the server, and the end counts
 * what the server acknowledged meanwhile. */
static void acknowledgements_end_an_episode(void **state) {
    (void) state;
    seen_reset();
    qsf_ring_opts o = opts(10000);
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) == 2048);
    qsf_errinfo e;
    for (int i = 0; i < 8; i++)
        assert_int_equal(append(r, &e), QSF_OK);
    qsf_ring_set_episode_fn(r, on_episode, NULL, 60000);
    helper h = {r, NULL, 7};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, unblock_main, &h), 0);
    assert_int_equal(append(r, &e), QSF_OK);
    pthread_join(t, NULL);
    expect_phases(2, (const int[]){QSF_RING_EPISODE_BEGIN, QSF_RING_EPISODE_END});
    assert_string_equal(S.eps[0].waiting, "acknowledgements");
    assert_non_null(strstr(S.eps[0].cause, "acknowledgements not keeping up"));
    assert_non_null(strstr(S.eps[0].cause, "acked FSN -1 of published 7"));
    assert_int_equal(S.eps[1].acked_begin, -1);
    assert_int_equal(S.eps[1].acked_now, 7);
    assert_int_equal(S.eps[1].rc, QSF_OK);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* An episode that passes the threshold is reported once more when it does;
 * one that ends at the deadline says so. */
static void a_long_episode_is_reported_once_more(void **state) {
    (void) state;
    seen_reset();
    qsf_ring_cursor pin;
    qsf_ring *r = full_of_acknowledged(100, &pin);
    qsf_ring_set_episode_fn(r, on_episode, NULL, 0);
    qsf_errinfo e;
    assert_int_equal(append(r, &e), QSF_E_FULL);
    expect_phases(
        3, (const int[]){QSF_RING_EPISODE_BEGIN, QSF_RING_EPISODE_LONG, QSF_RING_EPISODE_END});
    assert_non_null(strstr(S.eps[1].cause, "acknowledged segments to be freed"));
    assert_int_equal(S.eps[2].rc, QSF_E_FULL);
    qsf_ring_cursor_release(r, &pin);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

int main(void) {
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            a_ring_full_of_acknowledged_frames_does_not_blame_acknowledgements, rt_setup,
            rt_teardown),
        cmocka_unit_test_setup_teardown(an_episode_is_reported_when_it_begins_and_ends, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(acknowledgements_end_an_episode, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(a_long_episode_is_reported_once_more, rt_setup,
                                        rt_teardown),
    };
    pthread_mutex_init(&S.mu, NULL);
    pthread_cond_init(&S.cv, NULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
