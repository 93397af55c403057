/* Default entries of the syscall table, and the fault-point registry. */
#include "os/os.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int os_open(const char *path, int flags, mode_t mode) {
    return open(path, flags, mode);
}
static int os_openat(int dirfd, const char *path, int flags, mode_t mode) {
    return openat(dirfd, path, flags, mode);
}
static int os_fallocate(int fd, off_t off, off_t len) {
    return posix_fallocate(fd, off, len);
}
static int64_t os_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static int64_t os_mono_coarse_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}
int64_t qsf_os_coarse_tick_ns(void) {
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) != 0)
        return 0;
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static int64_t os_wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* One initializer serves the pristine copy and the live table. */
#define REAL_TABLE_INIT                                                                            \
    {                                                                                              \
        .open = os_open, .openat = os_openat, .close = close, .pread = pread, .pwrite = pwrite,    \
        .fsync = fsync, .fdatasync = fdatasync, .fallocate = os_fallocate, .ftruncate = ftruncate, \
        .fstat = fstat, .mmap = mmap, .munmap = munmap, .msync = msync, .renameat = renameat,      \
        .unlinkat = unlinkat, .mkdirat = mkdirat, .fdopendir = fdopendir, .readdir = readdir,      \
        .closedir = closedir, .flock = flock, .mono_ns = os_mono_ns,                               \
        .mono_coarse_ns = os_mono_coarse_ns, .wall_us = os_wall_us,                                \
    }

static const qsf_os real_table = REAL_TABLE_INIT;
qsf_os qsf_os_table = REAL_TABLE_INIT;

void qsf_os_reset(void) {
    qsf_os_table = real_table;
}

#ifdef QSF_FAULT_INJECTION
static _Atomic uint64_t armed_nth[QSF_FP_COUNT];
static _Atomic int armed_action[QSF_FP_COUNT];
static _Atomic uint64_t hit_count[QSF_FP_COUNT];
static _Atomic bool armed_here[QSF_FP_COUNT]; /* count only armed_thread's hits */
static _Atomic(pthread_t) armed_thread[QSF_FP_COUNT];

static void arm(int point, uint64_t nth, int action, bool here) {
    if (point <= 0 || point >= QSF_FP_COUNT)
        return;
    atomic_store(&armed_nth[point], 0); /* no hit counts against a half-made arm */
    atomic_store(&hit_count[point], 0);
    atomic_store(&armed_action[point], action);
    atomic_store(&armed_thread[point], pthread_self());
    atomic_store(&armed_here[point], here);
    atomic_store(&armed_nth[point], nth);
}

void qsf_fault_arm(int point, uint64_t nth, int action) {
    arm(point, nth, action, false);
}

void qsf_fault_arm_here(int point, uint64_t nth, int action) {
    arm(point, nth, action, true);
}

void qsf_fault_disarm_all(void) {
    for (int i = 0; i < QSF_FP_COUNT; i++) {
        atomic_store(&armed_nth[i], 0);
        atomic_store(&armed_here[i], false);
        atomic_store(&hit_count[i], 0);
    }
}

uint64_t qsf_fault_hits(int point) {
    return (point > 0 && point < QSF_FP_COUNT) ? atomic_load(&hit_count[point]) : 0;
}

int qsf_fault_hit(int point) {
    if (atomic_load(&armed_here[point]) &&
        !pthread_equal(atomic_load(&armed_thread[point]), pthread_self()))
        return 0; /* armed for another thread's hits */
    uint64_t n = atomic_fetch_add(&hit_count[point], 1) + 1;
    uint64_t want = atomic_load(&armed_nth[point]);
    if (want == 0 || n != want)
        return 0;
    if (atomic_load(&armed_action[point]) == QSF_FA_KILL)
        raise(SIGKILL);
    return -1;
}
#endif
