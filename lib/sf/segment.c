/* Segment objects for both backings (see segment.h). */
#include "sf/segment.h"
#include "qsf_assert.h"

#include "bytes.h"
#include "err.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/sfa.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Cached once; the manager and the spare thread both ask, so the cache is
 * atomic (every thread computes the same value, whichever stores it). */
static uint64_t page_size(void) {
    static _Atomic uint64_t ps;
    uint64_t v = atomic_load_explicit(&ps, memory_order_relaxed);
    if (!v) {
        v = (uint64_t) sysconf(_SC_PAGESIZE);
        atomic_store_explicit(&ps, v, memory_order_relaxed);
    }
    return v;
}

static void write_header(uint8_t *h, int64_t base_seq, uint8_t flags) {
    qsf_sfa_header_encode(h, flags, base_seq, QSF_OS->wall_us());
}

static qsf_segment *seg_alloc(uint64_t size, int64_t base_seq) {
    /* Cache-line aligned: the hot producer/reader fields share one line. */
    qsf_segment *s = aligned_alloc(64, (sizeof *s + 63) & ~(size_t) 63);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    s->size = size;
    s->fd = -1;
    s->base_seq = base_seq;
    s->append_off = QSF_SFA_HEADER_SIZE;
    atomic_init(&s->published_off, QSF_SFA_HEADER_SIZE);
    atomic_init(&s->sealed_off, UINT64_MAX);
    atomic_init(&s->written_off, QSF_SFA_HEADER_SIZE);
    atomic_init(&s->durable_off, QSF_SFA_HEADER_SIZE);
    atomic_init(&s->pins, 0);
    atomic_init(&s->next, NULL);
    return s;
}

/* Writes one byte per page so the pages are faulted in here (on the manager
 * thread), not on the producer's first store. */
static void touch_pages(uint8_t *buf, uint64_t size) {
    volatile uint8_t *v = buf;
    for (uint64_t off = 0; off < size; off += page_size())
        v[off] = 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* A private anonymous mapping, populated up front. One madvise populates every
 * page in the kernel, far cheaper than a page-fault exception per 4 KiB page
 * (which a paravirtualised guest pays dearly); transparent huge pages, where
 * the system allows them on request, cut the page count itself. Older kernels
 * without MADV_POPULATE_WRITE fall back to touching each page. Deliberately
 * not QSF_OS->mmap: memory mode has no mapping fault points to shift. */
static uint8_t *mem_alloc(uint64_t size) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    (void) madvise(p, size, MADV_HUGEPAGE);
    if (madvise(p, size, MADV_POPULATE_WRITE) != 0)
        touch_pages(p, size);
    return p;
}

int qsf_seg_new_mem(uint64_t size, int64_t base_seq, qsf_segment **out, qsf_errinfo *err) {
    qsf_segment *s = seg_alloc(size, base_seq);
    uint8_t *buf = s ? mem_alloc(size) : NULL;
    if (!buf) {
        free(s);
        return qsf_err_set(err, QSF_E_NOMEM, QSF_ERRF_RETRIABLE, ENOMEM,
                           "cannot allocate a %" PRIu64 "-byte memory segment", size);
    }
    s->base = buf;
    write_header(buf, base_seq, 0);
    *out = s;
    return QSF_OK;
}

/* Maps fd MAP_SHARED read/write, exactly `size` bytes, and checks that the file
 * still has that size (a shrunk file would SIGBUS on a later store). */
static int map_file(qsf_segment *s, int fd, const char *dir_path, qsf_errinfo *err) {
    void *p = QSF_OS->mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        return qsf_err_set(err, qsf_code_from_errno(e) == QSF_E_NOMEM ? QSF_E_NOMEM : QSF_E_IO, 0,
                           e, "cannot map %s/%s: %s", dir_path, s->name, strerror(e));
    }
    struct stat st;
    int rc = QSF_OS->fstat(fd, &st);
    if (rc != 0 || (uint64_t) st.st_size != s->size) {
        int e = rc != 0 ? errno : 0;
        QSF_OS->munmap(p, s->size);
        return qsf_err_set(err, QSF_E_IO, 0, e,
                           "segment %s/%s changed size after mapping (expected %" PRIu64 " bytes)",
                           dir_path, s->name, s->size);
    }
    /* Large folios: on virtual machines a user-space page fault costs
     * microseconds, and a segment written 4 KiB page by page pays one per page
     * (measured: stores through a fresh mapping 0.3 GB/s, with huge pages
     * 4.7-5.5 GB/s). A hint only: kernels or filesystems without large folios
     * ignore it. */
    (void) madvise(p, s->size, MADV_HUGEPAGE);
    s->base = p;
    s->fd = fd;
    return QSF_OK;
}

