/* The sender that qsf_send_arrow_stream is publishing into on this thread,
 * while it runs, or NULL. The stream's callbacks (get_schema, get_next, a
 * batch's release) run inside that call, on its thread: qsf_close reads this
 * to refuse freeing the sender under the call (QSF_E_STATE). Set, and
 * restored on return, by lib/chunk/arrow_stream.c; defined in close.c. */
#ifndef QSF_STREAM_TARGET_H
#define QSF_STREAM_TARGET_H

#include "qsf.h"

extern _Thread_local const qsf_sender *qsf_stream_target;

#endif
