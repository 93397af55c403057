/* Segment objects: header bytes, frame write order and layout, rebase rules,
 * file creation/adoption and the size re-check after mapping. */
#include "ring_testutil.h"

#include "bytes.h"
#include "crc32c.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/segment.h"
#include "sf/sfa.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int open_dir(void) {
    int fd = open(rt_dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    return fd;
}

static void memory_header_and_frames(void **state) {
    (void) state;
    qsf_segment *s;
    assert_int_equal(qsf_seg_new_mem(64, 42, &s, NULL), QSF_OK);
    qsf_sfa_header h;
    assert_int_equal(qsf_sfa_header_decode(s->base, &h), QSF_SFA_OK);
    assert_int_equal(h.base_seq, 42);
    assert_int_equal(h.flags, 0);
    assert_true(qsf_seg_append(s, "one", 3));
    assert_true(qsf_seg_append(s, "two-two", 7));
    /* Same bytes as the Java client's segment of docs/FORMAT.md §2.7. */
    static const uint8_t want[] = {0xA6, 0x0E, 0xCB, 0x49, 3,    0,    0,   0,  'o',
                                   'n',  'e',  0x3A, 0xF6, 0x00, 0x07, 7,   0,  0,
                                   0,    't',  'w',  'o',  '-',  't',  'w', 'o'};
    assert_memory_equal(s->base + QSF_SFA_HEADER_SIZE, want, sizeof want);
    assert_int_equal(atomic_load(&s->published_off), 50);
    assert_int_equal(s->frame_count, 2);
    assert_int_equal(qsf_seg_end_fsn(s), 44);
    const uint8_t *p;
    uint32_t len;
    assert_int_equal(qsf_seg_frame_at(s, 35, &p, &len), 50);
    assert_int_equal(len, 7);
    assert_memory_equal(p, "two-two", 7);
    qsf_seg_destroy(s);
}

static void frame_that_does_not_fit_writes_nothing(void **state) {
    (void) state;
    qsf_segment *s;
    assert_int_equal(qsf_seg_new_mem(64, 0, &s, NULL), QSF_OK);
    uint8_t big[64];
    memset(big, 0xAB, sizeof big);
    assert_int_equal(qsf_seg_max_payload(64), 32);
    assert_false(qsf_seg_append(s, big, 33));
    for (int i = QSF_SFA_HEADER_SIZE; i < 64; i++)
        assert_int_equal(s->base[i], 0);
    assert_true(qsf_seg_append(s, big, 32)); /* exactly the largest payload */
    assert_int_equal(s->append_off, 64);
    assert_false(qsf_seg_append(s, big, 0));
    qsf_seg_destroy(s);
}

/* The header's baseSeq as the codec reads it back. */
static int64_t base_seq_of(const qsf_segment *s) {
    qsf_sfa_header h;
    assert_int_equal(qsf_sfa_header_decode(s->base, &h), QSF_SFA_OK);
    return h.base_seq;
}

static void rebase_only_before_first_frame(void **state) {
    (void) state;
    qsf_segment *s;
    assert_int_equal(qsf_seg_new_mem(128, 5, &s, NULL), QSF_OK);
    assert_int_equal(qsf_seg_rebase(s, 17, "", NULL), QSF_OK);
    assert_int_equal(base_seq_of(s), 17);
    assert_true(qsf_seg_append(s, "x", 1));
    qsf_errinfo e;
    assert_int_equal(qsf_seg_rebase(s, 18, "", &e), QSF_E_INTERNAL);
    assert_non_null(strstr(e.msg, "1 frames"));
    assert_int_equal(base_seq_of(s), 17);
    qsf_seg_destroy(s);
}

/* One formatter and one parser of segment names (docs/FORMAT.md §2.1). */
static void segment_names(void **state) {
    (void) state;
    char n[QSF_SEG_NAME_MAX];
    uint64_t g;
    qsf_seg_name(0, n);
    assert_string_equal(n, "sf-initial.sfa");
    qsf_seg_name(42, n);
    assert_string_equal(n, "sf-000000000000002a.sfa");
    assert_int_equal(qsf_seg_name_parse(n, &g), 0);
    assert_int_equal(g, 42);
    qsf_seg_name(UINT64_MAX, n);
    assert_string_equal(n, "sf-ffffffffffffffff.sfa");
    assert_int_equal(qsf_seg_name_parse(n, &g), 0);
    assert_true(g == UINT64_MAX);
    assert_int_equal(qsf_seg_name_parse("sf-initial.sfa", &g), -1);
    assert_int_equal(qsf_seg_name_parse("sf-000000000000002A.sfa", &g), -1); /* uppercase */
    assert_int_equal(qsf_seg_name_parse("sf-00000000000002a.sfa", &g), -1);  /* 15 digits */
    assert_int_equal(qsf_seg_name_parse("sf-000000000000002a.sfb", &g), -1);
    assert_true(qsf_seg_name_is_candidate("anything.sfa"));
    assert_false(qsf_seg_name_is_candidate("x.sfa.corrupt"));
}

