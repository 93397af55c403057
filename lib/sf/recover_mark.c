/* The published mark at recovery (docs/FORMAT.md §5.7, slot_published.c). A
 * crash tears only what was never reported published, so when the last
 * close recorded FSN P in the active segment, the frames up to P were all
 * complete: if the segment's last intact frame is below P, what follows it
 * was damaged after it was published (a flipped byte in the last frame, a
 * lost page) and is reported as a loss, never cut silently as a torn tail;
 * and the gaps inside the segment get their exact count from P instead of
 * an upper bound, so neither the loss nor the FSNs after it are inflated. */
#include "recover_int.h"

#include "bytes.h"
#include "err.h"
#include "log.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>

static int read_created(const qsf_slot *sl, const rc_seg *s, int64_t *created, qsf_errinfo *err) {
    int fd = qsf_open_regular(sl->dirfd, s->info.name, O_RDONLY, NULL);
    if (fd < 0)
        return qsf_file_err(err, errno, "cannot open segment", sl->path, s->info.name);
    uint8_t b[8] = {0};
    int rc = qsf_read_at(fd, b, sizeof b, QSF_SFA_AT_CREATED, sl->path, s->info.name, err);
    QSF_OS->close(fd);
    *created = qsf_get_i64(b);
    return rc;
}

static bool all_exact(const rc_seg *s) {
    for (uint32_t i = 0; i < s->npieces; i++)
        if (s->pieces[i].kind == RC_GAP && !s->pieces[i].exact)
            return false;
    return true;
}

int qsf_rc_apply_mark(const qsf_slot *sl, rc_seg *a, qsf_errinfo *err) {
    qsf_published_mark m;
    bool present;
    int rc = qsf_slot_read_published(sl->dirfd, sl->path, &m, &present, err);
    if (rc != QSF_OK || !present || m.base_seq != a->info.base_seq)
        return rc;
    int64_t created = -1;
    rc = read_created(sl, a, &created, err);
    int64_t last = a->info.base_seq + (int64_t) a->info.frame_count - 1;
    if (rc != QSF_OK || created != m.created_us || (last == m.fsn && all_exact(a)))
        return rc;
    if (!qsf_rc_number_marked(a, m.fsn + 1, m.end_off)) {
        QSF_LOGI("slot %s: %s names FSN %lld in %s, which its frames do not fit; ignored", sl->path,
                 QSF_NAME_PUBLISHED, (long long) m.fsn, a->info.name);
        return QSF_OK;
    }
    a->marked = true;
    if (a->fill > 0)
        QSF_LOGW("slot %s: FSN %lld..%lld were published (%s) but their frames after offset %llu "
                 "of %s are damaged: a loss, not a torn tail",
                 sl->path, (long long) (m.fsn - (int64_t) a->fill + 1), (long long) m.fsn,
                 QSF_NAME_PUBLISHED, (unsigned long long) a->info.last_good, a->info.name);
    return QSF_OK;
}
