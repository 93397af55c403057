/* One segment of the ring: a malloc'd buffer (memory mode) or a preallocated
 * file mapped MAP_SHARED read/write exactly its size (SF mode). Both backings
 * hold the same bytes (segfmt.h): a 24-byte SF01 header, then packed frames.
 *
 *   0        24                     published_off    append_off        size
 *   +--------+-------+-----+-------+----------------+--------+--------+
 *   | header | frame | ... | frame | frames of an   | (being | zeros  |
 *   |        |       |     |       | open flush     | written)        |
 *   +--------+-------+-----+-------+----------------+--------+--------+
 *            ^ published: complete, CRC last, visible to the reader
 *
 * A flush is published all at once (ring.h, qsf_ring_txn_*): its frames are
 * written (append_off, written_off move) but stay invisible until the flush
 * commits and published_off moves over all of them; an aborted flush's frames
 * are zeroed again. A segment is sealed (sealed_off = its final end) only when
 * the flush that filled it commits: the reader moves on to `next` only then,
 * never on the link alone, so it cannot skip frames of an open flush.
 *
 * Threads: the producer owns append_off/frame_count, stores written_off,
 * published_off and sealed_off with release; readers load them with acquire
 * and never read at or beyond published_off. The manager (periodic) or the
 * producer (append barrier) advances durable_off. pins is changed by the
 * reader and checked by the manager under the ring mutex before a segment is
 * unmapped. */
#ifndef QSF_SEGMENT_H
#define QSF_SEGMENT_H

#include "qsf.h"
#include "qsf_assert.h"
#include "sf/segfmt.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct qsf_segment {
    /* Written by the producer on every append, read by the reader: one line. */
    uint8_t *base;                  /* mapping or buffer, `size` bytes */
    uint64_t size;                  /* total bytes including the header */
    int64_t base_seq;               /* FSN of the first frame */
    uint64_t append_off;            /* producer-private end of written frames */
    uint64_t frame_count;           /* producer-private; final once sealed */
    _Atomic uint64_t published_off; /* release by producer, acquire by reader */
    _Atomic uint64_t sealed_off;    /* final end once sealed, UINT64_MAX before */
    _Atomic uint64_t written_off;   /* append_off for other threads (barriers) */
    _Atomic uint32_t epoch;         /* bumped when the segment is reused in place */
    bool early_woken;               /* producer woke the manager at 3/4 */
    /* Rarely written: chain link, pins, durability, file identity. */
    _Alignas(64) _Atomic(struct qsf_segment *) next; /* release-stored at rotation */
    _Atomic int pins;                                /* cursors positioned in this segment */
    _Atomic uint64_t durable_off;                    /* bytes below are on stable storage */
    int fd;                                          /* -1 in memory mode */
    uint64_t gen;                                    /* name counter; 0 for sf-initial.sfa */
    char name[QSF_SEG_NAME_MAX];                     /* file name inside the slot */
    bool unlinked;                                   /* trim: the file is gone, dir sync pending */
    uint64_t mlock_from, mlock_to; /* range pinned by qsf_seg_redirty, empty if none */
    uint64_t prefault_off;         /* manager: pages below are faulted in writable */
    bool header_durable;           /* the header as it is now is on stable storage */
    /* SF: the mapping has not touched the header's page. Atomic: the manager
     * may populate a spare an aborted flush gave back while the producer
     * syncs its header. */
    _Atomic bool header_cold;
    bool frames_by_pwrite; /* SF, `append` durability: see qsf_seg_write_file */
    uint64_t placed_cap;   /* producer: the room qsf_seg_place lent last */
} qsf_segment;

/* Memory mode: a zeroed buffer of `size` bytes with a header (flags 0). */
int qsf_seg_new_mem(uint64_t size, int64_t base_seq, qsf_segment **out, qsf_errinfo *err);

/* Memory mode: makes a trimmed buffer a fresh segment again (new header with
 * `base_seq`, nothing published). Old bytes past the header stay: memory mode
 * has no recovery and readers never look past the published offset. */
void qsf_seg_reuse_mem(qsf_segment *s, int64_t base_seq);

/* QSF_OK when the process may write a file of `size` bytes; otherwise
 * QSF_E_IO with errno EFBIG and a message naming the file size limit
 * (RLIMIT_FSIZE, `ulimit -f`), the segment size and `where` (the slot or
 * sf_dir). Preallocating a segment above that limit raises SIGXFSZ, which
 * kills the process unless it is ignored, so the limit is checked when a
 * segment is planned: at ring open and before each segment file is created.
 * Any thread. */
int qsf_seg_check_size_limit(uint64_t size, const char *where, qsf_errinfo *err);

