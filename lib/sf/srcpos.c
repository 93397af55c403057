/* .source-positions (SPL1): layout diagram in srcpos.h; format in
 * docs/FORMAT.md §4a, write order in docs/DURABILITY.md §9a. */
#include "sf/srcpos.h"

#include "bytes.h"
#include "crc32c.h"
#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TMP_NAME ".source-positions.tmp"

/* Compaction waits until the file holds this much since the last one. */
#define COMPACT_MIN_BYTES (64 * 1024)

/* The file is kept ahead of its records in written zeros, grown in steps of
 * this: a record then overwrites blocks the file already has, and the
 * fdatasync of the barrier writes that data alone, without the metadata
 * commit (the file system's journal) that a file growing by each record
 * needs (docs/DURABILITY.md §9a). Written zeros, not fallocate: an
 * unwritten extent needs a metadata commit at its first write too. */
#define ZERO_AHEAD (64 * 1024)

/* The room one more record may take. */
#define REC_ROOM (QSF_SRCPOS_REC_FIXED + QSF_SRCPOS_MAX)

/* ---- codec ---- */

/* Bytes between the fsn and the position: the frame CRC and the flags. */
static size_t check_size(uint32_t version) {
    return version == QSF_SRCPOS_VERSION_1 ? 0 : 8;
}

size_t qsf_srcpos_encode(uint8_t *out, const qsf_srcpos_rec *rec) {
    qsf_put_u32(out, rec->len);
    qsf_put_i64(out + 4, rec->fsn);
    qsf_put_u32(out + 12, rec->has_frame ? rec->frame_crc : 0);
    qsf_put_u32(out + 16, rec->has_frame ? QSF_SRCPOS_F_FRAME : 0);
    memcpy(out + 20, rec->bytes, rec->len);
    qsf_put_u32(out + 20 + rec->len, qsf_crc32c(out, 20 + (size_t) rec->len));
    return QSF_SRCPOS_REC_FIXED + rec->len;
}

size_t qsf_srcpos_decode(const uint8_t *p, size_t avail, uint32_t version, qsf_srcpos_rec *out) {
    size_t body = 12 + check_size(version); /* len, fsn, then the check if any */
    if (avail < body + 4)
        return 0;
    uint32_t len = qsf_get_u32(p);
    if (len == 0 || len > QSF_SRCPOS_MAX || avail < body + 4 + (size_t) len)
        return 0;
    if (qsf_get_u32(p + body + len) != qsf_crc32c(p, body + (size_t) len))
        return 0;
    uint32_t flags = body > 12 ? qsf_get_u32(p + 16) : 0;
    if (flags & ~QSF_SRCPOS_F_FRAME)
        return 0; /* a flag this version does not know: not a record it wrote */
    out->len = len;
    out->fsn = qsf_get_i64(p + 4);
    if (out->fsn < -1)
        return 0;
    out->has_frame = flags & QSF_SRCPOS_F_FRAME;
    out->frame_crc = out->has_frame ? qsf_get_u32(p + 12) : 0;
    memcpy(out->bytes, p + body, len);
    return body + 4 + len;
}

static void header(uint8_t h[QSF_SRCPOS_HEADER_SIZE]) {
    memset(h, 0, QSF_SRCPOS_HEADER_SIZE);
    qsf_put_u32(h, QSF_SRCPOS_MAGIC);
    qsf_put_u32(h + 4, QSF_SRCPOS_VERSION);
}

/* The version of a file image, or 0 if its header is not one of ours. */
static uint32_t image_version(const uint8_t *img, size_t len) {
    if (len < QSF_SRCPOS_HEADER_SIZE || qsf_get_u32(img) != QSF_SRCPOS_MAGIC)
        return 0;
    uint32_t v = qsf_get_u32(img + 4);
    return v == QSF_SRCPOS_VERSION || v == QSF_SRCPOS_VERSION_1 ? v : 0;
}

