/* Helpers shared by the ring tests (unit, fault, crash): a fresh slot root per
 * test, opening a ring or failing with its message, polling for a condition
 * the manager thread brings about, and counting slot files. Header-only. */
#ifndef QSF_RING_TESTUTIL_H
#define QSF_RING_TESTUTIL_H

#include "testutil.h"

#include "os/os.h"
#include "sf/ring.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The sf_dir of the running test. */
static char rt_dir[256];

static inline int rt_setup(void **state) {
    (void) state;
    tu_mkdtemp(rt_dir, sizeof rt_dir);
    return 0;
}

static inline int rt_teardown(void **state) {
    (void) state;
    qsf_os_reset();
    tu_rmtree(rt_dir);
    return 0;
}

static inline qsf_ring *rt_open(const qsf_ring_opts *o) {
    qsf_ring *r = NULL;
    qsf_errinfo e;
    if (qsf_ring_open(o, &r, NULL, &e) != QSF_OK)
        fail_msg("qsf_ring_open: %s", e.msg);
    return r;
}

/* Polls cond every 0.5 ms while the manager works; fails after 10 s. A bound
 * on waiting, not a timing assertion. */
#define RT_WAIT_UNTIL(cond)                                                                        \
    do {                                                                                           \
        int spins_ = 0;                                                                            \
        while (!(cond)) {                                                                          \
            if (++spins_ > 20000)                                                                  \
                fail_msg("condition never became true: %s", #cond);                                \
            usleep(500);                                                                           \
        }                                                                                          \
    } while (0)

/* Checks one frame read back: its FSN and payload. */
typedef void (*rt_frame_check)(int64_t fsn, const uint8_t *p, uint32_t len);

/* Reads every published frame from `from` on with a cursor, checking that the
 * FSNs run on without a gap and each frame with `check`; returns how many. */
static inline int64_t rt_read_all(qsf_ring *r, int64_t from, rt_frame_check check) {
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, from), 0);
    const uint8_t *p;
    uint32_t len;
    int64_t fsn, expect = from;
    while (qsf_ring_cursor_next(r, &c, &p, &len, &fsn) == 1) {
        assert_int_equal(fsn, expect);
        check(fsn, p, len);
        expect++;
    }
    qsf_ring_cursor_release(r, &c);
    return expect - from;
}

/* Files in <rt_dir>/<slot> whose name ends in suffix (-1 if no directory). */
static inline int rt_count_files(const char *slot, const char *suffix) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", rt_dir, slot);
    DIR *d = opendir(p);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    size_t s = strlen(suffix);
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        n += l >= s && strcmp(e->d_name + l - s, suffix) == 0;
    }
    closedir(d);
    return n;
}

#endif
