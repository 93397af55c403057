/* The direct send path of plain ws:// connections (ws_fast.h says what it
 * relies on in libwebsockets). */
#include "io/ws_fast.h"

#include "io/wsmask.h"

#include <errno.h>
#include <libwebsockets.h>
#include <linux/sockios.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

_Static_assert(LWS_PRE >= QSF_WS_HDR_MAX, "the frame header must fit in lws's headroom");

#define SEND_WAITS   50  /* a short write waits for POLLOUT at most this many times */
#define SEND_WAIT_MS 100 /* ... each this long */

atomic_bool qsf_ws_fast_enabled = true;

bool qsf_ws_fast_supported(void) {
#if LWS_LIBRARY_VERSION_MAJOR == 4 && LWS_LIBRARY_VERSION_MINOR == 1
    return true;
#else
    return false;
#endif
}

void qsf_ws_fast_init(qsf_ws_fast *f) {
    f->key_pos = sizeof f->keys; /* filled on first use */
    f->frames = 0;
}

static const uint8_t *next_key(qsf_ws_fast *f) {
    if (f->key_pos + 4 > sizeof f->keys) {
        if (RAND_bytes(f->keys, sizeof f->keys) != 1)
            return NULL;
        f->key_pos = 0;
    }
    f->key_pos += 4;
    return f->keys + f->key_pos - 4;
}

static bool kernel_room_for(int fd, size_t n) {
    int sndbuf = 0, outq = 0;
    socklen_t l = sizeof sndbuf;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &l) != 0 || ioctl(fd, SIOCOUTQ, &outq) != 0)
        return false;
    return outq >= 0 && sndbuf > 0 && (size_t) sndbuf > (size_t) outq + n;
}

/* Writes p[0..n) completely; waits for POLLOUT (bounded) on a short write. */
static int send_all(int fd, const uint8_t *p, size_t n) {
    for (int waits = 0; n > 0;) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            n -= (size_t) k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        struct pollfd pf = {fd, POLLOUT, 0};
        if (++waits > SEND_WAITS || poll(&pf, 1, SEND_WAIT_MS) < 0)
            return -1;
    }
    return 0;
}

int qsf_ws_fast_send(qsf_ws_fast *f, struct lws *wsi, uint8_t *buf, const uint8_t *src,
                     size_t len) {
    if (!qsf_ws_fast_supported() ||
        !atomic_load_explicit(&qsf_ws_fast_enabled, memory_order_relaxed))
        return 1;
    if (lws_partial_buffered(wsi) || !kernel_room_for(lws_get_socket_fd(wsi), len + QSF_WS_HDR_MAX))
        return 1;
    const uint8_t *key = next_key(f);
    if (!key)
        return 1;
    uint8_t *payload = buf + LWS_PRE;
    qsf_ws_mask_copy(payload, src, len, key); /* in place when src is payload */
    size_t h = qsf_ws_put_header(payload, len, key);
    if (send_all(lws_get_socket_fd(wsi), payload - h, h + len) < 0)
        return -1;
    f->frames++;
    return 0;
}
