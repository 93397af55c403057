/* .symbol-dict (SYD1 v1 chunk log) and the in-memory entry list. Layout diagram
 * in symdict.h; format in docs/FORMAT.md §4. */
#include "sf/symdict.h"

#include "bytes.h"
#include "crc32c.h"
#include "err.h"
#include "log.h"
#include "os/os.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include "qwp/utf8.h"

#include <stdlib.h>
#include <string.h>

/* ---- chunk codec ---- */

size_t qsf_symdict_chunk_size(uint32_t count, const uint32_t *lens) {
    uint64_t eb = 0;
    for (uint32_t i = 0; i < count; i++)
        eb += qsf_varint_len(lens[i]) + lens[i];
    return qsf_varint_len(count) + qsf_varint_len(eb) + (size_t) eb + 4;
}

size_t qsf_symdict_chunk_encode(uint8_t *out, size_t cap, uint32_t count, const char *const *strs,
                                const uint32_t *lens) {
    if (cap < qsf_symdict_chunk_size(count, lens))
        return 0;
    uint64_t entry_bytes = 0;
    for (uint32_t i = 0; i < count; i++)
        entry_bytes += qsf_varint_len(lens[i]) + lens[i];
    size_t p = qsf_put_varint(out, count);
    p += qsf_put_varint(out + p, entry_bytes);
    for (uint32_t i = 0; i < count; i++) {
        p += qsf_put_varint(out + p, lens[i]);
        if (lens[i])
            memcpy(out + p, strs[i], lens[i]);
        p += lens[i];
    }
    qsf_put_u32(out + p, qsf_crc32c(out, p));
    return p + 4;
}

/* Header of one chunk: both varints, and the size of the whole chunk. Returns 0
 * when the varints run past `avail` (the chunk is incomplete). */
static size_t chunk_header(const uint8_t *p, size_t avail, uint64_t *count, uint64_t *eb) {
    size_t a = qsf_get_varint(p, p + avail, count);
    if (a == 0)
        return 0;
    size_t b = qsf_get_varint(p + a, p + avail, eb);
    return b == 0 ? 0 : a + b;
}

/* Walks the entries of a chunk body; with fn == NULL it only validates. Returns
 * 0 when the entries consume exactly the region and are valid UTF-8, 1 when not,
 * or the callback's non-zero value. */
static int chunk_entries(const uint8_t *p, uint64_t eb, uint64_t count, qsf_symdict_entry_fn fn,
                         void *user) {
    const uint8_t *end = p + eb;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t len;
        size_t n = qsf_get_varint(p, end, &len);
        if (n == 0 || len > (uint64_t) (end - p - n))
            return 1;
        p += n;
        if (!qsf_utf8_valid((const char *) p, (size_t) len))
            return 1;
        if (fn) {
            int rc = fn(user, p, (uint32_t) len);
            if (rc)
                return rc;
        }
        p += len;
    }
    return p == end ? 0 : 1;
}

/* Parses the chunk at p with `avail` bytes available. Returns 1 with *size and
 * *count for a valid chunk (its entries delivered to fn, if any), 0 at the end of
 * valid data, or the callback's non-zero value. `have` = entries so far. The
 * chunk is validated whole before any entry is delivered. */
static int chunk_parse(const uint8_t *p, size_t avail, uint64_t have, uint32_t limit,
                       qsf_symdict_entry_fn fn, void *user, size_t *size, uint32_t *count) {
    uint64_t n, eb;
    size_t hl = chunk_header(p, avail, &n, &eb);
    if (hl == 0 || eb > avail - hl || avail - hl - eb < 4)
        return 0;
    if (n > eb || have + n > limit)
        return 0;
    if (qsf_get_u32(p + hl + eb) != qsf_crc32c(p, hl + (size_t) eb))
        return 0;
    if (chunk_entries(p + hl, eb, n, NULL, NULL) != 0)
        return 0;
    int rc = fn ? chunk_entries(p + hl, eb, n, fn, user) : 0;
    if (rc)
        return rc;
    *size = hl + (size_t) eb + 4;
    *count = (uint32_t) n;
    return 1;
}

