/* The direct send path of plain ws:// (lib/io/ws_fast.h) against what it
 * relies on in libwebsockets: frames written behind lws's back, frames lws
 * writes (and buffers partially) itself, and PONGs lws sends on its own are
 * streamed over one connection to qwp-sink, which must receive every frame
 * byte for byte, in order, and answer each with an OK. A libwebsockets that
 * keeps framing state across messages, queues bytes without reporting them
 * as partial, or writes its own frames into ours breaks the stream here. */
#include "testutil.h"

#include "io/ws.h"
#include "io/ws_fast.h"
#include "qwp/batch.h"
#include "qwp/encoder.h"
#include "qwp/response.h"
#include "qwp_capture.h"
#include "sink.h"
#include "qwp/symtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SMALL_FRAMES 160
#define BIG_EVERY    40          /* one frame in this many is large */
#define BIG_BYTES    (12u << 20) /* above any send buffer: lws buffers it partially */
#define MID_BYTES    (60u << 10)
#define WALL_MS      60000 /* the whole exchange, at most */

typedef struct run {
    qc_cap frames;
    size_t next;
    int64_t oks, last_seq;
    bool open, ended, failed;
    char why[256];
    qsf_ws *ws;
} run;

/* ---- frames: one row each (i = its index, v = padding), self-sufficient ---- */

