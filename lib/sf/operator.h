/* Opening a slot for an operator (`qsf slot drain`, `qsf slot set-aside`): by
 * its path, which may be a quarantined <slot>.unreplayable-<N> or a slot
 * marked .failed, with the locks every open takes (docs/FORMAT.md §5) and the full
 * recovery of any open. Unlike a sender's open it never creates a slot, never
 * moves an unreplayable one aside and never writes .failed: it says why and
 * leaves the slot where it is. */
#ifndef QSF_OPERATOR_H
#define QSF_OPERATOR_H

#include "sf/recover.h"
#include "sf/slot.h"

/* Takes the logical lock (<parent>/.slot-locks/<name>.lock), then
 * <slot>/.lock, of the existing slot directory slot_path, whose name must be
 * a sender_id or <sender_id>.unreplayable-<N>. Errors: QSF_E_INVAL (a name
 * that is no slot's, a path too long), QSF_E_IO (no such directory, a
 * symlink), QSF_E_LOCKED (names the holder's pid). On failure nothing is
 * held. */
int qsf_slot_acquire_path(const char *slot_path, qsf_slot *s, qsf_errinfo *err);

/* Locks and recovers the slot at slot_path (qsf_slot_open_formed otherwise).
 * Errors: those of qsf_slot_acquire_path and of recovery; QSF_E_INVAL when
 * the slot holds no segment (nothing to open; nothing is created);
 * QSF_E_CORRUPT when it cannot be replayed (the reason; nothing is moved or
 * marked, though recovery's repairs may have been made). */
int qsf_slot_open_operator(const char *slot_path, int durability, uint64_t segment_bytes,
                           int wm_form, qsf_slot_recovered *out, qsf_errinfo *err);

#endif
