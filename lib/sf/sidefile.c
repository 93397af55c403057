/* .ack-watermark (AKW1) and sf-manifest.bin (SFM1): dual-slot record files.
 * Layout diagram in sidefile.h; format in docs/FORMAT.md §3. */
#include "sf/sidefile.h"

#include "bytes.h"
#include "crc32c.h"
#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/sfa.h"
#include "sf/sfio.h"
#include "sf/slot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#define REC QSF_DUAL_RECORD_SIZE

/* ---- record codec ---- */

static void rec_begin(uint8_t rec[REC], uint32_t magic, int64_t generation) {
    memset(rec, 0, REC);
    qsf_put_u32(rec, magic);
    qsf_put_u32(rec + 4, 1);
    qsf_put_i64(rec + 8, generation);
}

/* The CRC goes in last, over everything before it. */
static void rec_seal(uint8_t rec[REC]) {
    qsf_put_u32(rec + QSF_DUAL_CRC_OFFSET, qsf_crc32c(rec, QSF_DUAL_CRC_OFFSET));
}

/* Common header checks: magic, version 1, CRC, generation > 0. */
static int rec_check(const uint8_t rec[REC], uint32_t magic, int64_t *generation) {
    if (qsf_get_u32(rec) != magic || qsf_get_u32(rec + 4) != 1)
        return -1;
    if (qsf_get_u32(rec + QSF_DUAL_CRC_OFFSET) != qsf_crc32c(rec, QSF_DUAL_CRC_OFFSET))
        return -1;
    *generation = qsf_get_i64(rec + 8);
    return *generation > 0 ? 0 : -1;
}

void qsf_akw_encode(uint8_t rec[64], int64_t generation, int64_t fsn) {
    rec_begin(rec, QSF_AKW_MAGIC, generation);
    qsf_put_i64(rec + 16, fsn);
    rec_seal(rec);
}

int qsf_akw_decode(const uint8_t rec[64], int64_t *generation, int64_t *fsn) {
    if (rec_check(rec, QSF_AKW_MAGIC, generation) != 0)
        return -1;
    *fsn = qsf_get_i64(rec + 16);
    return *fsn >= -1 ? 0 : -1;
}

void qsf_akw_compact_encode(uint8_t out[QSF_AKW_COMPACT_SIZE], int64_t fsn) {
    qsf_put_u32(out, QSF_AKW_MAGIC);
    qsf_put_u32(out + 4, 0);
    qsf_put_i64(out + 8, fsn);
}

int qsf_akw_compact_decode(const uint8_t in[QSF_AKW_COMPACT_SIZE], int64_t *fsn) {
    if (qsf_get_u32(in) != QSF_AKW_MAGIC || qsf_get_u32(in + 4) != 0)
        return -1;
    *fsn = qsf_get_i64(in + 8);
    return *fsn >= -1 ? 0 : -1;
}

int qsf_akw_read_image(const uint8_t *img, uint64_t size, int64_t *generation, int64_t *fsn) {
    if (size == QSF_DUAL_FILE_SIZE)
        return qsf_akw_pick(img, generation, fsn);
    *generation = 0;
    return size == QSF_AKW_COMPACT_SIZE ? qsf_akw_compact_decode(img, fsn) : -1;
}

void qsf_sfm_encode(uint8_t rec[64], int64_t generation, int64_t head_base, int64_t active_base) {
    rec_begin(rec, QSF_SFM_MAGIC, generation);
    qsf_put_i64(rec + 16, head_base);
    qsf_put_i64(rec + 24, active_base);
    rec_seal(rec);
}

int qsf_sfm_decode(const uint8_t rec[64], int64_t *generation, int64_t *head_base,
                   int64_t *active_base) {
    if (rec_check(rec, QSF_SFM_MAGIC, generation) != 0)
        return -1;
    *head_base = qsf_get_i64(rec + 16);
    *active_base = qsf_get_i64(rec + 24);
    return (*head_base >= 0 && *active_base >= *head_base) ? 0 : -1;
}

int qsf_akw_pick(const uint8_t file[8192], int64_t *generation, int64_t *fsn) {
    int64_t g[2], v[2];
    int ok[2];
    for (int i = 0; i < 2; i++)
        ok[i] = qsf_akw_decode(file + i * QSF_DUAL_SLOT_SIZE, &g[i], &v[i]) == 0;
    if (!ok[0] && !ok[1])
        return -1;
    int w = (ok[1] && (!ok[0] || g[1] > g[0])) ? 1 : 0;
    *generation = g[w];
    *fsn = v[w];
    return 0;
}

