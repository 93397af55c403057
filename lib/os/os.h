/* The syscall table. Every file and clock call the substrate makes goes through
 * qsf_os, so tests can fail the N-th call with any errno, make short writes and
 * move time. Production code calls the QSF_OS_* wrappers, never libc directly.
 *
 * Fault points: QSF_FAULT_POINT(id) marks a step between durability barriers
 * (see enum qsf_fault_point). With -Dfault_injection=true a test can arm a point
 * to SIGKILL the process there (crash tests) or to fail; without it the macro
 * compiles to nothing. */
#ifndef QSF_OS_H
#define QSF_OS_H

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef struct qsf_os {
    int (*open)(const char *path, int flags, mode_t mode);
    int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
    int (*close)(int fd);
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    int (*fsync)(int fd);
    int (*fdatasync)(int fd);
    int (*fallocate)(int fd, off_t off, off_t len); /* posix_fallocate: returns errno */
    int (*ftruncate)(int fd, off_t len);
    int (*fstat)(int fd, struct stat *st);
    void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
    int (*munmap)(void *addr, size_t len);
    int (*msync)(void *addr, size_t len, int flags);
    int (*renameat)(int olddir, const char *oldp, int newdir, const char *newp);
    int (*unlinkat)(int dirfd, const char *path, int flags);
    int (*mkdirat)(int dirfd, const char *path, mode_t mode);
    DIR *(*fdopendir)(int fd);
    struct dirent *(*readdir)(DIR *d);
    int (*closedir)(DIR *d);
    int (*flock)(int fd, int op);
    int64_t (*mono_ns)(void); /* CLOCK_MONOTONIC */
    /* CLOCK_MONOTONIC_COARSE: the same clock as of the kernel's last tick, read
     * without touching the clock source (a few ns, where mono_ns may cost tens
     * or a system call). Never ahead of mono_ns; behind it by at most one tick,
     * qsf_os_coarse_tick_ns(). For checks made on every row. */
    int64_t (*mono_coarse_ns)(void);
    int64_t (*wall_us)(void); /* CLOCK_REALTIME in microseconds */
} qsf_os;

/* The table in force. Tests replace entries and restore them with
 * qsf_os_reset(); production never touches it. */
extern qsf_os qsf_os_table;

/* The resolution of mono_coarse_ns (clock_getres: the kernel's tick, 4 ms at
 * HZ=250), which bounds how far it lags mono_ns. */
int64_t qsf_os_coarse_tick_ns(void);

/* Restores every entry to the real system call. */
void qsf_os_reset(void);

#define QSF_OS (&qsf_os_table)

/* Numbered fault points at every durability step (docs/DURABILITY.md §15.1). */
enum qsf_fault_point {
    QSF_FP_NONE = 0,
    QSF_FP_FRAME_PAYLOAD_WRITTEN = 1, /* payload written, CRC not yet */
    QSF_FP_FRAME_CRC_WRITTEN = 2,     /* CRC written, end offset not yet published */
    QSF_FP_SPARE_REBASED = 3,         /* spare header rebased, not synced */
    QSF_FP_MANIFEST_WRITTEN = 4,      /* manifest record written, not synced */
    QSF_FP_WATERMARK_WRITTEN = 5,     /* watermark record written, not synced */
    QSF_FP_SEGMENT_UNLINKED = 6,      /* segment unlinked, directory not synced */
    QSF_FP_SYMDICT_HALF_WRITTEN = 7,  /* .symbol-dict chunk half written */
    QSF_FP_QUARANTINE_RENAMED = 8,    /* quarantine rename done, directory not synced */
    QSF_FP_FRAME_PLACED = 9,          /* frame built in place, its length still the room's */
    QSF_FP_FRAMES_HALF_ZEROED = 10,   /* half of an aborted flush's frames zeroed */
    QSF_FP_SRCPOS_WRITTEN = 11,       /* a flush's source position written, its barrier not run */
    QSF_FP_FLUSH_SYNCED = 12,         /* a flush's barrier done, the flush not yet published */
    QSF_FP_COUNT
};

#ifdef QSF_FAULT_INJECTION
/* Arms `point` to act on its `nth` hit (1-based): action QSF_FA_KILL raises
 * SIGKILL, QSF_FA_FAIL makes qsf_fault_hit return -1. nth 0 disarms. */
enum { QSF_FA_KILL = 1, QSF_FA_FAIL = 2 };
void qsf_fault_arm(int point, uint64_t nth, int action);
/* As qsf_fault_arm, but only the calling thread's hits count (and act):
 * for a step that runs on the caller while another thread (the manager) may
 * pass the same point at the same time. */
void qsf_fault_arm_here(int point, uint64_t nth, int action);
void qsf_fault_disarm_all(void);
uint64_t qsf_fault_hits(int point);
int qsf_fault_hit(int point);
#define QSF_FAULT_POINT(id) qsf_fault_hit(id)
#else
#define QSF_FAULT_POINT(id) 0
#endif

#endif
