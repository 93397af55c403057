/* The last FSN a closing sender had published (docs/FORMAT.md §5.7): a
 * qsf-only side file, `.published-fsn`, written when a slot is closed with
 * frames left in it. A crash tears only what was never reported published,
 * so a recovery that finds the tail of that segment cut below the recorded
 * FSN knows the frames were damaged after they were published, and reports
 * them (recover_mark.c) instead of cutting them as a torn tail.
 *
 *  0        4        8                16               24               32               40 60 64
 *  +--------+--------+----------------+----------------+----------------+----------------+--------+--------+
 *  | SFP1   | ver 1  | publishedFsn   | segment base   | segment        | end offset of  | zero   |
 * crc32c | |        |        | (i64)          | Seq (i64)      | createdMicros  | its last frame |
 * | [0,60) |
 *  +--------+--------+----------------+----------------+----------------+----------------+--------+--------+
 *
 * One 64-byte record in a 64-byte file, rewritten in place without a sync:
 * a record torn or lost (a host crash) fails its CRC or is absent, and then
 * recovery does what it did without it. The segment's baseSeq and
 * createdMicros name the segment it speaks of: a record about any other
 * segment (another client went on with the slot, a reuse in place) is
 * ignored. Other clients ignore the file (docs/FORMAT.md §1.1). */
#include "sf/slot.h"

#include "bytes.h"
#include "crc32c.h"
#include "err.h"
#include "os/os.h"
#include "sf/sfa.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#define PUB_MAGIC 0x31504653u /* "SFP1" */
#define PUB_SIZE  64

int qsf_slot_note_published(const qsf_slot *s, const qsf_published_mark *m, qsf_errinfo *err) {
    uint8_t rec[PUB_SIZE] = {0};
    qsf_put_u32(rec, PUB_MAGIC);
    qsf_put_u32(rec + 4, 1);
    qsf_put_i64(rec + 8, m->fsn);
    qsf_put_i64(rec + 16, m->base_seq);
    qsf_put_i64(rec + 24, m->created_us);
    qsf_put_i64(rec + 32, (int64_t) m->end_off);
    qsf_put_u32(rec + 60, qsf_crc32c(rec, 60));
    int fd = qsf_open_regular(s->dirfd, QSF_NAME_PUBLISHED, O_WRONLY | O_CREAT, NULL);
    if (fd < 0)
        return qsf_file_err(err, errno, "cannot open", s->path, QSF_NAME_PUBLISHED);
    int rc = qsf_write_at(fd, rec, sizeof rec, 0, s->path, QSF_NAME_PUBLISHED, err);
    QSF_OS->close(fd);
    return rc;
}

int qsf_slot_read_published(int dirfd, const char *path, qsf_published_mark *m, bool *present,
                            qsf_errinfo *err) {
    *present = false;
    uint64_t size = 0;
    int fd = qsf_open_regular(dirfd, QSF_NAME_PUBLISHED, O_RDONLY, &size);
    if (fd < 0)
        return errno == ENOENT ? QSF_OK
                               : qsf_file_err(err, errno, "cannot open", path, QSF_NAME_PUBLISHED);
    uint8_t rec[PUB_SIZE];
    int rc = size == PUB_SIZE ? qsf_read_at(fd, rec, sizeof rec, 0, path, QSF_NAME_PUBLISHED, err)
                              : QSF_OK;
    QSF_OS->close(fd);
    if (rc != QSF_OK || size != PUB_SIZE || qsf_get_u32(rec) != PUB_MAGIC ||
        qsf_get_u32(rec + 4) != 1 || qsf_get_u32(rec + 60) != qsf_crc32c(rec, 60))
        return rc; /* none, or torn: nothing is known */
    m->fsn = qsf_get_i64(rec + 8);
    m->base_seq = qsf_get_i64(rec + 16);
    m->created_us = qsf_get_i64(rec + 24);
    m->end_off = (uint64_t) qsf_get_i64(rec + 32);
    /* hostile values: nothing below its segment, nothing whose successor
     * overflows */
    *present = m->base_seq >= 0 && m->fsn >= m->base_seq && m->fsn < INT64_MAX;
    return QSF_OK;
}
