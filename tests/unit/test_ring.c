/* The ring in memory and SF modes: append/read/rotation/trim, a two-thread
 * producer/reader run with acknowledgements and trim, cursor seeks racing the
 * producer, capacity and backpressure (with the clock seam), payload limits,
 * a latched terminal error, and the symbol dictionary seen from another thread. */
#include "ring_testutil.h"

#include "os/os.h"
#include "sf/ring.h"
#include "sf/ring_int.h" /* the manager's progress on a segment (prefault_off) */
#include "sf/sfa.h"

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static qsf_ring_opts opts(bool sf, uint64_t seg, uint64_t total) {
    qsf_ring_opts o = {0};
    o.sf_dir = sf ? rt_dir : NULL;
    o.sender_id = "t";
    o.segment_bytes = seg;
    o.total_bytes = total;
    o.durability = QSF_DUR_MEMORY;
    o.sync_interval_ms = 1000;
    o.append_deadline_ms = 10000;
    return o;
}

/* Payload of frame fsn: its FSN in the first 8 bytes, then a pattern; the
 * length varies with the FSN so frames of many sizes are exercised. */
static size_t make_payload(int64_t fsn, uint8_t *buf, size_t maxlen) {
    size_t len = 8 + (size_t) (fsn * 7 % 57);
    if (len > maxlen)
        len = maxlen;
    memcpy(buf, &fsn, 8);
    for (size_t i = 8; i < len; i++)
        buf[i] = (uint8_t) (fsn + i);
    return len;
}

static void check_payload(int64_t fsn, const uint8_t *p, uint32_t len) {
    uint8_t want[128];
    size_t n = make_payload(fsn, want, sizeof want);
    if (len != n || memcmp(p, want, n) != 0)
        fail_msg("frame %" PRId64 " has wrong contents (len %u, want %zu)", fsn, len, n);
}

static void append_n(qsf_ring *r, int64_t from, int64_t n) {
    uint8_t buf[128];
    for (int64_t f = from; f < from + n; f++) {
        int64_t got;
        qsf_errinfo e;
        size_t len = make_payload(f, buf, sizeof buf);
        if (qsf_ring_append(r, buf, len, &got, &e) != QSF_OK)
            fail_msg("append of %" PRId64 ": %s", f, e.msg);
        assert_int_equal(got, f);
    }
}

static int64_t read_all(qsf_ring *r, int64_t from) {
    return rt_read_all(r, from, check_payload);
}

/* ---- append, read, rotation, trim ---- */

static void rotate_read_trim(bool sf) {
    qsf_ring_opts o = opts(sf, 1024, 64 * 1024);
    qsf_ring *r = rt_open(&o);
    assert_int_equal(qsf_ring_published_fsn(r), -1);
    append_n(r, 0, 500); /* ~18 KiB: many rotations */
    assert_int_equal(qsf_ring_published_fsn(r), 499);
    assert_int_equal(read_all(r, 0), 500);
    assert_int_equal(read_all(r, 321), 179);
    assert_int_equal(read_all(r, 500), 0);
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, 501), QSF_E_INVAL);

    uint64_t before = qsf_ring_owned_bytes(r);
    assert_true(qsf_ring_acknowledge(r, 399));
    assert_false(qsf_ring_acknowledge(r, 300)); /* forward only */
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) < before / 2);
    assert_int_equal(qsf_ring_cursor_seek(r, &c, 0), QSF_E_INVAL); /* trimmed */
    assert_int_equal(read_all(r, 400), 100);                       /* unacked survives */
    assert_true(qsf_ring_acknowledge(r, 1000000));                 /* clamped */
    assert_int_equal(qsf_ring_acked_fsn(r), 499);
    /* Active + spare (+ in memory mode four pooled buffers, once the pool has
     * been idle for a second). */
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) <= (sf ? 3 : 6) * 1024 + 64);
    if (sf)
        assert_true(rt_count_files("t", ".sfa") <= 3);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    if (sf)
        assert_int_equal(rt_count_files("t", ".sfa"), 0); /* drained close removes the segments */
}

