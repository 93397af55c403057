/* `qsf slot dump --rows` of a slot written through the row API and of one
 * written through chunks agree: random tables of every kind (random NULLs,
 * random symbol sets) are stored by two senders that cannot reach a server,
 * one row by row, one as a chunk, each closed with its frames kept; the rows
 * the tool decodes from the two slots are the same lines, in the same order.
 * The binary path is argv[1]. */
#include "itest.h"

#include "chunk_table.h"
#include "clitest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CT_DEFINE_FEED(feed_row, qsf_sender, qsf_)

/* Closes a sender whose frames cannot be delivered: they stay in the slot. */
static void close_keeping_frames(qsf_sender *s) {
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT);
}

/* The row path's sender never flushes on its own: an interval auto-flush
 * (which a slow, loaded run reaches mid-table) would start a frame at another
 * row, and a frame's first row orders its columns differently in the dump. */
static qsf_sender *rows_sender(const char *id) {
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=%s;initial_connect_retry=async;close_flush_timeout_millis=0;"
             "auto_flush=off;",
             it_dir, id);
    return it_sender(it_conf(conf, sizeof conf, 1, extra));
}

static void rows_slot(const char *id, const ct_table *t) {
    qsf_sender *s = rows_sender(id);
    qsf_errinfo e;
    for (size_t r = 0; r < t->rows; r++)
        if (feed_row(s, "t", t, r, &e) != QSF_OK)
            fail_msg("slot %s, row %zu: %s", id, r, e.msg);
    int64_t fsn;
    if (qsf_flush(s, &fsn, &e) != QSF_OK)
        fail_msg("slot %s: qsf_flush: %s", id, e.msg);
    close_keeping_frames(s);
}

static void chunk_slot(const char *id, const ct_table *t) {
    qsf_sender *s = it_offline_sender(id);
    qsf_errinfo e;
    qsf_chunk *c;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    if (ct_to_chunk(t, c, &e) != QSF_OK)
        fail_msg("slot %s: %s", id, e.msg);
    int64_t fsn;
    if (qsf_flush_chunk(s, c, &fsn, &e) != QSF_OK)
        fail_msg("slot %s: qsf_flush_chunk: %s", id, e.msg);
    qsf_chunk_free(c);
    close_keeping_frames(s);
}

/* The tool's row lines (four spaces, then name=value pairs) of slot `id`, one
 * string; *rows counts them. The whole dump goes to a file: it is larger than
 * ct_out. */
static char *dumped_rows(const char *id, size_t *rows) {
    char file[800];
    snprintf(file, sizeof file, "%s/%s.dump", it_dir, id);
    char args[2048];
    snprintf(args, sizeof args, "slot dump --rows '%s/%s' > '%s'", it_dir, id, file);
    int rc = ct_run(it_dir, args);
    if (rc != 0)
        fail_msg("qsf slot dump --rows of %s exited %d: %s", id, rc, ct_out);
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    size_t cap = 1 << 20, len = 0;
    char *out = malloc(cap), line[1 << 16];
    assert_non_null(out);
    out[0] = '\0';
    *rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "    ", 4) != 0)
            continue;
        size_t n = strlen(line);
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + len, line, n + 1);
        len += n;
        (*rows)++;
    }
    fclose(f);
    return out;
}

/* The first line where the two dumps differ, for the failure message. */
static void first_difference(const char *a, const char *b, uint64_t seed) {
    for (size_t line = 1;; line++) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        size_t la = ea ? (size_t) (ea - a) : strlen(a), lb = eb ? (size_t) (eb - b) : strlen(b);
        if (la != lb || memcmp(a, b, la) != 0)
            fail_msg("seed %" PRIu64 ", row line %zu:\n  rows:  %.*s\n  chunk: %.*s", seed, line,
                     (int) (la > 600 ? 600 : la), a, (int) (lb > 600 ? 600 : lb), b);
        if (!ea || !eb)
            return;
        a = ea + 1, b = eb + 1;
    }
}

static void dumps_agree(uint64_t seed, size_t nrows, int null_pct, bool all_kinds) {
    ct_table t;
    ct_make(&t, nrows, seed, null_pct, all_kinds);
    char rid[32], cid[32];
    snprintf(rid, sizeof rid, "rows-%" PRIu64, seed);
    snprintf(cid, sizeof cid, "chunk-%" PRIu64, seed);
    rows_slot(rid, &t);
    chunk_slot(cid, &t);
    size_t nr, nc;
    char *a = dumped_rows(rid, &nr), *b = dumped_rows(cid, &nc);
    assert_int_equal(nr, t.rows); /* every row decoded, so equal dumps say something */
    assert_int_equal(nc, t.rows);
    if (strcmp(a, b) != 0)
        first_difference(a, b, seed);
    free(a);
    free(b);
    ct_free(&t);
}

static void row_and_chunk_slots_dump_the_same_rows(void **state) {
    (void) state;
    dumps_agree(1, 1, 0, true);
    dumps_agree(2, 300, 20, true);  /* every kind, a fifth NULL */
    dumps_agree(3, 1000, 60, true); /* mostly NULL */
    for (uint64_t seed = 10; seed < 16; seed++)
        dumps_agree(seed, 1 + seed * 37 % 700, (int) (seed * 13 % 70), false);
}

int main(int argc, char **argv) {
    if (ct_init(argc, argv) != 0)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(row_and_chunk_slots_dump_the_same_rows, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
