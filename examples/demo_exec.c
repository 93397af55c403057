/* The demo's row count through QuestDB's /exec endpoint (see demo_exec.h). The
 * answer is JSON with the result in "dataset":[[count,distinct]].
 *
 * Not built from an install: a part of demo.c, built with it in the source
 * tree (`ninja -C build examples/demo`). */
#include "demo_exec.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define RESPONSE_MAX 65536

int demo_first_addr(const char *conf, char *out, size_t cap) {
    const char *p = strstr(conf, "addr=");
    while (p && p != conf && p[-1] != ';' && p[-1] != ':')
        p = strstr(p + 5, "addr="); /* not a key that ends in "addr" */
    if (!p)
        return -1;
    p += 5;
    size_t n = strcspn(p, ",;");
    if (n == 0 || n >= cap)
        return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

/* Splits "host:port" / "[v6]:port" in place. */
static int split_hostport(char *hp, char **host, char **port) {
    char *colon = strrchr(hp, ':');
    if (!colon || colon == hp)
        return -1;
    *colon = '\0';
    *port = colon + 1;
    *host = hp;
    if (hp[0] == '[' && colon[-1] == ']') {
        colon[-1] = '\0';
        *host = hp + 1;
    }
    return 0;
}

static int connect_to(const char *hostport, char *why, size_t cap) {
    char hp[300], *host, *port;
    snprintf(hp, sizeof hp, "%s", hostport);
    if (split_hostport(hp, &host, &port) != 0)
        return snprintf(why, cap, "'%s' is not host:port", hostport), -1;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g != 0)
        return snprintf(why, cap, "%s: %s", hostport, gai_strerror(g)), -1;
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    struct timeval tv = {10, 0};
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        snprintf(why, cap, "cannot connect to %s: %s", hostport, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

/* Sends the request and reads the whole response (the server closes). */
static int exchange(int fd, const char *req, char *resp, size_t cap) {
    size_t len = strlen(req);
    for (size_t off = 0; off < len;) {
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        off += (size_t) n;
    }
    size_t got = 0;
    for (ssize_t n; got + 1 < cap && (n = recv(fd, resp + got, cap - 1 - got, 0)) > 0;)
        got += (size_t) n;
    resp[got] = '\0';
    return got > 0 ? 0 : -1;
}

/* Removes chunk-size lines from a chunked body, in place. */
static void dechunk(char *body) {
    char *in = body, *out = body;
    for (;;) {
        char *end;
        unsigned long n = strtoul(in, &end, 16);
        char *data = strstr(end, "\r\n");
        if (n == 0 || !data || strlen(data + 2) < n)
            break;
        memmove(out, data + 2, n);
        out += n;
        in = data + 2 + n + 2;
    }
    *out = '\0';
}

/* Reads "dataset":[[a,b]] out of an /exec answer. */
static int parse_answer(char *resp, int64_t *rows, int64_t *distinct, char *why, size_t cap) {
    char *body = strstr(resp, "\r\n\r\n");
    if (strncmp(resp, "HTTP/1.", 7) != 0 || !body)
        return snprintf(why, cap, "not an HTTP response"), -1;
    body += 4;
    if (strstr(resp, "Transfer-Encoding: chunked") || strstr(resp, "transfer-encoding: chunked"))
        dechunk(body);
    int status = atoi(resp + 9);
    char *ds = strstr(body, "\"dataset\":[[");
    if (status != 200 || !ds)
        return snprintf(why, cap, "HTTP %d: %.300s", status, body), -1;
    char *end;
    *rows = strtoll(ds + 12, &end, 10);
    if (*end != ',')
        return snprintf(why, cap, "unexpected dataset: %.100s", ds), -1;
    *distinct = strtoll(end + 1, &end, 10);
    return 0;
}

int demo_exec_count(const char *hostport, const char *table, int64_t *rows, int64_t *distinct,
                    char *why, size_t cap) {
    int fd = connect_to(hostport, why, cap);
    if (fd < 0)
        return -1;
    char req[1024];
    snprintf(req, sizeof req,
             "GET /exec?query=SELECT%%20count()%%2C%%20count_distinct(trade_id)%%20FROM%%20%s "
             "HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
             table, hostport);
    char *resp = malloc(RESPONSE_MAX);
    int rc = -1;
    if (!resp)
        snprintf(why, cap, "out of memory");
    else if (exchange(fd, req, resp, RESPONSE_MAX) != 0)
        snprintf(why, cap, "no answer from %s: %s", hostport, strerror(errno));
    else
        rc = parse_answer(resp, rows, distinct, why, cap);
    free(resp);
    close(fd);
    return rc;
}
