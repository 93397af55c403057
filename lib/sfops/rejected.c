/* <slot>/.rejected (rejected.h): reading its records, streaming through a
 * 64 KiB buffer (a record holds whole frames, which may be large), and adding
 * one by writing the whole new image beside it and renaming it into place. */
#include "sfops/rejected.h"

#include "bytes.h"
#include "crc32c.h"
#include "err.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF (64 * 1024)

/* ---- reading ---- */

typedef struct rfile {
    int fd;
    const char *dir;
    uint64_t size;
    uint8_t *buf; /* BUF bytes */
} rfile;

static int damaged(const rfile *f, uint64_t off, const char *what, qsf_errinfo *err) {
    return qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                       "%s/%s is damaged at offset %llu (%s); it holds frames set aside: move it "
                       "away and keep it",
                       f->dir, QSF_NAME_REJECTED, (unsigned long long) off, what);
}

/* CRC-32C of bytes [off, off + n) of the file. */
static int crc_of(const rfile *f, uint64_t off, uint64_t n, uint32_t *crc, qsf_errinfo *err) {
    uint32_t st = qsf_crc32c_begin();
    while (n > 0) {
        size_t k = n < BUF ? (size_t) n : BUF;
        int rc = qsf_read_at(f->fd, f->buf, k, off, f->dir, QSF_NAME_REJECTED, err);
        if (rc != QSF_OK)
            return rc;
        st = qsf_crc32c_update(st, f->buf, k);
        off += k;
        n -= k;
    }
    *crc = qsf_crc32c_end(st);
    return QSF_OK;
}

/* The frames of a SET_ASIDE record must fill it exactly: fn (may be NULL) per
 * envelope, with the frame's offset. */
typedef int (*env_fn)(void *user, const rfile *f, uint64_t off, uint32_t crc, uint32_t len,
                      qsf_errinfo *err);
static int each_frame(const rfile *f, const qsf_rejected_rec *r, env_fn fn, void *user,
                      qsf_errinfo *err) {
    uint64_t off = r->frames_off, end = r->offset + r->len - 4;
    for (uint32_t i = 0; i < r->frames; i++) {
        uint8_t env[QSF_SFA_FRAME_OVERHEAD];
        if (end - off < sizeof env)
            return damaged(f, off, "a frame runs past its record", err);
        int rc = qsf_read_at(f->fd, env, sizeof env, off, f->dir, QSF_NAME_REJECTED, err);
        uint32_t len = qsf_sfa_frame_len(env);
        if (rc == QSF_OK && len > end - off - sizeof env)
            rc = damaged(f, off, "a frame runs past its record", err);
        if (rc == QSF_OK && fn)
            rc = fn(user, f, off, qsf_sfa_frame_stored_crc(env), len, err);
        if (rc != QSF_OK)
            return rc;
        off += sizeof env + len;
    }
    return off == end ? QSF_OK : damaged(f, off, "bytes after the last frame of a record", err);
}

static void decode_header(const uint8_t *h, uint64_t off, qsf_rejected_rec *r) {
    memset(r, 0, sizeof *r);
    r->kind = h[QSF_RJR_AT_KIND];
    r->len = qsf_get_u64(h + QSF_RJR_AT_LEN);
    r->from = qsf_get_i64(h + QSF_RJR_AT_FROM);
    r->to = qsf_get_i64(h + QSF_RJR_AT_TO);
    r->at_us = qsf_get_i64(h + QSF_RJR_AT_TIME);
    r->rows = qsf_get_u64(h + QSF_RJR_AT_ROWS);
    r->frames = qsf_get_u32(h + QSF_RJR_AT_FRAMES);
    r->uncounted = qsf_get_u32(h + QSF_RJR_AT_UNCOUNTED);
    r->offset = off;
    r->frames_off = off + QSF_RJR_HEADER_SIZE + qsf_get_u32(h + QSF_RJR_AT_AUDIT_LEN);
}