/* SF mode: creates <dir>/<name> exclusively, preallocates `size` bytes, writes
 * the header (baseSeq, flags, createdMicros) with pwrite and maps the file
 * without touching the mapping (header_cold). The header is not synced (the
 * caller runs the barrier it needs). On failure the partial file is removed;
 * errors name the file.
 *
 * Why not through the mapping: the mapping asks for large folios
 * (MADV_HUGEPAGE), and a store into it makes the header's page part of a
 * 2 MiB folio whose every block is dirty. Syncing the header then wrote 2 MiB
 * of zeros to disk per segment: with the default 4 MiB segments, in memory
 * durability, most of what qsf wrote to disk at all. Written with pwrite the
 * header sits in a small folio of its own; the header sync writes that one
 * block and then drops it from the page cache (clean by then), so the first
 * fault through the mapping still makes one large folio of the first 2 MiB
 * (reading the header's block back). Small folios there instead would cost a
 * fault per 4 KiB page. */
int qsf_seg_create_file(int dirfd, const char *dir_path, const char *name, uint64_t gen,
                        uint64_t size, int64_t base_seq, uint8_t flags, qsf_segment **out,
                        qsf_errinfo *err);

/* SF mode: adopts a segment that recovery validated with pread: maps `fd`
 * (ownership passes to the segment on success) exactly `size` bytes, checks the
 * file size again after mapping, and positions the append offset at
 * `append_off` after `frame_count` frames. */
int qsf_seg_adopt(int fd, const char *dir_path, const char *name, uint64_t gen, uint64_t size,
                  int64_t base_seq, uint64_t frame_count, uint64_t append_off, qsf_segment **out,
                  qsf_errinfo *err);

/* SF mode, manager: faults the pages of [max(prefault_off, from), upto) in writable
 * (MADV_POPULATE_WRITE, best effort; blocks are already reserved), so the
 * producer's first store into each page takes no page fault. Done just ahead
 * of the producer in the ACTIVE segment, and in a spare only once its header
 * is final and synced: populated pages are dirty, and the header sync writes
 * every dirty page of the file. Clears header_cold. */
void qsf_seg_prefault(qsf_segment *s, uint64_t from, uint64_t upto);

/* Unmaps / frees and closes. NULL is a no-op. */
void qsf_seg_destroy(qsf_segment *s);

/* Largest payload a segment of `size` bytes holds. */
static inline uint64_t qsf_seg_max_payload(uint64_t size) {
    const uint64_t least = QSF_SFA_HEADER_SIZE + QSF_SFA_FRAME_OVERHEAD;
    return size > least ? size - least : 0;
}

/* Writes one frame in the order of docs/FORMAT.md §2.4 (payload, length,
 * CRC last) at append_off, without publishing it. Returns false, with nothing
 * written, when the frame does not fit. Producer only. */
bool qsf_seg_write(qsf_segment *s, const void *payload, uint32_t len);

/* qsf_seg_write for a segment with frames_by_pwrite (`append` durability):
 * the same bytes in the same order, marker and length, payload, CRC last,
 * written with pwrite instead of stores through the mapping. A store dirties
 * the whole folio it lands in (a page fault marks every block of it dirty),
 * and with large folios every flush's barrier then wrote up to 2 MiB,
 * however small the flush; a pwrite dirties the blocks it covers. 1 when
 * written, 0 when the frame does not fit (nothing written), -1 with err set
 * (QSF_E_NOSPC for ENOSPC/EDQUOT, else QSF_E_IO, retriable, naming the file and
 * offset; the frame's bytes are zeros again).
 * Producer only. */
int qsf_seg_write_file(qsf_segment *s, const void *payload, uint32_t len, const char *dir_path,
                       qsf_errinfo *err);

/* A frame written in two steps, its payload in place (no copy): where a
 * payload of up to `cap` bytes goes at append_off, or NULL when it does not
 * fit. The room's envelope is written first, as a copied frame's is: the
 * marker in the CRC field and `cap` as the length (docs/FORMAT.md §2.4), so
 * that a crash while the payload is built leaves a frame recovery knows was
 * being written, over the whole room: its bytes, whatever the rows hold (a
 * BINARY value may hold a stored frame), are not searched for frames.
 * qsf_seg_write_placed ends the frame: its length (`len` <= cap), then its
 * CRC, last. The encoder writes nothing past `len`, so the room past it
 * holds zeros, as past every frame. qsf_seg_unplace zeroes the room and its
 * envelope again when the frame is given up: past append_off a segment holds
 * zeros (qsf_seg_unwrite keeps that too). Producer only. */
