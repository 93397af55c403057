/* What the kernel knows of a TCP peer (tcppeer.h). */
#include "io/tcppeer.h"

#if defined(__linux__)
#include <netinet/in.h>
#include <stddef.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

int qsf_tcp_peer_read(int fd, qsf_tcp_peer *out) {
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_rttvar))
        return -1;
    out->last_ack_ms = ti.tcpi_last_ack_recv;
    out->unacked = ti.tcpi_unacked;
    out->retransmits = ti.tcpi_retransmits;
    out->probes = ti.tcpi_probes;
    out->rtt_us = ti.tcpi_rtt;
    return 0;
}
#else
int qsf_tcp_peer_read(int fd, qsf_tcp_peer *out) {
    (void) fd;
    (void) out;
    return -1;
}
#endif

/* Something of ours waits for the peer's ACK: data in flight, a
 * retransmission, or a zero-window probe the peer has not answered (a frozen
 * server's full receive window is probed, and its kernel answers each probe:
 * the count goes back to 0, though the probes come further apart). */
enum qsf_peer_kernel qsf_tcp_peer_judge(const qsf_tcp_peer *p, int64_t silence_ms) {
    bool waiting = p->unacked > 0 || p->retransmits > 0 || p->probes > 0;
    if (p->last_ack_ms < silence_ms)
        return QSF_PEER_ACKS;
    return waiting ? QSF_PEER_GONE : QSF_PEER_IDLE;
}