static const char *header_problem(const uint8_t *h, uint64_t off, uint64_t size) {
    uint64_t len = qsf_get_u64(h + QSF_RJR_AT_LEN);
    uint32_t audit = qsf_get_u32(h + QSF_RJR_AT_AUDIT_LEN);
    if (qsf_get_u32(h + QSF_RJR_AT_MAGIC) != QSF_RJR_MAGIC)
        return "no record magic";
    if (h[QSF_RJR_AT_KIND] != QSF_RJR_SET_ASIDE && h[QSF_RJR_AT_KIND] != QSF_RJR_DONE)
        return "unknown record kind";
    if (len < QSF_RJR_HEADER_SIZE + 4 || len > size - off)
        return "record length out of range";
    if (audit > QSF_RJR_AUDIT_MAX || audit > len - QSF_RJR_HEADER_SIZE - 4)
        return "audit line length out of range";
    return NULL;
}

static int read_record(const rfile *f, uint64_t off, qsf_rejected_rec *r, qsf_errinfo *err) {
    uint8_t h[QSF_RJR_HEADER_SIZE];
    if (f->size - off < sizeof h)
        return damaged(f, off, "a record header is cut short", err);
    int rc = qsf_read_at(f->fd, h, sizeof h, off, f->dir, QSF_NAME_REJECTED, err);
    if (rc != QSF_OK)
        return rc;
    const char *bad = header_problem(h, off, f->size);
    if (bad)
        return damaged(f, off, bad, err);
    decode_header(h, off, r);
    uint8_t stored[4];
    uint32_t crc;
    rc = crc_of(f, off, r->len - 4, &crc, err);
    if (rc == QSF_OK)
        rc = qsf_read_at(f->fd, stored, 4, off + r->len - 4, f->dir, QSF_NAME_REJECTED, err);
    if (rc == QSF_OK && crc != qsf_get_u32(stored))
        rc = damaged(f, off, "record CRC mismatch", err);
    size_t alen = (size_t) (r->frames_off - off - QSF_RJR_HEADER_SIZE);
    if (rc == QSF_OK)
        rc = qsf_read_at(f->fd, r->audit, alen, off + QSF_RJR_HEADER_SIZE, f->dir,
                         QSF_NAME_REJECTED, err);
    r->audit[rc == QSF_OK ? alen : 0] = '\0';
    if (rc == QSF_OK && r->kind == QSF_RJR_DONE && r->frames != 0)
        rc = damaged(f, off, "a DONE record with frames", err);
    return rc == QSF_OK ? each_frame(f, r, NULL, NULL, err) : rc;
}

static int push(qsf_rejected_list *l, const qsf_rejected_rec *r, qsf_errinfo *err) {
    qsf_rejected_rec *v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the records of .rejected");
    l->v = v;
    l->v[l->n++] = *r;
    return QSF_OK;
}

static void mark_done(qsf_rejected_list *l) {
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->v[i].kind != QSF_RJR_DONE)
            continue;
        for (uint32_t k = i; k-- > 0;)
            if (l->v[k].kind == QSF_RJR_SET_ASIDE && l->v[k].from == l->v[i].from &&
                l->v[k].to == l->v[i].to) {
                l->v[k].done = true;
                break;
            }
    }
}

static int check_file_header(const rfile *f, qsf_errinfo *err) {
    uint8_t h[QSF_RJF_HEADER_SIZE];
    if (f->size < sizeof h)
        return damaged(f, 0, "shorter than its header", err);
    int rc = qsf_read_at(f->fd, h, sizeof h, 0, f->dir, QSF_NAME_REJECTED, err);
    if (rc == QSF_OK &&
        (qsf_get_u32(h) != QSF_RJF_MAGIC || h[4] != QSF_RJF_VERSION || h[5] || h[6] || h[7]))
        rc = damaged(f, 0, "not an RJF1 version 1 file", err);
    return rc;
}

