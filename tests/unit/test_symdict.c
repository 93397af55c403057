/* .symbol-dict (SYD1 v1): chunk vector, round trip, write-ahead rules (never
 * written twice, gaps refused), torn tails cut before the next append, UTF-8 and
 * entry-limit validation, fallback to self-sufficient mode. */
#include "testutil.h"

#include "sftest.h"

#include "os/os.h"
#include "qwp/utf8.h"
#include "sf/symdict.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[512];
static int dfd = -1;

static int setup(void **state) {
    (void) state;
    tu_mkdtemp(dir, sizeof dir);
    dfd = open(dir, O_RDONLY | O_DIRECTORY);
    return dfd >= 0 ? 0 : -1;
}

static int teardown(void **state) {
    (void) state;
    close(dfd);
    tu_rmtree(dir);
#ifdef QSF_FAULT_INJECTION
    qsf_fault_disarm_all();
#endif
    return 0;
}

static int append_strs(qsf_symdict *d, uint32_t first, int n, const char *const *strs,
                       qsf_errinfo *e) {
    uint32_t lens[16];
    for (int i = 0; i < n; i++)
        lens[i] = (uint32_t) strlen(strs[i]);
    return qsf_symdict_append(d, first, (uint32_t) n, strs, lens, e);
}

static void expect_entries(const qsf_symdict *d, int n, const char *const *want) {
    assert_int_equal(qsf_symdict_size(d), n);
    for (int i = 0; i < n; i++) {
        uint32_t len;
        const char *s = qsf_symdict_entry(d, (uint32_t) i, &len);
        assert_non_null(s);
        assert_int_equal(len, strlen(want[i]));
        assert_string_equal(s, want[i]);
    }
    assert_null(qsf_symdict_entry(d, (uint32_t) n, NULL));
}

static void chunk_vector_a_b(void **state) {
    (void) state;
    const char *s[] = {"a", "b"};
    uint32_t l[] = {1, 1};
    uint8_t out[32], want[16];
    assert_int_equal(qsf_symdict_chunk_size(2, l), 10);
    assert_int_equal(qsf_symdict_chunk_encode(out, sizeof out, 2, s, l), 10);
    tu_hex("02 04 01 61 01 62 10 5A 99 A1", want, sizeof want);
    assert_memory_equal(out, want, 10);
    assert_int_equal(qsf_symdict_chunk_encode(out, 9, 2, s, l), 0); /* too small */
}

static void create_append_reopen(void **state) {
    (void) state;
    qsf_symdict d;
    qsf_errinfo e;
    assert_int_equal(qsf_symdict_create(&d, dfd, dir, &e), QSF_OK);
    const char *one[] = {"one"}, *three[] = {"one", "two", "three"};
    assert_int_equal(append_strs(&d, 0, 1, one, &e), QSF_OK);
    /* ids 0..2 where 0 is already persisted: one chunk with "two", "three" */
    assert_int_equal(append_strs(&d, 0, 3, three, &e), QSF_OK);
    assert_int_equal(append_strs(&d, 1, 2, three + 1, &e), QSF_OK); /* nothing new */
    expect_entries(&d, 3, three);
    qsf_symdict_destroy(&d);
    /* byte-identical to the golden file (the Java fixture's bytes, tests/golden) */
    size_t n, wn;
    uint8_t *got = tu_read_file(st_path(dir, QSF_NAME_SYMDICT), &n);
    uint8_t *want = st_golden("qsf-two-chunk.symbol-dict.hex", &wn);
    assert_int_equal(n, wn);
    assert_memory_equal(got, want, n);
    free(got);
    free(want);
    assert_int_equal(qsf_symdict_open(&d, dfd, dir, &e), QSF_OK);
    assert_false(d.self_sufficient);
    assert_int_equal(d.chunks, 2);
    assert_int_equal(d.persisted, 3);
    expect_entries(&d, 3, three);
    qsf_symdict_destroy(&d);
}

