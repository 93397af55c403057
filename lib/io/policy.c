/* Status/category/policy table and the poison-frame detector (docs/PROTOCOL.md §9). */
#include "io/policy.h"

#include "os/os.h"
#include "qsf.h"

int qsf_status_category(int status) {
    switch (status) {
    case 0x03:
        return QSF_CAT_SCHEMA_MISMATCH;
    case 0x05:
        return QSF_CAT_PARSE_ERROR;
    case 0x06:
        return QSF_CAT_INTERNAL_ERROR;
    case 0x08:
        return QSF_CAT_SECURITY_ERROR;
    case 0x09:
        return QSF_CAT_WRITE_ERROR;
    case 0x0C:
        return QSF_CAT_NOT_WRITABLE;
    case 0x0D:
        return QSF_CAT_DICTIONARY_GAP;
    default:
        return QSF_CAT_UNKNOWN; /* fail open */
    }
}

int qsf_category_policy(int category) {
    switch (category) {
    case QSF_CAT_SCHEMA_MISMATCH:
    case QSF_CAT_PARSE_ERROR:
    case QSF_CAT_SECURITY_ERROR:
    case QSF_CAT_PROTOCOL_VIOLATION:
        return QSF_POLICY_TERMINAL;
    case QSF_CAT_NOT_WRITABLE:
        return QSF_POLICY_RETRIABLE_OTHER;
    case QSF_CAT_DATA_LOSS:
        return QSF_POLICY_ABANDONED;
    default:
        return QSF_POLICY_RETRIABLE;
    }
}

void qsf_poison_init(qsf_poison *p, int max_strikes, int64_t window_ms) {
    p->max_strikes = max_strikes < 1 ? 1 : max_strikes;
    p->window_ms = window_ms < 0 ? 0 : window_ms;
    qsf_poison_clear(p);
    p->first_ns = 0;
}

static bool strike(qsf_poison *p, int64_t fsn, bool loss, bool accepted) {
    int64_t now = QSF_OS->mono_ns();
    if (fsn != p->suspect) {
        p->suspect = fsn; /* a different frame restarts the count and the clock */
        p->strikes = p->losses = 0;
        p->accepted = false;
        p->first_ns = now;
    }
    p->strikes++;
    p->losses += loss;
    p->accepted |= accepted;
    return p->accepted && p->strikes >= p->max_strikes &&
           now - p->first_ns >= p->window_ms * 1000000;
}

bool qsf_poison_strike(qsf_poison *p, int64_t fsn) {
    return strike(p, fsn, false, true);
}

bool qsf_poison_strike_loss(qsf_poison *p, int64_t fsn, bool accepted) {
    return strike(p, fsn, true, accepted);
}

void qsf_poison_clear(qsf_poison *p) {
    p->suspect = -1;
    p->strikes = p->losses = 0;
    p->accepted = false;
}

void qsf_poison_ok(qsf_poison *p, int64_t ok_fsn) {
    if (p->suspect >= 0 && ok_fsn >= p->suspect)
        qsf_poison_clear(p);
}
