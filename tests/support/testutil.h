/* Helpers shared by the test programs: temporary directories, hex files from
 * ../shared/interop, and small file utilities. */
#ifndef QSF_TESTUTIL_H
#define QSF_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Creates a fresh private directory under $TMPDIR (or /tmp) and returns its path
 * (static storage per call; copy it if you need several). */
const char *tu_mkdtemp(char *buf, size_t cap);

/* Removes a directory tree (best effort). */
void tu_rmtree(const char *path);

/* Path of a file in ../shared (QSF_SHARED_DIR), e.g. "interop/java-two-frame.sfa.hex". */
const char *tu_shared_path(const char *rel, char *buf, size_t cap);

/* Reads a hex file (whitespace ignored) into a malloc'd buffer; *len gets the size.
 * Fails the test on error. */
uint8_t *tu_read_hex_file(const char *path, size_t *len);

/* Writes <dir>/.symbol-dict holding the n (<= 16) entries strs, replacing
 * what was there (a damaged dictionary may hold what no frame defined). */
void tu_write_symdict(const char *dir, int n, const char *const *strs);

/* Reads / writes a whole file. tu_read_file fails the test on error. */
uint8_t *tu_read_file(const char *path, size_t *len);
void tu_write_file(const char *path, const void *buf, size_t len);

/* Parses a hex string (whitespace ignored) into out; returns the byte count. */
size_t tu_hex(const char *hex, uint8_t *out, size_t cap);

/* Whether the file open on fd has a path ending in suffix (through
 * /proc/self/fd): lets a syscall-table hook act on one kind of file only. */
bool tu_fd_path_ends_with(int fd, const char *suffix);

/* A connected TCP pair on 127.0.0.1 (the listener is closed). */
void tu_tcp_pair(int *client, int *server);

#endif
