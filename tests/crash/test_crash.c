/* Crash tests (docs/DURABILITY.md §15.2). A child process appends frames (and
 * dictionary chunks, and acknowledges so trims run) and reports every append
 * that returned through a pipe; it is SIGKILLed at a numbered fault point or at
 * a random moment. The parent then recovers the slot with qsf_ring_open and
 * checks: every frame whose append returned (process crash) or whose barrier
 * completed (host loss) is present, in order, with no gap; what is present is
 * a prefix of what was appended; nothing above what was acknowledged counts as
 * acknowledged; the dictionary is a prefix of what was written.
 *
 * Host loss (periodic/append modes): the child's syscall table snapshots each
 * file's contents when an fsync/fdatasync of it succeeds, and the directory
 * listing when the directory is fsynced, into a shadow directory. After the
 * kill the parent replaces the slot with that shadow: every page written after
 * its file's last sync is lost, as after a power cut. */
#include "testutil.h"

#include "shadow.h"

#include "os/os.h"
#include "sf/ring.h"
#include "sf/sfa.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FRAMES 300
#define SEG    2048

enum { MSG_APPENDED = 1, MSG_ACKED = 2, MSG_DICT = 3 };

typedef struct msg {
    int64_t type, value;
} msg;

static char dir[256], slot[512], shadow[512];

static int setup(void **state) {
    (void) state;
    tu_mkdtemp(dir, sizeof dir);
    snprintf(slot, sizeof slot, "%s/c", dir);
    snprintf(shadow, sizeof shadow, "%s/shadow", dir);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    tu_rmtree(dir);
    return 0;
}

static qsf_ring_opts crash_opts(int durability) {
    qsf_ring_opts o = {0};
    o.sf_dir = dir;
    o.sender_id = "c";
    o.segment_bytes = SEG;
    o.total_bytes = 1 << 20;
    o.durability = durability;
    o.sync_interval_ms = 2;
    o.append_deadline_ms = 5000;
    return o;
}

/* ---- the child ---- */

static void payload(int64_t fsn, uint8_t *buf, size_t *len) {
    *len = 16 + (size_t) (fsn % 50);
    memset(buf, (int) (fsn & 0xff), *len);
    memcpy(buf, &fsn, 8);
}

static void report(int fd, int64_t type, int64_t value) {
    msg m = {type, value};
    if (write(fd, &m, sizeof m) != sizeof m)
        _exit(3);
}

/* Entry i of the dictionary is always "s<i>", across restarts of the slot. */
static void child_dict(qsf_ring *r, int out) {
    char s[32];
    const char *strs[1] = {s};
    uint32_t first = qsf_ring_symdict_size(r);
    uint32_t len = (uint32_t) snprintf(s, sizeof s, "s%u", first);
    if (qsf_ring_symdict_append(r, first, 1, strs, &len, NULL) == QSF_OK)
        report(out, MSG_DICT, first);
}

static void child_run(int durability, bool host_loss, int point, uint64_t nth, int out) {
    if (host_loss) {
        shadow_init(slot, shadow);
        QSF_OS->fsync = shadow_fsync;
        QSF_OS->fdatasync = shadow_fdatasync;
    }
    if (point)
        qsf_fault_arm(point, nth, QSF_FA_KILL);
    qsf_ring_opts o = crash_opts(durability);
    qsf_ring *r;
    if (qsf_ring_open(&o, &r, NULL, NULL) != QSF_OK)
        _exit(2);
    int64_t start = qsf_ring_published_fsn(r) + 1;
    uint8_t buf[128];
    size_t len;
    for (int64_t f = start; f < start + FRAMES; f++) {
        if (f % 10 == 0)
            child_dict(r, out);
        payload(f, buf, &len);
        if (qsf_ring_append(r, buf, len, NULL, NULL) != QSF_OK) /* append mode: durable */
            _exit(4);
        report(out, MSG_APPENDED, f);
        if (f % 20 == 19 && f - 40 >= 0) {
            report(out, MSG_ACKED, f - 40); /* before: the manager may persist it at once */
            qsf_ring_acknowledge(r, f - 40);
        }
    }
    qsf_ring_close(r, NULL);
    _exit(0);
}

/* ---- the parent ---- */

typedef struct seen {
    int64_t last_appended, max_acked;
    int64_t dict_entries;
} seen;

static seen run_child(int durability, bool host_loss, int point, uint64_t nth, int kill_after) {
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child_run(durability, host_loss, point, nth, p[1]);
    }
    close(p[1]);
    seen s = {-1, -1, 0};
    msg m;
    int appended = 0;
    int64_t dict = 0;
    while (read(p[0], &m, sizeof m) == sizeof m) {
        if (m.type == MSG_APPENDED) {
            s.last_appended = m.value;
            s.dict_entries = dict; /* chunks before a frame are covered by its barrier */
            if (++appended == kill_after)
                kill(pid, SIGKILL);
        } else if (m.type == MSG_ACKED) {
            s.max_acked = m.value;
        } else if (m.type == MSG_DICT) {
            dict = m.value + 1;
        }
    }
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        fail_msg("child failed with status %d", WEXITSTATUS(status));
    return s;
}

/* all_kept: every append that returned must be there (process crash, or a host
 * loss in append mode); otherwise only the prefix property is checked. */
