/* The drained-close cleanup of a slot (docs/DURABILITY.md §12 steps 4-6, recover.h):
 * its segments, then its side files with the watermark last, then the logical
 * lock file. */
#include "recover_int.h"

#include "os/fileutil.h"
#include "os/os.h"
#include "sf/sfa.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

int qsf_slot_unlink_segments(qsf_slot *s, const char *const *names, uint32_t n, qsf_errinfo *err) {
    for (uint32_t i = 0; i < n; i++) {
        int rc = qsf_unlink_quiet(s->dirfd, s->path, names[i], err);
        if (rc == QSF_OK)
            rc = qsf_fault_check(QSF_FP_SEGMENT_UNLINKED, err);
        if (rc != QSF_OK)
            return rc;
    }
    return qsf_fsync_dir(s->dirfd, s->path, err);
}

/* Unlinks <sf_dir>/.slot-locks/<slot>.lock and .pid (only while holding it). */
static int remove_logical_lock(qsf_slot *s, qsf_errinfo *err) {
    int fd = QSF_OS->openat(s->sf_dirfd, QSF_NAME_SLOT_LOCKS,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0)
        return qsf_file_err(err, errno, "cannot open", s->sf_dir, QSF_NAME_SLOT_LOCKS);
    char name[QSF_SLOT_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s.lock", s->name);
    int rc = qsf_unlink_quiet(fd, s->sf_dir, name, err);
    snprintf(name, sizeof name, "%s.lock.pid", s->name);
    if (rc == QSF_OK)
        rc = qsf_unlink_quiet(fd, s->sf_dir, name, err);
    QSF_OS->close(fd);
    return rc;
}

int qsf_slot_remove_sidefiles(qsf_slot_recovered *r, qsf_errinfo *err) {
    qsf_slot *s = &r->slot;
    qsf_errinfo lock_err;
    bool have_logical = qsf_slot_lock_logical(s, &lock_err) == QSF_OK;
    qsf_manifest_close(&r->manifest);
    qsf_symdict_close(&r->symdict);
    qsf_watermark_close(&r->watermark);
    /* The watermark goes last: a crash before it still covers what is left. */
    static const char *const order[] = {QSF_NAME_PUBLISHED, QSF_NAME_MANIFEST, QSF_NAME_SYMDICT,
                                        QSF_NAME_WATERMARK};
    int rc = QSF_OK;
    for (int i = 0; i < 4 && rc == QSF_OK; i++)
        rc = qsf_unlink_quiet(s->dirfd, s->path, order[i], err);
    if (rc == QSF_OK && have_logical)
        rc = remove_logical_lock(s, err);
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(s->dirfd, s->path, err);
    qsf_slot_unlock_logical(s);
    return rc;
}
