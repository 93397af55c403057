/* What a benchmark run wrote to the block device under a directory
 * (bench/devstat.c): the device's own count of sectors written, from
 * /sys/dev/block/<major>:<minor>/stat. It counts every writer of that device,
 * so it means something on a quiet machine only; it is what reached the
 * device, unlike a process's write_bytes, which counts pages as they are
 * dirtied, including pages deleted before they were ever written. */
#ifndef QSF_BENCH_DEVSTAT_H
#define QSF_BENCH_DEVSTAT_H

#include <stdint.h>

/* Bytes written so far to the device holding `dir`, -1 when the kernel does
 * not say (no sysfs, a filesystem without a block device such as tmpfs). */
int64_t dev_written_bytes(const char *dir);

#endif
