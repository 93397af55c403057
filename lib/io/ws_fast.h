/* The direct send path of plain ws:// connections.
 *
 * libwebsockets masks client payloads one byte at a time, which costs more
 * than the rest of the I/O thread together (docs/BENCHMARKS.md, "e2e": the
 * "lws_write" rows against the default ones). For plain connections qsf
 * writes a binary message itself: the header into the LWS_PRE headroom, the
 * payload masked 8 bytes at a time (wsmask.h), straight to the socket lws
 * owns. It does so only when lws holds no partial write and the kernel send
 * buffer has room for the whole frame, and it finishes the frame before
 * control returns to lws, so a frame is never half-written when lws writes a
 * PONG or a CLOSE of its own.
 *
 * What this relies on in libwebsockets (checked for 4.1, the version Debian 12
 * ships; built against any other version, every frame takes lws_write, until
 * someone adds that version to qsf_ws_fast_supported() and the test below
 * passes with it):
 *   1. lws_partial_buffered() false means lws has no bytes of its own queued
 *      for the socket: what we write goes on the wire after everything lws
 *      wrote;
 *   2. after lws_write() of a whole message (FIN) returns, lws keeps no
 *      framing state of it: the next frame may be anyone's;
 *   3. lws_get_socket_fd() of a client connection without TLS is the TCP
 *      socket itself, and lws neither reads our bytes back nor counts them;
 *   4. no extension is negotiated (qsf offers none), so a frame has RSV = 0
 *      and an uncompressed payload;
 *   5. LWS_PRE is at least QSF_WS_HDR_MAX (a static assertion).
 * tests/integration/test_ws_fast.c fails if a libwebsockets release breaks
 * 1-4: it streams frames over both paths, mixed with frames lws writes itself
 * (large ones it buffers partially) and PONGs lws sends on its own, and
 * checks that the server received every frame byte for byte, in order, and
 * that the direct path was actually taken. */
#ifndef QSF_IO_WS_FAST_H
#define QSF_IO_WS_FAST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lws;

typedef struct qsf_ws_fast {
    uint8_t keys[4096]; /* masking keys from OpenSSL's CSPRNG, 4 bytes each */
    size_t key_pos;
    uint64_t frames; /* frames sent on this path (tests) */
} qsf_ws_fast;

/* Off only to measure lws_write against this path in one run (benchmarks) or
 * to test both; any thread, read at every send. */
extern atomic_bool qsf_ws_fast_enabled;

/* Whether this build may take the path at all (see the libwebsockets
 * versions above). */
bool qsf_ws_fast_supported(void);

void qsf_ws_fast_init(qsf_ws_fast *f);

/* Sends src[0..len) as one masked binary message through buf (which has
 * LWS_PRE bytes of headroom before the payload area; src may be that area)
 * when the path may be taken now. Returns 1 when it was not taken (send it
 * with lws_write), 0 when it was sent, -1 when the connection failed. */
int qsf_ws_fast_send(qsf_ws_fast *f, struct lws *wsi, uint8_t *buf, const uint8_t *src, size_t len);

#endif
