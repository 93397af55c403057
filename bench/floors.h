/* The kernel's share of a row: CPU per row of moving the bytes the rows encode
 * to, without qsf (bench/floors.c). */
#ifndef QSF_BENCH_FLOORS_H
#define QSF_BENCH_FLOORS_H

#include <stddef.h>
#include <stdint.h>

/* Sends total_bytes in chunk-byte writes over a loopback TCP connection to a
 * child process that reads and discards them; returns this thread's CPU per
 * row. On loopback the sending thread also runs the receiving side's TCP
 * processing, as qsf's I/O thread does in bench_rows. */
double qsf_floor_tcp_ns(double total_bytes, size_t chunk, uint64_t rows);

/* Writes total_bytes in chunk-byte memcpys into fresh page-cache pages: files of
 * file_bytes under dir, created O_EXCL, preallocated, mapped MAP_SHARED and
 * unlinked after (what SF mode's segments are); returns this thread's CPU per
 * row, the page faults and zeroing of the new pages included. */
double qsf_floor_pages_ns(double total_bytes, size_t chunk, size_t file_bytes, const char *dir,
                          uint64_t rows);

/* qsf_floor_pages_ns with the pages as the ring has them: large folios asked
 * for (MADV_HUGEPAGE) and each file populated writable (MADV_POPULATE_WRITE)
 * in one call before its copies. Not part of any floor: it says what fresh
 * pages cost this kernel at best, against the CPU the ring's manager and spare
 * threads spend on theirs. */
double qsf_floor_pages_large_ns(double total_bytes, size_t chunk, size_t file_bytes,
                                const char *dir, uint64_t rows);

/* What reusing segment files instead of fresh ones would cost: the copies
 * into two files created once, each then made reusable the one safe way,
 * its written range zeroed and that made durable (msync + fdatasync) before
 * it takes new data, so that no stale frame survives a host loss under a new
 * header. Returns this thread's CPU per row. Not part of any floor: beside
 * qsf_floor_pages_large_ns, it says what such reuse would save in CPU; the
 * price is a device write of every byte the ring held, which fresh files
 * unlinked before writeback never make. */
double qsf_floor_pages_recycled_ns(double total_bytes, size_t chunk, size_t file_bytes,
                                   const char *dir, uint64_t rows);

#endif