static void rotate_read_trim_memory(void **state) {
    (void) state;
    rotate_read_trim(false);
}

static void rotate_read_trim_sf(void **state) {
    (void) state;
    rotate_read_trim(true);
}

static void sf_reopen_keeps_unacked_tail(void **state) {
    (void) state;
    qsf_ring_opts o = opts(true, 2048, 1 << 20);
    qsf_ring *r = rt_open(&o);
    append_n(r, 0, 200);
    qsf_ring_acknowledge(r, 49);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);

    qsf_recovery_report rep;
    r = NULL;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, NULL), QSF_OK);
    assert_int_equal(rep.published_fsn, 199);
    assert_int_equal(qsf_ring_published_fsn(r), 199);
    assert_true(qsf_ring_acked_fsn(r) >= 49);
    int64_t from = qsf_ring_acked_fsn(r) + 1;
    assert_int_equal(read_all(r, from), 200 - from);
    append_n(r, 200, 50); /* continues the FSN sequence */
    assert_int_equal(read_all(r, from), 250 - from);
    qsf_ring_acknowledge(r, 249);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    assert_int_equal(rt_count_files("t", ".sfa"), 0);
}

/* ---- two threads ---- */

typedef struct stress {
    qsf_ring *r;
    int64_t frames;
    int64_t reseek_every; /* 0: never */
    _Atomic int64_t read;
    char failure[256];
} stress;

static void *reader_main(void *arg) {
    stress *st = arg;
    qsf_ring_cursor c = {0};
    int64_t expect = 0, since_seek = 0;
    qsf_ring_cursor_seek(st->r, &c, 0);
    while (expect < st->frames) {
        const uint8_t *p;
        uint32_t len;
        int64_t fsn;
        if (qsf_ring_cursor_next(st->r, &c, &p, &len, &fsn) != 1) {
            sched_yield();
            continue;
        }
        int64_t got;
        memcpy(&got, p, 8);
        if (fsn != expect || got != expect) {
            snprintf(st->failure, sizeof st->failure,
                     "expected FSN %" PRId64 ", got %" PRId64 " (payload %" PRId64 ")", expect, fsn,
                     got);
            break;
        }
        expect++;
        if ((expect & 255) == 0)
            qsf_ring_acknowledge(st->r, expect - 1);
        /* A reconnect: reposition at acked + 1 while the producer publishes. */
        if (st->reseek_every && ++since_seek == st->reseek_every) {
            since_seek = 0;
            int64_t acked = qsf_ring_acked_fsn(st->r);
            if (qsf_ring_cursor_seek(st->r, &c, acked + 1) != 0) {
                snprintf(st->failure, sizeof st->failure, "seek to %" PRId64 " failed", acked + 1);
                break;
            }
            expect = acked + 1;
        }
        atomic_store(&st->read, expect);
    }
    qsf_ring_cursor_release(st->r, &c);
    atomic_store(&st->read, expect);
    return NULL;
}

