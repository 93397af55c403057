/* What recovery gave up, told to the application: one DATA_LOSS record per
 * loss (the slot, the damaged file, the FSN span, frames and rows, where the
 * damaged bytes are kept) and the counts in the latch, so that qsf_close
 * returns QSF_E_DATA_LOSS. Used for the sender's own slot and for the orphan
 * slots its drainers adopt: a loss is reported by whoever found it, before
 * the slot can be removed. Recovery logged each loss at ERROR when it found
 * it: the records are queued without a second line. */
#ifndef QSF_SENDER_LOSSES_H
#define QSF_SENDER_LOSSES_H

#include "inbox.h"
#include "latch.h"
#include "sf/ring.h"

void qsf_report_losses(qsf_ring *ring, qsf_inbox *inbox, qsf_latch *latch);

#endif
