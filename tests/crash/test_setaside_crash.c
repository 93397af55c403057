/* A set-aside (sfops/setaside.h) killed after each of its writes, syncs,
 * renames and unlinks in turn, by a process crash (the page cache survives)
 * and by a host loss (only what was synced survives: shadow.h). After every
 * one: the slot opens with nothing lost or damaged; the flush FSN 1..4 is
 * either still whole in the slot and not retired, or retired with its frames
 * byte for byte in a SET_ASIDE record of .rejected; never retired without
 * that record; the other frames are untouched; and running the set-aside
 * again finishes it with one record of the span, not two. */
#include "testutil.h"

#include "shadow.h"
#include "sftest.h"

#include "log.h"
#include "os/os.h"
#include "sf/recover.h"
#include "sfops/rejected.h"
#include "sfops/setaside.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEG 4096

/* ---- the fixture: flushes [0] [1..4] [5], FSN 1..4 across two segments;
 * FSN 5 was set aside before, so .rejected exists already ---- */

static st_frames orig[2]; /* the two segments' frames before the set-aside */

static void fixture(void) {
    st_segment_flushes(st_gen(1), SEG, 0, "CDD", 5);
    st_segment_flushes(st_gen(2), SEG, 3, "DCC", 5);
    st_manifest(st_slot, 1, 0, 3);
    qsf_setaside_req r = {.from = 5, .to = 5, .reason = "earlier"};
    qsf_setaside_result res;
    assert_int_equal(qsf_slot_set_aside(st_slot, &r, &res, NULL), QSF_OK);
    for (int i = 0; i < 2; i++)
        st_read_frames(st_path(st_slot, st_gen(i + 1)), &orig[i]);
}

/* ---- the child: killed right after the n-th step ---- */

static int steps, kill_at;
static int (*next_fsync)(int), (*next_fdatasync)(int);
static int (*next_rename)(int, const char *, int, const char *);

static void step(void) {
    if (++steps == kill_at)
        raise(SIGKILL);
}

static ssize_t k_pwrite(int fd, const void *b, size_t n, off_t off) {
    ssize_t r = pwrite(fd, b, n, off);
    step();
    return r;
}

static int k_fsync(int fd) {
    int r = next_fsync(fd);
    step();
    return r;
}

static int k_fdatasync(int fd) {
    int r = next_fdatasync(fd);
    step();
    return r;
}

static int k_renameat(int od, const char *op, int nd, const char *np) {
    int r = next_rename(od, op, nd, np);
    step();
    return r;
}

static int k_unlinkat(int d, const char *p, int f) {
    int r = unlinkat(d, p, f);
    step();
    return r;
}

static const char *shadow_dir(void) {
    static char p[800];
    snprintf(p, sizeof p, "%s/shadow", st_root);
    return p;
}

/* Returns true when the set-aside ran to its end without being killed. */
static bool run_killed_at(int n, bool host_loss) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        qsf_log_set(NULL, NULL, QSF_LOG_OFF);
        next_fsync = host_loss ? shadow_fsync : fsync;
        next_fdatasync = host_loss ? shadow_fdatasync : fdatasync;
        next_rename = host_loss ? shadow_renameat : renameat;
        if (host_loss)
            shadow_init(st_slot, shadow_dir());
        kill_at = n;
        QSF_OS->pwrite = k_pwrite;
        QSF_OS->fsync = k_fsync;
        QSF_OS->fdatasync = k_fdatasync;
        QSF_OS->renameat = k_renameat;
        QSF_OS->unlinkat = k_unlinkat;
        qsf_setaside_req r = {.from = 1, .to = 4, .reason = "killed"};
        qsf_setaside_result res;
        _exit(qsf_slot_set_aside(st_slot, &r, &res, NULL) == QSF_OK ? 0 : 3);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st)) {
        assert_int_equal(WEXITSTATUS(st), 0);
        return true;
    }
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    return false;
}

/* ---- the checks ---- */

typedef struct recorded {
    int n;
    uint8_t p[4][64];
    uint32_t len[4];
} recorded;

static int on_frame(void *user, uint32_t crc, const uint8_t *payload, uint32_t len) {
    (void) crc;
    recorded *r = user;
    assert_true(r->n < 4 && len <= 64);
    memcpy(r->p[r->n], payload, len);
    r->len[r->n++] = len;
    return 0;
}

/* The SET_ASIDE records of FSN 1..4; *full: one holds exactly the original
 * frames; *done (may be NULL): one has its DONE record. */
static int records_of_span(bool *full, bool *done) {
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_rejected_list l;
    qsf_errinfo e;
    if (qsf_rejected_read(dfd, st_slot, &l, &e) != QSF_OK)
        fail_msg(".rejected unreadable after a crash: %s", e.msg);
    int n = 0;
    *full = false;
    if (done)
        *done = false;
    for (uint32_t i = 0; i < l.n; i++) {
        if (l.v[i].kind != QSF_RJR_SET_ASIDE || l.v[i].from != 1)
            continue;
        n++;
        recorded r = {0};
        assert_int_equal(qsf_rejected_frames(dfd, st_slot, &l.v[i], on_frame, &r, NULL), QSF_OK);
        bool same = r.n == 4;
        for (int k = 0; same && k < 4; k++) {
            const st_frames *f = &orig[k < 2 ? 0 : 1];
            int at = k < 2 ? k + 1 : k - 2;
            same = r.len[k] == f->len[at] && memcmp(r.p[k], f->p[at], r.len[k]) == 0;
        }
        *full |= same;
        if (done)
            *done |= l.v[i].done;
    }
    qsf_rejected_list_free(&l);
    close(dfd);
    return n;
}