static int read_all(const rfile *f, qsf_rejected_list *out, qsf_errinfo *err) {
    int rc = check_file_header(f, err);
    for (uint64_t off = QSF_RJF_HEADER_SIZE; rc == QSF_OK && off < f->size;) {
        qsf_rejected_rec *r = malloc(sizeof *r);
        rc = r ? read_record(f, off, r, err)
               : qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to read .rejected");
        if (rc == QSF_OK)
            rc = push(out, r, err);
        if (rc == QSF_OK)
            off += r->len;
        free(r);
    }
    mark_done(out);
    return rc;
}

static int open_file(int slot_dirfd, const char *slot_path, rfile *f, bool *present,
                     qsf_errinfo *err) {
    *f = (rfile){.fd = -1, .dir = slot_path};
    f->fd = qsf_open_regular(slot_dirfd, QSF_NAME_REJECTED, O_RDONLY, &f->size);
    *present = f->fd >= 0;
    if (f->fd < 0)
        return errno == ENOENT
                   ? QSF_OK
                   : qsf_file_err(err, errno, "cannot open", slot_path, QSF_NAME_REJECTED);
    f->buf = malloc(BUF);
    if (!f->buf) {
        QSF_OS->close(f->fd);
        f->fd = -1;
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to read .rejected");
    }
    return QSF_OK;
}

static void close_file(rfile *f) {
    if (f->fd >= 0)
        QSF_OS->close(f->fd);
    free(f->buf);
    f->fd = -1;
    f->buf = NULL;
}

int qsf_rejected_read(int slot_dirfd, const char *slot_path, qsf_rejected_list *out,
                      qsf_errinfo *err) {
    memset(out, 0, sizeof *out);
    rfile f;
    int rc = open_file(slot_dirfd, slot_path, &f, &out->present, err);
    if (rc == QSF_OK && out->present)
        rc = read_all(&f, out, err);
    close_file(&f);
    if (rc != QSF_OK)
        qsf_rejected_list_free(out);
    return rc;
}

