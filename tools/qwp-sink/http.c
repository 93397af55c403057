/* HTTP upgrade: parsing, validation order and response bytes (see http.h). */
#include "http.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

static const char WS_GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/* Splits "Name: value" lines in place; returns -1 on a line without a colon. */
static int split_headers(struct http_req *req, char *line) {
    while (*line) {
        char *eol = strstr(line, "\r\n");
        if (!eol)
            return -1;
        *eol = '\0';
        char *colon = strchr(line, ':');
        if (!colon || colon == line || req->nhdr == HTTP_MAX_HEADERS)
            return -1;
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        char *end = v + strlen(v);
        while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        req->name[req->nhdr] = line;
        req->value[req->nhdr++] = v;
        line = eol + 2;
    }
    return 0;
}

/* "GET /path HTTP/1.1" → method and path pointers inside the line. */
static int split_request_line(struct http_req *req, char *line) {
    char *sp1 = strchr(line, ' ');
    if (!sp1)
        return -1;
    *sp1 = '\0';
    char *sp2 = strchr(sp1 + 1, ' ');
    if (!sp2 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
        return -1;
    *sp2 = '\0';
    req->method = line;
    req->path = sp1 + 1;
    return 0;
}

int http_parse(const char *p, size_t n, struct http_req *req) {
    size_t scan = n < HTTP_MAX_REQUEST ? n : HTTP_MAX_REQUEST;
    const char *end = NULL;
    for (size_t i = 3; i < scan; i++) {
        if (p[i] == '\n' && p[i - 1] == '\r' && p[i - 2] == '\n' && p[i - 3] == '\r') {
            end = p + i + 1;
            break;
        }
    }
    if (!end)
        return n >= HTTP_MAX_REQUEST ? -1 : 0;
    req->raw_len = (size_t) (end - p);
    memcpy(req->raw, p, req->raw_len);
    req->raw[req->raw_len - 2] = '\0'; /* keep the last header's CRLF */
    req->nhdr = 0;
    char *eol = strstr(req->raw, "\r\n");
    if (!eol)
        return -1;
    *eol = '\0';
    if (split_request_line(req, req->raw) != 0)
        return -1;
    return split_headers(req, eol + 2) == 0 ? 1 : -1;
}

const char *http_header(const struct http_req *req, const char *name) {
    for (int i = 0; i < req->nhdr; i++)
        if (strcasecmp(req->name[i], name) == 0)
            return req->value[i];
    return NULL;
}

/* True if `list` holds `token` case-insensitively at a comma or space boundary. */
static int has_token(const char *list, const char *token) {
    size_t tl = strlen(token);
    for (const char *s = list; *s; s++) {
        if (s != list && s[-1] != ',' && s[-1] != ' ')
            continue;
        if (strncasecmp(s, token, tl) == 0 && (s[tl] == '\0' || s[tl] == ',' || s[tl] == ' '))
            return 1;
    }
    return 0;
}

static int is_b64(int c) {
    return isalnum(c) || c == '+' || c == '/';
}

/* Exactly 24 base64 characters encoding 16 bytes ("...==" at the end). */
static int key_ok(const char *key) {
    if (!key || strlen(key) != 24 || key[22] != '=' || key[23] != '=')
        return 0;
    for (int i = 0; i < 22; i++)
        if (!is_b64((unsigned char) key[i]))
            return 0;
    return 1;
}

int http_accept_key(const char *key, char *out, size_t cap) {
    char cat[128];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int n = snprintf(cat, sizeof cat, "%s%s", key, WS_GUID);
    if (n < 0 || (size_t) n >= sizeof cat || cap < 29)
        return -1;
    if (!EVP_Digest(cat, (size_t) n, md, &mdlen, EVP_sha1(), NULL))
        return -1;
    EVP_EncodeBlock((unsigned char *) out, md, (int) mdlen);
    return 0;
}

static int max_version(const char *v) {
    if (!v)
        return 1;
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < 1)
        return 1;
    return n > 1000000 ? 1000000 : (int) n;
}

