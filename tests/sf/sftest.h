/* Builders for slot files used by the sf tests (unit, interop, fault, fuzz
 * replay): segments with frames, AKW1/SFM1 files, QWP frames with a delta
 * symbol section. All encoding goes through the library's own codecs or the
 * byte layouts of sf-format.md. */
#ifndef QSF_SFTEST_H
#define QSF_SFTEST_H

#include "sf/recover.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A temporary tree per test: st_root, st_sfdir = <root>/sf and st_slot =
 * <root>/sf/default (both created). st_teardown removes it, restores the
 * syscall table and disarms every fault point. cmocka setup/teardown. */
extern char st_root[512], st_sfdir[600], st_slot[700];
int st_setup(void **state);
int st_teardown(void **state);

/* "<dir>/<name>" in a static rotating buffer (8 slots). */
const char *st_path(const char *dir, const char *name);

/* Writes a segment file of `size` bytes: header (flags, base, created 0), the
 * frames (payloads[i], lens[i]), zero fill. Returns the append offset. */
uint64_t st_segment(const char *dir, const char *name, uint64_t size, uint8_t flags, int64_t base,
                    int n, const uint8_t *const *payloads, const uint32_t *lens);

/* Same with n frames whose payloads are the strings strs[i]. */
uint64_t st_segment_str(const char *dir, const char *name, uint64_t size, uint8_t flags,
                        int64_t base, int n, const char *const *strs);

/* 8192-byte SFM1 / AKW1 files holding one record of generation gen. */
void st_manifest(const char *dir, int64_t gen, int64_t head, int64_t active);
void st_watermark(const char *dir, int64_t gen, int64_t fsn);

/* A QWP message with no tables: header (flags) and, when flags & 0x08, a delta
 * section starting at `start` with n entries. Returns its length. */
size_t st_qwp(uint8_t *out, uint8_t flags, uint32_t start, int n, const char *const *strs);

/* Writes bytes at an offset of an existing file. */
void st_patch(const char *path, uint64_t off, const void *bytes, size_t n);

bool st_exists(const char *path);
uint64_t st_size(const char *path);

/* qsf_slot_open_sized with 4096-byte segments; asserts success. */
void st_open_ok(const char *sf_dir, qsf_slot_recovered *r);

/* Opens and expects `code`; returns the error message (static). */
const char *st_open_fail(const char *sf_dir, int code);

#endif