static void run_stress(bool sf, int64_t frames, int64_t reseek_every) {
    qsf_ring_opts o = opts(sf, 256 * 1024, 2 * 1024 * 1024);
    o.append_deadline_ms = 60000;
    qsf_ring *r = rt_open(&o);
    stress st = {.r = r, .frames = frames, .reseek_every = reseek_every};
    pthread_t t;
    pthread_create(&t, NULL, reader_main, &st);
    uint8_t buf[64];
    for (int64_t f = 0; f < frames && !st.failure[0]; f++) {
        memcpy(buf, &f, 8);
        size_t len = 8 + (size_t) (f & 31);
        int64_t got;
        qsf_errinfo e;
        if (qsf_ring_append(r, buf, len, &got, &e) != QSF_OK)
            fail_msg("append %" PRId64 ": %s", f, e.msg);
    }
    pthread_join(t, NULL);
    if (st.failure[0])
        fail_msg("%s", st.failure);
    assert_int_equal(atomic_load(&st.read), frames);
    assert_int_equal(qsf_ring_published_fsn(r), frames - 1);
    /* Trim kept the ring inside its cap the whole time. */
    assert_true(qsf_ring_owned_bytes(r) <= 2 * 1024 * 1024);
    qsf_ring_acknowledge(r, frames - 1);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

static void two_threads_memory(void **state) {
    (void) state;
    run_stress(false, 2000000, 0);
}

static void two_threads_sf(void **state) {
    (void) state;
    run_stress(true, 300000, 0);
}

static void seek_at_acked_while_publishing(void **state) {
    (void) state;
    run_stress(false, 500000, 9973);
}

static void seek_at_acked_while_publishing_sf(void **state) {
    (void) state;
    run_stress(true, 200000, 4999);
}

/* ---- capacity and backpressure ---- */

static _Atomic int64_t fake_now;
static int64_t fake_clock(void) {
    return atomic_fetch_add(&fake_now, 50 * 1000000); /* 50 ms per reading */
}

static void status(void *user, char *buf, size_t cap) {
    snprintf(buf, cap, "not connected, %s", (const char *) user);
}

static void fill_until_blocked(qsf_ring *r, int64_t *next) {
    /* Two segments of 1 KiB: the cap allows no more once both are full. */
    uint8_t buf[200] = {0};
    for (;;) {
        qsf_errinfo e;
        int rc = qsf_ring_append(r, buf, sizeof buf, NULL, &e);
        if (rc == QSF_E_FULL)
            return;
        assert_int_equal(rc, QSF_OK);
        (*next)++;
        assert_true(*next < 100);
    }
}

/* Whether the frame `fsn` has been trimmed. Releases the cursor at once:
 * a positioned cursor pins its segment, and polling with one held would keep
 * the very segment it waits for from being trimmed. */
static bool trimmed(qsf_ring *r, int64_t fsn) {
    qsf_ring_cursor c = {0};
    int rc = qsf_ring_cursor_seek(r, &c, fsn);
    qsf_ring_cursor_release(r, &c);
    return rc == QSF_E_INVAL;
}

/* A clock that moves only when the test moves it. */
static int64_t held_clock(void) {
    return atomic_load(&fake_now);
}

/* Memory mode keeps trimmed buffers for reuse as spares (no page faults on
 * the next lap), and gives them back once the pool has been idle for 1 s,
 * down to four. */
static void memory_pool_keeps_buffers_then_shrinks_when_idle(void **state) {
    (void) state;
    QSF_OS->mono_ns = held_clock;
    qsf_ring_opts o = opts(false, 1024, 64 * 1024);
    qsf_ring *r = rt_open(&o);
    append_n(r, 0, 500); /* ~18 KiB in 1 KiB segments */
    qsf_ring_acknowledge(r, 499);
    RT_WAIT_UNTIL(trimmed(r, 0));
    usleep(20000); /* several manager passes: the clock does not move */
    assert_true(qsf_ring_owned_bytes(r) >= 12 * 1024); /* kept, not freed */

    append_n(r, 500, 200); /* the next lap takes its spares from the pool */
    assert_int_equal(read_all(r, 500), 200);
    qsf_ring_acknowledge(r, 699);
    RT_WAIT_UNTIL(trimmed(r, 500));

    /* Idle: every poll moves the clock 1.1 s on, so the pool looks idle to the
     * manager whenever its trim pass put the buffers in. What remains is the
     * active segment, the spare and four pooled buffers. */
    RT_WAIT_UNTIL((atomic_fetch_add(&fake_now, (int64_t) 1100 * 1000000),
                   qsf_ring_owned_bytes(r) <= 6 * 1024));
    assert_true(qsf_ring_owned_bytes(r) >= 5 * 1024);
    append_n(r, 700, 100);
    assert_int_equal(read_all(r, 700), 100);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* After a burst, a trickle that takes a buffer from the pool now and then
 * does not keep the burst's buffers: those that sat in the pool for a whole
 * check interval are freed, down to four. */
static void memory_pool_shrinks_under_a_trickle(void **state) {
    (void) state;
    QSF_OS->mono_ns = held_clock;
    qsf_ring_opts o = opts(false, 1024, 64 * 1024);
    qsf_ring *r = rt_open(&o);
    append_n(r, 0, 500); /* the burst */
    qsf_ring_acknowledge(r, 499);
    RT_WAIT_UNTIL(trimmed(r, 0));
    usleep(20000);
    assert_true(qsf_ring_owned_bytes(r) >= 12 * 1024);
    int64_t next = 500;
    for (int lap = 0; lap < 8; lap++) { /* two segments' worth every 0.4 "seconds" */
        append_n(r, next, 30);
        next += 30;
        qsf_ring_acknowledge(r, next - 1);
        RT_WAIT_UNTIL(trimmed(r, next - 30));
        atomic_fetch_add(&fake_now, (int64_t) 400 * 1000000);
        usleep(20000);
    }
    /* Active, spare, four pooled, and the two the trickle keeps moving. */
    assert_true(qsf_ring_owned_bytes(r) <= 8 * 1024);
    assert_int_equal(read_all(r, next), 0);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

static void full_ring_fails_at_deadline_naming_cause(void **state) {
    (void) state;
    qsf_ring_opts o = opts(false, 1024, 1024); /* raised to 2 x segment */
    o.append_deadline_ms = 1000;
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) == 2048); /* active + spare */
    QSF_OS->mono_ns = fake_clock;
    int64_t n = 0;
    fill_until_blocked(r, &n);
    assert_int_equal(n, 8); /* 4 frames of 208 bytes per 1 KiB segment */
    assert_int_equal(qsf_ring_backpressure_stalls(r), 1);
    assert_true(qsf_ring_owned_bytes(r) <= 2048);

    qsf_errinfo e;
    uint8_t b[200] = {0};
    assert_int_equal(qsf_ring_append(r, b, sizeof b, NULL, &e), QSF_E_FULL);
    assert_true(e.flags & QSF_ERRF_RETRIABLE);
    assert_non_null(strstr(e.msg, "ring full for"));
    assert_non_null(strstr(e.msg, "acked FSN -1 of published 7"));
    assert_int_equal(qsf_ring_backpressure_stalls(r), 2); /* once per call */

    assert_int_equal(qsf_ring_append(r, b, sizeof b, NULL, &e), QSF_E_FULL);
    assert_true(qsf_ring_full_awaits_acks(r));
    char st[QSF_RING_FULL_CAUSE_MAX];
    status("3 reconnect attempts", st, sizeof st);
    qsf_ring_full_add_status(&e, st);
    assert_non_null(strstr(e.msg, "not connected, 3 reconnect attempts"));

    /* Acknowledging frees the oldest segment and the next append goes through. */
    qsf_os_reset();
    qsf_ring_acknowledge(r, 3);
    int64_t fsn;
    assert_int_equal(qsf_ring_append(r, b, sizeof b, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, 8);
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, 3), QSF_E_INVAL); /* trimmed */
    assert_int_equal(qsf_ring_cursor_seek(r, &c, 4), 0);
    qsf_ring_cursor_release(r, &c);
    qsf_ring_close(r, NULL);
}

