/* What the kernel knows of the peer of a TCP connection (docs/PROTOCOL.md
 * §8.6): whether the host at the other end still acknowledges what was sent,
 * which tells a server process that is frozen (its host's TCP stack answers
 * for it) from a host that is gone (nothing answers). Linux TCP_INFO; on
 * other systems nothing is known and a silent connection is dead as before. */
#ifndef QSF_IO_TCPPEER_H
#define QSF_IO_TCPPEER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct qsf_tcp_peer {
    int64_t last_ack_ms;  /* since the last ACK the peer sent */
    uint32_t unacked;     /* segments sent and not acknowledged */
    uint32_t retransmits; /* RTO retransmissions of the oldest unacknowledged segment */
    uint32_t probes;      /* zero-window probes not answered */
    int64_t rtt_us;       /* smoothed round-trip time */
} qsf_tcp_peer;

/* Reads it from socket fd; -1 when the system cannot say. */
int qsf_tcp_peer_read(int fd, qsf_tcp_peer *out);

/* What it says, with `silence_ms` the liveness timeout. */
enum qsf_peer_kernel {
    QSF_PEER_ACKS, /* everything that waits for an ACK gets one: the host is there */
    QSF_PEER_IDLE, /* nothing waits for an ACK, and none came for silence_ms: send something */
    QSF_PEER_GONE, /* something waits for an ACK, and none came for silence_ms */
};
enum qsf_peer_kernel qsf_tcp_peer_judge(const qsf_tcp_peer *p, int64_t silence_ms);

#endif
