/* The symbol dictionary: .symbol-dict (SYD1 version 1 chunk log, docs/FORMAT.md §4)
 * plus the in-memory list of every known entry.
 *
 *   0      4   5          8
 *   +------+---+----------+-------+-------+-----
 *   | SYD1 | 1 | 00 00 00 | chunk | chunk | ...
 *   +------+---+----------+-------+-------+-----
 *
 *   chunk := entryCount varint | entryBytes varint |
 *            entryCount x (len varint, len UTF-8 bytes)   -- exactly entryBytes |
 *            crc32c u32 LE over both varints and the entry bytes
 *
 * Symbol id = position across all chunks, dense from 0; ids are not stored.
 * Reading stops at the first chunk that is incomplete, fails its CRC, holds
 * invalid UTF-8 or would pass 2,000,000 entries: that is the end of valid data
 * and anything after it is a torn tail, cut before the next append.
 *
 * Entry storage is two-level (fixed top table of 4096-entry pages), so a
 * pointer from qsf_symdict_entry() stays valid for the life of the dictionary
 * and readers on other threads may read entries below qsf_symdict_size()
 * (acquire) while the single writer appends.
 *
 * Threads: one writer (append/sync/open/close); any thread for size/entry.
 */
#ifndef QSF_SYMDICT_H
#define QSF_SYMDICT_H

#include "qwp/utf8.h"
#include "qsf.h"
#include "sf/sfa.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QSF_SYMDICT_PAGE  4096u
#define QSF_SYMDICT_PAGES ((QSF_SYMDICT_MAX_ENTRIES + QSF_SYMDICT_PAGE - 1) / QSF_SYMDICT_PAGE)

/* One entry: length and NUL-terminated UTF-8 bytes (allocated once, never moved). */
typedef struct qsf_symdict_entry {
    uint32_t len;
    char *str;
} qsf_symdict_ent;

typedef struct qsf_symdict {
    int fd;                 /* -1: no file (memory mode, or self-sufficient fallback) */
    bool self_sufficient;   /* file unusable: frames must carry their ids from 0 */
    bool dirty;             /* appended since the last qsf_symdict_sync */
    uint64_t valid_end;     /* end of valid data in the file (next chunk goes here) */
    uint64_t file_end;      /* file size as far as known; > valid_end means cut first */
    uint64_t torn_bytes;    /* bytes after valid data found at open */
    uint32_t chunks;        /* valid chunks read at open */
    uint32_t persisted;     /* entries in the file */
    _Atomic uint32_t count; /* entries in memory (ids 0..count-1) */
    char dir[1024];         /* slot directory, for messages */
    qsf_symdict_ent *pages[QSF_SYMDICT_PAGES];
} qsf_symdict;

/* Empty dictionary, no file (memory mode). Cannot fail. */
void qsf_symdict_init(qsf_symdict *d);

/* Fresh slot: creates or truncates <slot>/.symbol-dict (O_NOFOLLOW, 0600) to
 * zero and writes the 8-byte header (no sync; caller orders barriers). If an
 * existing file cannot be truncated the slot is refused: QSF_E_IO (a stale
 * dictionary must never be reused). Initialises d. */
int qsf_symdict_create(qsf_symdict *d, int slot_dirfd, const char *slot_path, qsf_errinfo *err);

/* Recovering slot: parses <slot>/.symbol-dict into memory (pread). Missing file,
 * a symlink or other non-regular file, a header shorter than 8 bytes, bad magic
 * or version != 1: falls back (self_sufficient = true, fd -1, no entries) and
 * returns QSF_OK; the file is left untouched. Any other open error (EIO, EMFILE,
 * EACCES, ...) and a read error are QSF_E_IO (operational): read as "no
 * dictionary" they would make a healthy slot unreplayable. Never truncates
 * here; the torn tail is cut by the next append. Initialises d. */
int qsf_symdict_open(qsf_symdict *d, int slot_dirfd, const char *slot_path, qsf_errinfo *err);

/* Adds entries [first, first+count) (strs[i] of lens[i] bytes, not necessarily
 * NUL-terminated). Ids below qsf_symdict_size() are skipped (never written
 * twice); the rest are written to the file (when there is one) as ONE chunk at
 * valid_end, after cutting any torn tail, and then added to memory. The write is
 * plain pwrite, no sync (qsf_symdict_sync). Fault point
 * QSF_FP_SYMDICT_HALF_WRITTEN fires between the two halves of the chunk write.
 * Errors: QSF_E_INVAL (first > size: a gap), QSF_E_VALUE (invalid UTF-8, names
 * the id), QSF_E_DICT_FULL (past 2,000,000), QSF_E_IO / QSF_E_NOSPC (nothing
 * added; the partial bytes are cut by the next append), QSF_E_NOMEM. */
int qsf_symdict_append(qsf_symdict *d, uint32_t first, uint32_t count, const char *const *strs,
                       const uint32_t *lens, qsf_errinfo *err);

/* fdatasync if anything was appended since the last sync (no-op without a file
 * or when clean). QSF_E_DURABILITY on failure (stays dirty). */
int qsf_symdict_sync(qsf_symdict *d, qsf_errinfo *err);

/* Entries known (acquire). Any thread. */
uint32_t qsf_symdict_size(const qsf_symdict *d);

/* Entry i (< size): NUL-terminated string, *len its byte length (len may be
 * NULL). NULL when i is out of range. Any thread. */
const char *qsf_symdict_entry(const qsf_symdict *d, uint32_t i, uint32_t *len);

/* Closes the file (idempotent); entries stay readable. */
void qsf_symdict_close(qsf_symdict *d);

/* Closes the file and frees every entry; d is then empty (size 0). */
void qsf_symdict_destroy(qsf_symdict *d);

/* ---- pure helpers (parsers, tests, fuzzers) ---- */

/* UTF-8 validation (qsf_utf8_valid) is shared with the codec: qwp/utf8.h. */

/* Called for each entry of each valid chunk, in id order; non-zero stops parsing
 * and is returned by qsf_symdict_parse. */
typedef int (*qsf_symdict_entry_fn)(void *user, const uint8_t *str, uint32_t len);

/* Parses a whole .symbol-dict image. Returns 0 with *valid_end (offset after the
 * last valid chunk), *entries and *chunks, -1 if the header is invalid (bad
 * magic, version, or shorter than 8 bytes), or the callback's non-zero value.
 * `limit` is the entry cap (normally QSF_SYMDICT_MAX_ENTRIES). */
int qsf_symdict_parse(const uint8_t *buf, size_t len, uint32_t limit, qsf_symdict_entry_fn fn,
                      void *user, uint64_t *valid_end, uint32_t *entries, uint32_t *chunks);

/* Encodes one chunk of `count` entries into out (capacity cap); returns bytes
 * written, or 0 if cap is too small. qsf_symdict_chunk_size() gives the size. */
size_t qsf_symdict_chunk_encode(uint8_t *out, size_t cap, uint32_t count, const char *const *strs,
                                const uint32_t *lens);
size_t qsf_symdict_chunk_size(uint32_t count, const uint32_t *lens);

#endif
