/* Whether an open of a slot can do what its recovery plan needs of the file
 * system, for the operator tools (sfops/inspect.h): `qsf slot verify`, `inspect`
 * and `drain --dry-run` take their verdict from the inspection, which asks
 * this after the dry run, so they never predict an open that then fails.
 * Nothing is created, locked or changed. What an open needs:
 *
 *   <sf_dir>/                     opened (a symlink typed by the operator is followed)
 *     .slot-locks/                a directory, not a symlink; writable if
 *       <slot>.lock               ... this is absent; else a regular file, one
 *                                 link, readable and writable
 *     <slot>/                     a directory, not a symlink; writable
 *       .lock                     absent, or a regular file, one link, read-write
 *       .ack-watermark, sf-manifest.bin, .symbol-dict, the active segment:
 *                                 when present, regular, one link, read-write
 *     <slot>.unreplayable-<N>     one N in 1..64 free, when the plan sets it aside
 *   every segment the plan rewrites: <name>.corrupt-64 fits in a file name
 *
 * Writable and readable mean for this process's effective user (an operator
 * running as another user than the sender gets the sender's verdict only if
 * both may write). */
#ifndef QSF_OPENABLE_H
#define QSF_OPENABLE_H

#include "sfops/inspect.h"

/* Checks the slot at slot_path against what an open of it needs, given the
 * inspection's plan (in: verdict QSF_OK, files listed). The first need that is
 * not met becomes in->verdict (QSF_E_IO) and in->verdict_msg, naming the file
 * and why; otherwise in is unchanged. */
void qsf_slot_open_verdict(const char *slot_path, qsf_slot_inspection *in);

#endif