static void gaps_and_bad_strings_are_refused(void **state) {
    (void) state;
    qsf_symdict d;
    qsf_errinfo e;
    assert_int_equal(qsf_symdict_create(&d, dfd, dir, &e), QSF_OK);
    const char *x[] = {"x"};
    assert_int_equal(append_strs(&d, 1, 1, x, &e), QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "gap"));
    const char *bad[] = {"ok", "\xC3\x28"};
    assert_int_equal(append_strs(&d, 0, 2, bad, &e), QSF_E_VALUE);
    assert_non_null(strstr(e.msg, "id 1"));
    assert_int_equal(qsf_symdict_size(&d), 0);
    assert_int_equal(qsf_symdict_append(&d, QSF_SYMDICT_MAX_ENTRIES, 1, x, (uint32_t[]){1}, &e),
                     QSF_E_INVAL);
    assert_int_equal(st_size(st_path(dir, QSF_NAME_SYMDICT)), 8); /* nothing written */
    qsf_symdict_destroy(&d);
}

static void torn_tail_is_cut_before_next_append(void **state) {
    (void) state;
    size_t n;
    uint8_t *img = st_golden("qsf-two-chunk-torn-tail.symbol-dict.hex", &n);
    tu_write_file(st_path(dir, QSF_NAME_SYMDICT), img, n);
    free(img);
    qsf_symdict d;
    qsf_errinfo e;
    assert_int_equal(qsf_symdict_open(&d, dfd, dir, &e), QSF_OK);
    assert_int_equal(d.valid_end, 18);
    assert_int_equal(d.torn_bytes, 16);
    const char *one[] = {"one"};
    expect_entries(&d, 1, one);
    assert_int_equal(st_size(st_path(dir, QSF_NAME_SYMDICT)), 34); /* open never truncates */
    const char *more[] = {"two"};
    assert_int_equal(append_strs(&d, 1, 1, more, &e), QSF_OK);
    qsf_symdict_destroy(&d);
    /* 18 valid bytes + one chunk for "two" (1+1+1+3+4 = 10) */
    assert_int_equal(st_size(st_path(dir, QSF_NAME_SYMDICT)), 28);
    assert_int_equal(qsf_symdict_open(&d, dfd, dir, &e), QSF_OK);
    assert_int_equal(d.torn_bytes, 0);
    const char *both[] = {"one", "two"};
    expect_entries(&d, 2, both);
    qsf_symdict_destroy(&d);
}

static void unusable_file_falls_back(void **state) {
    (void) state;
    qsf_symdict d;
    qsf_errinfo e;
    assert_int_equal(qsf_symdict_open(&d, dfd, dir, &e), QSF_OK); /* missing */
    assert_true(d.self_sufficient);
    assert_int_equal(d.fd, -1);
    uint8_t v3[] = {0x53, 0x59, 0x44, 0x31, 3, 0, 0, 0, 1, 4, 3, 'o', 'n', 'e', 0, 0, 0, 0};
    tu_write_file(st_path(dir, QSF_NAME_SYMDICT), v3, sizeof v3);
    assert_int_equal(qsf_symdict_open(&d, dfd, dir, &e), QSF_OK); /* version 3 */
    assert_true(d.self_sufficient);
    assert_int_equal(qsf_symdict_size(&d), 0);
    assert_int_equal(st_size(st_path(dir, QSF_NAME_SYMDICT)), sizeof v3); /* untouched */
    /* memory still grows in fallback mode */
    const char *a[] = {"a"};
    assert_int_equal(append_strs(&d, 0, 1, a, &e), QSF_OK);
    expect_entries(&d, 1, a);
    assert_int_equal(st_size(st_path(dir, QSF_NAME_SYMDICT)), sizeof v3);
    qsf_symdict_destroy(&d);
}

