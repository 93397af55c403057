/* Fuzz target for .source-positions (lib/sf/srcpos.c): the first 8 bytes are
 * the last FSN recovery kept (i64 LE), the rest the file. The buffer parser
 * and the open must agree: the open keeps exactly the parsed records at or
 * below that FSN, in order, and leaves a file that parses to them, followed
 * by zeros only. */
#include "bytes.h"
#include "sf/srcpos.h"

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
    unlinkat(dfd, QSF_NAME_SRCPOS, 0);
    unlinkat(dfd, QSF_NAME_SRCPOS ".tmp", 0);
    rmdir(dir);
}

typedef struct collected {
    qsf_srcpos_rec recs[64];
    uint32_t n, all;
    int64_t limit;
} collected;

static void collect(void *user, const qsf_srcpos_rec *r) {
    collected *c = user;
    c->all++;
    if (r->fsn <= c->limit && c->n < 64)
        c->recs[c->n++] = *r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (dfd < 0) {
        snprintf(dir, sizeof dir, "/tmp/qsf-fuzz-srcpos-XXXXXX");
        check(mkdtemp(dir) != NULL);
        dfd = open(dir, O_RDONLY | O_DIRECTORY);
        check(dfd >= 0);
        atexit(cleanup);
    }
    if (size < 8)
        return 0;
    collected want = {.limit = qsf_get_i64(data)};
    const uint8_t *img = data + 8;
    size_t n = size - 8;
    uint64_t end;
    qsf_srcpos_parse(img, n, collect, &want, &end);
    if (want.all > 64)
        return 0; /* keep the comparison bounded */
    int fd = openat(dfd, QSF_NAME_SRCPOS, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    check(fd >= 0 && (n == 0 || write(fd, img, n) == (ssize_t) n));
    close(fd);
    qsf_srcpos_log l;
    check(qsf_srcpos_open(&l, dfd, dir, want.limit, NULL, NULL, NULL) == QSF_OK);
    check(l.n == want.n);
    for (uint32_t i = 0; i < l.n; i++)
        check(l.recs[i].fsn == want.recs[i].fsn && l.recs[i].len == want.recs[i].len &&
              l.recs[i].has_frame == want.recs[i].has_frame &&
              l.recs[i].frame_crc == want.recs[i].frame_crc &&
              memcmp(l.recs[i].bytes, want.recs[i].bytes, l.recs[i].len) == 0);
    const qsf_srcpos_rec *last = qsf_srcpos_find(&l, want.limit);
    check(want.n ? last == &l.recs[l.n - 1] : last == NULL);
    qsf_srcpos_close(&l);
    /* what the open left parses to the same records */
    uint8_t buf[1 << 16];
    fd = openat(dfd, QSF_NAME_SRCPOS, O_RDONLY);
    check(fd >= 0);
    ssize_t got = read(fd, buf, sizeof buf);
    close(fd);
    check(got >= 16);
    collected again = {.limit = INT64_MAX};
    check(qsf_srcpos_parse(buf, (size_t) got, collect, &again, &end) == 0);
    check(qsf_srcpos_torn_bytes(buf, (size_t) got, end) == 0 &&
          again.n == want.n); /* zeros ahead */
    return 0;
}
