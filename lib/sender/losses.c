/* What recovery gave up, told to the application (losses.h). */
#include "sender/losses.h"

#include "os/os.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void qsf_report_losses(qsf_ring *ring, qsf_inbox *inbox, qsf_latch *latch) {
    uint32_t n;
    const qsf_recovery_loss *l = qsf_ring_losses(ring, &n);
    const char *slot = qsf_ring_slot_path(ring);
    for (uint32_t i = 0; i < n; i++, l++) {
        qsf_error_record r;
        memset(&r, 0, sizeof r);
        r.category = QSF_CAT_DATA_LOSS;
        r.policy = QSF_POLICY_ABANDONED;
        r.status = -1;
        r.wire_seq = -1;
        r.from_fsn = l->from_fsn;
        r.to_fsn = l->to_fsn;
        r.timestamp_us = QSF_OS->wall_us();
        if (l->copy[0])
            snprintf(r.quarantined_path, sizeof r.quarantined_path, "%.250s/%.250s", slot, l->copy);
        uint64_t frames = l->frames_destroyed + l->frames_retired;
        snprintf(r.message, sizeof r.message,
                 "damaged slot %.200s: %.160s in %.100s; FSN %" PRId64 "..%" PRId64
                 " given up, never sent: %s%" PRIu64 " frames destroyed, %" PRIu64
                 " intact frames of the same flushes (%" PRIu64 " rows%s)%s%.256s",
                 slot, l->what, l->file, l->from_fsn, l->to_fsn,
                 l->destroyed_exact ? "" : "at most ", l->frames_destroyed, l->frames_retired,
                 l->rows, l->frames_uncounted ? " counted, more in frames with several tables" : "",
                 l->copy[0] ? "; the damaged bytes are kept in " : "", r.quarantined_path);
        qsf_inbox_push_logged(inbox, &r); /* recovery logged the loss (ERROR) */
        qsf_latch_note_loss(latch, frames, l->rows, r.message);
    }
}
