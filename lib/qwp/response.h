/* Strict parser of the server's responses on the ingest WebSocket
 * (docs/PROTOCOL.md §6). A response is one binary message without the 12-byte
 * QWP header; its first byte is the status.
 *
 *   OK (0x00)            u8 status | i64 sequence | u16 tableCount | tables
 *   error (other)        u8 status | i64 sequence | u16 msgLen | msg[msgLen]
 *   durable ack (0x02)   u8 status | u16 tableCount | tables
 *   table entry          u16 nameLen (> 0) | name (UTF-8) | i64 seqTxn
 *
 * All integers little-endian. Lengths must match exactly (docs/PROTOCOL.md §6.6): no trailing
 * bytes, msgLen <= 1024, names valid UTF-8. Every count and length is held
 * against the bytes present before it is used (a tableCount of 65,535 in an
 * 11-byte OK is refused at once), and parsing reads each byte once. 0x01 (SERVER_INFO) and 0x0E
 * (LOCAL_DURABLE_ACK) are recognised and reported as "ignored". The parser never
 * copies: the result points into the caller's buffer. */
#ifndef QSF_QWP_RESPONSE_H
#define QSF_QWP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QSF_RESP_STATUS_OK          0x00
#define QSF_RESP_STATUS_SERVER_INFO 0x01
#define QSF_RESP_STATUS_DURABLE     0x02
#define QSF_RESP_STATUS_LOCAL_DUR   0x0E
#define QSF_RESP_MSG_MAX            1024

enum qsf_resp_kind {
    QSF_RESP_OK = 1,
    QSF_RESP_ERROR = 2,
    QSF_RESP_DURABLE = 3,
    QSF_RESP_IGNORED = 4, /* 0x01, 0x0E: log and ignore */
};

typedef struct qsf_response {
    int kind;              /* enum qsf_resp_kind */
    uint8_t status;        /* first byte */
    int64_t sequence;      /* OK / error; -1 for durable acks */
    uint16_t table_count;  /* OK / durable ack */
    const uint8_t *tables; /* first table entry (validated) */
    size_t tables_len;     /* bytes of all entries */
    const char *msg;       /* error text, not NUL-terminated */
    uint16_t msg_len;
} qsf_response;

typedef struct qsf_resp_table {
    const char *name; /* not NUL-terminated */
    uint16_t name_len;
    int64_t seq_txn;
} qsf_resp_table;

/* Parses buf[0..len). Returns 0 and fills *out, or -1 with a reason in why
 * (NUL-terminated, at most cap bytes) when the response violates docs/PROTOCOL.md §6.6. */
int qsf_response_parse(const uint8_t *buf, size_t len, qsf_response *out, char *why, size_t cap);

/* Iterates the validated table entries of an OK or durable ack: *pos (a byte
 * offset) starts at 0; returns false after the last entry. */
bool qsf_response_table(const qsf_response *r, size_t *pos, qsf_resp_table *t);

#endif