static bool header_ok(const uint8_t *buf, size_t len) {
    return len >= QSF_SYD_HEADER_SIZE && qsf_get_u32(buf) == QSF_SYD_MAGIC &&
           buf[4] == QSF_SYD_VERSION;
}

int qsf_symdict_parse(const uint8_t *buf, size_t len, uint32_t limit, qsf_symdict_entry_fn fn,
                      void *user, uint64_t *valid_end, uint32_t *entries, uint32_t *chunks) {
    *valid_end = 0;
    *entries = 0;
    *chunks = 0;
    if (!header_ok(buf, len))
        return -1;
    size_t off = QSF_SYD_HEADER_SIZE;
    for (;;) {
        size_t size = 0;
        uint32_t n = 0;
        int rc = chunk_parse(buf + off, len - off, *entries, limit, fn, user, &size, &n);
        if (rc == 0)
            break;
        if (rc != 1)
            return rc;
        *entries += n;
        *chunks += 1;
        off += size;
        *valid_end = off;
    }
    *valid_end = off;
    return 0;
}

/* ---- in-memory entries ---- */

static qsf_symdict_ent *slot_of(const qsf_symdict *d, uint32_t i) {
    qsf_symdict_ent *page = d->pages[i / QSF_SYMDICT_PAGE];
    return page ? &page[i % QSF_SYMDICT_PAGE] : NULL;
}

/* Stores entry i (== count) without publishing it; the caller publishes. */
static int store_entry(qsf_symdict *d, uint32_t i, const uint8_t *s, uint32_t len) {
    uint32_t pg = i / QSF_SYMDICT_PAGE;
    if (!d->pages[pg]) {
        d->pages[pg] = calloc(QSF_SYMDICT_PAGE, sizeof(qsf_symdict_ent));
        if (!d->pages[pg])
            return QSF_E_NOMEM;
    }
    char *copy = malloc((size_t) len + 1);
    if (!copy)
        return QSF_E_NOMEM;
    if (len)
        memcpy(copy, s, len);
    copy[len] = '\0';
    qsf_symdict_ent *e = &d->pages[pg][i % QSF_SYMDICT_PAGE];
    free(e->str);
    e->str = copy;
    e->len = len;
    return QSF_OK;
}

static void publish(qsf_symdict *d, uint32_t n) {
    atomic_store_explicit(&d->count, n, memory_order_release);
}

uint32_t qsf_symdict_size(const qsf_symdict *d) {
    return atomic_load_explicit(&((qsf_symdict *) d)->count, memory_order_acquire);
}

const char *qsf_symdict_entry(const qsf_symdict *d, uint32_t i, uint32_t *len) {
    if (i >= qsf_symdict_size(d))
        return NULL;
    const qsf_symdict_ent *e = slot_of(d, i);
    if (len)
        *len = e->len;
    return e->str;
}

/* ---- lifecycle ---- */

void qsf_symdict_init(qsf_symdict *d) {
    memset(d, 0, sizeof *d);
    d->fd = -1;
    atomic_init(&d->count, 0);
}

void qsf_symdict_close(qsf_symdict *d) {
    if (d->fd >= 0)
        QSF_OS->close(d->fd);
    d->fd = -1;
}

void qsf_symdict_destroy(qsf_symdict *d) {
    qsf_symdict_close(d);
    for (uint32_t p = 0; p < QSF_SYMDICT_PAGES; p++) {
        if (!d->pages[p])
            continue;
        for (uint32_t i = 0; i < QSF_SYMDICT_PAGE; i++)
            free(d->pages[p][i].str);
        free(d->pages[p]);
        d->pages[p] = NULL;
    }
    publish(d, 0);
}

static void write_header(uint8_t h[QSF_SYD_HEADER_SIZE]) {
    memset(h, 0, QSF_SYD_HEADER_SIZE);
    qsf_put_u32(h, QSF_SYD_MAGIC);
    h[4] = QSF_SYD_VERSION;
}