static void zero_deadline_fails_at_once(void **state) {
    (void) state;
    qsf_ring_opts o = opts(false, 1024, 0);
    o.append_deadline_ms = 0;
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) == 2048);
    int64_t n = 0;
    fill_until_blocked(r, &n);
    assert_int_equal(n, 8);
    qsf_ring_close(r, NULL);
}

static void too_large_fails_at_once(void **state) {
    (void) state;
    qsf_ring_opts o = opts(false, 1024, 0);
    o.append_deadline_ms = 3600 * 1000;
    qsf_ring *r = rt_open(&o);
    assert_int_equal(qsf_ring_max_payload(r), 992);
    uint8_t *big = calloc(1, 993);
    qsf_errinfo e;
    assert_int_equal(qsf_ring_append(r, big, 993, NULL, &e), QSF_E_TOO_LARGE);
    assert_non_null(strstr(e.msg, "993 bytes, segment holds at most 992"));
    assert_int_equal(qsf_ring_backpressure_stalls(r), 0);
    assert_int_equal(qsf_ring_published_fsn(r), -1);
    int64_t fsn;
    assert_int_equal(qsf_ring_append(r, big, 992, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, 0);
    free(big);
    qsf_ring_close(r, NULL);
}

typedef struct blocked {
    qsf_ring *r;
    int rc;
    qsf_errinfo e;
} blocked;

static void *blocked_append(void *arg) {
    blocked *b = arg;
    uint8_t buf[200] = {0};
    b->rc = qsf_ring_append(b->r, buf, sizeof buf, NULL, &b->e);
    return NULL;
}

static void latched_error_wakes_blocked_producer(void **state) {
    (void) state;
    qsf_ring_opts o = opts(false, 1024, 0);
    o.append_deadline_ms = 3600 * 1000; /* would block for an hour */
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) == 2048);
    uint8_t buf[200] = {0};
    for (int i = 0; i < 8; i++)
        assert_int_equal(qsf_ring_append(r, buf, sizeof buf, NULL, NULL), QSF_OK);
    blocked b = {.r = r};
    pthread_t t;
    pthread_create(&t, NULL, blocked_append, &b);
    RT_WAIT_UNTIL(qsf_ring_backpressure_stalls(r) == 1);
    qsf_latch_set(qsf_ring_latch(r), QSF_E_SERVER, "server rejected FSN 3: table is read-only");
    pthread_join(t, NULL);
    assert_int_equal(b.rc, QSF_E_SERVER);
    assert_non_null(strstr(b.e.msg, "table is read-only"));
    assert_true(b.e.flags & QSF_ERRF_FATAL);
    assert_int_equal(qsf_ring_published_fsn(r), 7);
    /* it stays latched: a later append fails at once with it */
    qsf_errinfo e;
    assert_int_equal(qsf_ring_append(r, buf, 10, NULL, &e), QSF_E_SERVER);
    qsf_ring_close(r, NULL);
}