void qsf_seg_reuse_mem(qsf_segment *s, int64_t base_seq) {
    s->base_seq = base_seq;
    s->append_off = QSF_SFA_HEADER_SIZE;
    s->frame_count = 0;
    s->early_woken = false;
    atomic_store(&s->published_off, QSF_SFA_HEADER_SIZE);
    atomic_store(&s->sealed_off, UINT64_MAX);
    atomic_store(&s->written_off, QSF_SFA_HEADER_SIZE);
    atomic_store(&s->durable_off, QSF_SFA_HEADER_SIZE);
    atomic_store(&s->pins, 0);
    atomic_store(&s->next, NULL);
    write_header(s->base, base_seq, 0);
}

#define PREFAULT_CHUNK ((uint64_t) 64 << 10)

/* Populates the page-aligned [from, to) writable, then loads one byte per page:
 * on some virtual machines the first access to a fresh page costs
 * microseconds even after the kernel mapped it; pay that here too.
 * The loads may meet the producer's stores to the same page; their value is
 * never used, so the race is benign and ThreadSanitizer is told to skip it. */
__attribute__((no_sanitize_thread)) static void populate(uint8_t *base, uint64_t from,
                                                         uint64_t to) {
#ifdef MADV_POPULATE_WRITE
    (void) madvise(base + from, to - from, MADV_POPULATE_WRITE);
#endif
    volatile const uint8_t *v = base;
    uint8_t sink = 0;
    for (uint64_t off = from; off < to; off += page_size())
        sink ^= v[off];
    (void) sink;
}

void qsf_seg_prefault(qsf_segment *s, uint64_t from, uint64_t upto) {
    uint64_t ps = page_size();
    uint64_t end = s->size & ~(ps - 1);
    if (s->fd < 0)
        return;
    atomic_store_explicit(&s->header_cold, false, memory_order_relaxed);
    upto = upto >= end ? end : (upto + ps - 1) & ~(ps - 1);
    if (s->prefault_off < (from & ~(ps - 1)))
        s->prefault_off = from & ~(ps - 1); /* the producer got ahead: skip */
    /* Small steps, so the producer never overtakes a populated-but-untouched
     * range. */
    while (s->prefault_off < upto) {
        uint64_t to =
            upto - s->prefault_off > PREFAULT_CHUNK ? s->prefault_off + PREFAULT_CHUNK : upto;
        populate(s->base, s->prefault_off, to);
        s->prefault_off = to;
    }
}

int qsf_seg_check_size_limit(uint64_t size, const char *where, qsf_errinfo *err) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        (uint64_t) rl.rlim_cur >= size)
        return QSF_OK;
    return qsf_err_set(err, QSF_E_IO, 0, EFBIG,
                       "%s: the file size limit (RLIMIT_FSIZE, ulimit -f) is %llu bytes, below "
                       "the segment size of %llu bytes (sf_max_segment_bytes): raise the limit "
                       "or lower sf_max_segment_bytes",
                       where, (unsigned long long) rl.rlim_cur, (unsigned long long) size);
}

