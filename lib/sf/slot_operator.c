/* An operator's open of a slot by its path (operator.h). */
#include "sf/operator.h"

#include "err.h"
#include "os/os.h"
#include "recover_int.h"
#include "sf/sfa.h"
#include "sf/slot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

/* <sf_dir>/<name> from a path: trailing '/' are no component. */
static int split_path(const char *path, qsf_slot *s, qsf_errinfo *err) {
    char p[QSF_SLOT_PATH_MAX];
    int n = snprintf(p, sizeof p, "%s", path);
    if (n <= 0 || n + 32 >= (int) sizeof p)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "slot path is empty or too long");
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
    char *slash = strrchr(p, '/');
    const char *name = slash ? slash + 1 : p;
    bool quarantined;
    if (!qsf_slot_dir_name(name, &quarantined))
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "%s is not a slot directory: its name must be a sender_id or "
                           "<sender_id>.unreplayable-<N>",
                           path);
    size_t len = strlen(name);
    if (len > QSF_SLOT_NAME_MAX) /* a quarantined name of a very long sender_id */
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "slot directory name %s is longer than %d bytes: rename it to open it",
                           path, QSF_SLOT_NAME_MAX);
    memcpy(s->name, name, len + 1);
    memcpy(s->path, p, (size_t) n + 1);
    if (!slash)
        snprintf(s->sf_dir, sizeof s->sf_dir, ".");
    else if (slash == p)
        snprintf(s->sf_dir, sizeof s->sf_dir, "/");
    else
        snprintf(s->sf_dir, sizeof s->sf_dir, "%.*s", (int) (slash - p), p);
    return QSF_OK;
}

static int open_dir(int atfd, const char *name, const char *shown, int *fd, qsf_errinfo *err) {
    int nofollow = atfd == AT_FDCWD ? 0 : O_NOFOLLOW;
    *fd = QSF_OS->openat(atfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | nofollow, 0);
    if (*fd >= 0)
        return QSF_OK;
    int e = errno;
    return qsf_err_set(err, QSF_E_IO, 0, e, "cannot open slot directory %s: %s", shown,
                       (e == ELOOP || e == ENOTDIR) ? "not a directory, or a symbolic link"
                                                    : strerror(e));
}

int qsf_slot_acquire_path(const char *slot_path, qsf_slot *s, qsf_errinfo *err) {
    memset(s, 0, sizeof *s);
    s->sf_dirfd = s->dirfd = s->logical_lock_fd = s->lock_fd = -1;
    int rc = split_path(slot_path, s, err);
    if (rc == QSF_OK)
        rc = open_dir(AT_FDCWD, s->sf_dir, s->sf_dir, &s->sf_dirfd, err);
    if (rc == QSF_OK) /* the directory must be there: an operator's open never creates it */
        rc = open_dir(s->sf_dirfd, s->name, s->path, &s->dirfd, err);
    if (rc == QSF_OK)
        rc = qsf_slot_lock_logical(s, err);
    if (rc == QSF_OK)
        rc = qsf_lock_file(s->dirfd, s->path, QSF_NAME_LOCK, s->path, &s->lock_fd, err);
    if (rc != QSF_OK)
        qsf_slot_close(s);
    return rc;
}

static int holds_segments(const qsf_slot *s, qsf_errinfo *err) {
    bool failed, segments;
    if (qsf_orphan_markers_at(s->dirfd, ".", &failed, &segments) != 0) {
        int e = errno;
        return qsf_err_set(err, QSF_E_IO, 0, e, "cannot list slot %s: %s", s->path, strerror(e));
    }
    return segments ? QSF_OK
                    : qsf_err_set(err, QSF_E_INVAL, 0, 0,
                                  "slot %s holds no segment: nothing to replay", s->path);
}

int qsf_slot_open_operator(const char *slot_path, int durability, uint64_t segment_bytes,
                           int wm_form, qsf_slot_recovered *out, qsf_errinfo *err) {
    memset(out, 0, sizeof *out);
    out->wm_form = wm_form;
    out->watermark.fd = out->manifest.fd = -1;
    out->watermark.fsn = -1;
    qsf_symdict_init(&out->symdict);
    int rc = qsf_slot_acquire_path(slot_path, &out->slot, err);
    if (rc != QSF_OK)
        return rc;
    rc = holds_segments(&out->slot, err);
    if (rc == QSF_OK)
        rc = qsf_rc_recover_slot(out, durability, segment_bytes, err);
    if (rc == QSF_OK && out->data_loss)
        rc = qsf_err_set(err, QSF_E_CORRUPT, 0, 0,
                         "slot %s cannot be replayed: %s (left as it is: nothing moved or marked)",
                         out->slot.path, out->data_loss_reason);
    qsf_slot_unlock_logical(&out->slot);
    if (rc != QSF_OK)
        qsf_slot_release(out);
    return rc;
}
