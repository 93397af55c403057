/* Pages the kernel may have written back before a power cut, at the moment it
 * wrote them. shadow.h keeps what was synced and lets pages through from the
 * live file, which holds only their final state; a real writeback happens at
 * any moment after the last sync, and the process goes on writing. So the
 * child records intermediate states of its slot files in a store shared with
 * the parent (an anonymous MAP_SHARED region made before the fork, which
 * survives the SIGKILL):
 *
 *   - a sampler thread interrupts the producer with SIGUSR1 at random moments
 *     (5 to 100 microseconds apart), and the handler, running on the
 *     producer's own stack, copies pages of the mapped segment files as they
 *     are at that instruction: in the middle of a payload copy, after a
 *     frame's bytes but before its CRC, before a later frame overwrote the
 *     zeros past it; the child also samples after some of its appends (a
 *     flush's first frames in, its committing frame not yet);
 *   - every pwrite into a slot file first copies the pages it covers as they
 *     were just before it;
 *   - after the kill, moments inside a frame's write are built for frames
 *     appended after their file's last sync (wb_add_frame_moments), since
 *     the sampler seldom lands inside a frame's few stores.
 *
 * A page state recorded before its file's last sync completed is older than
 * what the sync made durable, so it is not a state the disk can hold: each
 * sync of a slot file and each unlink of one (whose inode number a later
 * file may get) is stamped on the same clock as the snapshots, and the
 * restore takes only snapshots taken after both. A sync the kill interrupted
 * disqualifies every snapshot of its file.
 *
 * Store (in memory, one per test binary):
 *
 *   clock        u64, atomic, stamps snapshots, syncs and unlinks
 *   files[256]   {ino, sync_begin, sync_end, dead}: the last stamps per inode
 *   snaps[4096]  {seq, ino, name, off, done, 4096 bytes}: one page of the file
 *                that had that inode and name, as it was at seq,
 *                a ring: the newest overwrite the oldest
 */
#ifndef QSF_WRITEBACK_H
#define QSF_WRITEBACK_H

#include <stddef.h>
#include <stdint.h>

typedef struct wb_stats {
    uint64_t snapshots;     /* complete snapshots in the store */
    uint64_t usable;        /* ... of them taken after their file's last sync
                               and its inode's last unlink */
    uint64_t frame_moments; /* moments inside a frame's write built (see below) */
    uint64_t from_mid;      /* units restored from a snapshot unlike both ends */
    uint64_t from_live;     /* units restored as the final live file has them */
    uint64_t lost;          /* units that differ somewhere, restored as synced */
} wb_stats;

/* Parent: makes the shared store (once) and empties it (before each child). */
void wb_reset(void);

/* Child, before its ring opens: routes fsync, fdatasync, mmap, munmap,
 * unlinkat and pwrite through the store (fsync and fdatasync also through
 * shadow.h, which the caller has initialised) and starts the sampler, which
 * interrupts the calling thread. */
void wb_child_start(const char *slot, unsigned seed);

/* Child: records the mapped pages now, as the sampler's signal would. */
void wb_sample_now(void);

/* Child: the append of FSN fsn (below 4096) begins now. */
void wb_note_append(int64_t fsn);

/* Parent, after the kill, before wb_restore: adds, for up to two frames of
 * each segment file of `slot` appended after the file's last sync, the
 * pages as they were at a moment inside that frame's write (marker and
 * length only, part of the payload, all of it, or all of it with the CRC,
 * and nothing past it yet), built from the live file and the shadow. */
void wb_add_frame_moments(const char *slot, const char *shadow, unsigned *seed, wb_stats *st);

/* Parent, after the kill: the slot becomes its shadow with every unit-sized
 * piece that differs in some state taken, with probability keep / 100, from
 * the live file (a third of the time) or one of the usable snapshots of the
 * file with the same name and inode, else left as synced. Adds what it did
 * to *st. */
void wb_restore(size_t unit, unsigned keep, unsigned *seed, wb_stats *st);

#endif
