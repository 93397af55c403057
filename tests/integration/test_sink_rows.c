/* qwp-sink message processing with the QWP decoder (docs/PROTOCOL.md §4, §5.1, §6, §8.5, §8.6;
 * docs/QWP-SINK.md §2.3-§2.5): stored rows and values, OK table entries, DICTIONARY_GAP,
 * SCHEMA_MISMATCH, deferred rows discarded on disconnect, durable acks only on
 * inbound events, restart keeping rows, duplicate and order queries. */
#include "sinktest.h"

#include "qwp_capture.h"
#include "qwp/batch.h"
#include "qwp/encoder.h"

#include <stdio.h>
#include <unistd.h>

/* Vector B: flags 0x0C, dictionary ["a","b"], table t: sym a,NULL,b,a and a
 * Gorilla designated timestamp 1000,2000,3000,4010. */
static const char *VEC_B = "51 57 50 31 01 0C 01 00 2A 00 00 00 00 02 01 61 01 62"
                           "01 74 04 02 03 73 79 6D 09 00 0A 01 02 00 01 00"
                           "00 01 E8 03 00 00 00 00 00 00 D0 07 00 00 00 00 00 00 52 00";
/* The same table block with an empty delta section (ids 0 and 1 unknown). */
static const char *VEC_B_NODICT = "51 57 50 31 01 0C 01 00 26 00 00 00 00 00"
                                  "01 74 04 02 03 73 79 6D 09 00 0A 01 02 00 01 00"
                                  "00 01 E8 03 00 00 00 00 00 00 D0 07 00 00 00 00 00 00 52 00";

static void cell_is(qsink *s, const char *t, int64_t row, const char *col, const char *want) {
    char v[128];
    assert_int_equal(qsink_cell(s, t, row, col, v, sizeof v), 0);
    assert_string_equal(v, want);
}

static void rows_values_and_ok_entries(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    rawws_frame f;
    st_next(&w, &f);
    /* OK seq 0 with one entry: sensors -> seqTxn 1 */
    assert_int_equal(f.len, 11 + 2 + 7 + 8);
    assert_int_equal(qsf_get_u16(f.payload + 9), 1);
    assert_int_equal(qsf_get_u16(f.payload + 11), 7);
    assert_memory_equal(f.payload + 13, "sensors", 7);
    assert_int_equal(qsf_get_i64(f.payload + 20), 1);
    assert_int_equal(qsink_rows(s, "SENSORS"), 2);
    cell_is(s, "sensors", 0, "id", "1");
    cell_is(s, "sensors", 1, "value", "2.2000000000000002");
    cell_is(s, "sensors", 0, "timestamp", "10000000000");
    assert_int_equal(qsink_column_type(s, "sensors", "value"), 0x07);
    uint8_t b[64];
    size_t n = tu_hex(VEC_B, b, sizeof b);
    assert_int_equal(rawws_send_binary(&w, b, n), 0);
    st_expect_ok(&w, 1);
    cell_is(s, "t", 0, "sym", "a");
    cell_is(s, "t", 1, "sym", "null");
    cell_is(s, "t", 2, "sym", "b");
    cell_is(s, "t", 3, "timestamp", "4010");
    assert_int_equal(qsink_table_count(s), 2);
    rawws_close(&w);
    char json[512];
    qsink_summary_json(s, json, sizeof json);
    assert_non_null(strstr(json, "\"rows\":{\"sensors\":2,\"t\":4}"));
    qsink_stop(s);
}

static void dictionary_gap_and_unknown_symbol(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    uint8_t b[64];
    size_t n = tu_hex("51 57 50 31 01 09 00 00 04 00 00 00 05 01 01 61", b, sizeof b);
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_EMPTY_COMMIT, 14, 1), 0);
    assert_int_equal(rawws_send_binary(&w, b, n), 0);
    st_expect_ok(&w, 0);
    st_expect_error(&w, 0x0D, 1);
    rawws_close(&w);
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    n = tu_hex(VEC_B_NODICT, b, sizeof b);
    assert_int_equal(rawws_send_binary(&w, b, n), 0);
    st_expect_error(&w, 0x05, 0);
    rawws_close(&w);
    qsink_stop(s);
}