int qsf_symdict_create(qsf_symdict *d, int slot_dirfd, const char *slot_path, qsf_errinfo *err) {
    qsf_symdict_init(d);
    snprintf(d->dir, sizeof d->dir, "%s", slot_path);
    int fd = qsf_open_regular(slot_dirfd, QSF_NAME_SYMDICT, O_RDWR | O_CREAT, NULL);
    if (fd < 0)
        return qsf_file_err(err, errno, "cannot create", slot_path, QSF_NAME_SYMDICT);
    /* A stale dictionary must never be reused: failing to cut it refuses the slot. */
    if (QSF_OS->ftruncate(fd, 0) != 0) {
        int e = errno;
        QSF_OS->close(fd);
        return qsf_file_err(err, e, "cannot truncate", slot_path, QSF_NAME_SYMDICT);
    }
    uint8_t h[QSF_SYD_HEADER_SIZE];
    write_header(h);
    int rc = qsf_write_at(fd, h, sizeof h, 0, slot_path, QSF_NAME_SYMDICT, err);
    if (rc != QSF_OK) {
        QSF_OS->close(fd);
        return rc;
    }
    d->fd = fd;
    d->valid_end = d->file_end = QSF_SYD_HEADER_SIZE;
    d->dirty = true;
    return QSF_OK;
}

/* ---- opening an existing file ---- */

struct load_ctx {
    qsf_symdict *d;
};

static int load_entry(void *user, const uint8_t *s, uint32_t len) {
    qsf_symdict *d = ((struct load_ctx *) user)->d;
    uint32_t i = qsf_symdict_size(d);
    if (store_entry(d, i, s, len) != QSF_OK)
        return -2;
    publish(d, i + 1);
    return 0;
}

/* Size of the chunk that starts at off, from its header varints; 0 when the
 * header is incomplete or the chunk runs past the end of the file. */
static int next_chunk_size(int fd, uint64_t off, uint64_t fsize, const char *dir, size_t *size,
                           qsf_errinfo *err) {
    uint8_t h[2 * QSF_VARINT_MAX];
    uint64_t remain = fsize - off;
    size_t want = remain < sizeof h ? (size_t) remain : sizeof h;
    *size = 0;
    int rc = qsf_read_at(fd, h, want, off, dir, QSF_NAME_SYMDICT, err);
    if (rc != QSF_OK)
        return rc;
    uint64_t count, eb;
    size_t hl = chunk_header(h, want, &count, &eb);
    if (hl != 0 && eb <= remain - hl && remain - hl - eb >= 4)
        *size = hl + (size_t) eb + 4;
    return QSF_OK;
}

/* Grows *buf to at least size bytes. */
static int reserve(uint8_t **buf, size_t *cap, size_t size, const char *dir, qsf_errinfo *err) {
    if (size <= *cap)
        return QSF_OK;
    uint8_t *nb = realloc(*buf, size);
    if (!nb)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a %zu-byte chunk of %s/%s", size,
                           dir, QSF_NAME_SYMDICT);
    *buf = nb;
    *cap = size;
    return QSF_OK;
}

/* Parses the chunk read into buf; *valid = false ends the valid data. */
static int load_one(qsf_symdict *d, const uint8_t *buf, size_t size, const char *dir, bool *valid,
                    qsf_errinfo *err) {
    struct load_ctx ctx = {d};
    size_t got;
    uint32_t n;
    int prc = chunk_parse(buf, size, qsf_symdict_size(d), QSF_SYMDICT_MAX_ENTRIES, load_entry, &ctx,
                          &got, &n);
    *valid = prc == 1;
    if (prc == -2)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for %s/%s entries", dir,
                           QSF_NAME_SYMDICT);
    return QSF_OK;
}

/* Reads chunk after chunk (each through one buffer sized to the chunk, bounded
 * by the file size) until the end of valid data. */