static void build_frames(qc_cap *cap) {
    qsf_symtab *st;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *e;
    qsf_errinfo err;
    assert_int_equal(qsf_symtab_new(&st, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_new(st, NULL, &b, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_encoder_new(&e, NULL), QSF_OK);
    qsf_qwp_enc_opts o;
    qsf_qwp_enc_opts_default(&o);
    o.self_sufficient = true;
    o.max_frame = BIG_BYTES + (1u << 20);
    char *pad = malloc(BIG_BYTES);
    memset(pad, 'x', BIG_BYTES);
    qc_init(cap);
    for (int i = 0; i < SMALL_FRAMES; i++) {
        size_t n = i % BIG_EVERY == BIG_EVERY - 1 ? BIG_BYTES : i % 3 ? 10 : MID_BYTES;
        assert_int_equal(qsf_qwp_batch_table(b, "t", 1, &err), QSF_OK);
        assert_int_equal(qsf_qwp_batch_col_i64(b, "i", 1, i, &err), QSF_OK);
        assert_int_equal(qsf_qwp_batch_col_varchar(b, "v", 1, pad, n, &err), QSF_OK);
        assert_int_equal(qsf_qwp_batch_at_nanos(b, 1000 + i, &err), QSF_OK);
        assert_int_equal(qsf_qwp_encode(e, b, &o, NULL, qc_emit, cap, NULL, &err), QSF_OK);
    }
    assert_int_equal(cap->n, SMALL_FRAMES);
    free(pad);
    qsf_qwp_encoder_free(e);
    qsf_qwp_batch_free(b);
    qsf_symtab_free(st);
}

/* ---- hooks ---- */

static void on_open(void *u, const qsf_ws_hs *hs) {
    run *r = u;
    (void) hs;
    r->open = true;
    qsf_ws_want_writable(r->ws);
}

static void on_connect_fail(void *u, const qsf_ws_fail *f) {
    run *r = u;
    r->failed = r->ended = true;
    snprintf(r->why, sizeof r->why, "connect failed: %.200s (HTTP %d)", f->reason, f->http_status);
}

static void on_message(void *u, const uint8_t *p, size_t n) {
    run *r = u;
    qsf_response resp;
    char why[160];
    if (qsf_response_parse(p, n, &resp, why, sizeof why) < 0 || resp.kind != QSF_RESP_OK) {
        r->failed = true;
        snprintf(r->why, sizeof r->why, "not an OK from the sink: %s", why);
        return;
    }
    r->oks++;
    r->last_seq = resp.sequence;
}

static void on_violation(void *u, const char *why) {
    run *r = u;
    r->failed = true;
    snprintf(r->why, sizeof r->why, "violation: %s", why);
}

static void on_writable(void *u) {
    run *r = u;
    while (r->next < r->frames.n && !qsf_ws_choked(r->ws)) {
        qc_frame *f = &r->frames.f[r->next++];
        uint8_t *buf = malloc(qsf_ws_pre() + f->len);
        int rc = qsf_ws_send_binary_from(r->ws, buf, f->p, f->len);
        free(buf);
        if (rc < 0) {
            r->failed = true;
            snprintf(r->why, sizeof r->why, "send of frame %zu failed", r->next - 1);
            return;
        }
    }
    if (r->next < r->frames.n)
        qsf_ws_want_writable(r->ws);
}

static void on_closed(void *u, int code, const char *reason) {
    run *r = u;
    r->ended = true;
    if (r->oks < (int64_t) r->frames.n) {
        r->failed = true;
        snprintf(r->why, sizeof r->why, "closed early: %d %s", code, reason ? reason : "");
    }
}

static void on_wake(void *u) {
    (void) u;
}

static void on_tick(void *u) {
    run *r = u;
    qsf_ws_tick_in(r->ws, 10000); /* keeps service returning */
}

static const qsf_ws_hooks hooks = {.on_open = on_open,
                                   .on_connect_fail = on_connect_fail,
                                   .on_message = on_message,
                                   .on_violation = on_violation,
                                   .on_writable = on_writable,
                                   .on_closed = on_closed,
                                   .on_wake = on_wake,
                                   .on_tick = on_tick};

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Streams the frames to a sink that fragments every OK with PINGs between the
 * fragments (so lws writes PONGs of its own among ours) and checks what it got. */
static void stream(bool direct) {
    qsink_opts so = {.ack_mode = QSINK_ACK_PER_FRAME,
                     .record_payloads = 1,
                     .recv_buf = BIG_BYTES + (2u << 20),
                     .no_values = 1};
    char err[256];
    qsink *s = qsink_start(&so, err, sizeof err);
    if (!s)
        fail_msg("qsink_start: %s", err);
    assert_int_equal(qsink_fault(s, "fragment=3:ping", err, sizeof err), 0);
    atomic_store(&qsf_ws_fast_enabled, direct);

    run r;
    memset(&r, 0, sizeof r);
    build_frames(&r.frames);
    qsf_ws_conf wc = {.client_id = "test-ws-fast"};
    qsf_errinfo e;
    assert_int_equal(qsf_ws_new(&wc, &hooks, &r, &r.ws, &e), QSF_OK);
    qsf_ws_tick_in(r.ws, 0);
    assert_int_equal(qsf_ws_connect(r.ws, "127.0.0.1", qsink_port(s), &e), QSF_OK);
    int64_t deadline = mono_ms() + WALL_MS;
    while (!r.failed && r.oks < (int64_t) r.frames.n && mono_ms() < deadline)
        qsf_ws_service(r.ws);
    if (r.failed)
        fail_msg("%s", r.why);
    assert_int_equal(r.oks, SMALL_FRAMES);
    assert_int_equal(r.last_seq, SMALL_FRAMES - 1);

    /* the sink got every frame, byte for byte, in order */
    qsink_stats st;
    qsink_get_stats(s, &st);
    assert_int_equal(st.frames, SMALL_FRAMES);
    assert_int_equal(st.errors, 0);
    assert_int_equal(st.rows, SMALL_FRAMES);
    uint8_t *got = malloc(BIG_BYTES + (1u << 20));
    for (size_t i = 0; i < r.frames.n; i++) {
        int64_t n = qsink_frame_payload(s, 1, (int64_t) i, got, BIG_BYTES + (1u << 20));
        assert_int_equal(n, (int64_t) r.frames.f[i].len);
        assert_memory_equal(got, r.frames.f[i].p, r.frames.f[i].len);
    }
    free(got);

    /* and the paths were the ones asked for: the direct one for frames that
     * fit the send buffer, lws_write for the large ones */
    uint64_t fast = qsf_ws_fast_frames(r.ws);
    if (direct && qsf_ws_fast_supported()) {
        assert_true(fast > 0);
        assert_true(fast < SMALL_FRAMES);
    } else {
        assert_int_equal(fast, 0);
    }
    qsf_ws_free(r.ws);
    qc_free(&r.frames);
    qsink_stop(s);
    atomic_store(&qsf_ws_fast_enabled, true);
}

static void direct_path_mixed_with_lws_frames_and_pongs_arrives_intact(void **state) {
    (void) state;
    if (!qsf_ws_fast_supported())
        print_message("# this libwebsockets is not one the direct path was checked "
                      "against: every frame takes lws_write\n");
    stream(true);
}

static void lws_write_path_alone_arrives_intact(void **state) {
    (void) state;
    stream(false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(direct_path_mixed_with_lws_frames_and_pongs_arrives_intact),
        cmocka_unit_test(lws_write_path_alone_arrives_intact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
