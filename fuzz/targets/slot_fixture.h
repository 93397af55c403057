/* What the recovery fuzz targets share: a private scratch sf_dir, writing a
 * file into the slot, and the invariants every successful open must meet. */
#ifndef QSF_FUZZ_SLOT_FIXTURE_H
#define QSF_FUZZ_SLOT_FIXTURE_H

#include "sf/recover.h"

#include <stddef.h>

/* First call: logging off, syncs skipped, a scratch directory made (removed
 * at exit). Every call: an empty slot "default" under the returned sf_dir. */
const char *qsf_fz_fresh_slot(char slot[320]);

/* Writes buf as <dir>/<name>; aborts if that fails. */
void qsf_fz_write_file(const char *dir, const char *name, const void *buf, size_t len);

/* Aborts unless cond holds (the fuzzer's crash). */
void qsf_fz_check(int cond);

/* Invariants of a successful open (docs/FORMAT.md §6.9, §6.11, §6.12). */
void qsf_fz_check_result(const qsf_slot_recovered *r);

/* Opens the slot and checks what comes back: the result's invariants, or an
 * error that says what went wrong. */
void qsf_fz_open_and_check(const char *sfdir);

#endif