static void schema_mismatch(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    uint8_t m[sizeof RAWWS_SENSORS];
    memcpy(m, RAWWS_SENSORS, sizeof m);
    m[25] = 0x07; /* id: LONG -> DOUBLE */
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 0);
    assert_int_equal(rawws_send_binary(&w, m, sizeof m), 0);
    st_expect_error(&w, 0x03, 1);
    qsink_error e;
    qsink_errors(s, &e, 1);
    assert_non_null(strstr(e.msg, "'id'"));
    assert_non_null(strstr(e.msg, "LONG"));
    assert_int_equal(qsink_rows(s, "sensors"), 2);
    rawws_close(&w);
    qsink_stop(s);
}

/* One frame, encoded by the library: table `table`, one row with id 1, a
 * LONG[] column "pair" = [7, 8] and timestamp 1000 µs. */
static size_t long_array_frame(uint8_t *out, size_t cap, const char *table) {
    qsf_symtab *st;
    qsf_qwp_batch *b;
    qsf_qwp_encoder *e;
    qc_cap cc;
    qc_init(&cc);
    assert_int_equal(qsf_symtab_new(&st, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_new(st, NULL, &b, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_encoder_new(&e, NULL), QSF_OK);
    const int64_t v[] = {7, 8};
    const int32_t shape[] = {2};
    assert_int_equal(qsf_qwp_batch_table(b, table, strlen(table), NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_col_i64(b, "id", 2, 1, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_col_i64_array(b, "pair", 4, 1, shape, v, NULL), QSF_OK);
    assert_int_equal(qsf_qwp_batch_at_micros(b, 1000, NULL), QSF_OK);
    qsf_qwp_enc_opts eo = {.max_frame = 1 << 20};
    assert_int_equal(qsf_qwp_encode(e, b, &eo, qc_syms, qc_emit, &cc, NULL, NULL), QSF_OK);
    assert_int_equal(cc.n, 1);
    assert_true(cc.f[0].len <= cap);
    size_t n = cc.f[0].len;
    memcpy(out, cc.f[0].p, n);
    qc_free(&cc);
    qsf_qwp_encoder_free(e);
    qsf_qwp_batch_free(b);
    qsf_symtab_free(st);
    return n;
}

static void expect_long_array_refused(qsink *s, rawws *w, int64_t seq) {
    st_expect_error(w, 0x03, seq);
    qsink_error e[4];
    int64_t n = qsink_errors(s, e, 4);
    assert_true(n >= 1 && n <= 4);
    assert_non_null(strstr(e[n - 1].msg, "long arrays are not supported, only double arrays"));
}

/* The real server refuses a LONG[] column outright, for a new table as well:
 * SCHEMA_MISMATCH, and nothing of the frame is stored. */
static void long_arrays_are_refused(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    uint8_t f[256];
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    size_t n = long_array_frame(f, sizeof f, "arr");
    assert_int_equal(rawws_send_binary(&w, f, n), 0);
    expect_long_array_refused(s, &w, 0);
    assert_int_equal(qsink_table_count(s), 0);
    rawws_close(&w);
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 0);
    n = long_array_frame(f, sizeof f, "sensors");
    assert_int_equal(rawws_send_binary(&w, f, n), 0);
    expect_long_array_refused(s, &w, 1);
    assert_int_equal(qsink_rows(s, "sensors"), 2);
    rawws_close(&w);
    qsink_stop(s);
}

static void deferred_rows_commit_or_vanish(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    uint8_t d[sizeof RAWWS_SENSORS];
    memcpy(d, RAWWS_SENSORS, sizeof d);
    d[5] = 0x01; /* FLAG_DEFER_COMMIT */
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary_n(&w, d, sizeof d, 2), 0);
    rawws_frame before[2];
    assert_int_equal(st_ping_collect(&w, before, 2), 0);
    assert_int_equal(qsink_rows(s, "sensors"), 0);
    rawws_close(&w); /* disconnect with the group open: rolled back */
    assert_int_equal(qsink_wait_idle(s, 5000), 0);
    qsink_stats st;
    qsink_get_stats(s, &st);
    assert_int_equal(st.open, 0);
    assert_int_equal(qsink_rows(s, "sensors"), 0);
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary_n(&w, d, sizeof d, 2), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_EMPTY_COMMIT, 14), 0);
    rawws_frame f;
    st_next(&w, &f);
    assert_int_equal(qsf_get_i64(f.payload + 1), 2);
    assert_int_equal(qsf_get_u16(f.payload + 9), 1); /* one commit for the whole group */
    assert_int_equal(qsink_rows(s, "sensors"), 4);
    rawws_close(&w);
    qsink_stop(s);
}

