/* msg_decode: header checks of qwp-ingress.md §3.1. Table blocks are handed to
 * the QWP decoder (lib/qwp/decoder.h) once it is available. */
#include "msg.h"

#include <stdio.h>
#include <stdlib.h>

#include "bytes.h"

struct msg_ctx {
    int unused;
};

struct msg_ctx *msg_ctx_new(void) {
    return calloc(1, sizeof(struct msg_ctx));
}

void msg_ctx_free(struct msg_ctx *ctx) {
    free(ctx);
}

int msg_decode(struct msg_ctx *ctx, const uint8_t *msg, size_t len, uint8_t version,
               struct msg_decoded *out, char *err, size_t errcap) {
    (void) ctx;
    if (len < QWP_HEADER_LEN || qsf_get_u32(msg) != 0x31505751u) {
        snprintf(err, errcap, "invalid QWP magic");
        return QS_PARSE_ERROR;
    }
    if (msg[4] != version) {
        snprintf(err, errcap, "message version %u does not match negotiated version %u", msg[4],
                 version);
        return QS_PARSE_ERROR;
    }
    uint32_t plen = qsf_get_u32(msg + 8);
    if (plen > QWP_MAX_PAYLOAD || plen > len - QWP_HEADER_LEN) {
        snprintf(err, errcap, "payload length %u exceeds the %zu bytes received", plen,
                 len - QWP_HEADER_LEN);
        return QS_PARSE_ERROR;
    }
    out->flags = msg[5];
    out->ntables = 0;
    out->tables = NULL;
    return QS_OK;
}