/* ---- a flush is published all or nothing ---- */

static void txn_append_n(qsf_ring *r, int64_t from, int64_t n) {
    uint8_t buf[128];
    for (int64_t f = from; f < from + n; f++) {
        int64_t got;
        qsf_errinfo e;
        size_t len = make_payload(f, buf, sizeof buf);
        if (qsf_ring_txn_append(r, buf, len, &got, &e) != QSF_OK)
            fail_msg("txn append of %" PRId64 ": %s", f, e.msg);
        assert_int_equal(got, f);
    }
}

/* The reader sees none of a flush's frames, across several rotations, until
 * it commits; then all of them, in order. */
static void txn_commit_publishes_at_once(bool sf) {
    qsf_ring_opts o = opts(sf, 1024, 64 * 1024);
    qsf_ring *r = rt_open(&o);
    append_n(r, 0, 5);
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, 5), 0); /* waiting at the end */
    assert_int_equal(qsf_ring_txn_begin(r, NULL), QSF_OK);
    txn_append_n(r, 5, 60); /* ~3.6 KiB: three rotations */
    const uint8_t *p;
    uint32_t len;
    int64_t fsn;
    assert_int_equal(qsf_ring_cursor_next(r, &c, &p, &len, &fsn), 0);
    assert_int_equal(qsf_ring_published_fsn(r), 4);
    assert_int_equal(read_all(r, 0), 5);
    assert_int_equal(qsf_ring_txn_commit(r, NULL), QSF_OK);
    assert_int_equal(qsf_ring_published_fsn(r), 64);
    for (int64_t f = 5; f < 65; f++) {
        assert_int_equal(qsf_ring_cursor_next(r, &c, &p, &len, &fsn), 1);
        assert_int_equal(fsn, f);
        check_payload(fsn, p, len);
    }
    qsf_ring_cursor_release(r, &c);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

static void txn_commit_publishes_at_once_memory(void **state) {
    (void) state;
    txn_commit_publishes_at_once(false);
}

static void txn_commit_publishes_at_once_sf(void **state) {
    (void) state;
    txn_commit_publishes_at_once(true);
}

/* An aborted flush leaves the ring as it was: its rotations undone (in SF mode
 * the manifest's activeBase moves back), its FSNs given back, no frame of it
 * readable, now or after a reopen. */