int qsf_seg_create_file(int dirfd, const char *dir_path, const char *name, uint64_t gen,
                        uint64_t size, int64_t base_seq, uint8_t flags, qsf_segment **out,
                        qsf_errinfo *err) {
    int lim = qsf_seg_check_size_limit(size, dir_path, err);
    if (lim != QSF_OK)
        return lim;
    qsf_segment *s = seg_alloc(size, base_seq);
    if (!s)
        return qsf_err_set(err, QSF_E_NOMEM, QSF_ERRF_RETRIABLE, ENOMEM, "out of memory");
    snprintf(s->name, sizeof s->name, "%s", name);
    s->gen = gen;
    int fd;
    int rc = qsf_create_prealloc(dirfd, dir_path, name, size, &fd, err);
    if (rc == QSF_OK) {
        uint8_t h[QSF_SFA_HEADER_SIZE];
        write_header(h, base_seq, flags);
        rc = qsf_write_at(fd, h, sizeof h, 0, dir_path, name, err);
        if (rc == QSF_OK)
            rc = map_file(s, fd, dir_path, err);
        if (rc != QSF_OK) {
            QSF_OS->close(fd);
            QSF_OS->unlinkat(dirfd, name, 0);
        }
    }
    if (rc != QSF_OK) {
        free(s);
        return rc;
    }
    atomic_store_explicit(&s->header_cold, true, memory_order_relaxed);
    *out = s;
    return QSF_OK;
}

int qsf_seg_adopt(int fd, const char *dir_path, const char *name, uint64_t gen, uint64_t size,
                  int64_t base_seq, uint64_t frame_count, uint64_t append_off, qsf_segment **out,
                  qsf_errinfo *err) {
    if (size < QSF_SFA_MIN_SEGMENT || append_off < QSF_SFA_HEADER_SIZE || append_off > size)
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0,
                           "cannot adopt %s/%s: end offset %" PRIu64 " outside %" PRIu64 " bytes",
                           dir_path, name, append_off, size);
    qsf_segment *s = seg_alloc(size, base_seq);
    if (!s)
        return qsf_err_set(err, QSF_E_NOMEM, 0, ENOMEM, "out of memory");
    snprintf(s->name, sizeof s->name, "%s", name);
    s->gen = gen;
    int rc = map_file(s, fd, dir_path, err);
    if (rc != QSF_OK) {
        free(s);
        return rc;
    }
    s->frame_count = frame_count;
    s->append_off = append_off;
    atomic_store(&s->published_off, append_off);
    atomic_store(&s->written_off, append_off);
    *out = s;
    return QSF_OK;
}

void qsf_seg_destroy(qsf_segment *s) {
    if (!s)
        return;
    if (s->fd >= 0) {
        QSF_OS->munmap(s->base, s->size);
        QSF_OS->close(s->fd);
    } else if (s->base) {
        munmap(s->base, s->size);
    }
    free(s);
}

/* Where a payload of up to cap bytes goes at append_off, or NULL when it does
 * not fit or its length could not be stored (top bit set). */
static uint8_t *room_for(qsf_segment *s, uint64_t cap) {
    uint64_t off = s->append_off;
    if (cap > INT32_MAX || cap > s->size - off || s->size - off - cap < QSF_SFA_FRAME_OVERHEAD)
        return NULL;
    return s->base + off + QSF_SFA_FRAME_AT_PAYLOAD;
}

/* The envelope of a frame being written (docs/FORMAT.md §2.4): the marker in
 * the CRC field, then `len`. Before any of its payload. */
static void mark_writing(uint8_t *payload, uint32_t len) {
    uint8_t *f = payload - QSF_SFA_FRAME_AT_PAYLOAD;
    qsf_put_u32(f + QSF_SFA_FRAME_AT_CRC, QSF_SFA_FRAME_WRITING);
    qsf_put_u32(f + QSF_SFA_FRAME_AT_LEN, len);
}

uint8_t *qsf_seg_place(qsf_segment *s, uint64_t cap) {
    uint8_t *p = room_for(s, cap);
    if (p)
        mark_writing(p, (uint32_t) cap);
    s->placed_cap = p ? cap : 0;
    return p;
}

#ifdef QSF_ASSERTS
/* Whether the placed room past a frame of len bytes holds zeros still: the
 * encoder wrote nothing past its frame, which a crash before the CRC would
 * otherwise leave behind the frame's length for salvage to search. */
static bool room_tail_zero(const qsf_segment *s, uint32_t len) {
    const uint8_t *p = s->base + s->append_off + QSF_SFA_FRAME_AT_PAYLOAD;
    for (uint64_t i = len; i < s->placed_cap; i++)
        if (p[i])
            return false;
    return true;
}
#endif

