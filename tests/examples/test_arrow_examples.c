/* The columnar examples run as their users run them, against an in-process
 * qwp-sink: examples/arrow_duckdb.c (a CSV file read by DuckDB, SF mode) and
 * examples/numpy_ctypes.py (NumPy arrays through ctypes). Arguments:
 *   duckdb PATH-OF-arrow_duckdb
 *   numpy  PATH-OF-numpy_ctypes.py PATH-OF-libqsf.so PATH-OF-python3
 * Where DuckDB (scripts/fetch-duckdb.sh) or NumPy (python3-numpy) is absent the
 * program says so and is skipped (TAP "1..0 # SKIP"). */
#include "itest.h"

#include "duckdb_dl.h"
#include "exrun.h"
#include "qwp/types.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog, *lib, *python;
static char out[1 << 16];

static void cell(qsink *sink, const char *table, int64_t r, const char *col, const char *want) {
    char v[512];
    assert_int_equal(qsink_cell(sink, table, r, col, v, sizeof v), 0);
    if (strcmp(v, want) != 0)
        fail_msg("%s row %" PRId64 " column %s: \"%s\", not \"%s\"", table, r, col, v, want);
}

#define CSV_ROWS 500

static const char *const syms[3] = {"AAPL", "MSFT", "GOOG"};

static void duckdb_csv_lands_in_sf_mode(void **state) {
    (void) state;
    char csv[600];
    snprintf(csv, sizeof csv, "%s/trades.csv", it_dir);
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fprintf(f, "ts,sym,price,qty\n");
    for (int i = 0; i < CSV_ROWS; i++)
        fprintf(f, "2024-05-01 09:30:%02d.%06d,%s,%d.25,%d\n", i / 10 % 60, i, syms[i % 3], 100 + i,
                i * 10);
    fclose(f);
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=duckdb;", it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    const char *argv[] = {prog, csv, conf, NULL};
    int rc = ex_run(argv, NULL, out, sizeof out);
    ex_print_comment(out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "500 rows acknowledged"));
    assert_int_equal(qsink_rows(sink, "trades"), CSV_ROWS);
    assert_int_equal(qsink_column_type(sink, "trades", "sym"), QSF_QWP_SYMBOL);
    for (int i = 0; i < CSV_ROWS; i++) {
        char want[64];
        cell(sink, "trades", i, "sym", syms[i % 3]);
        snprintf(want, sizeof want, "%.17g", 100 + i + 0.25);
        cell(sink, "trades", i, "price", want);
        snprintf(want, sizeof want, "%d", i * 10);
        cell(sink, "trades", i, "qty", want);
        /* 2024-05-01 09:30:00 UTC is 1714555800 s */
        snprintf(want, sizeof want, "%" PRId64, (int64_t) (1714555800 + i / 10 % 60) * 1000000 + i);
        cell(sink, "trades", i, "timestamp", want);
    }
    qsink_stop(sink);
}

#define NP_ROWS 1000

static void numpy_arrays_through_ctypes(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[256];
    it_conf(conf, sizeof conf, qsink_port(sink), "");
    const char *argv[] = {python, prog, conf, lib, NULL};
    int rc = ex_run(argv, NULL, out, sizeof out);
    ex_print_comment(out);
    assert_int_equal(rc, 0);
    assert_int_equal(qsink_rows(sink, "readings"), NP_ROWS);
    static const char *const sites[3] = {"north", "south", "east"};
    for (int i = 0; i < NP_ROWS; i++) {
        char want[128];
        snprintf(want, sizeof want, "%d", i);
        cell(sink, "readings", i, "id", want);
        snprintf(want, sizeof want, "%.17g", i * 0.5 - 20.0);
        cell(sink, "readings", i, "temp", i % 10 == 7 ? "null" : want);
        cell(sink, "readings", i, "ok", i % 3 == 0 ? "1" : "0");
        cell(sink, "readings", i, "site", sites[i % 3]);
        /* 2023-11-14T22:13:20 is 1700000000 s; one row per millisecond */
        snprintf(want, sizeof want, "%" PRId64,
                 (int64_t) (1700000000000000000ll + (int64_t) i * 1000000));
        cell(sink, "readings", i, "timestamp", want);
        char v[512];
        assert_int_equal(qsink_cell(sink, "readings", i, "vec", v, sizeof v), 0);
        assert_int_equal(strlen(v), 2 * (1 + 4 + 3 * 8)); /* rank 1, one dimension, 3 values */
    }
    qsink_stop(sink);
}

int main(int argc, char **argv) {
    if (argc < 3)
        return fprintf(stderr, "usage: test_arrow_examples duckdb|numpy PATH [LIBQSF PYTHON]\n"), 2;
    prog = argv[2];
    lib = argc > 3 ? argv[3] : NULL;
    python = argc > 4 ? argv[4] : "/usr/bin/python3";
    char why[1100];
    if (strcmp(argv[1], "duckdb") == 0) {
        duck_api probe;
        if (duck_load(&probe, why, sizeof why) != 0) {
            printf("1..0 # SKIP %s\n", why);
            fprintf(stderr, "example arrow_duckdb skipped: %s\n", why);
            return 0;
        }
        dlclose(probe.lib);
        const struct CMUnitTest tests[] = {cmocka_unit_test_setup_teardown(
            duckdb_csv_lands_in_sf_mode, it_setup_dir, it_teardown_dir)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    /* Debian's python3-numpy belongs to /usr/bin/python3, which may not be
     * the python3 found first on PATH */
    const char *probe_argv[] = {python, "-c", "import numpy", NULL};
    if (ex_run(probe_argv, NULL, out, sizeof out) != 0) {
        python = probe_argv[0] = "/usr/bin/python3";
        if (ex_run(probe_argv, NULL, out, sizeof out) != 0)
            python = NULL;
    }
    if (python == NULL) {
        snprintf(why, sizeof why, "python3 cannot import numpy (apt-get install python3-numpy)");
        printf("1..0 # SKIP %s\n", why);
        fprintf(stderr, "example numpy_ctypes skipped: %s\n", why);
        return 0;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(numpy_arrays_through_ctypes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
