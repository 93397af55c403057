/* Backpressure episodes told to the application. The ring reports each
 * episode (an append that waits for room, sf/ring.h) through its hook; this
 * turns it into BACKPRESSURE_BEGIN and BACKPRESSURE_END events and one log
 * line when it ends, with its duration and the frames acknowledged while it
 * lasted. Backpressure is normal when the producer is faster than the
 * server: the line is INFO, and WARN only for an episode that lasted
 * QSF_BACKPRESSURE_WARN_MS or more or ended with the append failing. An
 * episode that passes the threshold is also announced once, at WARN, when it
 * does, so a producer blocked for long is seen before it gives up. */
#ifndef QSF_SENDER_BACKPRESSURE_H
#define QSF_SENDER_BACKPRESSURE_H

#include "inbox.h"
#include "io/io.h"
#include "sf/ring.h"

#define QSF_BACKPRESSURE_WARN_MS 5000

/* Reports r's episodes into `events` (NULL: only logged); NULL ring: none. */
void qsf_backpressure_attach(qsf_ring *r, qsf_inbox *events);

/* After an append into r returned rc: a QSF_E_FULL that blames
 * acknowledgements gets the connection's state (qsf_io_status) added to its
 * message, when there is a connection. Returns rc. Producer. */
int qsf_backpressure_full(qsf_ring *r, qsf_io *io, int rc, qsf_errinfo *err);

#endif