uint8_t *qsf_seg_place(qsf_segment *s, uint64_t cap);
void qsf_seg_write_placed(qsf_segment *s, uint32_t len);
void qsf_seg_unplace(qsf_segment *s, uint64_t cap);

/* Drops a pin taken on s (a cursor's or a barrier's): never one not taken. */
static inline void qsf_seg_unpin(qsf_segment *s) {
    int was = atomic_fetch_sub(&s->pins, 1);
    qsf_assert(was > 0);
    (void) was;
}

/* Makes every written frame visible to the reader (release). Producer only. */
static inline void qsf_seg_publish(qsf_segment *s) {
    qsf_assert(s->append_off >= atomic_load_explicit(&s->published_off, memory_order_relaxed));
    atomic_store_explicit(&s->published_off, s->append_off, memory_order_release);
}

/* Publishes, then seals: no frame will ever follow; the reader may move on to
 * s->next once it has read up to here. Producer only. */
static inline void qsf_seg_seal(qsf_segment *s) {
    qsf_assert(s->append_off >= atomic_load_explicit(&s->published_off, memory_order_relaxed));
    qsf_seg_publish(s);
    atomic_store_explicit(&s->sealed_off, s->append_off, memory_order_release);
}

/* qsf_seg_write, then qsf_seg_publish (tests, tools). */
bool qsf_seg_append(qsf_segment *s, const void *payload, uint32_t len);

/* Zeroes the written, unpublished frames from `off` on (an aborted flush) and
 * moves append_off back to it; `frames` is how many frames that removes.
 * Producer only; never below published_off. Making the zeros durable is the
 * caller's (qsf_seg_sync_range, then qsf_seg_lower_durable). */
void qsf_seg_unwrite(qsf_segment *s, uint64_t off, uint64_t frames);

/* durable_off = min(durable_off, off): nothing at or above off is a frame. */
void qsf_seg_lower_durable(qsf_segment *s, uint64_t off);

/* Reuses the segment in place (ring_reuse.c): zeroes every frame, writes
 * `base_seq` into the header and starts over at offset 24, bumping the epoch
 * first so a reader positioned at the old end starts over too (it must have
 * read every frame). Producer only; the caller makes it durable. */
void qsf_seg_reset_in_place(qsf_segment *s, int64_t base_seq);

/* FSN the next frame appended to s would get. Producer only. */
static inline int64_t qsf_seg_end_fsn(const qsf_segment *s) {
    return s->base_seq + (int64_t) s->frame_count;
}

/* Rewrites baseSeq in the header (a different value clears header_durable):
 * with pwrite in SF mode (see qsf_seg_create_file), errors naming
 * <dir_path>/<name> and the offset. QSF_E_INTERNAL once a frame was written. */
int qsf_seg_rebase(qsf_segment *s, int64_t base_seq, const char *dir_path, qsf_errinfo *err);

/* msync(MS_SYNC) of the header page, then fdatasync; sets header_durable. A
 * header_cold segment's header page is then dropped from the page cache (see
 * qsf_seg_create_file), unless its frames go by pwrite (frames_by_pwrite):
 * the first of those would read the block back from the device, on the
 * producer's path, for a large folio no fault ever makes. No-op in memory
 * mode. */
int qsf_seg_sync_header(qsf_segment *s, const char *dir_path, qsf_errinfo *err);

/* msync(MS_SYNC) of the page-aligned range [from, to), then fdatasync; on
 * success durable_off becomes max(durable_off, to). No-op in memory mode. */
int qsf_seg_sync_range(qsf_segment *s, uint64_t from, uint64_t to, const char *dir_path,
                       qsf_errinfo *err);

/* After a failed sync: pins [from, to) in memory (mlock, best effort) and
 * stores the same byte values again through the mapping, one per page, so the
 * kernel writes the pages back on the next sync instead of treating them as
 * clean. Only bytes below the published offset are touched. */
void qsf_seg_redirty(qsf_segment *s, uint64_t from, uint64_t to);

/* Releases the mlock taken by qsf_seg_redirty, if any (best effort). */
void qsf_seg_unpin_memory(qsf_segment *s);

/* Frame at `off` (which must be below the published offset the caller
 * loaded): payload pointer and length; returns the offset of the next frame. */
static inline uint64_t qsf_seg_frame_at(const qsf_segment *s, uint64_t off, const uint8_t **payload,
                                        uint32_t *len) {
    const uint8_t *f = s->base + off;
    uint32_t n = qsf_sfa_frame_len(f);
    *payload = f + QSF_SFA_FRAME_AT_PAYLOAD;
    *len = n;
    return off + QSF_SFA_FRAME_OVERHEAD + n;
}

#endif