static int load_chunks(qsf_symdict *d, uint64_t fsize, const char *dir, qsf_errinfo *err) {
    uint64_t off = QSF_SYD_HEADER_SIZE;
    uint8_t *buf = NULL;
    size_t cap = 0, size = 0;
    bool valid = true;
    int rc = QSF_OK;
    while (rc == QSF_OK && valid && off < fsize) {
        rc = next_chunk_size(d->fd, off, fsize, dir, &size, err);
        if (rc != QSF_OK || size == 0)
            break;
        rc = reserve(&buf, &cap, size, dir, err);
        if (rc == QSF_OK)
            rc = qsf_read_at(d->fd, buf, size, off, dir, QSF_NAME_SYMDICT, err);
        if (rc == QSF_OK)
            rc = load_one(d, buf, size, dir, &valid, err);
        if (rc == QSF_OK && valid) {
            d->chunks++;
            off += size;
        }
    }
    free(buf);
    d->valid_end = off;
    d->file_end = fsize;
    d->torn_bytes = fsize - off;
    d->persisted = qsf_symdict_size(d);
    return rc;
}

static void fall_back(qsf_symdict *d, const char *dir, const char *why) {
    QSF_LOGW("%s/%s %s; the slot continues with self-sufficient frames", dir, QSF_NAME_SYMDICT,
             why);
    qsf_symdict_close(d);
    d->self_sufficient = true;
}

/* Open failures that describe the file itself (missing, a symlink, not a
 * regular file) rather than the environment: these fall back. */
static bool unusable_file(int e) {
    return e == ENOENT || e == ELOOP || e == EINVAL || e == EISDIR || e == ENXIO;
}

int qsf_symdict_open(qsf_symdict *d, int slot_dirfd, const char *slot_path, qsf_errinfo *err) {
    qsf_symdict_init(d);
    snprintf(d->dir, sizeof d->dir, "%s", slot_path);
    uint64_t fsize = 0;
    d->fd = qsf_open_regular(slot_dirfd, QSF_NAME_SYMDICT, O_RDWR, &fsize);
    if (d->fd < 0 && !unusable_file(errno)) /* EIO, EMFILE, EACCES...: never "no file" */
        return qsf_file_err(err, errno, "cannot open", slot_path, QSF_NAME_SYMDICT);
    if (d->fd < 0) {
        fall_back(d, slot_path, errno == ENOENT ? "is missing" : "is not a regular file");
        return QSF_OK;
    }
    uint8_t h[QSF_SYD_HEADER_SIZE];
    if (fsize < QSF_SYD_HEADER_SIZE) {
        fall_back(d, slot_path, "has no complete header");
        return QSF_OK;
    }
    int rc = qsf_read_at(d->fd, h, sizeof h, 0, slot_path, QSF_NAME_SYMDICT, err);
    if (rc == QSF_OK && !header_ok(h, sizeof h)) {
        fall_back(d, slot_path, "has a bad magic or an unsupported version");
        return QSF_OK;
    }
    if (rc == QSF_OK)
        rc = load_chunks(d, fsize, slot_path, err);
    if (rc != QSF_OK) {
        qsf_symdict_destroy(d);
        return rc;
    }
    if (d->torn_bytes)
        QSF_LOGW("%s/%s: %llu bytes after offset %llu are torn or invalid; dropped", slot_path,
                 QSF_NAME_SYMDICT, (unsigned long long) d->torn_bytes,
                 (unsigned long long) d->valid_end);
    return QSF_OK;
}

/* ---- appending ---- */

static int check_new(const qsf_symdict *d, uint32_t first, uint32_t count, const char *const *strs,
                     const uint32_t *lens, qsf_errinfo *err) {
    uint32_t size = qsf_symdict_size(d);
    if (first > size)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "symbol dictionary append at id %u leaves a gap (size %u)", first, size);
    if ((uint64_t) first + count > QSF_SYMDICT_MAX_ENTRIES)
        return qsf_err_set(err, QSF_E_DICT_FULL, 0, 0,
                           "symbol dictionary full: id %llu exceeds the %u-entry limit",
                           (unsigned long long) first + count - 1, QSF_SYMDICT_MAX_ENTRIES);
    for (uint32_t i = size - first; i < count; i++)
        if (!strs[i] && lens[i])
            return qsf_err_set(err, QSF_E_INVAL, 0, 0, "symbol id %u: NULL string", first + i);
        else if (!qsf_utf8_valid(strs[i], lens[i]))
            return qsf_err_set(err, QSF_E_VALUE, 0, 0, "symbol id %u is not valid UTF-8",
                               first + i);
    return QSF_OK;
}