#ifdef QSF_FAULT_INJECTION /* needs -Dfault_injection=true */
static void half_written_chunk_is_dropped(void **state) {
    (void) state;
    qsf_symdict d;
    qsf_errinfo e;
    assert_int_equal(qsf_symdict_create(&d, dfd, dir, &e), QSF_OK);
    const char *a[] = {"alpha"}, *b[] = {"alpha", "beta"};
    assert_int_equal(append_strs(&d, 0, 1, a, &e), QSF_OK);
    qsf_fault_arm(QSF_FP_SYMDICT_HALF_WRITTEN, 1, QSF_FA_FAIL);
    assert_int_equal(append_strs(&d, 0, 2, b, &e), QSF_E_IO);
    expect_entries(&d, 1, a); /* not added */
    qsf_symdict_close(&d);
    qsf_symdict_destroy(&d);
    /* a reader sees the half chunk as a torn tail */
    assert_int_equal(qsf_symdict_open(&d, dfd, dir, &e), QSF_OK);
    expect_entries(&d, 1, a);
    assert_true(d.torn_bytes > 0);
    assert_int_equal(append_strs(&d, 0, 2, b, &e), QSF_OK);
    qsf_symdict_destroy(&d);
    assert_int_equal(qsf_symdict_open(&d, dfd, dir, &e), QSF_OK);
    assert_int_equal(d.torn_bytes, 0);
    expect_entries(&d, 2, b);
    qsf_symdict_destroy(&d);
}
#endif

static int count_cb(void *user, const uint8_t *s, uint32_t len) {
    (void) s;
    (void) len;
    (*(int *) user)++;
    return 0;
}

static void parse_limits_and_utf8(void **state) {
    (void) state;
    size_t n;
    uint8_t *img = st_golden("qsf-two-chunk.symbol-dict.hex", &n);
    uint64_t end;
    uint32_t entries, chunks;
    int seen = 0;
    assert_int_equal(qsf_symdict_parse(img, n, 2, count_cb, &seen, &end, &entries, &chunks), 0);
    assert_int_equal(entries, 1); /* chunk 1 would pass the limit of 2 */
    assert_int_equal(end, 18);
    assert_int_equal(seen, 1);
    assert_int_equal(qsf_symdict_parse(img, 7, 10, NULL, NULL, &end, &entries, &chunks), -1);
    free(img);
    assert_true(qsf_utf8_valid("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80", 15));
    assert_false(qsf_utf8_valid("\xC0\xAF", 2));     /* overlong */
    assert_false(qsf_utf8_valid("\xED\xA0\x80", 3)); /* surrogate */
    assert_false(qsf_utf8_valid("\xF4\x90\x80\x80", 4));
    assert_false(qsf_utf8_valid("\xE2\x82", 2)); /* truncated */
}

static int eio_fdatasync(int fd) {
    (void) fd;
    errno = EIO;
    return -1;
}

/* A failed sync names the slot's file (several slots may share a process) and
 * leaves the dictionary dirty so the next barrier retries it. */
static void failed_sync_names_the_file_and_stays_dirty(void **state) {
    (void) state;
    qsf_symdict d;
    qsf_errinfo e;
    assert_int_equal(qsf_symdict_create(&d, dfd, dir, &e), QSF_OK);
    QSF_OS->fdatasync = eio_fdatasync;
    int rc = qsf_symdict_sync(&d, &e);
    qsf_os_reset();
    assert_int_equal(rc, QSF_E_DURABILITY);
    char want[700];
    snprintf(want, sizeof want, "fdatasync of %s/.symbol-dict failed", dir);
    assert_non_null(strstr(e.msg, want));
    assert_true(d.dirty);
    assert_int_equal(qsf_symdict_sync(&d, &e), QSF_OK);
    assert_false(d.dirty);
    qsf_symdict_destroy(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chunk_vector_a_b),
        cmocka_unit_test_setup_teardown(create_append_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(gaps_and_bad_strings_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(torn_tail_is_cut_before_next_append, setup, teardown),
        cmocka_unit_test_setup_teardown(unusable_file_falls_back, setup, teardown),
#ifdef QSF_FAULT_INJECTION
        cmocka_unit_test_setup_teardown(half_written_chunk_is_dropped, setup, teardown),
#endif
        cmocka_unit_test(parse_limits_and_utf8),
        cmocka_unit_test_setup_teardown(failed_sync_names_the_file_and_stays_dirty, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
