/* The source positions of a slot in `qsf slot inspect` (slot_srcpos.c). */
#ifndef QSF_TOOL_SLOT_SRCPOS_H
#define QSF_TOOL_SLOT_SRCPOS_H

#include "json.h"
#include "sf/inspect.h"

void slot_print_source_positions(const char *path, const qsf_slot_inspection *in);
void slot_json_source_positions(json *j, const char *path, const qsf_slot_inspection *in);

#endif
