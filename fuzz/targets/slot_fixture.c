/* Scratch slots and the checks of a recovered slot, for the recovery fuzz
 * targets (fuzz_recover.c: one segment; fuzz_recover_slot.c: a whole slot). */
#include "slot_fixture.h"

#include "log.h"
#include "os/os.h"
#include "sf/segfmt.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[256];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void) st;
    (void) flag;
    (void) ftw;
    remove(p);
    return 0;
}

static void cleanup(void) {
    nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Durability is not what is fuzzed: skip the syncs to keep the rate up. */
static int no_sync(int fd) {
    (void) fd;
    return 0;
}

static void setup_once(void) {
    if (base[0])
        return;
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    QSF_OS->fsync = no_sync;
    QSF_OS->fdatasync = no_sync;
    snprintf(base, sizeof base, "%s/qsf-fuzz-recover-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(base))
        abort();
    atexit(cleanup);
}

const char *qsf_fz_fresh_slot(char slot[320]) {
    static char sfdir[300];
    setup_once();
    snprintf(sfdir, sizeof sfdir, "%s/sf", base);
    snprintf(slot, 320, "%s/default", sfdir);
    nftw(sfdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    mkdir(sfdir, 0700);
    mkdir(slot, 0700);
    return sfdir;
}

void qsf_fz_write_file(const char *dir, const char *name, const void *buf, size_t len) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (len && write(fd, buf, len) != (ssize_t) len))
        abort();
    close(fd);
}

void qsf_fz_check(int cond) {
    if (!cond)
        abort();
}

static void check_segments(const qsf_slot_recovered *r) {
    for (uint32_t i = 0; i < r->segment_count; i++) {
        const qsf_seg_info *s = &r->segments[i];
        qsf_fz_check(s->last_good >= QSF_SFA_HEADER_SIZE && s->last_good <= s->file_size);
        qsf_fz_check(s->last_good - QSF_SFA_HEADER_SIZE >= QSF_SFA_FRAME_OVERHEAD * s->frame_count);
        if (i > 0)
            qsf_fz_check(r->segments[i - 1].base_seq + (int64_t) r->segments[i - 1].frame_count ==
                         s->base_seq);
    }
}

/* retired spans: sorted, disjoint, above acked, within the chain */
static void check_retired(const qsf_slot_recovered *r) {
    for (uint32_t i = 0; i < r->n_retired; i++) {
        qsf_fz_check(r->retired[i].from <= r->retired[i].to);
        qsf_fz_check(r->retired[i].from > r->acked_fsn && r->retired[i].to <= r->published_fsn);
        if (i > 0)
            qsf_fz_check(r->retired[i].from > r->retired[i - 1].to);
    }
}

void qsf_fz_check_result(const qsf_slot_recovered *r) {
    qsf_fz_check(r->segment_count >= 1 && r->active_index == r->segment_count - 1);
    qsf_fz_check(r->segments[r->active_index].active);
    const qsf_seg_info *a = &r->segments[r->active_index];
    qsf_fz_check(r->published_fsn == a->base_seq + (int64_t) a->frame_count - 1);
    qsf_fz_check(r->acked_fsn >= -1 && r->acked_fsn <= r->published_fsn);
    qsf_fz_check(r->commit_boundary_fsn <= r->published_fsn);
    check_segments(r);
    qsf_fz_check(r->watermark.fd >= 0 && r->manifest.fd >= 0);
    check_retired(r);
    for (uint32_t i = 0; i < r->n_losses; i++)
        qsf_fz_check(r->losses[i].from_fsn <= r->losses[i].to_fsn && r->losses[i].file[0]);
    qsf_fz_check(r->n_losses == r->report.losses);
    /* after recovery the last frame on disk commits (or there is none) */
    qsf_fz_check(r->commit_boundary_fsn == r->published_fsn);
}

void qsf_fz_open_and_check(const char *sfdir) {
    qsf_slot_recovered r;
    qsf_errinfo e;
    int rc = qsf_slot_open_sized(sfdir, "default", QSF_DUR_MEMORY, 4096, &r, &e);
    if (rc == QSF_OK) {
        qsf_fz_check_result(&r);
        qsf_slot_release(&r);
    } else {
        /* a refusal says why; QSF_E_INTERNAL is a bug whatever the bytes */
        qsf_fz_check(e.code == rc && e.msg[0] != '\0' && rc != QSF_E_INTERNAL);
    }
}