int qsf_sfm_pick(const uint8_t file[8192], int64_t *generation, int64_t *head_base,
                 int64_t *active_base) {
    int64_t g[2], h[2], a[2];
    int ok[2];
    for (int i = 0; i < 2; i++)
        ok[i] = qsf_sfm_decode(file + i * QSF_DUAL_SLOT_SIZE, &g[i], &h[i], &a[i]) == 0;
    if (!ok[0] && !ok[1])
        return -1;
    int w = (ok[1] && (!ok[0] || g[1] > g[0])) ? 1 : 0;
    *generation = g[w];
    *head_base = h[w];
    *active_base = a[w];
    return 0;
}

/* ---- shared file plumbing ---- */

/* Offset of the record with generation `next` (1 -> slot B, 2 -> slot A, ...). */
static uint64_t rec_offset(int64_t next) {
    return (uint64_t) (next & 1) * QSF_DUAL_SLOT_SIZE;
}

/* Opens an existing dual-slot file: fd >= 0 and its size, or fd -1 when missing. */
static int dual_open(int dirfd, const char *dir, const char *name, int *fd, uint64_t *size,
                     qsf_errinfo *err) {
    *fd = qsf_open_regular(dirfd, name, O_RDWR, size);
    if (*fd >= 0 || errno == ENOENT)
        return QSF_OK;
    return qsf_file_err(err, errno, "cannot open", dir, name);
}

static int dual_read(int fd, uint8_t img[QSF_DUAL_FILE_SIZE], const char *dir, const char *name,
                     qsf_errinfo *err) {
    return qsf_read_at(fd, img, QSF_DUAL_FILE_SIZE, 0, dir, name, err);
}

static int fd_sync(int fd, const char *dir, const char *name, qsf_errinfo *err) {
    if (QSF_OS->fsync(fd) == 0)
        return QSF_OK;
    int e = errno;
    return qsf_err_set(err, QSF_E_DURABILITY, QSF_ERRF_RETRIABLE, e, "fsync of %s/%s failed: %s",
                       dir, name, strerror(e));
}

/* Positioned write of one record for generation `next`, then the numbered
 * fault point "record written, not synced". */
static int rec_write(int fd, const uint8_t rec[REC], int64_t next, const char *dir,
                     const char *name, int fault_point, qsf_errinfo *err) {
    int rc = qsf_write_at(fd, rec, REC, rec_offset(next), dir, name, err);
    return rc == QSF_OK ? qsf_fault_check(fault_point, err) : rc;
}

/* A winning record at generation INT64_MAX cannot take generation + 1 (the
 * write would overflow and land as an invalid record, lost behind the old
 * one). Its values are rewritten as generation 2 in slot A, synced, then as
 * generation 1 in slot B (where the odd INT64_MAX lives), synced: every state
 * in between reads back the same values. The caller then adopts generation 2. */
static int rec_renumber(int fd, const uint8_t r2[REC], const uint8_t r1[REC], const char *dir,
                        const char *name, qsf_errinfo *err) {
    QSF_LOGW("%s/%s: record generation %lld cannot advance; renumbering it", dir, name,
             (long long) INT64_MAX);
    int rc = qsf_write_at(fd, r2, REC, rec_offset(2), dir, name, err);
    if (rc == QSF_OK)
        rc = fd_sync(fd, dir, name, err);
    if (rc == QSF_OK)
        rc = qsf_write_at(fd, r1, REC, rec_offset(1), dir, name, err);
    return rc == QSF_OK ? fd_sync(fd, dir, name, err) : rc;
}

static int handle_sync(int fd, const char *dir, const char *name, qsf_errinfo *err) {
    if (fd < 0)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "sync of %s/%s: file not open", dir, name);
    return fd_sync(fd, dir, name, err);
}

static void handle_close(int *fd) {
    if (*fd >= 0)
        QSF_OS->close(*fd);
    *fd = -1;
}

/* ---- .ack-watermark ---- */

static void set_dir(char out[1024], const char *dir) {
    snprintf(out, 1024, "%s", dir);
}

static void wm_init(qsf_watermark *wm, const char *dir) {
    memset(wm, 0, sizeof *wm);
    set_dir(wm->dir, dir);
    wm->fd = -1;
    wm->fsn = -1;
}

/* Size of a new file of that form. */
static uint64_t wm_form_size(int form) {
    return form == QSF_WM_DUAL ? QSF_DUAL_FILE_SIZE : QSF_AKW_COMPACT_SIZE;
}