/* The frame at off, its CRC stored, is written: the producer's offset moves
 * past it (not published yet). */
static void frame_written(qsf_segment *s, uint64_t off, uint32_t len) {
    qsf_assert(atomic_load(&s->sealed_off) == UINT64_MAX); /* sealed: no frame follows */
    qsf_assert(off + QSF_SFA_FRAME_OVERHEAD + len <= s->size);
    (void) QSF_FAULT_POINT(QSF_FP_FRAME_CRC_WRITTEN);
    s->append_off = off + QSF_SFA_FRAME_OVERHEAD + len;
    s->frame_count++;
    atomic_store_explicit(&s->written_off, s->append_off, memory_order_release);
}

/* The frame at append_off, its envelope marked and its payload in, ends: its
 * length, then its CRC. */
static void seal_frame(qsf_segment *s, uint32_t len) {
    uint64_t off = s->append_off;
    uint8_t *f = s->base + off;
    qsf_put_u32(f + QSF_SFA_FRAME_AT_LEN, len);
    (void) QSF_FAULT_POINT(QSF_FP_FRAME_PAYLOAD_WRITTEN);
    /* The CRC is the commit marker: written last, after length and payload.
     * The one CRC of every frame writer (the pwrite path below, recovery's
     * rewrite through qsf_sfa_frame_encode). */
    qsf_put_u32(f + QSF_SFA_FRAME_AT_CRC, qsf_sfa_frame_crc(f + QSF_SFA_FRAME_AT_PAYLOAD, len));
    frame_written(s, off, len);
}

void qsf_seg_write_placed(qsf_segment *s, uint32_t len) {
    /* the room qsf_seg_place lent; a segment file holds zeros past its
     * frames (a reused memory buffer keeps its old bytes: no recovery reads
     * them) */
    qsf_assert(len <= s->placed_cap && (s->fd < 0 || room_tail_zero(s, len)));
    seal_frame(s, len);
}

void qsf_seg_unplace(qsf_segment *s, uint64_t cap) {
    uint8_t *p = room_for(s, cap);
    if (p) /* the room, envelope first: zeros again */
        memset(p - QSF_SFA_FRAME_AT_PAYLOAD, 0, QSF_SFA_FRAME_AT_PAYLOAD + cap);
}

bool qsf_seg_write(qsf_segment *s, const void *payload, uint32_t len) {
    uint8_t *p = room_for(s, len);
    if (!p)
        return false;
    /* A crash inside the copy leaves a frame recovery knows was being written:
     * the payload's bytes, whatever they hold, are not looked into for frames. */
    mark_writing(p, len);
    memcpy(p, payload, len);
    seal_frame(s, len);
    return true;
}

/* The frame's bytes [off, off + n) hold nothing of it any more: zeros again, as
 * past append_off (through the mapping, which cannot fail). */
static void forget_frame(qsf_segment *s, uint64_t off, uint64_t n) {
    memset(s->base + off, 0, n);
}

/* Stores the CRC of the frame at off. Through the file, unless the 4 bytes
 * straddle a page: a kill between the two pages of one pwrite could leave a
 * field that is neither the marker nor the CRC, and salvage would then look
 * for frames inside the payload (docs/FORMAT.md §2.4). A single store cannot
 * be cut; it costs that page's folio being dirtied whole, for 3 frames in
 * 4096. */
static int store_crc(qsf_segment *s, uint64_t off, uint32_t crc) {
    uint8_t b[4];
    qsf_put_u32(b, crc);
    if ((off & (page_size() - 1)) > page_size() - sizeof b) {
        memcpy(s->base + off, b, sizeof b);
        return 0;
    }
    return qsf_pwrite_full(s->fd, b, sizeof b, (off_t) off);
}

