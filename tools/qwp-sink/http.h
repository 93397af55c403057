/* The HTTP side of the QWP upgrade: request parsing, validation in the real
 * server's order (docs/QWP-SINK.md §2.1) and the exact response bytes (docs/PROTOCOL.md §2.3,
 * §2.5). */
#ifndef QSINK_HTTP_H
#define QSINK_HTTP_H

#include <stddef.h>

#include "buf.h"

#define HTTP_MAX_REQUEST 16384
#define HTTP_MAX_HEADERS 64

struct http_req {
    char raw[HTTP_MAX_REQUEST + 1]; /* a NUL-split copy of the request head */
    size_t raw_len;                 /* bytes of the head including the blank line */
    const char *method, *path;
    const char *name[HTTP_MAX_HEADERS], *value[HTTP_MAX_HEADERS];
    int nhdr;
};

/* Parses a request head from [p, p+n). Returns 1 when complete (req filled,
 * req->raw_len = bytes consumed), 0 when more bytes are needed, -1 when the head
 * is malformed or longer than HTTP_MAX_REQUEST. */
int http_parse(const char *p, size_t n, struct http_req *req);

/* Value of the first header with this name (case-insensitive), or NULL. */
const char *http_header(const struct http_req *req, const char *name);

/* What the server checks, as configured. */
struct hs_policy {
    const char *auth_basic;  /* "user:password" or NULL */
    const char *auth_bearer; /* token or NULL */
    const char *role;        /* NULL = STANDALONE; REPLICA / PRIMARY_CATCHUP refuse writes */
    const char *zone;        /* optional X-QuestDB-Zone on a 421 */
};

/* Outcome of validation: status 101 or the rejection status with its reason. */
struct hs_result {
    int status;
    const char *reason;
    int durable_requested;
    int client_max_version; /* X-QWP-Max-Version, 1 when missing or bad */
    char accept[32];        /* Sec-WebSocket-Accept for a 101 */
};

void http_validate(const struct http_req *req, const struct hs_policy *pol, struct hs_result *out);

/* Sec-WebSocket-Accept for a key: base64(SHA-1(key + GUID)). out >= 29 bytes. */
int http_accept_key(const char *key, char *out, size_t cap);

/* Appends a rejection response. role (421 only) may be NULL to leave the role
 * header out; zone may be NULL. */
int http_write_reject(struct buf *out, int status, const char *reason, const char *role,
                      const char *zone);

/* The 101 as sent. version_text NULL omits X-QWP-Version; max_batch <= 0 omits
 * X-QWP-Max-Batch-Size; role NULL omits X-QuestDB-Role. */
struct hs_reply {
    const char *version_text;
    int durable;
    const char *role;
    long max_batch;
};

int http_write_101(struct buf *out, const char *accept, const struct hs_reply *r);

#endif