static void file_segment_round_trip(void **state) {
    (void) state;
    int dfd = open_dir();
    qsf_segment *s;
    char name[QSF_SEG_NAME_MAX];
    qsf_seg_name(0x2a, name);
    assert_string_equal(name, "sf-000000000000002a.sfa");
    assert_int_equal(qsf_seg_create_file(dfd, rt_dir, name, 0x2a, 4096, 7,
                                         QSF_SFA_FLAG_MANIFEST_REQUIRED, &s, NULL),
                     QSF_OK);
    assert_true(qsf_seg_append(s, "hello", 5));
    assert_int_equal(qsf_seg_sync_header(s, rt_dir, NULL), QSF_OK);
    assert_int_equal(
        qsf_seg_sync_range(s, QSF_SFA_HEADER_SIZE, atomic_load(&s->published_off), rt_dir, NULL),
        QSF_OK);
    assert_int_equal(atomic_load(&s->durable_off),
                     QSF_SFA_HEADER_SIZE + QSF_SFA_FRAME_OVERHEAD + 5);
    qsf_seg_destroy(s);

    char path[512];
    snprintf(path, sizeof path, "%s/%s", rt_dir, name);
    size_t n;
    uint8_t *b = tu_read_file(path, &n);
    assert_int_equal(n, 4096);
    qsf_sfa_header h;
    assert_int_equal(qsf_sfa_header_decode(b, &h), QSF_SFA_OK);
    assert_int_equal(h.flags, QSF_SFA_FLAG_MANIFEST_REQUIRED);
    assert_int_equal(h.base_seq, 7);
    uint8_t frame[13];
    qsf_sfa_frame_encode(frame, "hello", 5);
    assert_memory_equal(b + QSF_SFA_HEADER_SIZE, frame, sizeof frame);
    free(b);

    /* Adopt it again after "recovery" and continue appending. */
    int fd = openat(dfd, name, O_RDWR);
    assert_int_equal(qsf_seg_adopt(fd, rt_dir, name, 0x2a, 4096, 7, 1, 37, &s, NULL), QSF_OK);
    assert_int_equal(qsf_seg_end_fsn(s), 8);
    assert_true(qsf_seg_append(s, "again", 5));
    qsf_seg_destroy(s);
    b = tu_read_file(path, &n);
    qsf_sfa_frame_encode(frame, "again", 5);
    assert_memory_equal(b + 37, frame, sizeof frame);
    free(b);
    close(dfd);
}

static int enospc_fallocate(int fd, off_t off, off_t len) {
    (void) fd, (void) off, (void) len;
    return ENOSPC;
}

/* Creating <name> fails with `code`, an error quoting `quote`, and no file. */
static void expect_create_fails(int dfd, const char *name, int code, const char *quote) {
    qsf_segment *s = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_seg_create_file(dfd, rt_dir, name, 1, 4096, 0, 1, &s, &e), code);
    assert_null(s);
    assert_non_null(strstr(e.msg, quote));
    assert_int_equal(faccessat(dfd, name, F_OK, 0), -1);
}

static void create_failure_leaves_no_file(void **state) {
    (void) state;
    int dfd = open_dir();
    QSF_OS->fallocate = enospc_fallocate;
    expect_create_fails(dfd, "sf-0000000000000001.sfa", QSF_E_NOSPC, "sf-0000000000000001.sfa");
    qsf_os_reset();
    close(dfd);
}

/* One counter of /proc/thread-self/io ("write_bytes", "read_bytes"), or -1
 * without per-thread I/O accounting. */