static void check_recovered(const seen *s, int durability, bool all_kept, const char *what) {
    qsf_ring_opts o = crash_opts(durability);
    qsf_ring *r;
    qsf_errinfo e;
    if (qsf_ring_open(&o, &r, NULL, &e) != QSF_OK)
        fail_msg("%s: recovery failed: %s", what, e.msg);
    int64_t pub = qsf_ring_published_fsn(r), acked = qsf_ring_acked_fsn(r);
    if ((all_kept && pub < s->last_appended) || pub > s->last_appended + 1)
        fail_msg("%s: published %" PRId64 " but the last append that returned was %" PRId64, what,
                 pub, s->last_appended);
    if (acked > s->max_acked && acked > -1)
        fail_msg("%s: acked %" PRId64 " beyond what was acknowledged (%" PRId64 ")", what, acked,
                 s->max_acked);
    qsf_ring_cursor c = {0};
    assert_int_equal(qsf_ring_cursor_seek(r, &c, acked + 1), 0);
    const uint8_t *p;
    uint32_t len;
    int64_t fsn, expect = acked + 1;
    uint8_t want[128];
    size_t wl;
    while (qsf_ring_cursor_next(r, &c, &p, &len, &fsn) == 1) {
        payload(expect, want, &wl);
        if (fsn != expect || len != wl || memcmp(p, want, wl) != 0)
            fail_msg("%s: frame %" PRId64 " missing or wrong (got FSN %" PRId64 ")", what, expect,
                     fsn);
        expect++;
    }
    if (expect != pub + 1)
        fail_msg("%s: frames end at %" PRId64 ", published %" PRId64, what, expect - 1, pub);
    qsf_ring_cursor_release(r, &c);
    uint32_t n = qsf_ring_symdict_size(r);
    if (all_kept && n < s->dict_entries)
        fail_msg("%s: dictionary has %u entries, %" PRId64 " were written", what, n,
                 s->dict_entries);
    for (uint32_t i = 0; i < n; i++) {
        char w[32];
        snprintf(w, sizeof w, "s%u", i);
        uint32_t l;
        const char *got = qsf_ring_symdict_entry(r, i, &l);
        if (!got || strcmp(got, w) != 0)
            fail_msg("%s: dictionary entry %u is %s, want %s", what, i, got ? got : "(null)", w);
    }
    qsf_ring_close(r, NULL);
}

/* Each numbered fault point, killed at its 1st, 2nd and 5th hit. */
static void kill_at_each_fault_point_in(int durability) {
    static const int points[] = {QSF_FP_FRAME_PAYLOAD_WRITTEN, QSF_FP_FRAME_CRC_WRITTEN,
                                 QSF_FP_SPARE_REBASED,         QSF_FP_MANIFEST_WRITTEN,
                                 QSF_FP_WATERMARK_WRITTEN,     QSF_FP_SEGMENT_UNLINKED,
                                 QSF_FP_SYMDICT_HALF_WRITTEN};
    static const uint64_t nths[] = {1, 2, 5};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        for (size_t j = 0; j < sizeof nths / sizeof nths[0]; j++) {
            char what[64];
            snprintf(what, sizeof what, "fault point %d, hit %" PRIu64, points[i], nths[j]);
            seen s = run_child(durability, false, points[i], nths[j], -1);
            check_recovered(&s, durability, true, what);
            tu_rmtree(slot);
        }
    }
}

static void kill_at_each_fault_point(void **state) {
    (void) state;
    kill_at_each_fault_point_in(QSF_DUR_MEMORY);
}

/* `append` durability writes frames with pwrite (qsf_seg_write_file): the
 * same fault points, between the same steps. */
static void kill_at_each_fault_point_append(void **state) {
    (void) state;
    kill_at_each_fault_point_in(QSF_DUR_APPEND);
}

/* Random kills, and a second crash on top of a recovered slot. */
static void kill_at_random_points(void **state) {
    (void) state;
    srand(1234);
    for (int i = 0; i < 12; i++) {
        char what[64];
        int k = 1 + rand() % FRAMES;
        snprintf(what, sizeof what, "random kill after %d appends", k);
        seen s = run_child(QSF_DUR_MEMORY, false, 0, 0, k);
        check_recovered(&s, QSF_DUR_MEMORY, true, what);
        if (i % 3 == 2)
            tu_rmtree(slot);
    }
}

static void host_loss(int durability, const char *mode) {
    srand(99);
    for (int i = 0; i < 8; i++) {
        char what[96];
        int k = 1 + rand() % FRAMES;
        snprintf(what, sizeof what, "%s: host loss after %d appends", mode, k);
        tu_rmtree(slot);
        tu_rmtree(shadow);
        seen s = run_child(durability, true, 0, 0, k);
        shadow_init(slot, shadow); /* the parent's view of the same directories */
        shadow_restore();
        /* periodic: only what a checkpoint covered survives, so only the
         * prefix property holds; append: every flush that returned survives. */
        check_recovered(&s, durability, durability == QSF_DUR_APPEND, what);
    }
}

static void host_loss_append_mode(void **state) {
    (void) state;
    host_loss(QSF_DUR_APPEND, "append");
}

static void host_loss_periodic_mode(void **state) {
    (void) state;
    host_loss(QSF_DUR_PERIODIC, "periodic");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(kill_at_each_fault_point, setup, teardown),
        cmocka_unit_test_setup_teardown(kill_at_each_fault_point_append, setup, teardown),
        cmocka_unit_test_setup_teardown(kill_at_random_points, setup, teardown),
        cmocka_unit_test_setup_teardown(host_loss_append_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(host_loss_periodic_mode, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
