/* A slot whose damage took symbol definitions with it (docs/FORMAT.md §6.9):
 * `sf_durability=periodic`, a unique symbol per row, 400 flushes of 50 rows
 * left on disk; then .symbol-dict loses its last 30 % and one 4 KiB page at
 * 80 % of the frames is zeroed, as a power cut that wrote pages back out of
 * order can leave it. Every frame after the page needs symbol ids that only
 * the destroyed frames defined. Recovery used to set the whole slot aside
 * ("frame FSN ... needs symbol ids from ... but only ... are known"): none of
 * the intact rows before the page was delivered, and `qsf slot drain` of the
 * slot set aside refused too. Now only what cannot be replayed is given up,
 * and said so; the rest is delivered, by a sender and by a drain. The loss
 * names what was lost, no more: the FSNs after the page keep their own
 * numbers (docs/FORMAT.md §5.7). The qsf binary is argv[1]. */
#include "itest.h"

#include "bytes.h"
#include "clitest.h"
#include "log.h"
#include "sf/segfmt.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOWHERE 1 /* nothing listens on port 1 */
#define FLUSHES 400
#define PER     50
#define PAGE    4096

/* Where the damage went: frames [0, before) lie wholly before the zeroed
 * page, frames [after, FLUSHES) wholly after it. */
typedef struct damage {
    int64_t before, after;
} damage;

static const char *slot_path(const char *id) {
    static char p[700];
    snprintf(p, sizeof p, "%s/%s", it_dir, id);
    return p;
}

/* Slot `id`: FLUSHES flushes of PER rows (key k, symbol "u<k>"), unsent. */
static void leave_slot(const char *id) {
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=%s;sf_durability=periodic;auto_flush=off;"
             "initial_connect_retry=async;close_flush_timeout_millis=0;",
             it_dir, id);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, NOWHERE, extra));
    qsf_errinfo e;
    for (int64_t k = 0; k < FLUSHES * PER; k++) {
        char sym[32];
        snprintf(sym, sizeof sym, "u%06" PRId64, k);
        assert_int_equal(it_add_row(s, "t", k, sym, 0, &e), QSF_OK);
        if ((k + 1) % PER == 0)
            assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK);
    }
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* everything stays on disk */
}

/* .symbol-dict cut to 70 %, the page holding the start of frame 80 % zeroed. */
static damage damage_slot(const char *id) {
    char p[900];
    snprintf(p, sizeof p, "%s/.symbol-dict", slot_path(id));
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(truncate(p, sb.st_size * 7 / 10), 0);
    snprintf(p, sizeof p, "%s/%s", slot_path(id), QSF_NAME_INITIAL);
    size_t n;
    uint8_t *img = tu_read_file(p, &n);
    static uint64_t off[FLUSHES + 1];
    uint64_t o = QSF_SFA_HEADER_SIZE;
    for (int i = 0; i < FLUSHES; i++) { /* all in the first segment */
        assert_true(o + QSF_SFA_FRAME_OVERHEAD <= n && qsf_sfa_frame_len(img + o) > 0);
        off[i] = o;
        o += QSF_SFA_FRAME_OVERHEAD + qsf_sfa_frame_len(img + o);
    }
    off[FLUSHES] = o;
    free(img);
    uint64_t page = off[FLUSHES * 8 / 10] / PAGE * PAGE;
    damage d = {0, FLUSHES};
    while (off[d.before + 1] <= page)
        d.before++;
    while (off[d.after - 1] >= page + PAGE)
        d.after--;
    static const uint8_t zeros[PAGE];
    int fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, zeros, PAGE, (off_t) page), PAGE);
    close(fd);
    assert_true(d.before > 300 && d.after < FLUSHES);
    return d;
}

/* The sink holds the keys [0, n) of table t, each once, in order. */
static void expect_prefix(qsink *sink, int64_t n) {
    if (qsink_wait_rows(sink, "t", n, 20000) != 0)
        fail_msg("the sink has %" PRId64 " rows, expected %" PRId64, qsink_rows(sink, "t"), n);
    assert_int_equal(qsink_rows(sink, "t"), n);
    for (int64_t r = 0; r < n; r++) {
        char v[32];
        assert_int_equal(qsink_cell(sink, "t", r, "k", v, sizeof v), 0);
        assert_int_equal(strtoll(v, NULL, 10), r);
    }
}

static bool exists(const char *path) {
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* The sender delivers every intact row before the page and gives up the
 * rest as one loss that names it: FSNs, frames, rows. */
static void a_sender_delivers_what_does_not_need_the_lost_symbols(void **state) {
    (void) state;
    leave_slot("d");
    damage d = damage_slot("d");
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=d;", it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    char aside[800];
    snprintf(aside, sizeof aside, "%s.unreplayable-1", slot_path("d"));
    assert_false(exists(aside)); /* the slot is kept */
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DATA_LOSS);
    assert_int_equal(r.from_fsn, d.before); /* from the first damaged frame */
    /* the close's published mark fixes the count of the frames the page held
     * (they were taken at their upper bound: "at most 266 frames destroyed",
     * FSN 317..660 for 400 frames) */
    assert_int_equal(qsf_published_fsn(s), FLUSHES - 1);
    assert_int_equal(r.to_fsn, FLUSHES - 1);
    char destroyed[64];
    snprintf(destroyed, sizeof destroyed, "never sent: %" PRId64 " frames destroyed",
             d.after - d.before);
    if (!strstr(r.message, destroyed))
        fail_msg("expected \"%s\" in: %s", destroyed, r.message);
    char rows[64];
    snprintf(rows, sizeof rows, " intact frames of the same flushes (%" PRId64 " rows)",
             (FLUSHES - d.after) * PER);
    if (!strstr(r.message, rows))
        fail_msg("expected \"%s\" in: %s", rows, r.message);
    assert_int_equal(qsf_poll_error(s, &r), 0); /* one loss, one record */
    it_wait_acked(s, qsf_published_fsn(s));
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    expect_prefix(sink, d.before * PER);
    qsink_stop(sink);
}

/* A slot set aside whole by an earlier version is drained the same way. */
static void a_drain_of_a_slot_set_aside_delivers_the_same(void **state) {
    (void) state;
    leave_slot("d");
    damage d = damage_slot("d");
    char aside[800], failed[900];
    snprintf(aside, sizeof aside, "%s.unreplayable-1", slot_path("d"));
    assert_int_equal(rename(slot_path("d"), aside), 0);
    snprintf(failed, sizeof failed, "%s/.failed", aside);
    tu_write_file(failed, "unreplayable: frame FSN 321 needs symbol ids\n", 45);
    qsink *sink = it_sink(NULL);
    char args[1400];
    snprintf(args, sizeof args, "slot drain '%s' --conf 'ws::addr=127.0.0.1:%u;' --timeout 20",
             aside, qsink_port(sink));
    int rc = ct_run(it_dir, args);
    if (rc != 0)
        fail_msg("exit %d:\n%s", rc, ct_out);
    expect_prefix(sink, d.before * PER);
    qsink_stop(sink);
}

int main(int argc, char **argv) {
    qsf_log_set(NULL, NULL, getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF);
    if (ct_init(argc, argv) != 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_sender_delivers_what_does_not_need_the_lost_symbols,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_drain_of_a_slot_set_aside_delivers_the_same, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