static void txn_abort_takes_everything_back(bool sf) {
    qsf_ring_opts o = opts(sf, 1024, 64 * 1024);
    qsf_ring *r = rt_open(&o);
    append_n(r, 0, 5);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) >= 2 * 1024); /* the active segment and a spare */
    int64_t owned = (int64_t) qsf_ring_owned_bytes(r);
    assert_int_equal(qsf_ring_txn_begin(r, NULL), QSF_OK);
    txn_append_n(r, 5, 60);
    assert_int_equal(qsf_ring_txn_abort(r, NULL), QSF_OK);
    assert_int_equal(qsf_ring_published_fsn(r), 4);
    append_n(r, 5, 3); /* the FSNs are given again, to other frames */
    assert_int_equal(read_all(r, 0), 8);
    if (sf) /* back to the active segment and a spare (memory mode pools the others) */
        RT_WAIT_UNTIL((int64_t) qsf_ring_owned_bytes(r) == owned);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    if (!sf)
        return;
    assert_true(rt_count_files("t", ".sfa") <= 2);
    qsf_recovery_report rep;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, NULL), QSF_OK);
    assert_int_equal(rep.published_fsn, 7);
    assert_int_equal(rep.frames, 8);
    assert_int_equal(read_all(r, 0), 8);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

static void txn_abort_takes_everything_back_memory(void **state) {
    (void) state;
    txn_abort_takes_everything_back(false);
}

static void txn_abort_takes_everything_back_sf(void **state) {
    (void) state;
    txn_abort_takes_everything_back(true);
}

/* A rollback to a mark removes only what the flush wrote after it, rotations
 * included, gives those FSNs back and leaves the flush open: its commit
 * publishes the frames before the mark and those written after the rollback,
 * now and after a reopen. */
