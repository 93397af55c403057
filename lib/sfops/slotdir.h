/* What a directory is to qsf, for the operator tools (`qsf slot ...`): a slot,
 * a drained slot, a group root (sf_dir) or none of these; and the slots of a
 * group root. Read only: nothing is created, locked or changed.
 *
 *   <sf_dir>/                  group root: holds .slot-locks/ or slot directories
 *     .slot-locks/
 *     <slot>/                  slot: a *.sfa, sf-manifest.bin, .ack-watermark or
 *                              .symbol-dict; drained slot: only .lock (and
 *                              .lock.pid, .failed, .rejected, quarantined files)
 *     <slot>.unreplayable-<N>/ a slot set aside by recovery (also a slot)
 */
#ifndef QSF_SLOTDIR_H
#define QSF_SLOTDIR_H

#include "qsf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum qsf_dir_kind {
    QSF_DIR_SLOT = 0,       /* holds slot data files */
    QSF_DIR_DRAINED = 1,    /* a slot with no data files left (.lock only) */
    QSF_DIR_GROUP_ROOT = 2, /* an sf_dir: .slot-locks/ or slot subdirectories */
    QSF_DIR_NOT_SLOT = 3,   /* none of these */
};

/* Classifies the directory at path (a symlink to a directory is followed, as
 * for any path an operator types). *slots gets the number of slot and drained
 * slot subdirectories (0 unless a group root). QSF_E_IO when it cannot be
 * opened or listed. */
int qsf_dir_kind(const char *path, int *kind, uint32_t *slots, qsf_errinfo *err);

/* The slot and drained-slot subdirectories of the group root sf_dir, sorted by
 * name: *names is a malloc'd array of malloc'd strings (free with
 * qsf_dir_names_free, os/dirlist.h). QSF_E_IO when sf_dir cannot be listed,
 * QSF_E_NOMEM; nothing listed then. */
int qsf_group_slots(const char *sf_dir, char ***names, uint32_t *n, qsf_errinfo *err);

/* The first line of the small file <slot_path>/<name> (a marker: .failed,
 * .lock.pid) into buf (at most cap - 1 bytes, NUL-terminated, the newline
 * cut), opened through the one regular-file opener (sf/sfio.h): a FIFO, a
 * symlink, a directory or a hard link under that name is refused at once,
 * never waited on. Returns 1 when read, 0 when there is no such entry, -1
 * (errno set, buf holds why) when the entry is there but is no readable
 * regular file. */
int qsf_slot_read_line(const char *slot_path, const char *name, char *buf, size_t cap);

#endif
