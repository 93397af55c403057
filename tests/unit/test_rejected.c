/* <slot>/.rejected (sfops/rejected.h): qsf writes exactly the bytes of
 * tests/golden/qsf-rejected.hex for the documented records and reads them back
 * as documented; a record that does not validate is never written after, and
 * the message names the offset; a .rejected.tmp left by an interrupted append
 * is never taken for the file. */
#include "testutil.h"

#include "sftest.h"

#include "sfops/rejected.h"
#include "sf/segfmt.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The two frames of the golden segment file: "one" (FSN 42), "two-two" (43). */
static int put_two(void *user, qsf_rejected_writer *w, qsf_errinfo *err) {
    (void) user;
    uint8_t f[32];
    qsf_sfa_frame_encode(f, "one", 3);
    int rc = qsf_rejected_put(w, f, 11, err);
    qsf_sfa_frame_encode(f, "two-two", 7);
    return rc == QSF_OK ? qsf_rejected_put(w, f, 15, err) : rc;
}

static const char audit[] = "2009-02-13T23:31:30.123456Z set aside FSN 42..43: test\n";
static const char done[] = "2009-02-13T23:31:31Z done\n";

static int append_golden_records(void) {
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_rejected_new r = {.kind = QSF_RJR_SET_ASIDE,
                          .from = 42,
                          .to = 43,
                          .at_us = 1234567890123456LL,
                          .rows = 7,
                          .frames = 2,
                          .uncounted = 1,
                          .audit = audit,
                          .frames_bytes = 26,
                          .write_frames = put_two};
    int rc = qsf_rejected_append(dfd, st_slot, &r, NULL);
    qsf_rejected_new d = {
        .kind = QSF_RJR_DONE, .from = 42, .to = 43, .at_us = 1234567891000000LL, .audit = done};
    if (rc == QSF_OK)
        rc = qsf_rejected_append(dfd, st_slot, &d, NULL);
    close(dfd);
    return rc;
}

static void writes_the_golden_bytes(void **state) {
    (void) state;
    assert_int_equal(append_golden_records(), QSF_OK);
    size_t n, wn;
    uint8_t *got = tu_read_file(st_path(st_slot, QSF_NAME_REJECTED), &n);
    uint8_t *want = st_golden("qsf-rejected.hex", &wn);
    assert_int_equal(n, wn);
    assert_memory_equal(got, want, n);
    free(got);
    free(want);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_REJECTED_TMP)));
}

typedef struct seen {
    int n;
    char p[2][8];
    uint32_t crc[2];
} seen;

static int on_frame(void *user, uint32_t crc, const uint8_t *payload, uint32_t len) {
    seen *s = user;
    snprintf(s->p[s->n], sizeof s->p[0], "%.*s", (int) len, (const char *) payload);
    s->crc[s->n++] = crc;
    return 0;
}

static void reads_the_golden_file_as_documented(void **state) {
    (void) state;
    size_t n;
    uint8_t *img = st_golden("qsf-rejected.hex", &n);
    tu_write_file(st_path(st_slot, QSF_NAME_REJECTED), img, n);
    free(img);
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_rejected_list l;
    assert_int_equal(qsf_rejected_read(dfd, st_slot, &l, NULL), QSF_OK);
    assert_true(l.present);
    assert_int_equal(l.n, 2);
    const qsf_rejected_rec *r = &l.v[0];
    assert_int_equal(r->kind, QSF_RJR_SET_ASIDE);
    assert_int_equal(r->from, 42);
    assert_int_equal(r->to, 43);
    assert_int_equal(r->at_us, 1234567890123456LL);
    assert_int_equal(r->rows, 7);
    assert_int_equal(r->frames, 2);
    assert_int_equal(r->uncounted, 1);
    assert_string_equal(r->audit, audit);
    assert_true(r->done);
    assert_int_equal(r->offset, 8);
    assert_int_equal(r->len, 64 + sizeof audit - 1 + 26 + 4);
    assert_int_equal(l.v[1].kind, QSF_RJR_DONE);
    assert_int_equal(l.v[1].frames, 0);
    seen s = {0};
    assert_int_equal(qsf_rejected_frames(dfd, st_slot, r, on_frame, &s, NULL), QSF_OK);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.p[0], "one");
    assert_string_equal(s.p[1], "two-two");
    assert_int_equal(s.crc[0], 0x49CB0EA6); /* the envelopes as in the segment */
    assert_int_equal(s.crc[1], 0x0700F63A);
    qsf_rejected_list_free(&l);
    close(dfd);
}

/* Every single-byte change of a record, and every cut of the file, is found
 * and named; an append after it is refused and changes nothing. */
static void damage_is_found_and_never_written_over(void **state) {
    (void) state;
    size_t n;
    uint8_t *img = st_golden("qsf-rejected.hex", &n);
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    for (size_t at = 0; at < n; at++) {
        for (int cut = 0; cut < 2; cut++) {
            uint8_t *bad = malloc(n);
            memcpy(bad, img, n);
            bad[at] ^= 0x20;
            tu_write_file(st_path(st_slot, QSF_NAME_REJECTED), cut ? img : bad, cut ? at : n);
            qsf_rejected_list l;
            qsf_errinfo e;
            int rc = qsf_rejected_read(dfd, st_slot, &l, &e);
            if (rc == QSF_OK) /* a cut right after a whole record */
                assert_true(cut && (at == 8 || at == n - 64 - sizeof done + 1 - 4));
            else {
                assert_int_equal(rc, QSF_E_CORRUPT);
                assert_non_null(strstr(e.msg, "is damaged at offset"));
                assert_int_equal(append_golden_records(), QSF_E_CORRUPT);
                assert_int_equal(st_size(st_path(st_slot, QSF_NAME_REJECTED)), cut ? at : n);
            }
            qsf_rejected_list_free(&l);
            free(bad);
        }
    }
    close(dfd);
    free(img);
}

/* A .rejected.tmp is what an append that never reached its rename left: the
 * next append removes it; the file stays what it was until then. */
static void an_interrupted_append_leaves_the_file_as_it_was(void **state) {
    (void) state;
    tu_write_file(st_path(st_slot, QSF_NAME_REJECTED_TMP), "half a record", 13);
    int dfd = open(st_slot, O_RDONLY | O_DIRECTORY);
    qsf_rejected_list l;
    assert_int_equal(qsf_rejected_read(dfd, st_slot, &l, NULL), QSF_OK);
    assert_false(l.present);
    assert_int_equal(append_golden_records(), QSF_OK);
    assert_int_equal(qsf_rejected_read(dfd, st_slot, &l, NULL), QSF_OK);
    assert_int_equal(l.n, 2);
    qsf_rejected_list_free(&l);
    assert_false(st_exists(st_path(st_slot, QSF_NAME_REJECTED_TMP)));
    close(dfd);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, st_setup, st_teardown)
    const struct CMUnitTest tests[] = {
        T(writes_the_golden_bytes),
        T(reads_the_golden_file_as_documented),
        T(damage_is_found_and_never_written_over),
        T(an_interrupted_append_leaves_the_file_as_it_was),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