int qsf_srcpos_parse(const uint8_t *img, size_t len, qsf_srcpos_fn fn, void *user,
                     uint64_t *valid_end) {
    *valid_end = 0;
    uint32_t version = image_version(img, len);
    if (!version)
        return -1;
    size_t off = QSF_SRCPOS_HEADER_SIZE, n;
    qsf_srcpos_rec rec;
    while ((n = qsf_srcpos_decode(img + off, len - off, version, &rec)) > 0) {
        if (fn)
            fn(user, &rec);
        off += n;
    }
    *valid_end = off;
    return 0;
}

uint64_t qsf_srcpos_torn_bytes(const uint8_t *img, size_t len, uint64_t valid_end) {
    uint64_t last = len;
    while (last > valid_end && img[last - 1] == 0)
        last--;
    return last > valid_end ? last - valid_end : 0;
}

/* ---- in-memory records ---- */

static int push(qsf_srcpos_log *l, const qsf_srcpos_rec *rec) {
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        qsf_srcpos_rec *p = realloc(l->recs, cap * sizeof *p);
        if (!p)
            return QSF_E_NOMEM;
        l->recs = p;
        l->cap = cap;
    }
    l->recs[l->n++] = *rec;
    return QSF_OK;
}

static void log_init(qsf_srcpos_log *l) {
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->mu, NULL);
    l->fd = -1;
    l->dirfd = -1;
}

void qsf_srcpos_init_memory(qsf_srcpos_log *l) {
    log_init(l);
}

const qsf_srcpos_rec *qsf_srcpos_find(const qsf_srcpos_log *l, int64_t limit) {
    for (uint32_t i = l->n; i-- > 0;)
        if (l->recs[i].fsn <= limit)
            return &l->recs[i];
    return NULL;
}

/* ---- open ---- */

typedef struct loader {
    qsf_srcpos_log *l;
    int rc;
} loader;

static void load_one(void *user, const qsf_srcpos_rec *rec) {
    loader *ld = user;
    if (ld->rc == QSF_OK)
        ld->rc = push(ld->l, rec);
}

/* Grows the file `name` (fd, *size bytes long) with written zeros to the
 * ZERO_AHEAD step at or above need, if it is shorter. No sync: the next one
 * of the file (the barrier's, or the caller's) makes it durable. */
static int zero_ahead(const qsf_srcpos_log *l, int fd, const char *name, uint64_t need,
                      uint64_t *size, qsf_errinfo *err) {
    static const uint8_t zeros[ZERO_AHEAD];
    if (need <= *size)
        return QSF_OK;
    uint64_t to = (need + ZERO_AHEAD - 1) / ZERO_AHEAD * ZERO_AHEAD;
    while (*size < to) {
        size_t n = to - *size < ZERO_AHEAD ? (size_t) (to - *size) : ZERO_AHEAD;
        int rc = qsf_write_at(fd, zeros, n, *size, l->dir, name, err);
        if (rc != QSF_OK)
            return rc;
        *size += n;
    }
    return QSF_OK;
}

/* Creates (or truncates) `name` in the slot and writes the log's header into
 * it. *fd is -1 when the file could not be opened; otherwise it is the open
 * file, also when writing the header failed (the caller closes it). */
static int begin_file(qsf_srcpos_log *l, const char *name, int *fd, qsf_errinfo *err) {
    *fd = qsf_open_regular(l->dirfd, name, O_RDWR | O_CREAT | O_TRUNC, NULL);
    if (*fd < 0)
        return qsf_file_err(err, errno, "cannot create", l->dir, name);
    uint8_t h[QSF_SRCPOS_HEADER_SIZE];
    header(h);
    return qsf_write_at(*fd, h, sizeof h, 0, l->dir, name, err);
}

/* The first position of a slot: the file is created with its header, synced,
 * and its name made durable (dir sync) before any record goes in, once. */
