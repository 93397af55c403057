/* Fuzz target for the side-file parsers: the first byte picks the file
 * (.ack-watermark, sf-manifest.bin, .symbol-dict), the rest is its content.
 * Dual-slot images go through the pure pickers and the file handles, which must
 * agree; .symbol-dict goes through the buffer parser and the streaming file
 * loader, which must find the same entries and the same end of valid data. */
#include "log.h"
#include "sf/sfa.h"
#include "sf/sidefile.h"
#include "sf/symdict.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];
static int dfd = -1;

static void check(int cond) {
    if (!cond)
        abort();
}

static void cleanup(void) {
    static const char *const names[] = {QSF_NAME_WATERMARK, QSF_NAME_MANIFEST, QSF_NAME_SYMDICT,
                                        QSF_NAME_MANIFEST ".corrupt"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        unlinkat(dfd, names[i], 0);
    rmdir(dir);
}

static void put(const char *name, const uint8_t *buf, size_t len) {
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (len && write(fd, buf, len) != (ssize_t) len))
        abort();
    close(fd);
}

static void watermark(const uint8_t *d, size_t n) {
    put(QSF_NAME_WATERMARK, d, n);
    qsf_watermark wm;
    check(qsf_watermark_open(dfd, dir, QSF_WM_JAVA16, &wm, NULL) == QSF_OK);
    int64_t g = 0, f = -1;
    int ok = qsf_akw_read_image(d, n, &g, &f) == 0; /* 8192 or the Java client's 16 */
    check(wm.present == ok && (!ok || (wm.generation == g && wm.fsn == f)));
    check(wm.reset == (n != 8192 && n != QSF_AKW_COMPACT_SIZE));
    check(wm.compact == (n != 8192)); /* kept, or reset to the Java client's form */
    qsf_watermark_close(&wm);
}

static void manifest(const uint8_t *d, size_t n) {
    put(QSF_NAME_MANIFEST, d, n);
    qsf_manifest m;
    check(qsf_manifest_open(dfd, dir, &m, NULL) == QSF_OK);
    int64_t g, h, a;
    int ok = n == 8192 && qsf_sfm_pick(d, &g, &h, &a) == 0;
    check((m.fd >= 0) == ok && m.renamed_corrupt == !ok);
    check(!ok || (m.generation == g && m.head_base == h && m.active_base == a && h <= a));
    qsf_manifest_close(&m);
    unlinkat(dfd, QSF_NAME_MANIFEST ".corrupt", 0);
}

static void symdict(const uint8_t *d, size_t n) {
    put(QSF_NAME_SYMDICT, d, n);
    uint64_t end;
    uint32_t entries, chunks;
    int prc = qsf_symdict_parse(d, n, QSF_SYMDICT_MAX_ENTRIES, NULL, NULL, &end, &entries, &chunks);
    qsf_symdict sd;
    check(qsf_symdict_open(&sd, dfd, dir, NULL) == QSF_OK);
    check(sd.self_sufficient == (prc != 0));
    if (prc == 0) {
        check(qsf_symdict_size(&sd) == entries && sd.valid_end == end && sd.chunks == chunks);
        check(sd.torn_bytes == n - end);
        for (uint32_t i = 0; i < entries; i++)
            check(qsf_symdict_entry(&sd, i, NULL) != NULL);
    }
    qsf_symdict_destroy(&sd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (dfd < 0) {
        qsf_log_set(NULL, NULL, QSF_LOG_OFF);
        snprintf(dir, sizeof dir, "%s/qsf-fuzz-side-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir))
            abort();
        dfd = open(dir, O_RDONLY | O_DIRECTORY);
        atexit(cleanup);
    }
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0:
        watermark(data + 1, size - 1);
        break;
    case 1:
        manifest(data + 1, size - 1);
        break;
    default:
        symdict(data + 1, size - 1);
    }
    return 0;
}
