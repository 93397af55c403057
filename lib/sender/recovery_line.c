/* The one line a sender writes about the slot it recovered (SF mode): what
 * it holds, what will be sent again, and what recovery repaired. Recovery
 * logs each repair and each loss itself (lib/sf); this is the summary, so a
 * reader at INFO sees the slot's state change in one place. */
#include "sender/internal.h"

#include "log.h"

#include <inttypes.h>
#include <stdio.h>

#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (n < cap)                                                                               \
            n += (size_t) snprintf(buf + n, cap - n, __VA_ARGS__);                                 \
    } while (0)

/* "; repaired: ..." for every repair the report names, or nothing. */
static void repairs(const qsf_recovery_report *r, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    if (r->torn_bytes)
        PUT("; torn tail of %" PRIu64 " bytes cut", r->torn_bytes);
    if (r->aborted_frames_cut)
        PUT("; %" PRIu64 " frames of an interrupted flush removed (FSN %" PRId64 "..%" PRId64 ")",
            r->aborted_frames_cut, r->aborted_from_fsn, r->aborted_to_fsn);
    if (r->manifest_repaired)
        PUT("; manifest bounds corrected");
    if (r->watermark_ignored)
        PUT("; .ack-watermark above the published FSN ignored");
    if (r->self_sufficient)
        PUT("; dictionary unusable: frames carry their own");
    if (r->quarantined_files)
        PUT("; %u damaged files set aside", r->quarantined_files);
    if (r->debris_removed)
        PUT("; %u leftover files removed", r->debris_removed);
    if (r->losses)
        PUT("; %" PRIu64 " frames given up in %u damaged place%s", r->frames_lost, r->losses,
            r->losses == 1 ? "" : "s");
}

void qsf_sender_log_recovery(const qsf_sender *s) {
    const qsf_recovery_report *r = &s->rep;
    const char *slot = qsf_ring_slot_path(s->ring);
    if (!slot)
        return; /* memory mode: nothing was recovered */
    char fixed[768];
    repairs(r, fixed, sizeof fixed);
    int64_t unacked = r->published_fsn - r->acked_fsn;
    if (!r->frames && !fixed[0]) {
        QSF_LOGI("slot %s: empty", slot);
        return;
    }
    QSF_LOGI("slot %s recovered: %" PRIu64 " frames (%" PRIu64 " bytes) in %u segment%s, acked FSN "
             "%" PRId64 " of published %" PRId64 " (%" PRId64 " unacknowledged)%s",
             slot, r->frames, r->bytes, r->segments, r->segments == 1 ? "" : "s", r->acked_fsn,
             r->published_fsn, unacked, fixed);
}
