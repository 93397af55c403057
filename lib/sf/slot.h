/* Slot directory, naming, locks, markers and quarantine (docs/FORMAT.md §1, §5.1-§5.4, §5.6).
 *
 *   <sf_dir>/                         created if missing, one level only, 0700
 *     .slot-locks/<slot>.lock         logical lock (flock), + <slot>.lock.pid
 *     <slot>/                         0700; <slot> = sender_id
 *       .lock  .lock.pid              slot lock (flock LOCK_EX|LOCK_NB), "<pid>\n"
 *       .failed                       one-line reason, excludes the slot from scans
 *       <name>.corrupt[-N]            a quarantined file (the newest 8 are kept)
 *     <slot>.unreplayable-<N>/        a quarantined slot (N = 1..64), with .failed
 *
 * Every file inside a slot is opened relative to the slot's directory
 * descriptor with O_NOFOLLOW | O_CLOEXEC, so a symlink is refused, never
 * followed. Locks are flock (never fcntl): they belong to the open file
 * description and vanish when the process dies, including SIGKILL.
 *
 * Threads: a qsf_slot is used by its owner only.
 */
#ifndef QSF_SLOT_H
#define QSF_SLOT_H

#include "qsf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define QSF_SLOT_PATH_MAX 1024
#define QSF_SLOT_NAME_MAX 200 /* longest sender_id in bytes (docs/CONFIGURATION.md, "Keys") */

typedef struct qsf_slot {
    char sf_dir[QSF_SLOT_PATH_MAX];   /* as given (verbatim, no ~ expansion) */
    char name[QSF_SLOT_NAME_MAX + 1]; /* sender_id */
    char path[QSF_SLOT_PATH_MAX];     /* <sf_dir>/<name> */
    int sf_dirfd;                     /* O_DIRECTORY descriptor of sf_dir, -1 if closed */
    int dirfd;                        /* O_DIRECTORY descriptor of the slot, -1 if closed */
    int logical_lock_fd;              /* .slot-locks/<slot>.lock, -1 when not held */
    int lock_fd;                      /* <slot>/.lock, -1 when not held */
} qsf_slot;

/* 0 if id is a valid sender_id: 1..QSF_SLOT_NAME_MAX bytes of [A-Za-z0-9_-].
 * Otherwise QSF_E_INVAL naming the id and the first bad byte position. */
int qsf_sender_id_check(const char *id, qsf_errinfo *err);

/* Whether `name` is a slot directory name: a sender_id, or a sender_id followed
 * by ".unreplayable-<N>" (a quarantined slot). *quarantined says which. */
bool qsf_slot_dir_name(const char *name, bool *quarantined);

/* Validates sender_id (NULL = "default"), creates sf_dir (one level, 0700; its
 * parent must exist) and .slot-locks/, takes the logical lock, creates the slot
 * directory (0700) and takes the slot lock, writing both .pid files. The logical
 * lock stays held (release it with qsf_slot_unlock_logical once the transition
 * is over). Errors: QSF_E_INVAL (sender_id, path too long), QSF_E_LOCKED
 * ("sf slot already in use by another process [slot=<dir>, holder=pid=<n>]",
 * holder=unknown when no pid file), QSF_E_IO. On failure nothing is held. */
int qsf_slot_acquire(const char *sf_dir, const char *sender_id, qsf_slot *s, qsf_errinfo *err);

/* Takes the logical lock again (e.g. for the drained-close cleanup). */
int qsf_slot_lock_logical(qsf_slot *s, qsf_errinfo *err);

/* Releases the logical lock (closes its descriptor; the file stays). */
void qsf_slot_unlock_logical(qsf_slot *s);

/* Releases both locks and closes both directory descriptors (idempotent). Never
 * deletes .lock or .lock.pid. */
void qsf_slot_close(qsf_slot *s);

/* Generic flock helper: opens/creates <dir>/<name> (0600, O_NOFOLLOW), takes
 * LOCK_EX|LOCK_NB and rewrites <dir>/<name>.pid with "<pid>\n". `what` names the
 * slot in the contention message. */
int qsf_lock_file(int dirfd, const char *dir_path, const char *name, const char *what, int *fd_out,
                  qsf_errinfo *err);

/* Writes <slot>/.failed with `reason` and a newline (open, truncate, write,
 * fsync), then fsyncs the slot directory so the new entry is durable. */
/* Whether the directory `name` under dirfd (a symlink is not followed) holds
 * a .failed marker and any *.sfa file; -1 (errno set) if it cannot be listed.
 * The orphan scan asks it of each slot in sf_dir, and an adopting open asks it
 * again under the slot lock ("." of the slot): since the scan another drainer
 * may have given up on the slot or drained it. */
int qsf_orphan_markers_at(int dirfd, const char *name, bool *failed, bool *segments);