static int create_file(qsf_srcpos_log *l, qsf_errinfo *err) {
    int fd;
    int rc = begin_file(l, QSF_NAME_SRCPOS, &fd, err);
    if (fd < 0)
        return rc;
    uint64_t size = QSF_SRCPOS_HEADER_SIZE;
    if (rc == QSF_OK)
        rc = zero_ahead(l, fd, QSF_NAME_SRCPOS, QSF_SRCPOS_HEADER_SIZE + REC_ROOM, &size, err);
    if (rc == QSF_OK && QSF_OS->fsync(fd) != 0)
        rc = qsf_file_err(err, errno, "cannot sync", l->dir, QSF_NAME_SRCPOS);
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(l->dirfd, l->dir, err);
    if (rc != QSF_OK) {
        QSF_OS->close(fd);
        return rc;
    }
    l->fd = fd;
    l->end = l->compacted_end = QSF_SRCPOS_HEADER_SIZE;
    l->size = size;
    return QSF_OK;
}

/* The rule (srcpos.h): the records above limit go; the rest are asked newest
 * first, the frame checked until one is accepted (below it the frames kept
 * their FSNs: salvage only ever numbers frames higher, docs/FORMAT.md §6.15). */
uint32_t qsf_srcpos_select(qsf_srcpos_rec *recs, uint32_t *n, int64_t limit,
                           qsf_srcpos_survived_fn survived, void *user) {
    uint32_t dropped = 0, below = 0;
    for (uint32_t i = 0; i < *n; i++) /* keeps the order */
        if (recs[i].fsn <= limit)
            recs[below++] = recs[i];
    dropped = *n - below;
    bool check_frame = true;
    uint32_t kept = below;
    for (uint32_t i = below; i-- > 0;) {
        if (!survived || survived(user, &recs[i], check_frame)) {
            check_frame = false;
            recs[--kept] = recs[i];
        } else
            dropped++;
    }
    if (kept > 0) /* recs may be NULL when *n is 0: memmove needs a pointer */
        memmove(recs, recs + kept, (below - kept) * sizeof *recs);
    *n = below - kept;
    return dropped;
}

/* Reads the existing file into memory; *rewrite when it must be compacted
 * before use (records dropped, torn tail, wrong header, version 1). */
static int load_file(qsf_srcpos_log *l, uint64_t size, int64_t limit,
                     qsf_srcpos_survived_fn survived, void *user, bool *rewrite, qsf_errinfo *err) {
    uint8_t *img = malloc(size ? size : 1);
    if (!img)
        return qsf_err_set(err, QSF_E_NOMEM, 0, ENOMEM, "no memory to read %s/%s", l->dir,
                           QSF_NAME_SRCPOS);
    int rc = qsf_read_at(l->fd, img, size, 0, l->dir, QSF_NAME_SRCPOS, err);
    loader ld = {l, QSF_OK};
    uint64_t valid = 0;
    uint32_t version = rc == QSF_OK ? image_version(img, size) : 0;
    if (rc == QSF_OK && qsf_srcpos_parse(img, size, load_one, &ld, &valid) != 0) {
        QSF_LOGW("%s/%s: not a source-position log (%" PRIu64 " bytes); starting it anew", l->dir,
                 QSF_NAME_SRCPOS, size);
        valid = 0;
    }
    bool torn = rc == QSF_OK && valid > 0 && qsf_srcpos_torn_bytes(img, size, valid) > 0;
    free(img);
    if (rc == QSF_OK && ld.rc != QSF_OK)
        rc = qsf_err_set(err, ld.rc, 0, 0, "no memory for the records of %s/%s", l->dir,
                         QSF_NAME_SRCPOS);
    if (rc == QSF_OK)
        l->dropped = qsf_srcpos_select(l->recs, &l->n, limit, survived, user);
    if (l->dropped)
        QSF_LOGI("%s/%s: %" PRIu32 " position(s) dropped: their flushes did not survive (above "
                 "FSN %" PRId64 ", given up, or another frame at their FSN)",
                 l->dir, QSF_NAME_SRCPOS, l->dropped, limit);
    /* zeros after the records are the room kept ahead (zero_ahead) */
    *rewrite = valid == 0 || torn || l->dropped > 0 || version != QSF_SRCPOS_VERSION;
    l->end = l->compacted_end = valid;
    l->size = size;
    return rc;
}

