/* A tiny raw WebSocket client for the sink tests: plain sockets (or TLS) to
 * 127.0.0.1, hand-written upgrade requests, masked frames, and a frame reader
 * that reports exactly what the server sent (opcode, RSV, mask, fragments). */
#ifndef QSF_TEST_RAWWS_H
#define QSF_TEST_RAWWS_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

typedef struct rawws {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
    uint8_t in[1 << 16];
    size_t len;
} rawws;

typedef struct rawws_frame {
    int fin, rsv, opcode, masked;
    uint8_t payload[1 << 14];
    size_t len;
} rawws_frame;

/* The RFC 6455 example key; its accept value is s3pPLMBiTxaQ9kYGzzhZRbK+xOo=. */
#define RAWWS_KEY "dGhlIHNhbXBsZSBub25jZQ=="

/* TCP connect to 127.0.0.1:port. 0 or -1. */
int rawws_connect(rawws *w, uint16_t port);
/* TLS connect verifying the server against ca_file. 0 or -1. */
int rawws_connect_tls(rawws *w, uint16_t port, const char *ca_file);
void rawws_close(rawws *w);

int rawws_send_raw(rawws *w, const void *p, size_t n);

/* Sends `request` verbatim and reads the response head (and a body up to
 * Content-Length) into resp. Returns the HTTP status, or -1. */
int rawws_request(rawws *w, const char *request, char *resp, size_t cap);

/* A standard upgrade to path with extra header lines ("Name: v\r\n..." or NULL)
 * inserted before the blank line. Returns the HTTP status. */
int rawws_upgrade(rawws *w, const char *path, const char *extra, char *resp, size_t cap);

/* connect + upgrade to /write/v4; 0 when the answer was 101. */
int rawws_open(rawws *w, uint16_t port, const char *extra);

/* Sends one frame, masked when `masked`; rsv is the 3-bit RSV field. */
int rawws_send_frame(rawws *w, int fin, int rsv, int opcode, const void *p, size_t n, int masked);
int rawws_send_binary(rawws *w, const void *p, size_t n);
/* n copies of the same binary frame in a single write. */
int rawws_send_binary_n(rawws *w, const void *p, size_t n, int count);

/* Reads one frame: 1 got it, 0 timeout, -1 EOF, -2 connection reset. The
 * timeout bounds each silence: every read of part of the frame restarts it. */
int rawws_recv(rawws *w, rawws_frame *f, int timeout_ms);

/* Waits for the end of the stream: 0 on EOF (FIN), -2 on reset, -1 on timeout.
 * Frames that arrive meanwhile are discarded. */
int rawws_wait_eof(rawws *w, int timeout_ms);

/* Response helpers: the status byte, the sequence of an OK / error (-1 if the
 * payload is not one), and the table count of an OK. */
int64_t rawws_resp_seq(const rawws_frame *f);

/* QWP messages used by the tests (docs/PROTOCOL.md §13). */
extern const uint8_t RAWWS_EMPTY_COMMIT[14]; /* flags 0x08, table_count 0 */
extern const uint8_t RAWWS_CATCHUP_AB[18];   /* flags 0x09, registers "a","b" */
extern const uint8_t RAWWS_SENSORS[86];      /* vector A: 2 rows in sensors */

#endif
