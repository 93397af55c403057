/* Host-loss simulation for the crash tests. A child process routes fsync and
 * fdatasync through shadow_fsync / shadow_fdatasync: when a sync of a file in
 * the slot succeeds, the file's contents are copied into a shadow directory;
 * when the slot directory is synced, names unlinked since disappear from the
 * shadow and new names appear with zeros (only their preallocation is
 * durable). After the child is killed, the parent replaces the slot with its
 * durable state:
 *
 *   shadow_restore        every page written after its file's last sync is lost
 *   shadow_restore_mixed  each such page (or block) is lost or kept at random,
 *                         as when the kernel had written some of them back
 *                         before the power went (the live file holds what was
 *                         written, the shadow what was synced)
 *
 * Files named .lock and .lock.pid are left alone. */
#ifndef QSF_SHADOW_H
#define QSF_SHADOW_H

#include <stddef.h>
#include <stdint.h>

/* The slot directory and its shadow: the child calls it before any sync (it
 * creates the shadow), and the parent before restoring. */
void shadow_init(const char *slot, const char *shadow);

int shadow_fsync(int fd);
int shadow_fdatasync(int fd);

/* A rename inside the slot: it becomes durable with the next directory sync,
 * which then moves the shadow copy (what was synced under the old name) to
 * the new name, over whatever was durable there. Until then both names keep
 * their durable contents. */
int shadow_renameat(int olddir, const char *oldp, int newdir, const char *newp);

/* The slot becomes exactly its shadow. */
void shadow_restore(void);

/* The slot becomes its shadow, with every `unit`-byte piece of a file that
 * differs from the live file taken from the live file with probability
 * keep_percent / 100 (rand_r(seed)). */
void shadow_restore_mixed(size_t unit, unsigned keep_percent, unsigned *seed);

/* The slot becomes its shadow, each `unit`-byte piece of a file that has a
 * live copy as pick(user, name, live inode, offset, durable, live, length) leaves
 * the durable bytes (it may overwrite them). */
typedef void (*shadow_pick_fn)(void *user, const char *name, uint64_t ino, size_t off, uint8_t *dur,
                               const uint8_t *live, size_t k);
void shadow_restore_picked(size_t unit, shadow_pick_fn pick, void *user);

#endif
