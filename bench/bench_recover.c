/* Recovery throughput: builds a slot of QSF_BENCH_BYTES (default 1 GiB) in
 * 64 MiB segments of 1 KiB frames, then times qsf_slot_open over it (pread
 * through 64 KiB, CRC of every frame, whole-suffix tail check, frame analysis)
 * and, for comparison, a plain pread of the same files through the same buffer.
 * The page cache is warm (the files were just written): this measures the CPU
 * side of recovery, not the disk. One JSON line per result on stdout. */
#include "bytes.h"
#include "log.h"
#include "sf/recover.h"
#include "sf/segfmt.h"
#include "sf/sidefile.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SEG   (64u << 20)
#define FRAME 1024u

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* One segment image full of committing QWP frames with an empty delta section. */
static uint8_t *segment_image(uint64_t *frames) {
    uint8_t *img = calloc(1, SEG);
    uint8_t payload[FRAME];
    if (!img)
        die("calloc");
    memset(payload, 'r', sizeof payload);
    qsf_put_u32(payload, QSF_QWP_MAGIC);
    payload[4] = 1;
    payload[5] = 0x08;
    qsf_put_u16(payload + 6, 1);
    qsf_put_u32(payload + 8, FRAME - 12);
    payload[12] = payload[13] = 0; /* delta start 0, count 0 */
    uint64_t off = QSF_SFA_HEADER_SIZE;
    *frames = 0;
    while (off + 8 + FRAME <= SEG) {
        qsf_sfa_frame_encode(img + off, payload, FRAME);
        off += 8 + FRAME;
        ++*frames;
    }
    return img;
}

static void write_file(const char *path, const void *buf, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, buf, len) != (ssize_t) len)
        die(path);
    close(fd);
}

static uint64_t build_slot(const char *slot, uint32_t nseg) {
    uint64_t per;
    uint8_t *img = segment_image(&per);
    for (uint32_t i = 0; i < nseg; i++) {
        char p[600], name[QSF_SEG_NAME_MAX];
        qsf_seg_name(i + 1, name);
        snprintf(p, sizeof p, "%s/%s", slot, name);
        qsf_sfa_header_encode(img, QSF_SFA_FLAG_MANIFEST_REQUIRED, (int64_t) (i * per), 0);
        write_file(p, img, SEG);
    }
    uint8_t mf[8192] = {0};
    qsf_sfm_encode(mf + 4096, 1, 0, (int64_t) ((nseg - 1) * per));
    char p[600];
    snprintf(p, sizeof p, "%s/sf-manifest.bin", slot);
    write_file(p, mf, sizeof mf);
    free(img);
    return per * nseg;
}

static double plain_read_ms(const char *slot, uint32_t nseg) {
    uint8_t *buf = malloc(64 * 1024);
    double t0 = now_ms();
    for (uint32_t i = 0; i < nseg; i++) {
        char p[600], name[QSF_SEG_NAME_MAX];
        qsf_seg_name(i + 1, name);
        snprintf(p, sizeof p, "%s/%s", slot, name);
        int fd = open(p, O_RDONLY);
        for (off_t off = 0; off < SEG; off += 64 * 1024)
            if (pread(fd, buf, 64 * 1024, off) <= 0)
                die("pread");
        close(fd);
    }
    free(buf);
    return now_ms() - t0;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void) st;
    (void) flag;
    (void) ftw;
    remove(p);
    return 0;
}

int main(void) {
    qsf_log_set(NULL, NULL, QSF_LOG_ERROR);
    const char *env = getenv("QSF_BENCH_BYTES");
    uint64_t want = env ? strtoull(env, NULL, 10) : (1ull << 30);
    uint32_t nseg = (uint32_t) ((want + SEG - 1) / SEG);
    char root[256], sfdir[300], slot[320];
    snprintf(root, sizeof root, "%s/qsf-bench-recover-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root))
        die("mkdtemp");
    snprintf(sfdir, sizeof sfdir, "%s/sf", root);
    snprintf(slot, sizeof slot, "%s/default", sfdir);
    mkdir(sfdir, 0700);
    mkdir(slot, 0700);
    uint64_t frames = build_slot(slot, nseg);
    uint64_t bytes = (uint64_t) nseg * SEG;
    double read_ms = plain_read_ms(slot, nseg);
    qsf_slot_recovered r;
    qsf_errinfo e;
    double t0 = now_ms();
    int rc = qsf_slot_open_sized(sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e);
    double ms = now_ms() - t0;
    if (rc != QSF_OK || r.report.frames != frames) {
        fprintf(stderr, "recovery failed: %s\n", rc ? e.msg : "frame count mismatch");
        return 1;
    }
    qsf_slot_release(&r);
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    double mbps = bytes / 1048576.0 / (ms / 1e3);
    printf("{\"bench\":\"recover\",\"bytes\":%llu,\"frames\":%llu,\"ms\":%.1f,\"mb_per_s\":%.0f,"
           "\"read_only_ms\":%.1f,\"ratio_vs_read\":%.2f}\n",
           (unsigned long long) bytes, (unsigned long long) frames, ms, mbps, read_ms,
           ms / read_ms);
    fprintf(stderr, "%-28s %12s %12s %10s %10s\n", "recover (warm cache)", "bytes", "frames", "ms",
            "MB/s");
    fprintf(stderr, "%-28s %12llu %12llu %10.1f %10.0f\n", "qsf_slot_open",
            (unsigned long long) bytes, (unsigned long long) frames, ms, mbps);
    fprintf(stderr, "%-28s %12llu %12s %10.1f %10.0f\n", "plain pread (64 KiB)",
            (unsigned long long) bytes, "-", read_ms, bytes / 1048576.0 / (read_ms / 1e3));
    return 0;
}
