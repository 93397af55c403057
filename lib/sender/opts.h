/* The ring's and the I/O thread's options from a parsed connect string (and
 * what recovery reported). Shared by the sender and its orphan drainers, which
 * use the owner's durability, sizes, addresses, credentials and TLS settings
 * (docs/FORMAT.md §7.1). */
#ifndef QSF_SENDER_OPTS_H
#define QSF_SENDER_OPTS_H

#include "conf/conf.h"
#include "io/io.h"
#include "sf/ring.h"

/* The ring of slot `sender_id` (the conf's own when NULL). */
qsf_ring_opts qsf_ring_opts_from_conf(const qsf_conf *c, const char *sender_id);

typedef struct qsf_io_conf {
    qsf_io_opts opts;   /* points into the fields below and into the conf */
    qsf_io_addr *addrs; /* owned */
    char auth[2048];    /* the Authorization header value; wiped by clear */
    char *roots;        /* owned: the tls_roots file as roots text (io/ws_tls.h) */
} qsf_io_conf;

/* Fills *out. This is where a sender or drainer being created checks what the
 * string names in its environment: for wss, the tls_roots file (PEM, or PKCS#12
 * with tls_roots_password) is read and checked here. QSF_E_TLS naming the file,
 * QSF_E_CONF when the credentials do not fit the header, QSF_E_NOMEM. On
 * success release it with qsf_io_conf_clear once qsf_io_start (which copies
 * what it keeps) has returned; on failure nothing is left to release. */
/* `r` may be NULL before the slot is open: the caller then sets
 * opts.recovered_published_fsn and opts.self_sufficient from the recovery. */
int qsf_io_conf_build(const qsf_conf *c, const qsf_recovery_report *r, qsf_io_conf *out,
                      qsf_errinfo *err);

void qsf_io_conf_clear(qsf_io_conf *ic);

#endif