int qsf_srcpos_open(qsf_srcpos_log *l, int slot_dirfd, const char *slot_path, int64_t limit,
                    qsf_srcpos_survived_fn survived, void *user, qsf_errinfo *err) {
    log_init(l);
    l->dirfd = slot_dirfd;
    snprintf(l->dir, sizeof l->dir, "%s", slot_path);
    uint64_t size = 0;
    int fd = qsf_open_regular(slot_dirfd, QSF_NAME_SRCPOS, O_RDWR, &size);
    if (fd < 0 && errno != ENOENT)
        return qsf_file_err(err, errno, "cannot open", slot_path, QSF_NAME_SRCPOS);
    if (fd < 0)
        return QSF_OK; /* created by the first position (a slot that never uses one has none) */
    l->fd = fd;
    bool rewrite = false;
    int rc = load_file(l, size, limit, survived, user, &rewrite, err);
    if (rc == QSF_OK && rewrite)
        rc = qsf_srcpos_compact(l, INT64_MIN, false, err);
    if (rc != QSF_OK)
        qsf_srcpos_close(l);
    return rc;
}

void qsf_srcpos_close(qsf_srcpos_log *l) {
    if (l->fd >= 0)
        QSF_OS->close(l->fd);
    l->fd = -1;
    free(l->recs);
    l->recs = NULL;
    l->n = l->cap = 0;
    pthread_mutex_destroy(&l->mu);
}

/* ---- append, retract, sync ---- */

int qsf_srcpos_append(qsf_srcpos_log *l, const qsf_srcpos_rec *rec, uint64_t *mark,
                      qsf_errinfo *err) {
    if (rec->len == 0 || rec->len > QSF_SRCPOS_MAX)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "source position of %" PRIu32 " bytes: it must be 1..%d bytes", rec->len,
                           QSF_SRCPOS_MAX);
    pthread_mutex_lock(&l->mu);
    int rc = l->fd < 0 && l->dirfd >= 0 ? create_file(l, err) : QSF_OK;
    if (rc != QSF_OK) {
        pthread_mutex_unlock(&l->mu);
        return rc;
    }
    *mark = l->end;
    rc = push(l, rec);
    if (rc != QSF_OK)
        rc = qsf_err_set(err, rc, 0, ENOMEM, "no memory for a source position");
    if (rc == QSF_OK && l->fd >= 0) {
        uint8_t buf[QSF_SRCPOS_REC_FIXED + QSF_SRCPOS_MAX];
        size_t n = qsf_srcpos_encode(buf, rec);
        rc = zero_ahead(l, l->fd, QSF_NAME_SRCPOS, l->end + n, &l->size, err);
        if (rc == QSF_OK)
            rc = qsf_write_at(l->fd, buf, n, l->end, l->dir, QSF_NAME_SRCPOS, err);
        if (rc == QSF_OK) {
            l->end += n;
            l->dirty = true;
        } else
            l->n--;
    }
    pthread_mutex_unlock(&l->mu);
    return rc == QSF_OK ? qsf_fault_check(QSF_FP_SRCPOS_WRITTEN, err) : rc;
}