/* A file of neither known size is never trusted: it is cut to zero,
 * preallocated to the zero bytes of a new file of `form` and synced. */
static int wm_reset(int fd, const char *dir, int form, qsf_errinfo *err) {
    if (QSF_OS->ftruncate(fd, 0) != 0)
        return qsf_file_err(err, errno, "cannot reset", dir, QSF_NAME_WATERMARK);
    int e = QSF_OS->fallocate(fd, 0, (off_t) wm_form_size(form));
    if (e != 0)
        return qsf_file_err(err, e, "cannot preallocate", dir, QSF_NAME_WATERMARK);
    return fd_sync(fd, dir, QSF_NAME_WATERMARK, err);
}

static int wm_renumber(qsf_watermark *wm, qsf_errinfo *err) {
    uint8_t r2[REC], r1[REC];
    qsf_akw_encode(r2, 2, wm->fsn);
    qsf_akw_encode(r1, 1, wm->fsn);
    int rc = rec_renumber(wm->fd, r2, r1, wm->dir, QSF_NAME_WATERMARK, err);
    if (rc == QSF_OK)
        wm->generation = 2;
    return rc;
}

/* The Java client's 16-byte form is read as the hint it is and kept, so that
 * client still reads the slot after qsf acknowledged more of it (it ignores a
 * file of any other size). A file without a value stays absent until the first
 * write gives it one. */
static int wm_open_compact(qsf_watermark *wm, qsf_errinfo *err) {
    uint8_t b[QSF_AKW_COMPACT_SIZE];
    int rc = qsf_read_at(wm->fd, b, sizeof b, 0, wm->dir, QSF_NAME_WATERMARK, err);
    if (rc != QSF_OK)
        return rc;
    wm->compact = true;
    wm->present = qsf_akw_compact_decode(b, &wm->fsn) == 0;
    if (!wm->present)
        wm->fsn = -1;
    QSF_LOGI("%s/%s is the 16-byte form (%s); kept in that form", wm->dir, QSF_NAME_WATERMARK,
             wm->present ? "value read" : "no value yet");
    return QSF_OK;
}

int qsf_watermark_open(int slot_dirfd, const char *slot_path, int form, qsf_watermark *wm,
                       qsf_errinfo *err) {
    wm_init(wm, slot_path);
    uint64_t size = 0;
    int fd, rc = dual_open(slot_dirfd, slot_path, QSF_NAME_WATERMARK, &fd, &size, err);
    if (rc != QSF_OK || fd < 0)
        return rc;
    wm->fd = fd;
    if (size == QSF_AKW_COMPACT_SIZE) {
        rc = wm_open_compact(wm, err);
    } else if (size != QSF_DUAL_FILE_SIZE) {
        QSF_LOGW("resetting %s/%s to %llu zero bytes: size %llu is neither %d nor %d (damaged; "
                 "not trusted)",
                 slot_path, QSF_NAME_WATERMARK, (unsigned long long) wm_form_size(form),
                 (unsigned long long) size, QSF_DUAL_FILE_SIZE, QSF_AKW_COMPACT_SIZE);
        wm->reset = true;
        wm->compact = form != QSF_WM_DUAL;
        rc = wm_reset(fd, slot_path, form, err);
    } else {
        uint8_t img[QSF_DUAL_FILE_SIZE];
        rc = dual_read(fd, img, slot_path, QSF_NAME_WATERMARK, err);
        if (rc == QSF_OK)
            wm->present = qsf_akw_pick(img, &wm->generation, &wm->fsn) == 0;
        if (rc == QSF_OK && wm->present && wm->generation == INT64_MAX)
            rc = wm_renumber(wm, err);
    }
    if (rc != QSF_OK)
        qsf_watermark_close(wm);
    return rc;
}

int qsf_watermark_create(int slot_dirfd, const char *slot_path, int form, qsf_watermark *wm,
                         qsf_errinfo *err) {
    wm_init(wm, slot_path);
    int rc = qsf_unlink_quiet(slot_dirfd, slot_path, QSF_NAME_WATERMARK, err);
    if (rc != QSF_OK)
        return rc;
    int fd;
    rc = qsf_create_prealloc(slot_dirfd, slot_path, QSF_NAME_WATERMARK, wm_form_size(form), &fd,
                             err);
    if (rc != QSF_OK)
        return rc;
    rc = fd_sync(fd, slot_path, QSF_NAME_WATERMARK, err);
    if (rc != QSF_OK) {
        QSF_OS->close(fd);
        QSF_OS->unlinkat(slot_dirfd, QSF_NAME_WATERMARK, 0);
        return rc;
    }
    wm->fd = fd;
    wm->compact = form != QSF_WM_DUAL;
    return QSF_OK;
}