static void txn_rollback_to_mark(bool sf) {
    qsf_ring_opts o = opts(sf, 1024, 64 * 1024);
    qsf_ring *r = rt_open(&o);
    append_n(r, 0, 5);
    assert_int_equal(qsf_ring_txn_begin(r, NULL), QSF_OK);
    txn_append_n(r, 5, 10);
    qsf_ring_mark m;
    qsf_ring_txn_mark(r, &m);
    txn_append_n(r, 15, 50); /* several rotations */
    assert_int_equal(qsf_ring_txn_rollback(r, &m, NULL), QSF_OK);
    assert_int_equal(qsf_ring_txn_rollback(r, &m, NULL), QSF_OK); /* nothing after it: no-op */
    assert_int_equal(qsf_ring_published_fsn(r), 4);
    txn_append_n(r, 15, 3); /* the FSNs are given again, to other frames */
    assert_int_equal(qsf_ring_txn_commit(r, NULL), QSF_OK);
    assert_int_equal(qsf_ring_published_fsn(r), 17);
    assert_int_equal(read_all(r, 0), 18);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
    if (!sf)
        return;
    qsf_recovery_report rep;
    assert_int_equal(qsf_ring_open(&o, &r, &rep, NULL), QSF_OK);
    assert_int_equal(rep.published_fsn, 17);
    assert_int_equal(rep.frames, 18);
    assert_int_equal(read_all(r, 0), 18);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

static void txn_rollback_to_mark_memory(void **state) {
    (void) state;
    txn_rollback_to_mark(false);
}

static void txn_rollback_to_mark_sf(void **state) {
    (void) state;
    txn_rollback_to_mark(true);
}

/* ---- an aborted flush and the manager's prefault ---- */

static pthread_t test_thread;
static _Atomic int mgr_gate_armed, mgr_gate_held, mgr_gate_open;

/* Whether the calling thread is the manager: the spare thread reads the
 * clock too, and held in its place (5 of 30 rounds) it left the round with
 * nothing to test. */
static bool on_manager(void) {
    char name[16];
    return !pthread_equal(pthread_self(), test_thread) &&
           pthread_getname_np(pthread_self(), name, sizeof name) == 0 &&
           strcmp(name, "qsf-mgr") == 0;
}

/* Once armed, the manager's next clock reading waits until the gate opens. A
 * pass reads the clock first right after prefault_active has picked the
 * active segment (shrink_pool), so the pass in progress goes on with the
 * spare only after whatever the test does meanwhile. */
static int64_t gated_clock(void) {
    if (on_manager() && atomic_exchange(&mgr_gate_armed, 0)) {
        atomic_store(&mgr_gate_held, 1);
        while (!atomic_load(&mgr_gate_open))
            usleep(100);
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Barriers are not what this is about: they only slow the abort down. */
static int no_fsync(int fd) {
    (void) fd;
    return 0;
}
static int no_msync(void *addr, size_t len, int flags) {
    (void) addr, (void) len, (void) flags;
    return 0;
}

static uint64_t prefaulted(qsf_segment *s) {
    return __atomic_load_n(&s->prefault_off, __ATOMIC_RELAXED);
}

/* SF mode with memory durability: the manager prefaults the active segment
 * outside the ring mutex, trusting that nobody else ever frees it. An aborted
 * flush does: the flush rotated into the spare, the next spare was created
 * (by the manager then, the spare thread now), a manager pass began to
 * prefault the new active segment, and the abort undid the rotation and, with a spare already
 * there, unmapped and freed that segment under it (SIGSEGV in populate). Each
 * round sets that up with the gate; rounds where the manager did not get
 * there are harmless. */
static void abort_never_frees_a_segment_the_manager_prefaults(void **state) {
    (void) state;
    const uint64_t seg = 16 << 20;
    const size_t frame = 1 << 20; /* 15 fit a segment */
    qsf_ring_opts o = opts(true, seg, 8 * seg);
    qsf_ring *r = rt_open(&o);
    uint8_t *buf = calloc(1, frame);
    assert_non_null(buf);
    for (int i = 0; i < 14; i++) /* room for one more frame */
        assert_int_equal(qsf_ring_append(r, buf, frame, NULL, NULL), QSF_OK);
    test_thread = pthread_self();
    QSF_OS->fsync = QSF_OS->fdatasync = no_fsync;
    QSF_OS->msync = no_msync;
    QSF_OS->mono_ns = gated_clock;
    for (int round = 0; round < 30; round++) {
        RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) >= 2 * seg); /* a spare */
        atomic_store(&mgr_gate_open, 0);
        atomic_store(&mgr_gate_held, 0);
        atomic_store(&mgr_gate_armed, 1);
        RT_WAIT_UNTIL(atomic_load(&mgr_gate_held));
        assert_int_equal(qsf_ring_txn_begin(r, NULL), QSF_OK);
        assert_int_equal(qsf_ring_txn_append(r, buf, frame, NULL, NULL), QSF_OK);
        assert_int_equal(qsf_ring_txn_append(r, buf, frame, NULL, NULL), QSF_OK); /* rotates */
        pthread_mutex_lock(&r->mu);
        qsf_segment *s = r->chain.active;
        pthread_mutex_unlock(&r->mu);
        uint64_t before = prefaulted(s);
        atomic_store(&mgr_gate_open, 1);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do /* until the manager is inside prefaulting s, or 200 ms */
            clock_gettime(CLOCK_MONOTONIC, &t);
        while (prefaulted(s) == before &&
               (t.tv_sec - t0.tv_sec) * 1000000000 + (t.tv_nsec - t0.tv_nsec) < 200000000);
        assert_int_equal(qsf_ring_txn_abort(r, NULL), QSF_OK);
    }
    qsf_os_reset();
    free(buf);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

/* pending_bytes counts the frames above ackedFsn, not whole segments (it was
 * the whole active segment: 1,719,924 bytes with 0 frames pending). */
static void pending_bytes_are_the_unacknowledged_frames(void **state) {
    (void) state;
    qsf_ring_opts o = opts(false, 1024, 16384);
    qsf_ring *r = rt_open(&o);
    uint8_t buf[100] = {0};
    for (int i = 0; i < 20; i++) /* 9 frames of 108 bytes per 1 KiB segment */
        assert_int_equal(qsf_ring_append(r, buf, sizeof buf, NULL, NULL), QSF_OK);
    assert_int_equal(qsf_ring_pending_bytes(r), 20 * 108);
    qsf_ring_acknowledge(r, 3);
    assert_int_equal(qsf_ring_pending_bytes(r), 16 * 108);
    qsf_ring_acknowledge(r, 12); /* inside the second segment */
    assert_int_equal(qsf_ring_pending_bytes(r), 7 * 108);
    qsf_ring_acknowledge(r, 19);
    assert_int_equal(qsf_ring_pending_bytes(r), 0);
    qsf_ring_close(r, NULL);
}

/* ---- symbol dictionary ---- */

typedef struct dict_reader {
    qsf_ring *r;
    uint32_t want;
    char failure[128];
} dict_reader;

static void *dict_reader_main(void *arg) {
    dict_reader *d = arg;
    uint32_t checked = 0;
    while (checked < d->want) {
        uint32_t n = qsf_ring_symdict_size(d->r);
        for (; checked < n; checked++) {
            uint32_t len;
            const char *s = qsf_ring_symdict_entry(d->r, checked, &len);
            char want[32];
            int wl = snprintf(want, sizeof want, "sym-%u", checked);
            if (!s || len != (uint32_t) wl || memcmp(s, want, len) != 0) {
                snprintf(d->failure, sizeof d->failure, "entry %u wrong", checked);
                return NULL;
            }
        }
    }
    return NULL;
}

static void symdict_visible_to_reader(bool sf) {
    qsf_ring_opts o = opts(sf, 4096, 0);
    qsf_ring *r = rt_open(&o);
    dict_reader d = {.r = r, .want = 20000};
    pthread_t t;
    pthread_create(&t, NULL, dict_reader_main, &d);
    char bufs[4][32];
    const char *strs[4];
    uint32_t lens[4];
    for (uint32_t first = 0; first < d.want; first += 4) {
        for (int i = 0; i < 4; i++) {
            lens[i] = (uint32_t) snprintf(bufs[i], 32, "sym-%u", first + (uint32_t) i);
            strs[i] = bufs[i];
        }
        assert_int_equal(qsf_ring_symdict_append(r, first, 4, strs, lens, NULL), QSF_OK);
        /* Appending the same ids again never duplicates them. */
        assert_int_equal(qsf_ring_symdict_append(r, first, 4, strs, lens, NULL), QSF_OK);
    }
    pthread_join(t, NULL);
    if (d.failure[0])
        fail_msg("%s", d.failure);
    assert_int_equal(qsf_ring_symdict_size(r), d.want);
    qsf_errinfo e;
    assert_int_not_equal(qsf_ring_symdict_append(r, d.want + 1, 1, strs, lens, &e), QSF_OK);
    if (sf) /* the file counts against the cap */
        assert_true(qsf_ring_owned_bytes(r) > 2 * 4096 + 100000);
    qsf_ring_close(r, NULL);
}

static void symdict_memory(void **state) {
    (void) state;
    symdict_visible_to_reader(false);
}

static void symdict_sf(void **state) {
    (void) state;
    symdict_visible_to_reader(true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(rotate_read_trim_memory, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(rotate_read_trim_sf, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(sf_reopen_keeps_unacked_tail, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(two_threads_memory, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(two_threads_sf, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(seek_at_acked_while_publishing, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(seek_at_acked_while_publishing_sf, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(memory_pool_keeps_buffers_then_shrinks_when_idle, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(memory_pool_shrinks_under_a_trickle, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(full_ring_fails_at_deadline_naming_cause, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(zero_deadline_fails_at_once, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(too_large_fails_at_once, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(latched_error_wakes_blocked_producer, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(txn_commit_publishes_at_once_memory, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(txn_commit_publishes_at_once_sf, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(txn_abort_takes_everything_back_memory, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(txn_abort_takes_everything_back_sf, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(txn_rollback_to_mark_memory, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(txn_rollback_to_mark_sf, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(pending_bytes_are_the_unacknowledged_frames, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(symdict_memory, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(symdict_sf, rt_setup, rt_teardown),
        /* last: when it fails it crashes the program, skipping what follows */
        cmocka_unit_test_setup_teardown(abort_never_frees_a_segment_the_manager_prefaults, rt_setup,
                                        rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
