/* The source positions of a slot as an open would report them, for the
 * operator tools (`qsf slot inspect`, `dump`): the records of
 * .source-positions (docs/FORMAT.md §4a) selected by the open's own rule
 * (qsf_srcpos_select, sf/srcpos.h), with recovery's dry-run plan standing in
 * for the ring: a record's flush survived unless its FSN lies in a span the
 * plan gives up or the frame recovery keeps at its FSN is stored with another
 * CRC (docs/DURABILITY.md §9a). Reads only. */
#ifndef QSF_SFOPS_SRCPOS_VIEW_H
#define QSF_SFOPS_SRCPOS_VIEW_H

#include "qsf.h"
#include "sf/recover_view.h"
#include "sf/srcpos.h"

#include <stdint.h>

/* Fills *out (free it with qsf_srcpos_view_free) for the slot at slot_path,
 * whose plan v was made (qsf_rv_plan) when `planned`: publishedFsn and
 * ackedFsn are what an open would start with. Without a plan (no live
 * segment, or an open that fails before planning) no frame is checked.
 * Errors: QSF_E_IO (the file or a segment cannot be read), QSF_E_NOMEM. */
int qsf_slot_srcpos_view(qsf_rv *v, bool planned, const char *slot_path, int64_t published,
                         int64_t acked, qsf_srcpos_view *out, qsf_errinfo *err);

#endif
