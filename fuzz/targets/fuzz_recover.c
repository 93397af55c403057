/* Fuzz target: the input becomes a segment file in a fresh slot (the first byte
 * chooses whether a manifest and a .symbol-dict sit next to it); the slot is
 * recovered (salvage, flushes given up, the cut, all of it). No crash, and
 * whatever recovery returns must be self-consistent. */
#include "log.h"
#include "os/os.h"
#include "sf/recover.h"
#include "sf/segfmt.h"
#include "sf/sidefile.h"

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

static void write_file(const char *dir, const char *name, const void *buf, size_t len) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (len && write(fd, buf, len) != (ssize_t) len))
        abort();
    close(fd);
}

static void check(int cond) {
    if (!cond)
        abort();
}

/* Invariants of a successful open (docs/FORMAT.md §6.9, §6.11, §6.12). */
static void check_result(const qsf_slot_recovered *r) {
    check(r->segment_count >= 1 && r->active_index == r->segment_count - 1);
    check(r->segments[r->active_index].active);
    const qsf_seg_info *a = &r->segments[r->active_index];
    check(r->published_fsn == a->base_seq + (int64_t) a->frame_count - 1);
    check(r->acked_fsn >= -1 && r->acked_fsn <= r->published_fsn);
    check(r->commit_boundary_fsn <= r->published_fsn);
    for (uint32_t i = 0; i < r->segment_count; i++) {
        const qsf_seg_info *s = &r->segments[i];
        check(s->last_good >= QSF_SFA_HEADER_SIZE && s->last_good <= s->file_size);
        check(s->last_good - QSF_SFA_HEADER_SIZE >= QSF_SFA_FRAME_OVERHEAD * s->frame_count);
        if (i > 0)
            check(r->segments[i - 1].base_seq + (int64_t) r->segments[i - 1].frame_count ==
                  s->base_seq);
    }
    check(r->watermark.fd >= 0 && r->manifest.fd >= 0);
    /* retired spans: sorted, disjoint, above acked, within the chain */
    for (uint32_t i = 0; i < r->n_retired; i++) {
        check(r->retired[i].from <= r->retired[i].to);
        check(r->retired[i].from > r->acked_fsn && r->retired[i].to <= r->published_fsn);
        if (i > 0)
            check(r->retired[i].from > r->retired[i - 1].to);
    }
    for (uint32_t i = 0; i < r->n_losses; i++)
        check(r->losses[i].from_fsn <= r->losses[i].to_fsn && r->losses[i].file[0]);
    check(r->n_losses == r->report.losses);
    /* after recovery the last frame on disk commits (or there is none) */
    check(r->commit_boundary_fsn == r->published_fsn);
}

/* Durability is not what is fuzzed: skip the syncs to keep the rate up. */
static int no_sync(int fd) {
    (void) fd;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!base[0]) {
        qsf_log_set(NULL, NULL, QSF_LOG_OFF);
        QSF_OS->fsync = no_sync;
        QSF_OS->fdatasync = no_sync;
        snprintf(base, sizeof base, "%s/qsf-fuzz-recover-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(base))
            abort();
        atexit(cleanup);
    }
    if (size < 1)
        return 0;
    char sfdir[300], slot[320];
    snprintf(sfdir, sizeof sfdir, "%s/sf", base);
    snprintf(slot, sizeof slot, "%s/default", sfdir);
    nftw(sfdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    mkdir(sfdir, 0700);
    mkdir(slot, 0700);
    uint8_t mode = data[0];
    write_file(slot, (mode & 4) ? "sf-initial.sfa" : "sf-0000000000000001.sfa", data + 1, size - 1);
    if (mode & 1) { /* a manifest naming the segment's own baseSeq (when readable) */
        int64_t b = size >= 17 ? (int64_t) (data[9] | (data[10] << 8)) : 0;
        uint8_t img[8192] = {0};
        qsf_sfm_encode(img + 4096, 1, b, b);
        write_file(slot, "sf-manifest.bin", img, sizeof img);
    }
    if (mode & 2) {
        static const uint8_t dict[] = {0x53, 0x59, 0x44, 0x31, 1,   0,    0,    0,    1,
                                       4,    3,    'o',  'n',  'e', 0x89, 0x31, 0x8D, 0x70};
        write_file(slot, ".symbol-dict", dict, sizeof dict);
    }
    qsf_slot_recovered r;
    qsf_errinfo e;
    int rc = qsf_slot_open_sized(sfdir, "default", QSF_DUR_MEMORY, 4096, &r, &e);
    if (rc == QSF_OK) {
        check_result(&r);
        qsf_slot_release(&r);
    } else {
        check(e.code == rc && e.msg[0] != '\0');
    }
    return 0;
}