int qsf_srcpos_retract(qsf_srcpos_log *l, uint64_t mark, bool sync, qsf_errinfo *err) {
    pthread_mutex_lock(&l->mu);
    if (l->n > 0)
        l->n--;
    int rc = QSF_OK;
    if (l->fd >= 0 && l->end > mark) {
        uint8_t zeros[QSF_SRCPOS_REC_FIXED + QSF_SRCPOS_MAX] = {0};
        rc = qsf_write_at(l->fd, zeros, (size_t) (l->end - mark), mark, l->dir, QSF_NAME_SRCPOS,
                          err);
        if (rc == QSF_OK)
            l->end = mark;
        if (rc == QSF_OK && sync && QSF_OS->fdatasync(l->fd) != 0)
            rc = qsf_file_err(err, errno, "cannot sync", l->dir, QSF_NAME_SRCPOS);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

int qsf_srcpos_sync(qsf_srcpos_log *l, qsf_errinfo *err) {
    pthread_mutex_lock(&l->mu);
    int rc = QSF_OK;
    if (l->fd >= 0 && l->dirty) {
        if (QSF_OS->fdatasync(l->fd) == 0)
            l->dirty = false;
        else
            rc = qsf_err_set(err, QSF_E_DURABILITY, QSF_ERRF_RETRIABLE, errno,
                             "fdatasync of %s/%s failed: %s", l->dir, QSF_NAME_SRCPOS,
                             strerror(errno));
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* ---- compaction ---- */

/* Index of the first record to keep: the newest at or below acked (or 0). */
static uint32_t first_kept(const qsf_srcpos_log *l, int64_t acked) {
    uint32_t keep = 0;
    for (uint32_t i = 0; i < l->n; i++)
        if (l->recs[i].fsn <= acked)
            keep = i;
    return keep;
}

bool qsf_srcpos_wants_compaction(const qsf_srcpos_log *l, int64_t acked) {
    if (l->fd < 0)
        return l->n > 64 && first_kept(l, acked) > l->n / 2;
    uint64_t grown = l->end - l->compacted_end;
    return grown >= COMPACT_MIN_BYTES && first_kept(l, acked) > 0;
}

/* Writes the records [from, n) (or, `final`, the last one at FSN -1) into the
 * temporary file and syncs it. */
static int write_tmp(qsf_srcpos_log *l, uint32_t from, bool final, int *fd_out, uint64_t *end,
                     uint64_t *size, qsf_errinfo *err) {
    int fd;
    int rc = begin_file(l, TMP_NAME, &fd, err);
    if (fd < 0)
        return rc;
    uint64_t off = QSF_SRCPOS_HEADER_SIZE;
    uint8_t buf[QSF_SRCPOS_REC_FIXED + QSF_SRCPOS_MAX];
    for (uint32_t i = final && l->n ? l->n - 1 : from; rc == QSF_OK && i < l->n; i++) {
        qsf_srcpos_rec r = l->recs[i];
        if (final) { /* the slot is empty: no frame at FSN -1 */
            r.fsn = -1;
            r.has_frame = false;
        }
        size_t n = qsf_srcpos_encode(buf, &r);
        rc = qsf_write_at(fd, buf, n, off, l->dir, TMP_NAME, err);
        off += n;
    }
    *size = off;
    if (rc == QSF_OK) /* the room ahead, synced with the records */
        rc = zero_ahead(l, fd, TMP_NAME, off + REC_ROOM, size, err);
    if (rc == QSF_OK && QSF_OS->fsync(fd) != 0)
        rc = qsf_file_err(err, errno, "cannot sync", l->dir, TMP_NAME);
    if (rc != QSF_OK) {
        QSF_OS->close(fd);
        QSF_OS->unlinkat(l->dirfd, TMP_NAME, 0);
        return rc;
    }
    *fd_out = fd;
    *end = off;
    return QSF_OK;
}

static void drop_front(qsf_srcpos_log *l, uint32_t from, bool final) {
    if (final && l->n > 0) {
        l->recs[0] = l->recs[l->n - 1];
        l->recs[0].fsn = -1;
        l->recs[0].has_frame = false;
        l->n = 1;
        return;
    }
    if (from == 0)
        return; /* nothing to drop (and recs may still be NULL: memmove needs a pointer) */
    memmove(l->recs, l->recs + from, (l->n - from) * sizeof *l->recs);
    l->n -= from;
}

int qsf_srcpos_compact(qsf_srcpos_log *l, int64_t acked, bool final, qsf_errinfo *err) {
    pthread_mutex_lock(&l->mu);
    uint32_t from = first_kept(l, acked);
    int rc = QSF_OK;
    if (l->fd >= 0) { /* without a file (memory mode, or no position yet) memory only */
        int fd = -1;
        uint64_t end = 0, size = 0;
        rc = write_tmp(l, from, final, &fd, &end, &size, err);
        if (rc == QSF_OK && QSF_OS->renameat(l->dirfd, TMP_NAME, l->dirfd, QSF_NAME_SRCPOS) != 0) {
            rc = qsf_file_err(err, errno, "cannot rename into place", l->dir, TMP_NAME);
            QSF_OS->close(fd);
            QSF_OS->unlinkat(l->dirfd, TMP_NAME, 0);
        }
        if (rc == QSF_OK) {
            QSF_OS->close(l->fd);
            l->fd = fd;
            l->end = l->compacted_end = end;
            l->size = size;
            l->dirty = false;
            rc = qsf_fsync_dir(l->dirfd, l->dir, err);
        }
    }
    if (rc == QSF_OK)
        drop_front(l, from, final);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* ---- read-only view (tools) ---- */

static void view_one(void *user, const qsf_srcpos_rec *rec) {
    qsf_srcpos_view *v = user;
    v->records++;
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 16;
        qsf_srcpos_rec *p = realloc(v->recs, cap * sizeof *p);
        if (!p) {
            v->nomem = true;
            return;
        }
        v->recs = p;
        v->cap = cap;
    }
    v->recs[v->n++] = *rec;
}

/* The newest of recs[0, n) at or below limit, or NULL. */
static const qsf_srcpos_rec *newest_below(const qsf_srcpos_rec *recs, uint32_t n, int64_t limit) {
    for (uint32_t i = n; i-- > 0;)
        if (recs[i].fsn <= limit)
            return &recs[i];
    return NULL;
}

int qsf_srcpos_read_slot(const char *slot_path, qsf_srcpos_fn fn, void *user, bool *present,
                         bool *valid, uint64_t *size, uint64_t *valid_end, uint64_t *torn,
                         qsf_errinfo *err) {
    *present = *valid = false;
    *size = *valid_end = *torn = 0;
    int dirfd = QSF_OS->openat(AT_FDCWD, slot_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (dirfd < 0)
        return qsf_err_set(err, QSF_E_IO, 0, errno, "cannot open directory %s: %s", slot_path,
                           strerror(errno));
    int fd = qsf_open_regular(dirfd, QSF_NAME_SRCPOS, O_RDONLY, size);
    int e = errno;
    QSF_OS->close(dirfd);
    if (fd < 0)
        return e == ENOENT ? QSF_OK
                           : qsf_file_err(err, e, "cannot open", slot_path, QSF_NAME_SRCPOS);
    *present = true;
    uint8_t *img = malloc(*size ? *size : 1);
    int rc = img ? qsf_read_at(fd, img, *size, 0, slot_path, QSF_NAME_SRCPOS, err)
                 : qsf_err_set(err, QSF_E_NOMEM, 0, ENOMEM, "no memory to read %s/%s", slot_path,
                               QSF_NAME_SRCPOS);
    QSF_OS->close(fd);
    if (rc == QSF_OK)
        *valid = qsf_srcpos_parse(img, *size, fn, user, valid_end) == 0;
    if (rc == QSF_OK && *valid)
        *torn = qsf_srcpos_torn_bytes(img, *size, *valid_end);
    free(img);
    return rc;
}

int qsf_srcpos_view_slot(const char *slot_path, int64_t published, int64_t acked,
                         qsf_srcpos_survived_fn survived, void *user, qsf_srcpos_view *v,
                         qsf_errinfo *err) {
    memset(v, 0, sizeof *v);
    int rc = qsf_srcpos_read_slot(slot_path, view_one, v, &v->present, &v->valid, &v->size,
                                  &v->valid_end, &v->torn, err);
    if (rc == QSF_OK && v->nomem)
        rc = qsf_err_set(err, QSF_E_NOMEM, 0, ENOMEM, "no memory for the records of %s/%s",
                         slot_path, QSF_NAME_SRCPOS);
    if (rc != QSF_OK) {
        qsf_srcpos_view_free(v);
        return rc;
    }
    v->dropped = qsf_srcpos_select(v->recs, &v->n, published, survived, user);
    const qsf_srcpos_rec *pub = newest_below(v->recs, v->n, published);
    const qsf_srcpos_rec *ack = newest_below(v->recs, v->n, acked);
    v->has_published = pub;
    v->has_acked = ack;
    if (pub)
        v->published = *pub;
    if (ack)
        v->acked = *ack;
    return QSF_OK;
}

void qsf_srcpos_view_free(qsf_srcpos_view *v) {
    free(v->recs);
    v->recs = NULL;
    v->n = v->cap = 0;
}
