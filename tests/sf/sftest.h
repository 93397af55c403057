/* Builders for slot files used by the sf tests (unit, interop, fault, fuzz
 * replay): segments with frames, AKW1/SFM1 files, QWP frames with a delta
 * symbol section. All encoding goes through the library's own codecs or the
 * byte layouts of docs/FORMAT.md. */
#ifndef QSF_SFTEST_H
#define QSF_SFTEST_H

#include "sf/recover.h"
#include "sf/segfmt.h"

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

/* Segment `name` (flags MANIFEST_REQUIRED, base 0) in st_slot whose two
 * frames both define symbol id 0, as "x" and as "y": a slot no dictionary can
 * replay, set aside by an open (docs/FORMAT.md §5.6). */
void st_unreplayable_segment(const char *name, uint64_t size);

/* A QWP message with one table `table` of `rows` rows (flags | 0x08, delta
 * 00 00, then the table's name and row count, then filler bytes up to `len`
 * bytes in all; the filler is `fill` repeated). Recovery reads only that much
 * of a table block. Returns len. */
size_t st_qwp_table(uint8_t *out, uint8_t flags, const char *table, uint32_t rows, size_t len,
                    uint8_t fill);

/* A segment of flushes (flags MANIFEST_REQUIRED) in st_slot: kinds[i] 'C'
 * commits, 'D' defers; frame i is a 40-byte st_qwp_table frame of table "t"
 * with `rows` rows, its filler depending on base + i. */
void st_segment_flushes(const char *name, uint64_t size, int64_t base, const char *kinds,
                        uint32_t rows);

/* The frames of a segment file as any client reads them: from offset 24
 * while the CRCs validate. Fills up to max payload copies (malloc'd, freed by
 * st_frames_free) and their offsets; returns the count. */
typedef struct st_frames {
    int n;
    uint8_t *p[256];
    uint32_t len[256];
    uint64_t off[256];
    uint64_t end; /* offset after the last valid frame */
} st_frames;
void st_read_frames(const char *path, st_frames *f);
/* Fails if the file has a non-zero byte after the last valid frame (nothing
 * could line up with appends). */
void st_expect_clean_after(const char *path, const st_frames *f);
void st_frames_free(st_frames *f);

/* True if the payload is the 14-byte placeholder / the 14-byte empty commit. */
bool st_is_placeholder(const uint8_t *p, uint32_t len);
bool st_is_empty_commit(const uint8_t *p, uint32_t len);

/* Number of names in dir starting with prefix and containing `part`. */
int st_count_names(const char *dir, const char *prefix, const char *part);

/* Fails unless sf-manifest.bin's winning record has these bounds (and this
 * generation, when gen > 0). */
void st_expect_manifest(int64_t gen, int64_t head, int64_t active);

/* The name of generation g (qsf_seg_name: "sf-<16 hex>.sfa", sf-initial.sfa for 0),
 * in a rotating static buffer (4 slots). */
const char *st_gen(int g);

/* Names and bytes of every file in st_slot except .lock and .lock.pid, to
 * prove an operation changed nothing. */
typedef struct st_snap {
    int n;
    char names[32][256];
    uint8_t *data[32];
    size_t len[32];
} st_snap;
void st_snap_take(st_snap *s);
/* Fails unless st_slot holds exactly the snapshot's files and bytes. */
void st_snap_expect_same(const st_snap *before);
void st_snap_free(st_snap *s);

/* Writes bytes at an offset of an existing file. */
void st_patch(const char *path, uint64_t off, const void *bytes, size_t n);

bool st_exists(const char *path);
uint64_t st_size(const char *path);

/* qsf_slot_open_sized with 4096-byte segments; asserts success. */
void st_open_ok(const char *sf_dir, qsf_slot_recovered *r);

/* Opens and expects `code`; returns the error message (static). */
const char *st_open_fail(const char *sf_dir, int code);

/* ---- reference files ---- */

/* The cross-client fixtures of ../shared/interop (QSF_SHARED_DIR), which a
 * plain clone does not have. */
#define ST_FIXTURES                                                                                \
    {                                                                                              \
        "java-two-frame.sfa.hex", "java-two-frame-torn-tail.sfa.hex",                              \
            "java-two-chunk.symbol-dict.hex", "java-two-chunk-torn-tail.symbol-dict.hex"           \
    }

/* Path of interop/<name> under QSF_SHARED_DIR, in a static rotating buffer. */
const char *st_fixture_path(const char *name);

/* Whether every fixture is readable; if not, the first missing path and why
 * it is missing go to why (for a skip message). */
bool st_fixtures_present(char *why, size_t cap);

/* Bytes of tests/golden/<name> (QSF_SOURCE_ROOT), qsf's own reference files,
 * which are part of the tree: a missing one fails the test. */
uint8_t *st_golden(const char *name, size_t *len);

#endif
