/* The source positions of a slot in `qsf slot inspect` and `dump`
 * (slot_srcpos.c). */
#ifndef QSF_TOOL_SLOT_SRCPOS_H
#define QSF_TOOL_SLOT_SRCPOS_H

#include "json.h"
#include "sfops/inspect.h"
#include "sf/srcpos.h"

void slot_print_source_positions(const char *path, const qsf_slot_inspection *in);
void slot_json_source_positions(json *j, const char *path, const qsf_slot_inspection *in);

/* `qsf slot dump`: the newest record an open keeps at exactly this FSN
 * (in->srcpos), or NULL: shown beside the frame it was committed with. */
const qsf_srcpos_rec *slot_positions_at(const qsf_slot_inspection *in, int64_t fsn);
void slot_print_position(const qsf_srcpos_rec *r);
void slot_json_position(json *j, const qsf_srcpos_rec *r);

#endif