void qsf_rejected_list_free(qsf_rejected_list *l) {
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* ---- one record's frames ---- */

typedef struct frames_ctx {
    qsf_rejected_frame_fn fn;
    void *user;
    uint8_t *p;
    size_t cap;
} frames_ctx;

static int give_frame(void *user, const rfile *f, uint64_t off, uint32_t crc, uint32_t len,
                      qsf_errinfo *err) {
    frames_ctx *c = user;
    if (len > c->cap) {
        uint8_t *np = realloc(c->p, len);
        if (!np)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a %u-byte frame", len);
        c->p = np;
        c->cap = len;
    }
    int rc = len ? qsf_read_at(f->fd, c->p, len, off + QSF_SFA_FRAME_OVERHEAD, f->dir,
                               QSF_NAME_REJECTED, err)
                 : QSF_OK;
    if (rc == QSF_OK && qsf_sfa_frame_crc(c->p, len) != crc)
        rc = damaged(f, off, "a set-aside frame fails its CRC", err);
    return rc == QSF_OK ? c->fn(c->user, crc, c->p, len) : rc;
}

int qsf_rejected_frames(int slot_dirfd, const char *slot_path, const qsf_rejected_rec *rec,
                        qsf_rejected_frame_fn fn, void *user, qsf_errinfo *err) {
    rfile f;
    bool present;
    int rc = open_file(slot_dirfd, slot_path, &f, &present, err);
    if (rc == QSF_OK && !present)
        rc = qsf_err_set(err, QSF_E_IO, 0, ENOENT, "%s/%s is gone", slot_path, QSF_NAME_REJECTED);
    frames_ctx c = {.fn = fn, .user = user};
    if (rc == QSF_OK && rec->offset + rec->len > f.size)
        rc = damaged(&f, rec->offset, "the record is no longer there", err);
    if (rc == QSF_OK)
        rc = each_frame(&f, rec, give_frame, &c, err);
    free(c.p);
    close_file(&f);
    return rc;
}

/* ---- adding a record ---- */

struct qsf_rejected_writer {
    qsf_bufw out; /* into .rejected.tmp; buf: BUF bytes */
    uint32_t crc; /* running state over the record */
};

/* Bytes into the file, not into the record's CRC (the file header, copies of
 * the records there are). */
static int w_raw(qsf_rejected_writer *w, const void *p, size_t n, qsf_errinfo *err) {
    return qsf_bufw_put(&w->out, p, n, err);
}

int qsf_rejected_put(qsf_rejected_writer *w, const void *p, size_t n, qsf_errinfo *err) {
    w->crc = qsf_crc32c_update(w->crc, p, n);
    return w_raw(w, p, n, err);
}

/* The records already in .rejected, byte for byte (all validated first). */
static int copy_old(int slot_dirfd, const char *slot_path, qsf_rejected_writer *w,
                    qsf_errinfo *err) {
    rfile f;
    bool present;
    qsf_rejected_list l = {0};
    int rc = open_file(slot_dirfd, slot_path, &f, &present, err);
    if (rc == QSF_OK && present)
        rc = read_all(&f, &l, err);
    qsf_rejected_list_free(&l);
    if (rc == QSF_OK && !present) {
        uint8_t h[QSF_RJF_HEADER_SIZE] = {0};
        qsf_put_u32(h, QSF_RJF_MAGIC);
        h[4] = QSF_RJF_VERSION;
        rc = w_raw(w, h, sizeof h, err);
    }
    for (uint64_t off = 0; rc == QSF_OK && present && off < f.size;) {
        size_t k = f.size - off < BUF ? (size_t) (f.size - off) : BUF;
        rc = qsf_read_at(f.fd, f.buf, k, off, slot_path, QSF_NAME_REJECTED, err);
        if (rc == QSF_OK)
            rc = w_raw(w, f.buf, k, err);
        off += k;
    }
    close_file(&f);
    return rc;
}

static uint64_t record_len(const qsf_rejected_new *r) {
    return QSF_RJR_HEADER_SIZE + strlen(r->audit) + r->frames_bytes + 4;
}

static int put_record(qsf_rejected_writer *w, const qsf_rejected_new *r, qsf_errinfo *err) {
    uint8_t h[QSF_RJR_HEADER_SIZE] = {0};
    size_t alen = strlen(r->audit);
    qsf_put_u32(h + QSF_RJR_AT_MAGIC, QSF_RJR_MAGIC);
    h[QSF_RJR_AT_KIND] = (uint8_t) r->kind;
    qsf_put_u64(h + QSF_RJR_AT_LEN, record_len(r));
    qsf_put_i64(h + QSF_RJR_AT_FROM, r->from);
    qsf_put_i64(h + QSF_RJR_AT_TO, r->to);
    qsf_put_i64(h + QSF_RJR_AT_TIME, r->at_us);
    qsf_put_u64(h + QSF_RJR_AT_ROWS, r->rows);
    qsf_put_u32(h + QSF_RJR_AT_FRAMES, r->frames);
    qsf_put_u32(h + QSF_RJR_AT_UNCOUNTED, r->uncounted);
    qsf_put_u32(h + QSF_RJR_AT_AUDIT_LEN, (uint32_t) alen);
    w->crc = qsf_crc32c_begin();
    int rc = qsf_rejected_put(w, h, sizeof h, err);
    if (rc == QSF_OK)
        rc = qsf_rejected_put(w, r->audit, alen, err);
    uint64_t before = w->out.off + w->out.used;
    if (rc == QSF_OK && r->write_frames)
        rc = r->write_frames(r->user, w, err);
    if (rc == QSF_OK && w->out.off + w->out.used - before != r->frames_bytes)
        rc = qsf_err_set(err, QSF_E_INVAL, 0, 0, "set-aside record: %llu frame bytes, %llu written",
                         (unsigned long long) r->frames_bytes,
                         (unsigned long long) (w->out.off + w->out.used - before));
    uint8_t crc[4];
    qsf_put_u32(crc, qsf_crc32c_end(w->crc));
    return rc == QSF_OK ? w_raw(w, crc, sizeof crc, err) : rc;
}

static int check_new(const qsf_rejected_new *r, qsf_errinfo *err) {
    size_t alen = strlen(r->audit);
    if (alen == 0 || alen > QSF_RJR_AUDIT_MAX || r->audit[alen - 1] != '\n' ||
        memchr(r->audit, '\n', alen) != r->audit + alen - 1)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "a set-aside audit line is one line of at most %d bytes",
                           QSF_RJR_AUDIT_MAX);
    if ((r->kind == QSF_RJR_DONE) != (r->frames == 0) || r->from > r->to)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "a malformed set-aside record");
    return QSF_OK;
}