int qsf_watermark_write(qsf_watermark *wm, int64_t fsn, qsf_errinfo *err) {
    if (wm->fd < 0 || fsn < -1)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "watermark write of fsn %lld: %s",
                           (long long) fsn, wm->fd < 0 ? "file not open" : "fsn below -1");
    int64_t next = wm->generation + 1;
    int rc;
    if (wm->compact) {
        uint8_t b[QSF_AKW_COMPACT_SIZE];
        qsf_akw_compact_encode(b, fsn);
        rc = qsf_write_at(wm->fd, b, sizeof b, 0, wm->dir, QSF_NAME_WATERMARK, err);
        rc = rc == QSF_OK ? qsf_fault_check(QSF_FP_WATERMARK_WRITTEN, err) : rc;
    } else {
        uint8_t rec[REC];
        qsf_akw_encode(rec, next, fsn);
        rc = rec_write(wm->fd, rec, next, wm->dir, QSF_NAME_WATERMARK, QSF_FP_WATERMARK_WRITTEN,
                       err);
    }
    if (rc != QSF_OK)
        return rc;
    wm->generation = next;
    wm->fsn = fsn;
    return QSF_OK;
}

int qsf_watermark_sync(qsf_watermark *wm, qsf_errinfo *err) {
    return handle_sync(wm->fd, wm->dir, QSF_NAME_WATERMARK, err);
}

void qsf_watermark_close(qsf_watermark *wm) {
    handle_close(&wm->fd);
}

/* ---- sf-manifest.bin ---- */

static void mf_init(qsf_manifest *m, const char *dir) {
    memset(m, 0, sizeof *m);
    set_dir(m->dir, dir);
    m->fd = -1;
}

/* Debris of an interrupted creation: set aside as .corrupt (never replacing
 * earlier debris; removed if the rename fails), then the directory is synced. */
static int mf_set_aside(int dirfd, const char *dir, qsf_errinfo *err) {
    QSF_LOGW("%s/%s has no valid record or a wrong size; setting it aside", dir, QSF_NAME_MANIFEST);
    int rc = qsf_slot_quarantine_file(dirfd, dir, QSF_NAME_MANIFEST, NULL, err);
    return rc == QSF_OK ? qsf_fsync_dir(dirfd, dir, err) : rc;
}

static int mf_renumber(qsf_manifest *m, qsf_errinfo *err) {
    uint8_t r2[REC], r1[REC];
    qsf_sfm_encode(r2, 2, m->head_base, m->active_base);
    qsf_sfm_encode(r1, 1, m->head_base, m->active_base);
    int rc = rec_renumber(m->fd, r2, r1, m->dir, QSF_NAME_MANIFEST, err);
    if (rc == QSF_OK)
        m->generation = 2;
    return rc;
}

int qsf_manifest_open(int slot_dirfd, const char *slot_path, qsf_manifest *m, qsf_errinfo *err) {
    mf_init(m, slot_path);
    uint64_t size = 0;
    int fd, rc = dual_open(slot_dirfd, slot_path, QSF_NAME_MANIFEST, &fd, &size, err);
    if (rc != QSF_OK || fd < 0)
        return rc;
    bool valid = false;
    if (size == QSF_DUAL_FILE_SIZE) {
        uint8_t img[QSF_DUAL_FILE_SIZE];
        rc = dual_read(fd, img, slot_path, QSF_NAME_MANIFEST, err);
        if (rc != QSF_OK) {
            QSF_OS->close(fd);
            return rc;
        }
        valid = qsf_sfm_pick(img, &m->generation, &m->head_base, &m->active_base) == 0;
    }
    if (valid) {
        m->fd = fd;
        rc = m->generation == INT64_MAX ? mf_renumber(m, err) : QSF_OK;
        if (rc != QSF_OK)
            qsf_manifest_close(m);
        return rc;
    }
    QSF_OS->close(fd);
    m->renamed_corrupt = true;
    return mf_set_aside(slot_dirfd, slot_path, err);
}