static long long thread_io(const char *counter) {
    FILE *f = fopen("/proc/thread-self/io", "r");
    char line[128], name[32];
    long long v = -1, x;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%31[a-z_]: %lld", name, &x) == 2 && strcmp(name, counter) == 0) {
            v = x;
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* Bytes this thread has dirtied in the page cache so far (the kernel counts
 * them as written when they are dirtied, a whole folio at a time). */
static long long dirtied_bytes(void) {
    return thread_io("write_bytes");
}

/* A spare's header is written and synced alone. Through the mapping (which
 * asks for large folios) it dirtied the 2 MiB folio around it, and its sync
 * wrote 2 MiB of zeros per segment (measured on ext4 with large folios: 2056
 * KiB per header sync, 216 MB of disk writes per GiB through a memory-mode
 * ring). After the sync the mapping still reads the header and takes frames. */
static void header_sync_writes_the_header_alone(void **state) {
    (void) state;
    int dfd = open_dir();
    const uint64_t size = 16u << 20;
    long long before = dirtied_bytes();
    if (before < 0)
        skip(); /* no per-thread I/O accounting */
    qsf_segment *s;
    assert_int_equal(qsf_seg_create_file(dfd, rt_dir, "sf-0000000000000003.sfa", 3, size, 7,
                                         QSF_SFA_FLAG_MANIFEST_REQUIRED, &s, NULL),
                     QSF_OK);
    assert_int_equal(qsf_seg_rebase(s, 99, rt_dir, NULL), QSF_OK);
    assert_int_equal(qsf_seg_sync_header(s, rt_dir, NULL), QSF_OK);
    long long dirtied = dirtied_bytes() - before;
    assert_true(s->header_durable);
    if (dirtied > 64 * 1024)
        fail_msg("creating and syncing a spare's header dirtied %lld bytes", dirtied);
    qsf_sfa_header h;
    assert_int_equal(qsf_sfa_header_decode(s->base, &h), QSF_SFA_OK);
    assert_int_equal(h.base_seq, 99);
    assert_int_equal(h.flags, QSF_SFA_FLAG_MANIFEST_REQUIRED);
    assert_true(qsf_seg_append(s, "after", 5));
    qsf_seg_destroy(s);
    uint8_t b[QSF_SFA_HEADER_SIZE + QSF_SFA_FRAME_OVERHEAD + 5];
    int fd = openat(dfd, "sf-0000000000000003.sfa", O_RDONLY);
    assert_int_equal(pread(fd, b, sizeof b, 0), (ssize_t) sizeof b);
    close(fd);
    assert_int_equal(qsf_sfa_header_decode(b, &h), QSF_SFA_OK);
    assert_int_equal(h.base_seq, 99);
    assert_memory_equal(b + QSF_SFA_HEADER_SIZE + QSF_SFA_FRAME_OVERHEAD, "after", 5);
    close(dfd);
}

/* A 16 MiB spare of generation `gen` as `append` durability makes it. */
static qsf_segment *append_segment(int dfd, uint64_t gen) {
    char name[QSF_SEG_NAME_MAX];
    qsf_seg_name(gen, name);
    qsf_segment *s;
    assert_int_equal(qsf_seg_create_file(dfd, rt_dir, name, gen, 16u << 20, 0,
                                         QSF_SFA_FLAG_MANIFEST_REQUIRED, &s, NULL),
                     QSF_OK);
    s->frames_by_pwrite = true;
    return s;
}

/* `append` durability: every flush's barrier syncs what it wrote. A frame
 * stored through the mapping after a sync dirtied the whole 2 MiB folio
 * again (the page fault marks every block of it dirty), so each small flush
 * wrote 2 MiB (measured: 1 KiB flushes at 813 us and 2067 times their bytes
 * on disk). Written with pwrite, a frame dirties the blocks it covers. */
static void appended_frames_dirty_only_their_blocks(void **state) {
    (void) state;
    int dfd = open_dir();
    if (dirtied_bytes() < 0)
        skip();
    qsf_segment *s = append_segment(dfd, 5);
    assert_int_equal(qsf_seg_sync_header(s, rt_dir, NULL), QSF_OK);
    char frame[1000];
    long long before = dirtied_bytes();
    for (int i = 0; i < 20; i++) {
        memset(frame, 'a' + i, sizeof frame);
        uint64_t from = s->append_off;
        assert_int_equal(qsf_seg_write_file(s, frame, sizeof frame, rt_dir, NULL), 1);
        assert_int_equal(qsf_seg_sync_range(s, from, s->append_off, rt_dir, NULL), QSF_OK);
    }
    long long dirtied = dirtied_bytes() - before;
    if (dirtied > 20 * 16 * 1024)
        fail_msg("20 flushes of one 1000-byte frame dirtied %lld bytes", dirtied);
    qsf_seg_publish(s);
    const uint8_t *p;
    uint32_t len;
    uint64_t at = QSF_SFA_HEADER_SIZE;
    for (int i = 0; i < 20; i++) { /* the mapping reads what pwrite wrote */
        at = qsf_seg_frame_at(s, at, &p, &len);
        assert_int_equal(len, sizeof frame);
        assert_int_equal(p[0], 'a' + i);
        assert_int_equal(p[sizeof frame - 1], 'a' + i);
    }
    qsf_seg_destroy(s);
    close(dfd);
}

/* `append` durability: a frame is written by pwrite alone, nothing of it
 * stored through the mapping (a store would dirty the whole folio it lands
 * in): with the mapping made read-only the frames still go in, and read back
 * once it is writable again. A frame's envelope stored through the mapping
 * to find its room faults here. */
static void appended_frames_store_nothing_through_the_mapping(void **state) {
    (void) state;
    int dfd = open_dir();
    qsf_segment *s = append_segment(dfd, 7);
    assert_int_equal(qsf_seg_sync_header(s, rt_dir, NULL), QSF_OK);
    assert_int_equal(mprotect(s->base, s->size, PROT_READ), 0);
    assert_int_equal(qsf_seg_write_file(s, "one", 3, rt_dir, NULL), 1);
    assert_int_equal(qsf_seg_write_file(s, "two-two", 7, rt_dir, NULL), 1);
    assert_int_equal(mprotect(s->base, s->size, PROT_READ | PROT_WRITE), 0);
    qsf_seg_publish(s);
    const uint8_t *p;
    uint32_t len;
    uint64_t at = qsf_seg_frame_at(s, QSF_SFA_HEADER_SIZE, &p, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(p, "one", 3);
    qsf_seg_frame_at(s, at, &p, &len);
    assert_int_equal(len, 7);
    assert_memory_equal(p, "two-two", 7);
    qsf_seg_destroy(s);
    close(dfd);
}

/* `append` durability: the first frame of a segment whose header was just
 * synced takes no disk read. Dropping the header's clean page after the sync
 * (for the large folio of the first fault through the mapping, which frames
 * written with pwrite never take) made that frame's pwrite read the header's
 * block back from the device first, on the producer's path, at every
 * rotation. */
static void first_appended_frame_reads_nothing_from_disk(void **state) {
    (void) state;
    int dfd = open_dir();
    if (thread_io("read_bytes") < 0)
        skip();
    qsf_segment *s = append_segment(dfd, 6);
    assert_int_equal(qsf_seg_rebase(s, 40, rt_dir, NULL), QSF_OK);
    assert_int_equal(qsf_seg_sync_header(s, rt_dir, NULL), QSF_OK);
    long long before = thread_io("read_bytes");
    assert_int_equal(qsf_seg_write_file(s, "first", 5, rt_dir, NULL), 1);
    long long read = thread_io("read_bytes") - before;
    if (read != 0)
        fail_msg("the first frame after the header sync read %lld bytes from disk", read);
    qsf_seg_publish(s);
    const uint8_t *p;
    uint32_t len;
    qsf_seg_frame_at(s, QSF_SFA_HEADER_SIZE, &p, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(p, "first", 5);
    qsf_seg_destroy(s);
    close(dfd);
}

/* `append` durability: frames whose CRC field lies at each offset around a
 * page boundary, the three that straddle it included (stored through the
 * mapping, not written with pwrite): the file holds each frame complete with
 * its CRC, and the mapping reads it back. */
static void frames_around_a_page_boundary_are_complete_on_disk(void **state) {
    (void) state;
    int dfd = open_dir();
    qsf_segment *s = append_segment(dfd, 7);
    const uint64_t ps = (uint64_t) sysconf(_SC_PAGESIZE);
    uint8_t pad[8192], payload[40], f[QSF_SFA_FRAME_OVERHEAD + sizeof payload];
    memset(pad, 'p', sizeof pad);
    for (uint64_t at = 4 * ps - 5; at <= 4 * ps + 1; at++) {
        uint64_t gap = (at - s->append_off) % ps; /* a filler frame moves the next to `at` */
        if (gap < QSF_SFA_FRAME_OVERHEAD)
            gap += ps;
        assert_int_equal(
            qsf_seg_write_file(s, pad, (uint32_t) (gap - QSF_SFA_FRAME_OVERHEAD), rt_dir, NULL), 1);
        assert_int_equal(s->append_off % ps, at % ps);
        memset(payload, (int) at, sizeof payload);
        uint64_t off = s->append_off;
        assert_int_equal(qsf_seg_write_file(s, payload, sizeof payload, rt_dir, NULL), 1);
        assert_int_equal(pread(s->fd, f, sizeof f, (off_t) off), (ssize_t) sizeof f);
        assert_int_equal(qsf_get_u32(f + QSF_SFA_FRAME_AT_CRC),
                         qsf_crc32c(f + QSF_SFA_FRAME_AT_LEN, 4 + sizeof payload));
        assert_int_equal(qsf_get_u32(f + QSF_SFA_FRAME_AT_LEN), sizeof payload);
        assert_memory_equal(s->base + off, f, sizeof f); /* the mapping sees the same bytes */
    }
    qsf_seg_destroy(s);
    close(dfd);
}

static int eio_pwrite_calls;
static ssize_t eio_pwrite(int fd, const void *buf, size_t n, off_t off) {
    (void) fd, (void) buf, (void) n, (void) off;
    eio_pwrite_calls++;
    errno = EIO;
    return -1;
}

/* The header and (`append` durability) the frames are written with pwrite: a
 * failed write is an error naming the file and the offset, at creation (no
 * file left), at a rebase (the base and the header's durability unchanged)
 * and for a frame (nothing of it left). */
static void header_write_failures_name_the_file(void **state) {
    (void) state;
    int dfd = open_dir();
    QSF_OS->pwrite = eio_pwrite;
    expect_create_fails(dfd, "sf-0000000000000004.sfa", QSF_E_IO,
                        "sf-0000000000000004.sfa at offset 0");
    qsf_os_reset();
    qsf_errinfo e;
    qsf_segment *s = NULL;
    assert_int_equal(
        qsf_seg_create_file(dfd, rt_dir, "sf-0000000000000004.sfa", 4, 4096, 5, 1, &s, &e), QSF_OK);
    assert_int_equal(qsf_seg_sync_header(s, rt_dir, NULL), QSF_OK);
    QSF_OS->pwrite = eio_pwrite;
    assert_int_equal(qsf_seg_rebase(s, 6, rt_dir, &e), QSF_E_IO);
    assert_int_equal(eio_pwrite_calls, 2);
    assert_non_null(strstr(e.msg, "sf-0000000000000004.sfa at offset 8"));
    assert_int_equal(s->base_seq, 5);
    assert_false(s->header_durable); /* whatever the failed write left, it is not known durable */
    qsf_os_reset();
    /* a frame whose pwrite fails is not written: an error, zeros, no frame */
    s->frames_by_pwrite = true;
    QSF_OS->pwrite = eio_pwrite;
    assert_int_equal(qsf_seg_write_file(s, "lost", 4, rt_dir, &e), -1);
    assert_int_equal(e.code, QSF_E_IO);
    assert_non_null(strstr(e.msg, "sf-0000000000000004.sfa at offset 24"));
    assert_int_equal(s->append_off, QSF_SFA_HEADER_SIZE);
    assert_int_equal(s->frame_count, 0);
    static const uint8_t zeros[QSF_SFA_FRAME_OVERHEAD + 4];
    assert_memory_equal(s->base + QSF_SFA_HEADER_SIZE, zeros, sizeof zeros);
    qsf_os_reset();
    qsf_seg_destroy(s);
    close(dfd);
}

static int shrunk_fstat(int fd, struct stat *st) {
    int rc = fstat(fd, st);
    st->st_size -= 1;
    return rc;
}

static void adopt_rechecks_size_after_mapping(void **state) {
    (void) state;
    int dfd = open_dir();
    qsf_segment *s;
    assert_int_equal(qsf_seg_create_file(dfd, rt_dir, "sf-initial.sfa", 0, 4096, 0, 0, &s, NULL),
                     QSF_OK);
    qsf_seg_destroy(s);
    int fd = openat(dfd, "sf-initial.sfa", O_RDWR);
    QSF_OS->fstat = shrunk_fstat;
    qsf_errinfo e;
    assert_int_equal(
        qsf_seg_adopt(fd, rt_dir, "sf-initial.sfa", 0, 4096, 0, 0, QSF_SFA_HEADER_SIZE, &s, &e),
        QSF_E_IO);
    assert_non_null(strstr(e.msg, "changed size"));
    assert_non_null(strstr(e.msg, "sf-initial.sfa"));
    qsf_os_reset();
    close(fd);
    close(dfd);
}

static void redirty_keeps_bytes(void **state) {
    (void) state;
    int dfd = open_dir();
    qsf_segment *s;
    assert_int_equal(
        qsf_seg_create_file(dfd, rt_dir, "sf-initial.sfa", 0, 3 * 4096, 0, 0, &s, NULL), QSF_OK);
    uint8_t pay[5000];
    for (size_t i = 0; i < sizeof pay; i++)
        pay[i] = (uint8_t) (i * 7);
    assert_true(qsf_seg_append(s, pay, sizeof pay));
    uint8_t before[5008];
    const uint64_t first = QSF_SFA_HEADER_SIZE;
    memcpy(before, s->base + first, sizeof before);
    qsf_seg_redirty(s, first, atomic_load(&s->published_off));
    assert_memory_equal(before, s->base + first, sizeof before);
    assert_int_equal(qsf_seg_sync_range(s, first, atomic_load(&s->published_off), rt_dir, NULL),
                     QSF_OK);
    qsf_seg_unpin_memory(s);
    assert_int_equal(s->mlock_to, 0);
    qsf_seg_destroy(s);
    close(dfd);
}

/* In a child whose file size limit (RLIMIT_FSIZE) is 64 KiB: what opening a
 * ring of 1 MiB segments and creating a 1 MiB segment file return. Returns a
 * failure text or NULL; the process must survive to return at all. */
static const char *fsize_limit_child(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
        return "getrlimit";
    rl.rlim_cur = 64 * 1024;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return "setrlimit";
    qsf_ring_opts o = {.sf_dir = rt_dir,
                       .sender_id = "t",
                       .segment_bytes = 1 << 20,
                       .total_bytes = 4 << 20,
                       .durability = QSF_DUR_APPEND};
    qsf_ring *r = NULL;
    qsf_errinfo e;
    if (qsf_ring_open(&o, &r, NULL, &e) != QSF_E_IO || e.sys_errno != EFBIG)
        return "ring open did not fail with QSF_E_IO/EFBIG";
    if (!strstr(e.msg, "RLIMIT_FSIZE") || !strstr(e.msg, "65536 bytes") ||
        !strstr(e.msg, "1048576 bytes") || !strstr(e.msg, rt_dir))
        return "ring open's message does not name the limit, the segment size and the slot";
    int dfd = open_dir();
    qsf_segment *s = NULL;
    int rc = qsf_seg_create_file(dfd, rt_dir, "sf-0000000000000001.sfa", 1, 1 << 20, 0, 0, &s, &e);
    close(dfd);
    if (rc != QSF_E_IO || e.sys_errno != EFBIG || !strstr(e.msg, "RLIMIT_FSIZE"))
        return "segment creation did not fail with QSF_E_IO/EFBIG";
    return NULL;
}

/* A file size limit below the segment size is a clear error, not SIGXFSZ
 * killing the process at preallocation. */
static void file_size_limit_below_segment_is_an_error(void **state) {
    (void) state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *why = fsize_limit_child();
        if (why && write(fds[1], why, strlen(why)) < 0)
            _exit(2);
        _exit(why ? 1 : 0);
    }
    close(fds[1]);
    char why[200] = {0};
    ssize_t n = read(fds[0], why, sizeof why - 1);
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        fail_msg("the child was killed by signal %d", WTERMSIG(st));
    if (WEXITSTATUS(st) != 0)
        fail_msg("%.*s", (int) (n > 0 ? n : 0), why);
    assert_int_equal(rt_count_files("t", ".sfa"), -1); /* nothing was created */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(memory_header_and_frames, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(frame_that_does_not_fit_writes_nothing, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(rebase_only_before_first_frame, rt_setup, rt_teardown),
        cmocka_unit_test(segment_names),
        cmocka_unit_test_setup_teardown(file_segment_round_trip, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(create_failure_leaves_no_file, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(header_sync_writes_the_header_alone, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(header_write_failures_name_the_file, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(appended_frames_dirty_only_their_blocks, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(appended_frames_store_nothing_through_the_mapping, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(first_appended_frame_reads_nothing_from_disk, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(frames_around_a_page_boundary_are_complete_on_disk,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(adopt_rechecks_size_after_mapping, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(redirty_keeps_bytes, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(file_size_limit_below_segment_is_an_error, rt_setup,
                                        rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