static int sync_tmp(int fd, const char *slot_path, qsf_errinfo *err) {
    if (QSF_OS->fsync(fd) == 0)
        return QSF_OK;
    int e = errno;
    return qsf_err_set(err, QSF_E_DURABILITY, 0, e, "fsync of %s/%s failed: %s", slot_path,
                       QSF_NAME_REJECTED_TMP, strerror(e));
}

static int write_image(int slot_dirfd, const char *slot_path, qsf_rejected_writer *w,
                       const qsf_rejected_new *r, qsf_errinfo *err) {
    int rc = copy_old(slot_dirfd, slot_path, w, err);
    if (rc == QSF_OK)
        rc = put_record(w, r, err);
    if (rc == QSF_OK)
        rc = qsf_bufw_flush(&w->out, err);
    if (rc == QSF_OK)
        rc = sync_tmp(w->out.fd, slot_path, err);
    return rc;
}

int qsf_rejected_append(int slot_dirfd, const char *slot_path, const qsf_rejected_new *r,
                        qsf_errinfo *err) {
    int rc = check_new(r, err);
    if (rc == QSF_OK) /* left by an interrupted append: never renamed, so never ours to keep */
        rc = qsf_unlink_quiet(slot_dirfd, slot_path, QSF_NAME_REJECTED_TMP, err);
    if (rc != QSF_OK)
        return rc;
    qsf_rejected_writer w = {
        .out = {.dir = slot_path, .name = QSF_NAME_REJECTED_TMP, .buf = malloc(BUF), .cap = BUF}};
    qsf_bufw *o = &w.out;
    o->fd = o->buf ? qsf_open_regular(slot_dirfd, QSF_NAME_REJECTED_TMP,
                                      O_WRONLY | O_CREAT | O_EXCL, NULL)
                   : -1;
    if (!o->buf)
        rc = qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to write .rejected");
    else if (o->fd < 0)
        rc = qsf_file_err(err, errno, "cannot create", slot_path, QSF_NAME_REJECTED_TMP);
    if (rc == QSF_OK)
        rc = write_image(slot_dirfd, slot_path, &w, r, err);
    if (o->fd >= 0)
        QSF_OS->close(o->fd);
    free(o->buf);
    if (rc == QSF_OK &&
        QSF_OS->renameat(slot_dirfd, QSF_NAME_REJECTED_TMP, slot_dirfd, QSF_NAME_REJECTED) != 0)
        rc = qsf_file_err(err, errno, "cannot rename into place", slot_path, QSF_NAME_REJECTED_TMP);
    if (rc != QSF_OK) {
        QSF_OS->unlinkat(slot_dirfd, QSF_NAME_REJECTED_TMP, 0);
        return rc;
    }
    return qsf_fsync_dir(slot_dirfd, slot_path, err);
}