int qsf_manifest_create(int slot_dirfd, const char *slot_path, int64_t head_base,
                        int64_t active_base, qsf_manifest *m, qsf_errinfo *err) {
    mf_init(m, slot_path);
    if (head_base < 0 || active_base < head_base)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "manifest bounds head %lld active %lld",
                           (long long) head_base, (long long) active_base);
    int fd;
    int rc =
        qsf_create_prealloc(slot_dirfd, slot_path, QSF_NAME_MANIFEST, QSF_DUAL_FILE_SIZE, &fd, err);
    if (rc != QSF_OK)
        return rc;
    uint8_t rec[REC];
    qsf_sfm_encode(rec, 1, head_base, active_base);
    rc = rec_write(fd, rec, 1, slot_path, QSF_NAME_MANIFEST, QSF_FP_MANIFEST_WRITTEN, err);
    if (rc == QSF_OK)
        rc = fd_sync(fd, slot_path, QSF_NAME_MANIFEST, err);
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(slot_dirfd, slot_path, err);
    if (rc != QSF_OK) {
        QSF_OS->close(fd);
        QSF_OS->unlinkat(slot_dirfd, QSF_NAME_MANIFEST, 0);
        return rc;
    }
    m->fd = fd;
    m->generation = 1;
    m->head_base = head_base;
    m->active_base = active_base;
    return QSF_OK;
}

/* The last sync failed after generation N was written into its slot (over
 * N-2). After a failed writeback the kernel may have marked the page clean and
 * dropped the error, so a plain retry of the fsync could succeed with nothing
 * on disk (docs/DURABILITY.md §8); and N+1 goes into the other slot, over N-1, the
 * newest record known to be on disk, so writing it before N is durable could
 * leave no valid record after a crash. So N is written again, in its own
 * slot, and synced first. */
static int manifest_resync(qsf_manifest *m, qsf_errinfo *err) {
    uint8_t rec[REC];
    qsf_sfm_encode(rec, m->generation, m->head_base, m->active_base);
    int rc = rec_write(m->fd, rec, m->generation, m->dir, QSF_NAME_MANIFEST,
                       QSF_FP_MANIFEST_WRITTEN, err);
    return rc == QSF_OK ? qsf_manifest_sync(m, err) : rc;
}

int qsf_manifest_write(qsf_manifest *m, int64_t head_base, int64_t active_base, bool *written,
                       qsf_errinfo *err) {
    if (written)
        *written = false;
    if (m->fd < 0)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "manifest write: file not open");
    /* Boundaries only move forward: a stale request is clamped, not an error. */
    int64_t h = head_base > m->head_base ? head_base : m->head_base;
    int64_t a = active_base > m->active_base ? active_base : m->active_base;
    if (a < h)
        a = h;
    bool rewrote = false;
    if (m->resync) {
        int rc = manifest_resync(m, err);
        if (rc != QSF_OK)
            return rc;
        rewrote = true;
    }
    if (h == m->head_base && a == m->active_base) {
        if (written)
            *written = rewrote;
        return QSF_OK;
    }
    int64_t next = m->generation + 1;
    uint8_t rec[REC];
    qsf_sfm_encode(rec, next, h, a);
    int rc = rec_write(m->fd, rec, next, m->dir, QSF_NAME_MANIFEST, QSF_FP_MANIFEST_WRITTEN, err);
    if (rc != QSF_OK)
        return rc;
    m->generation = next;
    m->head_base = h;
    m->active_base = a;
    if (written)
        *written = true;
    return QSF_OK;
}

int qsf_manifest_correct(qsf_manifest *m, int64_t head_base, int64_t active_base,
                         qsf_errinfo *err) {
    if (m->fd < 0 || head_base < 0 || active_base < head_base)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "manifest correction to head %lld active %lld%s",
                           (long long) head_base, (long long) active_base,
                           m->fd < 0 ? ": file not open" : "");
    if (m->resync) {
        int rc = manifest_resync(m, err);
        if (rc != QSF_OK)
            return rc;
    }
    if (head_base == m->head_base && active_base == m->active_base)
        return QSF_OK;
    int64_t next = m->generation + 1;
    uint8_t rec[REC];
    qsf_sfm_encode(rec, next, head_base, active_base);
    int rc = rec_write(m->fd, rec, next, m->dir, QSF_NAME_MANIFEST, QSF_FP_MANIFEST_WRITTEN, err);
    if (rc == QSF_OK)
        rc = qsf_manifest_sync(m, err);
    if (rc != QSF_OK)
        return rc;
    m->generation = next;
    m->head_base = head_base;
    m->active_base = active_base;
    return QSF_OK;
}

int qsf_manifest_sync(qsf_manifest *m, qsf_errinfo *err) {
    int rc = handle_sync(m->fd, m->dir, QSF_NAME_MANIFEST, err);
    m->resync = rc != QSF_OK;
    return rc;
}

void qsf_manifest_close(qsf_manifest *m) {
    handle_close(&m->fd);
}
