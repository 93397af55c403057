/* The length limits include/qsf.h states at the calls that take names and
 * values: exactly at the limit is accepted, one byte over is QSF_E_VALUE
 * with a message that names the table or column and the limit.
 *
 *   table and column names   1..max_name_len bytes (127 unless the connect
 *                            string lowers it; a chunk's names: 127 when
 *                            built, the sender's max_name_len at its flush)
 *   SYMBOL values            1 MiB (1,048,576 bytes)
 *   VARCHAR / BINARY values  2^31-1 bytes (2,147,483,647)
 *
 * The row API's VARCHAR at 2^31-1 bytes is not tried: it copies the value
 * (2 GiB), and max_buf_size refuses it first anyway; the chunk calls borrow
 * the bytes, so their test maps 2 GiB of untouched (zero) pages. */
#include "itest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NAME_MAX_LEN 127
#define SYMBOL_MAX   (1u << 20)
#define VAR_MAX      2147483647ull

static char name[NAME_MAX_LEN + 2]; /* "nnn...": NAME_MAX_LEN + 1 bytes of 'n' */
static char *big;                   /* SYMBOL_MAX + 1 bytes of 'a' */

static int setup(void **state) {
    (void) state;
    memset(name, 'n', sizeof name - 1);
    big = malloc(SYMBOL_MAX + 1);
    assert_non_null(big);
    memset(big, 'a', SYMBOL_MAX + 1);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    free(big);
    return 0;
}

/* rc is QSF_E_VALUE and err's message holds every needle. */
static void refused(int rc, const qsf_errinfo *e, const char *a, const char *b) {
    if (rc != QSF_E_VALUE || !strstr(e->msg, a) || !strstr(e->msg, b))
        fail_msg("want QSF_E_VALUE with \"%s\" and \"%s\", got %s: %s", a, b, qsf_err_name(rc),
                 e->msg);
}

/* A memory-mode sender that never connects: the row calls need no server. */
static qsf_sender *offline(const char *extra) {
    char conf[512], more[256];
    snprintf(more, sizeof more, "initial_connect_retry=async;close_flush_timeout_millis=0;%s",
             extra);
    return it_sender(it_conf(conf, sizeof conf, 1, more));
}

static void close_clean(qsf_sender *s) {
    qsf_row_cancel(s);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
}

static void row_api_names(void **state) {
    (void) state;
    qsf_sender *s = offline("");
    qsf_errinfo e;
    refused(qsf_table(s, name, NAME_MAX_LEN + 1, &e), &e, "table name \"nnnn",
            "128 bytes, longer than max_name_len=127");
    assert_int_equal(qsf_table(s, name, NAME_MAX_LEN, &e), QSF_OK);
    refused(qsf_col_i64(s, name, NAME_MAX_LEN + 1, 1, &e), &e, "column name \"nnnn",
            "128 bytes, longer than max_name_len=127");
    assert_int_equal(qsf_col_i64(s, name, NAME_MAX_LEN, 1, &e), QSF_OK);
    close_clean(s);
}

static void row_api_names_under_max_name_len(void **state) {
    (void) state;
    qsf_sender *s = offline("max_name_len=16;");
    qsf_errinfo e;
    refused(qsf_table(s, name, 17, &e), &e, "table name \"nnnn",
            "17 bytes, longer than max_name_len=16");
    assert_int_equal(qsf_table(s, name, 16, &e), QSF_OK);
    refused(qsf_symbol(s, name, 17, "x", 1, &e), &e, "column name \"nnnn",
            "17 bytes, longer than max_name_len=16");
    assert_int_equal(qsf_symbol(s, name, 16, "x", 1, &e), QSF_OK);
    close_clean(s);
}

static void row_api_symbol(void **state) {
    (void) state;
    qsf_sender *s = offline("");
    qsf_errinfo e;
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    refused(qsf_symbol(s, "sym", 3, big, SYMBOL_MAX + 1, &e), &e, "column \"sym\"",
            "symbol of 1048577 bytes, more than the 1048576 allowed");
    assert_int_equal(qsf_symbol(s, "sym", 3, big, SYMBOL_MAX, &e), QSF_OK);
    close_clean(s);
}

/* Refused on the length alone: the 2 GiB are never read (a 1-byte buffer). */
static void row_api_varchar_over(void **state) {
    (void) state;
    qsf_sender *s = offline("");
    qsf_errinfo e;
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    refused(qsf_col_varchar(s, "v", 1, "x", VAR_MAX + 1, &e), &e, "column \"v\"",
            "VARCHAR value of 2147483648 bytes, more than the 2147483647 allowed");
    refused(qsf_col_binary(s, "b", 1, "x", VAR_MAX + 1, &e), &e, "column \"b\"",
            "value of 2147483648 bytes, more than the 2147483647 allowed");
    close_clean(s);
}