int qsf_seg_write_file(qsf_segment *s, const void *payload, uint32_t len, const char *dir_path,
                       qsf_errinfo *err) {
    uint64_t off = s->append_off;
    if (!room_for(s, len)) /* not qsf_seg_place: it stores the envelope through the mapping */
        return 0;
    uint8_t env[QSF_SFA_FRAME_OVERHEAD];
    qsf_put_u32(env + QSF_SFA_FRAME_AT_CRC, QSF_SFA_FRAME_WRITING);
    qsf_put_u32(env + QSF_SFA_FRAME_AT_LEN, len);
    int bad = qsf_pwrite_full(s->fd, env, sizeof env, (off_t) off);
    if (!bad)
        bad = qsf_pwrite_full(s->fd, payload, len, (off_t) (off + sizeof env));
    if (!bad) {
        (void) QSF_FAULT_POINT(QSF_FP_FRAME_PAYLOAD_WRITTEN);
        bad = store_crc(s, off, qsf_sfa_frame_crc(payload, len));
    }
    if (bad) {
        int e = errno;
        forget_frame(s, off, QSF_SFA_FRAME_OVERHEAD + (uint64_t) len);
        /* Retriable, as a failed barrier is: the flush is undone, its rows
         * stay buffered, and the same flush may succeed once the disk has
         * room again. */
        int code = qsf_code_from_errno(e) == QSF_E_NOSPC ? QSF_E_NOSPC : QSF_E_IO;
        qsf_err_set(err, code, QSF_ERRF_RETRIABLE, e,
                    "cannot write a frame of %u bytes into %s/%s at offset %" PRIu64 ": %s", len,
                    dir_path, s->name, off, strerror(e));
        return -1;
    }
    frame_written(s, off, len);
    return 1;
}

bool qsf_seg_append(qsf_segment *s, const void *payload, uint32_t len) {
    if (!qsf_seg_write(s, payload, len))
        return false;
    qsf_seg_publish(s);
    return true;
}

/* Zeroes [from, to) from the end, a page at a time: a process killed midway
 * leaves intact frames only as a prefix, and the last frame (the flush's
 * committing one) is torn first, so recovery finds a flush that never
 * committed and a torn tail, not damage followed by intact frames. */
static void zero_backwards(uint8_t *base, uint64_t from, uint64_t to) {
    const uint64_t step = 4096;
    while (to > from) {
        uint64_t at = to - from > step ? to - step : from;
        memset(base + at, 0, to - at);
        to = at;
    }
}

void qsf_seg_unwrite(qsf_segment *s, uint64_t off, uint64_t frames) {
    if (off < atomic_load(&s->published_off) || off >= s->append_off)
        return;
    uint64_t mid = off + (s->append_off - off) / 2;
    zero_backwards(s->base, mid, s->append_off);
    (void) QSF_FAULT_POINT(QSF_FP_FRAMES_HALF_ZEROED);
    zero_backwards(s->base, off, mid);
    s->append_off = off;
    s->frame_count -= frames;
    atomic_store_explicit(&s->written_off, off, memory_order_release);
}

void qsf_seg_reset_in_place(qsf_segment *s, int64_t base_seq) {
    /* The offsets go back before the epoch moves: a reader that sees the new
     * epoch (acquire) starts over from the header and then sees the header
     * offset or a later one, never the old end over the bytes zeroed next
     * (a reader with the old epoch sees no frame past its own offset). */
    atomic_store_explicit(&s->written_off, QSF_SFA_HEADER_SIZE, memory_order_release);
    atomic_store_explicit(&s->published_off, QSF_SFA_HEADER_SIZE, memory_order_release);
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_release);
    memset(s->base + QSF_SFA_HEADER_SIZE, 0, s->append_off - QSF_SFA_HEADER_SIZE);
    s->append_off = QSF_SFA_HEADER_SIZE;
    s->frame_count = 0;
    s->early_woken = false;
    qsf_sfa_set_base_seq(s->base, base_seq);
    s->base_seq = base_seq;
    s->header_durable = false;
}

void qsf_seg_lower_durable(qsf_segment *s, uint64_t off) {
    uint64_t d = atomic_load(&s->durable_off);
    if (d > off)
        atomic_store(&s->durable_off, off);
}

