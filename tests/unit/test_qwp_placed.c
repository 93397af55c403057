/* Frames built in place (qsf_qwp_encode_placed, the ring's zero-copy path):
 * the same bytes and the same calls as frames built in the encoder's buffer,
 * whichever frames the placer takes; a frame whose write-ahead fails is never
 * placed (nothing of it reaches the ring). */
#include "testutil.h"

#include "qwp_fixture.h"
#include "qwp/batch.h"
#include "qwp/encoder.h"

#include <stdio.h>
#include <string.h>

#define OK(x)       assert_int_equal((x), QSF_OK)
#define ARENA_BYTES (1u << 20)

/* The placer's side of a test: an arena it lends room from (every
 * `refuse_every`-th place call says no), and what it saw. The capture comes
 * first: qc_emit and qc_syms take the same user pointer. */
typedef struct placed {
    qc_cap cap;
    uint8_t *arena;
    size_t used;
    long places, refuse_every, seals, unplaces;
    uint8_t *open; /* the room lent last and not yet sealed or given back */
    size_t open_cap;
} placed;

static uint8_t *pl_place(void *u, size_t cap) {
    placed *p = u;
    assert_null(p->open); /* one frame at a time */
    p->places++;
    if ((p->refuse_every && p->places % p->refuse_every == 0) || p->used + cap > ARENA_BYTES)
        return NULL;
    p->open = p->arena + p->used;
    p->open_cap = cap;
    return p->open;
}

/* A sealed frame joins the capture, as an emitted one would. */
static void pl_seal(void *u, size_t len, bool last) {
    placed *p = u;
    assert_non_null(p->open);
    assert_true(len <= p->open_cap);
    p->seals++;
    assert_int_equal(qc_emit(&p->cap, p->open, len, last, NULL), QSF_OK);
    p->used += len;
    p->open = NULL;
}

static void pl_unplace(void *u, size_t cap) {
    placed *p = u;
    assert_non_null(p->open);
    assert_int_equal(cap, p->open_cap);
    p->unplaces++;
    memset(p->open, 0, cap);
    p->open = NULL;
}

static const qsf_qwp_placer placer = {pl_place, pl_seal, pl_unplace};

static void add_rows(fx *f, int from, int to) {
    fx_add_rows(f, from, to, 3, 70);
}

/* The test's state: the codec fixture the frames are placed from, and the
 * placer's side. */
typedef struct pfx {
    fx *f;
    placed p;
} pfx;

static int setup(void **state) {
    pfx *x = calloc(1, sizeof *x);
    void *fs;
    fx_setup(&fs);
    x->f = fs;
    qc_init(&x->p.cap);
    x->p.arena = calloc(1, ARENA_BYTES);
    *state = x;
    return 0;
}

static int teardown(void **state) {
    pfx *x = *state;
    qc_free(&x->p.cap);
    free(x->p.arena);
    void *fs = x->f;
    fx_teardown(&fs);
    free(x);
    return 0;
}

/* Encodes the same rows with the buffer (into a fresh fixture) and in place
 * (into f), and compares every frame and every write-ahead call. */
static void same_as_emitted(pfx *x, long refuse_every, size_t max_frame) {
    void *ref_state;
    fx_setup(&ref_state);
    fx *ref = ref_state, *f = x->f;
    placed *p = &x->p;
    p->refuse_every = refuse_every;
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.max_frame = max_frame;
    for (int round = 0; round < 3; round++) { /* later rounds: symbols already published */
        add_rows(ref, round * 500, round * 500 + 500);
        add_rows(f, round * 500, round * 500 + 500);
        qsf_qwp_encode_result a, b;
        OK(qsf_qwp_encode(ref->e, ref->b, &o, qc_syms, qc_emit, &ref->cap, &a, &ref->err));
        OK(qsf_qwp_encode_placed(f->e, f->b, &o, qc_syms, qc_emit, &placer, p, &b, &f->err));
        assert_int_equal(a.frames, b.frames);
        assert_int_equal(a.bytes, b.bytes);
        assert_int_equal(a.rows_consumed, b.rows_consumed);
    }
    assert_int_equal(p->cap.n, ref->cap.n);
    for (size_t i = 0; i < ref->cap.n; i++) {
        assert_int_equal(p->cap.f[i].len, ref->cap.f[i].len);
        assert_memory_equal(p->cap.f[i].p, ref->cap.f[i].p, ref->cap.f[i].len);
        assert_int_equal(p->cap.f[i].last, ref->cap.f[i].last);
    }
    assert_int_equal(p->cap.nsym, ref->cap.nsym);
    assert_memory_equal(p->cap.sym_ids, ref->cap.sym_ids, ref->cap.nsym * sizeof(uint32_t));
    assert_memory_equal(p->cap.frames_at_sym, ref->cap.frames_at_sym,
                        (ref->cap.nsym / 2) * sizeof(size_t));
    assert_int_equal(p->places, (long) ref->cap.n);
    assert_int_equal(p->unplaces, 0);
    long refused = refuse_every ? p->places / refuse_every : 0;
    assert_int_equal(p->seals, p->places - refused);
    assert_true(p->seals > 0);
    fx_teardown(&ref_state);
}

static void every_frame_placed(void **state) {
    same_as_emitted(*state, 0, 1500);
}

/* Every third frame finds no room (the ring's active segment full): it is
 * built in the encoder's buffer and emitted, the others in place. */
static void some_frames_placed(void **state) {
    same_as_emitted(*state, 3, 1500);
}

static void one_frame_per_encode(void **state) {
    same_as_emitted(*state, 0, 1 << 20);
}

/* The write-ahead of the frame's new symbols fails: it ran before any room
 * was asked for, so nothing was placed, sealed or emitted, and every row is
 * still buffered. */
static void write_ahead_failure_places_nothing(void **state) {
    pfx *x = *state;
    fx *f = x->f;
    placed *p = &x->p;
    add_rows(f, 0, 10);
    p->cap.sym_fail_at = 0;
    assert_int_equal(
        qsf_qwp_encode_placed(f->e, f->b, NULL, qc_syms, qc_emit, &placer, p, NULL, &f->err),
        QSF_E_IO);
    assert_int_equal(p->places, 0);
    assert_int_equal(p->unplaces, 0);
    assert_int_equal(p->seals, 0);
    assert_int_equal(p->cap.n, 0);
    for (size_t i = 0; i < ARENA_BYTES; i++)
        if (p->arena[i])
            fail_msg("byte %zu of the arena is %u: the frame was written", i, p->arena[i]);
    assert_int_equal(qsf_qwp_batch_rows(f->b), 10);
    assert_int_equal(qsf_symtab_published(f->st), 0);
    /* the next encode places the frame and seals it */
    p->cap.sym_fail_at = -1;
    OK(qsf_qwp_encode_placed(f->e, f->b, NULL, qc_syms, qc_emit, &placer, p, NULL, &f->err));
    assert_int_equal(p->places, 1);
    assert_int_equal(p->seals, 1);
    assert_int_equal(p->cap.n, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_frame_placed, setup, teardown),
        cmocka_unit_test_setup_teardown(some_frames_placed, setup, teardown),
        cmocka_unit_test_setup_teardown(one_frame_per_encode, setup, teardown),
        cmocka_unit_test_setup_teardown(write_ahead_failure_places_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