static void chunk_names(void **state) {
    (void) state;
    qsf_chunk *c = NULL;
    qsf_errinfo e;
    refused(qsf_chunk_new(name, NAME_MAX_LEN + 1, &c, &e), &e, "table name \"nnnn",
            "128 bytes, longer than max_name_len=127");
    assert_null(c);
    assert_int_equal(qsf_chunk_new(name, NAME_MAX_LEN, &c, &e), QSF_OK);
    int64_t v = 1;
    refused(qsf_chunk_i64(c, name, NAME_MAX_LEN + 1, &v, NULL, 0, 1, &e), &e, "column name \"nnnn",
            "128 bytes, longer than max_name_len=127");
    assert_int_equal(qsf_chunk_i64(c, name, NAME_MAX_LEN, &v, NULL, 0, 1, &e), QSF_OK);
    qsf_chunk_free(c);
}

/* A chunk is built without a sender; its flush holds it to the sender's
 * max_name_len, as the row API is: the whole chunk refused, nothing
 * published. It was accepted (a 40-byte column under max_name_len=16). */
static void chunk_names_under_max_name_len(void **state) {
    (void) state;
    qsf_sender *s = offline("max_name_len=16;");
    qsf_errinfo e;
    int64_t v = 1, before = qsf_published_fsn(s);
    qsf_chunk *c;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    assert_int_equal(qsf_chunk_i64(c, "ok", 2, &v, NULL, 0, 1, &e), QSF_OK);
    assert_int_equal(qsf_chunk_i64(c, name, 17, &v, NULL, 0, 1, &e), QSF_OK);
    refused(qsf_flush_chunk(s, c, NULL, &e), &e, "chunk of table \"t\": column name \"nnnn",
            "17 bytes, longer than max_name_len=16");
    assert_int_equal(qsf_published_fsn(s), before);
    assert_int_equal(qsf_buffered_rows(s), 0);
    qsf_chunk_free(c);
    assert_int_equal(qsf_chunk_new(name, 17, &c, &e), QSF_OK);
    assert_int_equal(qsf_chunk_i64(c, "ok", 2, &v, NULL, 0, 1, &e), QSF_OK);
    refused(qsf_flush_chunk(s, c, NULL, &e), &e, "chunk: table name \"nnnn",
            "17 bytes, longer than max_name_len=16");
    qsf_chunk_free(c);
    assert_int_equal(qsf_chunk_new(name, 16, &c, &e), QSF_OK);
    assert_int_equal(qsf_chunk_i64(c, name, 16, &v, NULL, 0, 1, &e), QSF_OK);
    assert_int_equal(qsf_flush_chunk(s, c, NULL, &e), QSF_OK);
    assert_int_equal(qsf_published_fsn(s), before + 1);
    qsf_chunk_free(c);
    qsf_close(s, &e); /* memory mode, no server: the close counts that frame as unsent */
}

static void chunk_symbol(void **state) {
    (void) state;
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    int32_t over[2] = {0, SYMBOL_MAX + 1}, at[2] = {0, SYMBOL_MAX};
    refused(qsf_chunk_symbol(c, "sym", 3, over, big, NULL, 0, 1, &e), &e, "column \"sym\"",
            "row 0: 1048577 long, more than the 1048576 allowed");
    assert_int_equal(qsf_chunk_symbol(c, "sym", 3, at, big, NULL, 0, 1, &e), QSF_OK);
    qsf_chunk_free(c);
}

/* 2 GiB + 1 of address space, never written: reads see zero pages (NUL is
 * valid UTF-8), nothing is copied. */
static void chunk_varchar(void **state) {
    (void) state;
    size_t len = (size_t) VAR_MAX + 2;
    char *z = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (z == MAP_FAILED)
        skip(); /* no 2 GiB of address space here */
    qsf_chunk *c;
    qsf_errinfo e;
    assert_int_equal(qsf_chunk_new("t", 1, &c, &e), QSF_OK);
    int64_t over[2] = {0, (int64_t) VAR_MAX + 1}, at[2] = {0, (int64_t) VAR_MAX};
    refused(qsf_chunk_varchar64(c, "v", 1, over, z, NULL, 0, 1, &e), &e, "column \"v\"",
            "row 0: 2147483648 long, more than the 2147483647 allowed");
    refused(qsf_chunk_binary64(c, "b", 1, over, z, NULL, 0, 1, &e), &e, "column \"b\"",
            "row 0: 2147483648 long, more than the 2147483647 allowed");
    assert_int_equal(qsf_chunk_varchar64(c, "v", 1, at, z, NULL, 0, 1, &e), QSF_OK);
    qsf_chunk_free(c);
    munmap(z, len);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(row_api_names),  cmocka_unit_test(row_api_names_under_max_name_len),
        cmocka_unit_test(row_api_symbol), cmocka_unit_test(row_api_varchar_over),
        cmocka_unit_test(chunk_names),    cmocka_unit_test(chunk_names_under_max_name_len),
        cmocka_unit_test(chunk_symbol),   cmocka_unit_test(chunk_varchar),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
