/* The source positions of a slot in `qsf slot inspect` (slot_srcpos.c). */
#ifndef QSF_TOOL_SLOT_SRCPOS_H
#define QSF_TOOL_SLOT_SRCPOS_H

#include "json.h"
#include "sfops/inspect.h"
#include "sf/srcpos.h"

void slot_print_source_positions(const char *path, const qsf_slot_inspection *in);
void slot_json_source_positions(json *j, const char *path, const qsf_slot_inspection *in);

/* `qsf slot dump`: every record of the slot's log, to show each position
 * beside the frame whose FSN it carries. */
typedef struct slot_positions {
    qsf_srcpos_rec *recs;
    uint32_t n;
} slot_positions;

void slot_positions_load(const char *path, slot_positions *p);
void slot_positions_free(slot_positions *p);
/* The newest record at exactly this FSN, or NULL. */
const qsf_srcpos_rec *slot_positions_at(const slot_positions *p, int64_t fsn);
void slot_print_position(const qsf_srcpos_rec *r);
void slot_json_position(json *j, const qsf_srcpos_rec *r);

#endif