/* Every frame outside 1..4 is as it was; inside, all intact or none. */
static bool span_intact(void) {
    int intact = 0;
    for (int s = 0; s < 2; s++) {
        st_frames f;
        st_read_frames(st_path(st_slot, st_gen(s + 1)), &f);
        assert_int_equal(f.n, 3);
        for (int i = 0; i < 3; i++) {
            int64_t fsn = s * 3 + i;
            bool same = f.len[i] == orig[s].len[i] && memcmp(f.p[i], orig[s].p[i], f.len[i]) == 0;
            if (fsn == 0 || fsn == 5)
                assert_true(same);
            else
                intact += same;
        }
        st_frames_free(&f);
    }
    return intact == 4;
}

static void check_after_crash(int n, bool host_loss) {
    qsf_slot_recovered r;
    qsf_errinfo e;
    if (qsf_slot_open_sized(st_sfdir, "default", QSF_DUR_MEMORY, SEG, &r, &e) != QSF_OK)
        fail_msg("step %d%s: open fails: %s", n, host_loss ? " (host loss)" : "", e.msg);
    assert_false(r.data_loss);
    assert_int_equal(r.n_losses, 0);
    assert_int_equal(r.published_fsn, 5);
    bool retired = r.n_retired == 1 && r.retired[0].from == 1 && r.retired[0].to == 4;
    assert_true(retired || r.n_retired == 0);
    qsf_slot_release(&r);
    bool full;
    int records = records_of_span(&full, NULL);
    assert_true(records <= 1);
    if (retired && !full)
        fail_msg("step %d%s: FSN 1..4 retired without its frames in .rejected", n,
                 host_loss ? " (host loss)" : "");
    if (!retired && !span_intact())
        fail_msg("step %d%s: FSN 1..4 neither whole nor retired", n,
                 host_loss ? " (host loss)" : "");
}

/* Running it again finishes what was interrupted; after one that reached its
 * DONE record (the kill may come right after) it is refused: the span is
 * given up already. */
static void finish_and_check(void) {
    bool full, done;
    records_of_span(&full, &done);
    qsf_setaside_req req = {.from = 1, .to = 4, .reason = "again"};
    qsf_setaside_result res;
    qsf_errinfo e;
    int rc = qsf_slot_set_aside(st_slot, &req, &res, &e);
    if (done && (rc != QSF_E_INVAL || !strstr(e.msg, "given up already")))
        fail_msg("running a finished set-aside again: %s", qsf_err_name(rc));
    if (!done && rc != QSF_OK)
        fail_msg("running it again: %s", e.msg);
    assert_int_equal(records_of_span(&full, &done), 1);
    assert_true(done);
    assert_true(full);
    qsf_slot_recovered r;
    st_open_ok(st_sfdir, &r);
    assert_int_equal(r.n_retired, 1);
    assert_int_equal(r.retired[0].from, 1);
    assert_int_equal(r.retired[0].to, 4);
    qsf_slot_release(&r);
}

static void reset_slot(void) {
    for (int i = 0; i < 2; i++)
        st_frames_free(&orig[i]);
    tu_rmtree(st_slot);
    tu_rmtree(shadow_dir());
    mkdir(st_slot, 0700);
    fixture();
}

static void killed_at_every_step(bool host_loss) {
    int n = 1;
    for (; n < 400; n++) {
        reset_slot();
        if (host_loss) { /* the fixture is durable: the shadow starts from it */
            char cmd[4000];
            mkdir(shadow_dir(), 0700);
            snprintf(cmd, sizeof cmd, "cp -p '%s'/[!.]* '%s'/.[!l.]* '%s'/ 2>/dev/null", st_slot,
                     st_slot, shadow_dir());
            assert_true(system(cmd) >= 0);
        }
        bool done = run_killed_at(n, host_loss);
        if (host_loss && !done) {
            shadow_init(st_slot, shadow_dir());
            shadow_restore();
        }
        check_after_crash(n, host_loss);
        finish_and_check();
        if (done)
            break;
    }
    assert_true(n > 8 && n < 400); /* it has steps, and they end */
    for (int i = 0; i < 2; i++)
        st_frames_free(&orig[i]);
}

static void process_crash_at_every_step(void **state) {
    (void) state;
    killed_at_every_step(false);
}

static void host_loss_at_every_step(void **state) {
    (void) state;
    killed_at_every_step(true);
}

int main(void) {
    qsf_log_set(NULL, NULL, QSF_LOG_ERROR);
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(process_crash_at_every_step),
        T(host_loss_at_every_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