int qsf_seg_rebase(qsf_segment *s, int64_t base_seq, const char *dir_path, qsf_errinfo *err) {
    if (s->frame_count != 0 || s->append_off != QSF_SFA_HEADER_SIZE)
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0,
                           "cannot rebase segment %s: it already holds %" PRIu64 " frames", s->name,
                           s->frame_count);
    if (base_seq != s->base_seq)
        s->header_durable = false;
    if (s->fd >= 0) { /* through the file: see header_cold */
        uint8_t b[8];
        qsf_put_i64(b, base_seq);
        int rc = qsf_write_at(s->fd, b, sizeof b, 8, dir_path, s->name, err);
        if (rc != QSF_OK)
            return rc;
    } else {
        qsf_sfa_set_base_seq(s->base, base_seq);
    }
    s->base_seq = base_seq;
    return QSF_OK;
}

static int sync_fail(const qsf_segment *s, const char *dir_path, const char *what, uint64_t from,
                     uint64_t to, qsf_errinfo *err) {
    int e = errno;
    return qsf_err_set(err, e == ENOSPC ? QSF_E_NOSPC : QSF_E_DURABILITY, QSF_ERRF_RETRIABLE, e,
                       "%s of %s/%s [%" PRIu64 ", %" PRIu64 ") failed: %s", what, dir_path, s->name,
                       from, to, strerror(e));
}

int qsf_seg_sync_header(qsf_segment *s, const char *dir_path, qsf_errinfo *err) {
    if (s->fd < 0)
        return QSF_OK;
    if (QSF_OS->msync(s->base, QSF_SFA_HEADER_SIZE, MS_SYNC) != 0)
        return sync_fail(s, dir_path, "msync of the header", 0, QSF_SFA_HEADER_SIZE, err);
    /* fdatasync, not fsync: the size never changes after preallocation and
     * the header is data like any frame (docs/DURABILITY.md); a full fsync
     * would also commit the mapping's timestamp updates, one more journal
     * commit per rotation. */
    if (QSF_OS->fdatasync(s->fd) != 0)
        return sync_fail(s, dir_path, "fdatasync of the header", 0, QSF_SFA_HEADER_SIZE, err);
    s->header_durable = true;
    /* Clean now: dropped, the first fault makes a large folio of it. Frames
     * written with pwrite take no fault, and the first of them would have to
     * read the header's block back from the device first. */
    if (atomic_load_explicit(&s->header_cold, memory_order_relaxed) && !s->frames_by_pwrite)
        (void) posix_fadvise(s->fd, 0, (off_t) page_size(), POSIX_FADV_DONTNEED);
    return QSF_OK;
}

int qsf_seg_sync_range(qsf_segment *s, uint64_t from, uint64_t to, const char *dir_path,
                       qsf_errinfo *err) {
    if (s->fd < 0 || to <= from)
        return QSF_OK;
    uint64_t start = from & ~(page_size() - 1);
    if (QSF_OS->msync(s->base + start, to - start, MS_SYNC) != 0)
        return sync_fail(s, dir_path, "msync", from, to, err);
    if (QSF_OS->fdatasync(s->fd) != 0)
        return sync_fail(s, dir_path, "fdatasync", from, to, err);
    uint64_t d = atomic_load(&s->durable_off);
    while (d < to && !atomic_compare_exchange_weak(&s->durable_off, &d, to))
        ;
    return QSF_OK;
}

void qsf_seg_redirty(qsf_segment *s, uint64_t from, uint64_t to) {
    if (s->fd < 0 || to <= from)
        return;
    uint64_t ps = page_size();
    uint64_t start = from & ~(ps - 1);
    qsf_seg_unpin_memory(s);
    if (mlock(s->base + start, to - start) == 0) { /* best effort: RLIMIT_MEMLOCK */
        s->mlock_from = start;
        s->mlock_to = to;
    }
    /* Bytes below the published offset never change again, so storing the value
     * just read cannot race with the producer, even on a shared page. */
    for (uint64_t p = start; p < to; p += ps) {
        volatile uint8_t *b = s->base + (p < from ? from : p);
        *b = *b;
    }
}

void qsf_seg_unpin_memory(qsf_segment *s) {
    if (s->mlock_to > s->mlock_from)
        (void) munlock(s->base + s->mlock_from, s->mlock_to - s->mlock_from);
    s->mlock_from = s->mlock_to = 0;
}