/* Authorization: Basic base64(user:pass) or Bearer token. 0 = pass, else 401. */
static int check_auth(const struct http_req *req, const struct hs_policy *pol) {
    if (!pol->auth_basic && !pol->auth_bearer)
        return 0;
    const char *a = http_header(req, "Authorization");
    if (!a)
        return 401;
    if (pol->auth_bearer && strncasecmp(a, "Bearer ", 7) == 0)
        return strcmp(a + 7, pol->auth_bearer) == 0 ? 0 : 401;
    if (pol->auth_basic && strncasecmp(a, "Basic ", 6) == 0) {
        unsigned char dec[512];
        size_t inl = strlen(a + 6);
        if (inl == 0 || inl % 4 != 0 || inl > 600)
            return 401;
        int n = EVP_DecodeBlock(dec, (const unsigned char *) a + 6, (int) inl);
        if (n < 0)
            return 401;
        while (n > 0 && a[6 + inl - 1] == '=' && inl-- > 0)
            n--; /* EVP_DecodeBlock counts padding as zero bytes */
        size_t want = strlen(pol->auth_basic);
        return (size_t) n == want && memcmp(dec, pol->auth_basic, want) == 0 ? 0 : 401;
    }
    return 401;
}

static int role_refuses_writes(const char *role) {
    return role && (strcasecmp(role, "REPLICA") == 0 || strcasecmp(role, "PRIMARY_CATCHUP") == 0);
}

static void refuse(struct hs_result *out, int status, const char *reason) {
    out->status = status;
    out->reason = reason;
}

void http_validate(const struct http_req *req, const struct hs_policy *pol, struct hs_result *out) {
    memset(out, 0, sizeof *out);
    const char *path = req->path;
    const char *upg = http_header(req, "Upgrade");
    const char *conn = http_header(req, "Connection");
    const char *key = http_header(req, "Sec-WebSocket-Key");
    const char *ver = http_header(req, "Sec-WebSocket-Version");
    if (strcmp(req->method, "GET") != 0 ||
        (strcmp(path, "/write/v4") != 0 && strcmp(path, "/api/v4/write") != 0))
        return refuse(out, 404, "Not Found");
    if (http_header(req, "Origin"))
        return refuse(out, 400, "Origin header not allowed on QWP WebSocket");
    if (!upg || strcasecmp(upg, "websocket") != 0)
        return refuse(out, 400, "missing or invalid Upgrade header");
    if (!conn || !has_token(conn, "upgrade"))
        return refuse(out, 400, "missing or invalid Connection header");
    if (!key_ok(key))
        return refuse(out, 400, "missing or invalid Sec-WebSocket-Key");
    if (!ver || strcmp(ver, "13") != 0)
        return refuse(out, 426, "Upgrade Required");
    int auth = check_auth(req, pol);
    if (auth)
        return refuse(out, auth, "Unauthorized");
    if (role_refuses_writes(pol->role))
        return refuse(out, 421, "Misdirected Request");
    const char *dur = http_header(req, "X-QWP-Request-Durable-Ack");
    out->durable_requested = dur && strcasecmp(dur, "true") == 0;
    out->client_max_version = max_version(http_header(req, "X-QWP-Max-Version"));
    if (http_accept_key(key, out->accept, sizeof out->accept) != 0)
        return refuse(out, 500, "Internal Server Error");
    out->status = 101;
}

static const char *status_text(int status) {
    switch (status) {
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 421:
        return "Misdirected Request";
    case 426:
        return "Upgrade Required";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Error";
    }
}

static int appendf(struct buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int appendf(struct buf *out, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t) n >= sizeof tmp)
        return -1;
    return buf_append(out, tmp, (size_t) n);
}

int http_write_reject(struct buf *out, int status, const char *reason, const char *role,
                      const char *zone) {
    int rc = appendf(out, "HTTP/1.1 %d %s\r\n", status, status_text(status));
    if (status == 426)
        return rc | appendf(out, "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                                 "Sec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n");
    if (status == 421) {
        rc |= appendf(out, "Connection: close\r\nContent-Length: 0\r\n");
        if (role)
            rc |= appendf(out, "X-QuestDB-Role: %s\r\n", role);
        if (zone)
            rc |= appendf(out, "X-QuestDB-Zone: %s\r\n", zone);
        return rc | appendf(out, "\r\n");
    }
    const char *body = reason ? reason : status_text(status);
    return rc | appendf(out, "Content-Type: text/plain\r\nContent-Length: %zu\r\n\r\n%s",
                        strlen(body), body);
}

int http_write_101(struct buf *out, const char *accept, const struct hs_reply *r) {
    int rc = appendf(out,
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n",
                     accept);
    if (r->version_text)
        rc |= appendf(out, "X-QWP-Version: %s\r\n", r->version_text);
    if (r->durable)
        rc |= appendf(out, "X-QWP-Durable-Ack: enabled\r\n");
    if (r->role)
        rc |= appendf(out, "X-QuestDB-Role: %s\r\n", r->role);
    if (r->max_batch > 0)
        rc |= appendf(out, "X-QWP-Max-Batch-Size: %ld\r\n", r->max_batch);
    return rc | appendf(out, "\r\n");
}