/* The next durable ack: table -> seqTxn (one entry expected). */
static void expect_durable(rawws *w, const char *table, int64_t txn) {
    rawws_frame f;
    st_next(w, &f);
    size_t tl = strlen(table);
    assert_int_equal(f.payload[0], 0x02);
    assert_int_equal(f.len, 3 + 2 + tl + 8);
    assert_int_equal(qsf_get_u16(f.payload + 1), 1);
    assert_memory_equal(f.payload + 5, table, tl);
    assert_int_equal(qsf_get_i64(f.payload + 5 + tl), txn);
}

static void durable_acks_lag_by_commits(void **state) {
    (void) state;
    qsink_opts o = {.durable = 1, .durable_lag_commits = 1};
    qsink *s = st_start(&o);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), "X-QWP-Request-Durable-Ack: true\r\n"), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 0);
    rawws_frame before[2];
    assert_int_equal(st_ping_collect(&w, before, 2), 0); /* txn 1 is still the newest */
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 1);
    expect_durable(&w, "sensors", 1);
    rawws_close(&w);
    /* not requested: never sent */
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS, 3), 0);
    st_expect_ok(&w, 2);
    assert_int_equal(st_ping_collect(&w, before, 2), 0);
    rawws_close(&w);
    qsink_stop(s);
}

static void durable_acks_only_on_inbound_events(void **state) {
    (void) state;
    qsink_opts o = {.durable = 1, .durable_lag_ms = 100};
    qsink *s = st_start(&o);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), "X-QWP-Request-Durable-Ack: true\r\n"), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 0);
    st_expect_quiet(&w, 400); /* the lag passed, but the server has no timer */
    rawws_frame before[2];
    assert_int_equal(st_ping_collect(&w, before, 2), 1); /* PING: durable ack, then PONG */
    assert_int_equal(before[0].payload[0], 0x02);
    assert_int_equal(qsf_get_i64(before[0].payload + 5 + 7), 1);
    /* a durable-ack poll frame is an inbound event too, and takes a wireSeq */
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 1);
    usleep(200000);
    const uint8_t poll[12] = {0x51, 0x57, 0x50, 0x31, 1, 0x02, 0, 0, 0, 0, 0, 0};
    assert_int_equal(rawws_send_binary(&w, poll, 12), 0);
    st_expect_ok(&w, 2);
    expect_durable(&w, "sensors", 2);
    rawws_close(&w);
    qsink_stop(s);
}

static void restart_keeps_rows_drops_dictionary(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    uint8_t b[64];
    size_t n = tu_hex(VEC_B, b, sizeof b);
    assert_int_equal(rawws_send_binary(&w, b, n), 0);
    st_expect_ok(&w, 0);
    qsink_restart(s);
    assert_true(rawws_wait_eof(&w, 5000) != -1);
    rawws_close(&w);
    assert_int_equal(qsink_rows(s, "t"), 4);
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    n = tu_hex(VEC_B_NODICT, b, sizeof b);
    assert_int_equal(rawws_send_binary(&w, b, n), 0);
    st_expect_error(&w, 0x05, 0); /* the dictionary is gone with the connection */
    rawws_close(&w);
    qsink_stop(s);
}