/* Cuts a torn tail (found at open, or left by a failed write) before appending. */
static int cut_tail(qsf_symdict *d, const char *dir, qsf_errinfo *err) {
    if (d->file_end == d->valid_end)
        return QSF_OK;
    if (QSF_OS->ftruncate(d->fd, (off_t) d->valid_end) != 0)
        return qsf_file_err(err, errno, "cannot cut the torn tail of", dir, QSF_NAME_SYMDICT);
    if (d->file_end != UINT64_MAX)
        QSF_LOGI("%s/%s: cut %llu torn bytes at offset %llu", dir, QSF_NAME_SYMDICT,
                 (unsigned long long) (d->file_end - d->valid_end),
                 (unsigned long long) d->valid_end);
    d->file_end = d->valid_end;
    return QSF_OK;
}

/* Writes one encoded chunk at valid_end in two halves (fault point between). */
static int write_chunk(qsf_symdict *d, const uint8_t *buf, size_t len, qsf_errinfo *err) {
    size_t half = len / 2;
    d->file_end = UINT64_MAX; /* unknown until the write completes */
    int rc = qsf_write_at(d->fd, buf, half, d->valid_end, d->dir, QSF_NAME_SYMDICT, err);
    if (rc == QSF_OK)
        rc = qsf_fault_check(QSF_FP_SYMDICT_HALF_WRITTEN, err);
    if (rc == QSF_OK)
        rc = qsf_write_at(d->fd, buf + half, len - half, d->valid_end + half, d->dir,
                          QSF_NAME_SYMDICT, err);
    if (rc != QSF_OK)
        return rc;
    d->valid_end += len;
    d->file_end = d->valid_end;
    d->dirty = true;
    return QSF_OK;
}

static int persist(qsf_symdict *d, uint32_t n, const char *const *strs, const uint32_t *lens,
                   qsf_errinfo *err) {
    int rc = cut_tail(d, d->dir, err);
    if (rc != QSF_OK)
        return rc;
    size_t len = qsf_symdict_chunk_size(n, lens);
    uint8_t *buf = malloc(len);
    if (!buf)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a %zu-byte dictionary chunk",
                           len);
    qsf_symdict_chunk_encode(buf, len, n, strs, lens);
    rc = write_chunk(d, buf, len, err);
    free(buf);
    return rc;
}

int qsf_symdict_append(qsf_symdict *d, uint32_t first, uint32_t count, const char *const *strs,
                       const uint32_t *lens, qsf_errinfo *err) {
    uint32_t size = qsf_symdict_size(d);
    if (first + (uint64_t) count <= size)
        return QSF_OK;
    int rc = check_new(d, first, count, strs, lens, err);
    if (rc != QSF_OK)
        return rc;
    uint32_t skip = size - first, n = count - skip;
    /* Memory first (unpublished), so a file write is never followed by an OOM
     * that would leave persisted ids unknown in memory. */
    for (uint32_t i = 0; i < n; i++)
        if (store_entry(d, size + i, (const uint8_t *) strs[skip + i], lens[skip + i]) != QSF_OK)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for symbol id %u", size + i);
    if (d->fd >= 0) {
        rc = persist(d, n, strs + skip, lens + skip, err);
        if (rc != QSF_OK)
            return rc;
        d->persisted = size + n;
    }
    publish(d, size + n);
    return QSF_OK;
}

int qsf_symdict_sync(qsf_symdict *d, qsf_errinfo *err) {
    if (d->fd < 0 || !d->dirty)
        return QSF_OK;
    if (QSF_OS->fdatasync(d->fd) != 0) {
        int e = errno;
        return qsf_err_set(err, QSF_E_DURABILITY, QSF_ERRF_RETRIABLE, e,
                           "fdatasync of %s/%s failed: %s", d->dir, QSF_NAME_SYMDICT, strerror(e));
    }
    d->dirty = false;
    return QSF_OK;
}