int qsf_slot_write_failed(int slot_dirfd, const char *slot_path, const char *reason,
                          qsf_errinfo *err);

/* Renames <slot>/<name> to <name>.corrupt, or to the first free
 * <name>.corrupt-<N> (N = 2..64) when earlier quarantines hold that name: an
 * older quarantined file is never replaced. First the oldest quarantined files
 * of the slot (by ctime) are removed so that, with this one, at most
 * QSF_MAX_QUARANTINED_KEPT remain (each removal logged; *pruned, if non-NULL,
 * is increased by their number): no sequence of crashes can fill the names.
 * If the rename fails the file is removed instead. Fault point
 * QSF_FP_QUARANTINE_RENAMED fires after the rename; the caller fsyncs the
 * directory. QSF_E_IO when both fail, or when all 64 names are taken (the
 * file is then left in place). */
int qsf_slot_quarantine_file(int slot_dirfd, const char *slot_path, const char *name,
                             uint32_t *pruned, qsf_errinfo *err);

/* Keeps a copy of <slot>/<name> as the first free <name>.corrupt[-N] (created
 * with O_EXCL, the same cap as above), fsynced, then fsyncs the directory:
 * the damaged bytes survive before recovery replaces the file. The name used
 * goes to copy. QSF_E_IO / QSF_E_NOSPC / QSF_E_DURABILITY; no partial copy is
 * left. */
int qsf_slot_quarantine_copy(int slot_dirfd, const char *slot_path, const char *name, char *copy,
                             size_t cap, uint32_t *pruned, qsf_errinfo *err);

/* Sets a whole slot aside (docs/FORMAT.md §5.6): with the logical lock held and the slot's own
 * descriptors closed by the caller (s->dirfd and s->lock_fd may still be open:
 * they are closed here after .failed is written), writes .failed with `reason`,
 * removes the oldest slots set aside before it beyond the newest
 * QSF_MAX_SET_ASIDE_KEPT - 1 (qsf_slot_prune_set_aside), renames
 * <sf_dir>/<slot> to <slot>.unreplayable-<N> (first free N in 1..64), fsyncs
 * sf_dir and copies the new path to out_path. The lock on the old .lock is
 * released; s->path is unchanged. Errors: QSF_E_IO (all 64 names taken, which
 * only set-aside slots in use or that cannot be removed can cause; rename
 * failure). */
int qsf_slot_quarantine_slot(qsf_slot *s, const char *reason, char *out_path, size_t cap,
                             qsf_errinfo *err);

/* A directory entry and its ctime (when it was quarantined or set aside). */
typedef struct qsf_aged_name {
    char name[256];
    struct timespec ctime;
} qsf_aged_name;

/* The entries of dirfd whose name match(name, arg) accepts and whose file
 * type (lstat, S_IFMT bits) is `type`, newest ctime first (ties: by name),
 * malloc'd into *out. -1 with errno when the listing fails. */
int qsf_list_newest_first(int dirfd, bool (*match)(const char *name, const void *arg),
                          const void *arg, unsigned type, qsf_aged_name **out, uint32_t *n);

/* At most this many slots set aside of one slot are kept (slot_aside.c). */
#define QSF_MAX_SET_ASIDE_KEPT 8

/* Keeps the newest `keep` slots set aside of slot s (<slot>.unreplayable-<N>
 * directories in sf_dir, by ctime) and removes the others, each logged; one
 * in use (its .lock held) or holding a subdirectory stays. Returns how many
 * were removed; a failure only logs. The caller fsyncs sf_dir. */
uint32_t qsf_slot_prune_set_aside(const qsf_slot *s, uint32_t keep);

/* The last FSN published when a slot was closed with frames in it, and the
 * segment holding it (slot_published.c, docs/FORMAT.md §5.7). */
typedef struct qsf_published_mark {
    int64_t fsn;        /* the last FSN published */
    int64_t base_seq;   /* baseSeq of the segment holding it */
    int64_t created_us; /* that segment's createdMicros: which segment it is */
    uint64_t end_off;   /* offset after that frame in it */
} qsf_published_mark;

/* Writes the mark into <slot>/.published-fsn (one record, no sync).
 * QSF_E_IO / QSF_E_NOSPC naming the file. */
int qsf_slot_note_published(const qsf_slot *s, const qsf_published_mark *m, qsf_errinfo *err);

/* Reads it: *present false when there is none or it is torn. QSF_E_IO when
 * the file cannot be read (never "absent" on an I/O error). */
int qsf_slot_read_published(int dirfd, const char *path, qsf_published_mark *m, bool *present,
                            qsf_errinfo *err);

/* Re-creates the slot directory after a quarantine and takes its lock again. */
int qsf_slot_recreate(qsf_slot *s, qsf_errinfo *err);

#endif