static void duplicates_order_and_append(void **state) {
    (void) state;
    char dir[256], path[300];
    tu_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/rows.jsonl", dir);
    qsink_opts o = {.append_path = path};
    qsink *s = st_start(&o);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 0);
    assert_int_equal(qsink_duplicates(s, "sensors", "id"), 0);
    assert_int_equal(qsink_first_out_of_order(s, "sensors", "id"), -1);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 1);
    assert_int_equal(qsink_duplicates(s, "sensors", "id"), 2);
    assert_int_equal(qsink_first_out_of_order(s, "sensors", "id"), 2);
    assert_int_equal(qsink_duplicates(s, "sensors", "nope"), -1);
    rawws_close(&w);
    qsink_stop(s);
    size_t len;
    char *txt = (char *) tu_read_file(path, &len);
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += txt[i] == '\n';
    assert_int_equal(lines, 4);
    assert_non_null(strstr(txt, "{\"table\":\"sensors\",\"id\":\"2\""));
    free(txt);
    tu_rmtree(dir);
}

/* sensors, 1 row: id LONG = 3 and a new column extra VARCHAR = "hi" (no value,
 * no timestamp). */
static const char *SENSORS_EXTRA = "51 57 50 31 01 00 01 00 29 00 00 00"
                                   "07 73 65 6E 73 6F 72 73 01 02 02 69 64 05"
                                   "05 65 78 74 72 61 0F 00 03 00 00 00 00 00 00 00"
                                   "00 00 00 00 00 02 00 00 00 68 69";

static void columns_added_and_missing_are_null(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    uint8_t b[64];
    size_t n = tu_hex(SENSORS_EXTRA, b, sizeof b);
    uint8_t d[sizeof RAWWS_SENSORS];
    memcpy(d, RAWWS_SENSORS, sizeof d);
    d[5] = 0x01; /* deferred, then committed together with the extra row */
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 0);
    assert_int_equal(rawws_send_binary(&w, b, n), 0);
    st_expect_ok(&w, 1);
    assert_int_equal(rawws_send_binary(&w, d, sizeof d), 0);
    assert_int_equal(rawws_send_binary(&w, b, n), 0);
    rawws_frame f;
    st_next(&w, &f);
    assert_int_equal(qsf_get_i64(f.payload + 1), 3);
    assert_int_equal(qsf_get_i64(f.payload + 20), 3); /* one commit for the group */
    assert_int_equal(qsink_rows(s, "sensors"), 6);
    cell_is(s, "sensors", 0, "extra", "null");
    cell_is(s, "sensors", 2, "extra", "hi");
    cell_is(s, "sensors", 2, "value", "null");
    cell_is(s, "sensors", 2, "timestamp", "null");
    cell_is(s, "sensors", 3, "extra", "null");
    cell_is(s, "sensors", 4, "value", "2.2000000000000002");
    cell_is(s, "sensors", 5, "id", "3");
    assert_int_equal(qsink_column_type(s, "sensors", "extra"), 0x0F);
    rawws_close(&w);
    qsink_stop(s);
}

static void key_column_only(void **state) {
    (void) state;
    qsink_opts o = {.no_values = 1, .key_column = "ID"};
    qsink *s = st_start(&o);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS, 2), 0);
    st_expect_ok(&w, 1);
    assert_int_equal(qsink_rows(s, "sensors"), 4);
    cell_is(s, "sensors", 3, "id", "2");
    char v[64];
    assert_int_equal(qsink_cell(s, "sensors", 0, "value", v, sizeof v), -1); /* not kept */
    assert_int_equal(qsink_duplicates(s, "sensors", "id"), 2);
    assert_int_equal(qsink_first_out_of_order(s, "sensors", "id"), 2);
    char json[512];
    qsink_summary_json(s, json, sizeof json);
    assert_non_null(strstr(json, "\"duplicates\":{\"sensors\":2}"));
    rawws_close(&w);
    qsink_stop(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_values_and_ok_entries),
        cmocka_unit_test(dictionary_gap_and_unknown_symbol),
        cmocka_unit_test(schema_mismatch),
        cmocka_unit_test(long_arrays_are_refused),
        cmocka_unit_test(deferred_rows_commit_or_vanish),
        cmocka_unit_test(durable_acks_lag_by_commits),
        cmocka_unit_test(durable_acks_only_on_inbound_events),
        cmocka_unit_test(restart_keeps_rows_drops_dictionary),
        cmocka_unit_test(duplicates_order_and_append),
        cmocka_unit_test(columns_added_and_missing_are_null),
        cmocka_unit_test(key_column_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
