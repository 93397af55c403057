/* Durable-ack matching (qsf_durack) (docs/PROTOCOL.md §8.5).
 *
 * With durable ack granted, every OK is queued with the FSN it confirmed and the
 * per-table seqTxns it listed. A durable ack max-merges per-table watermarks;
 * the longest run of queued OKs from the head whose tables are all covered is
 * popped, and the FSN of the last popped OK becomes the new ackedFsn. Table names
 * match case-insensitively (ASCII letters). Per connection: discard everything
 * on reconnect.
 *
 * Work is linear in the table entries received (durack.c says how): one OK or
 * durable ack naming 65,535 tables costs 65,535 lookups, not their square.
 * Memory is proportional too: every distinct name an OK or a durable ack of
 * the connection named is kept until the reset. */
#ifndef QSF_IO_DURACK_H
#define QSF_IO_DURACK_H

#include "qwp/response.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct qsf_durack qsf_durack;

qsf_durack *qsf_durack_new(void);
void qsf_durack_free(qsf_durack *d);

/* Forgets every queued OK and watermark (new connection). */
void qsf_durack_reset(qsf_durack *d);

/* Queues an OK that confirmed frames up to ok_fsn. Returns -1 on OOM. */
int qsf_durack_push_ok(qsf_durack *d, int64_t ok_fsn, const qsf_response *ok);

/* Merges a durable ack; returns the FSN to acknowledge, or -1 if nothing popped.
 * -2 on OOM. -3 (a protocol violation, nothing of it merged past the
 * offending entry) when it names tables no OK named, more than the widest OK
 * of the connection named (qsf_durack_widest), counting those earlier durable
 * acks named that no OK named since. */
int64_t qsf_durack_apply(qsf_durack *d, const qsf_response *dack);

/* Table names kept, and the most tables one OK of the connection named. */
size_t qsf_durack_names(const qsf_durack *d);
size_t qsf_durack_widest(const qsf_durack *d);

/* Queued OKs not yet durable. */
size_t qsf_durack_pending(const qsf_durack *d);

/* Steps taken so far: name lookups plus checks of a queued table against its
 * watermark (tests/unit/test_durack.c holds it to a multiple of the entries). */
uint64_t qsf_durack_work(const qsf_durack *d);

#endif
