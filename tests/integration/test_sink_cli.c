/* The qwp-sink executable: --help, a bad fault line, a run with --fault-file,
 * --append and a JSON summary on SIGTERM, the append file after a SIGKILL, and
 * an append file that cannot be written. argv[1] is the path of the qwp-sink
 * binary. */
#include "sinktest.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *EXE;

/* Runs the sink with args, stdout and stderr to files in dir; returns its pid. */
static pid_t spawn(const char *dir, char *const *args) {
    char out[300], err[300];
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    pid_t pid = fork();
    if (pid == 0) {
        freopen(out, "w", stdout);
        freopen(err, "w", stderr);
        execv(EXE, args);
        _exit(127);
    }
    return pid;
}

static int wait_exit(pid_t pid) {
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *dir, const char *name) {
    char p[300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    size_t len;
    uint8_t *b = tu_read_file(p, &len);
    char *s = realloc(b, len + 1);
    s[len] = '\0';
    return s;
}

static void help_and_bad_fault(void **state) {
    (void) state;
    char dir[256];
    tu_mkdtemp(dir, sizeof dir);
    char *help[] = {(char *) EXE, "--help", NULL};
    assert_int_equal(wait_exit(spawn(dir, help)), 0);
    char *out = slurp(dir, "stdout");
    assert_non_null(strstr(out, "close=CODE[:REASON]"));
    assert_non_null(strstr(out, "--tls-cert"));
    free(out);
    char *bad[] = {(char *) EXE, "--port", "0", "--fault", "close=1011 after=soon", NULL};
    assert_int_equal(wait_exit(spawn(dir, bad)), 2);
    char *err = slurp(dir, "stderr");
    assert_non_null(strstr(err, "'soon'"));
    free(err);
    tu_rmtree(dir);
}

/* Port from "qwp-sink: listening on 127.0.0.1:PORT" in stderr. */
static uint16_t read_port(const char *dir) {
    char path[300];
    snprintf(path, sizeof path, "%s/stderr", dir);
    for (int i = 0; i < 500; i++) {
        char line[256] = "";
        FILE *f = fopen(path, "r"); /* the child may not have created it yet */
        while (f && !strstr(line, "listening on") && fgets(line, sizeof line, f))
            ;
        if (f)
            fclose(f);
        char *p = strstr(line, "listening on 127.0.0.1:") ? strstr(line, "127.0.0.1:") : NULL;
        int port = p ? atoi(p + 10) : 0;
        if (port > 0)
            return (uint16_t) port;
        usleep(10000);
    }
    fail_msg("qwp-sink did not report its port");
    return 0;
}

/* Runs the sink with args and opens a WebSocket session to it. */
static pid_t start_session(const char *dir, char *const *args, rawws *w) {
    pid_t pid = spawn(dir, args);
    assert_int_equal(rawws_open(w, read_port(dir), NULL), 0);
    return pid;
}

/* SIGTERM, and the sink must exit 0. */
static void stop_sink(pid_t pid) {
    kill(pid, SIGTERM);
    assert_int_equal(wait_exit(pid), 0);
}

static void run_with_fault_file_and_summary(void **state) {
    (void) state;
    char dir[256], ff[300], rows[300];
    tu_mkdtemp(dir, sizeof dir);
    snprintf(ff, sizeof ff, "%s/faults", dir);
    snprintf(rows, sizeof rows, "%s/rows.jsonl", dir);
    const char *script = "# forged OK first, then a close after two frames\n"
                         "forged-ok=9\n"
                         "\n"
                         "close=4002:enough after=2\n";
    tu_write_file(ff, script, strlen(script));
    char *args[] = {(char *) EXE,   "--port", "0", "--fault-file", ff, "--append", rows,
                    "--key-column", "id",     NULL};
    rawws w;
    pid_t pid = start_session(dir, args, &w);
    st_expect_ok(&w, 9);
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS, 2), 0);
    st_expect_ok(&w, 1);
    st_expect_close(&w, 4002);
    rawws_close(&w);
    stop_sink(pid);
    char *out = slurp(dir, "stdout");
    assert_non_null(strstr(out, "\"connections\":1,"));
    assert_non_null(strstr(out, "\"rows\":{\"sensors\":4}"));
    assert_non_null(strstr(out, "\"closes\":1,"));
    assert_non_null(strstr(out, "\"duplicates\":{\"sensors\":2}"));
    free(out);
    char *appended = slurp(dir, "rows.jsonl");
    assert_non_null(strstr(appended, "{\"table\":\"sensors\",\"id\":\"1\",\"value\":\"1.3"));
    free(appended);
    tu_rmtree(dir);
}

static void periodic_stats(void **state) {
    (void) state;
    char dir[256];
    tu_mkdtemp(dir, sizeof dir);
    char *args[] = {(char *) EXE, "--port", "0", "--stats-every", "1", NULL};
    pid_t pid = spawn(dir, args);
    read_port(dir);
    char path[300];
    snprintf(path, sizeof path, "%s/stdout", dir);
    int lines = 0;
    for (int i = 0; i < 1000 && lines == 0; i++) {
        usleep(10000);
        FILE *f = fopen(path, "r");
        char line[1024];
        while (f && fgets(line, sizeof line, f))
            lines += strstr(line, "{\"connections\":0,") == line;
        if (f)
            fclose(f);
    }
    assert_true(lines >= 1); /* a summary line before any signal */
    kill(pid, SIGINT);
    assert_int_equal(wait_exit(pid), 0);
    tu_rmtree(dir);
}

static int count_lines(const char *path) {
    size_t len;
    uint8_t *b = tu_read_file(path, &len);
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += b[i] == '\n';
    free(b);
    return n;
}

/* Every row an OK covers is in the append file when the OK arrives: a sink
 * killed with SIGKILL right after it has lost none of them. Runs with and
 * without --append-sync. */
static void acknowledged_rows_survive_sigkill(void **state) {
    (void) state;
    for (int sync = 0; sync <= 1; sync++) {
        char dir[256], rows[300];
        tu_mkdtemp(dir, sizeof dir);
        snprintf(rows, sizeof rows, "%s/rows.jsonl", dir);
        char *args[] = {
            (char *) EXE, "--port", "0", "--append", rows, sync ? "--append-sync" : NULL, NULL};
        rawws w;
        pid_t pid = start_session(dir, args, &w);
        assert_int_equal(rawws_send_binary_n(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS, 3), 0);
        st_expect_ok(&w, 2);
        assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
        st_expect_ok(&w, 3);
        kill(pid, SIGKILL);
        assert_int_equal(wait_exit(pid), -1);
        rawws_close(&w);
        assert_int_equal(count_lines(rows), 8); /* 4 acknowledged frames of 2 rows */
        tu_rmtree(dir);
    }
}

/* A sink that cannot write its append file sends no OK: the rows it could not
 * store are never acknowledged (the client replays them elsewhere). */
static void unwritable_append_file_withholds_oks(void **state) {
    (void) state;
    char dir[256];
    tu_mkdtemp(dir, sizeof dir);
    char *args[] = {(char *) EXE, "--port", "0", "--append", "/dev/full", NULL};
    rawws w;
    pid_t pid = start_session(dir, args, &w);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_quiet(&w, 500);
    rawws_close(&w);
    stop_sink(pid);
    char *err = slurp(dir, "stderr");
    assert_non_null(strstr(err, "/dev/full"));
    free(err);
    tu_rmtree(dir);
}

/* A session of one frame of two rows, acknowledged, then SIGTERM. */
static void one_frame_session(const char *dir, char *const *args) {
    rawws w;
    pid_t pid = start_session(dir, args, &w);
    assert_int_equal(rawws_send_binary(&w, RAWWS_SENSORS, sizeof RAWWS_SENSORS), 0);
    st_expect_ok(&w, 0);
    rawws_close(&w);
    stop_sink(pid);
}

/* A sink killed inside a write leaves a torn last line; the next sink on the
 * file cuts it off instead of gluing its first row to it. */
static void torn_last_line_is_cut(void **state) {
    (void) state;
    char dir[256], rows[300];
    tu_mkdtemp(dir, sizeof dir);
    snprintf(rows, sizeof rows, "%s/rows.jsonl", dir);
    const char *before = "{\"table\":\"x\"}\n{\"table\":\"sens";
    tu_write_file(rows, before, strlen(before));
    char *args[] = {(char *) EXE, "--port", "0", "--append", rows, NULL};
    one_frame_session(dir, args);
    char *txt = slurp(dir, "rows.jsonl");
    assert_true(strncmp(txt, "{\"table\":\"x\"}\n{\"table\":\"sensors\",\"id\":\"1\"", 39) == 0);
    free(txt);
    assert_int_equal(count_lines(rows), 3);
    tu_rmtree(dir);
}

/* One frame of two rows into a sink on the append file, its stdout and stderr
 * in the directory dir; returns its summary. */
static char *run_one_frame(const char *dir, char *rows) {
    assert_int_equal(mkdir(dir, 0755), 0); /* a new stderr, not the last run's port */
    char *args[] = {(char *) EXE, "--port", "0", "--append", rows, "--key-column", "id", NULL};
    one_frame_session(dir, args);
    return slurp(dir, "stdout");
}

/* A sink restarted on its append file counts rows and duplicates of its own
 * run only, and its summary and stderr say how many rows came before. */
static void restart_names_the_rows_before_it(void **state) {
    (void) state;
    char dir[256], rows[300], run1[300], run2[300];
    tu_mkdtemp(dir, sizeof dir);
    snprintf(rows, sizeof rows, "%s/rows.jsonl", dir);
    snprintf(run1, sizeof run1, "%s/1", dir);
    snprintf(run2, sizeof run2, "%s/2", dir);
    char *out = run_one_frame(run1, rows);
    assert_non_null(strstr(out, "\"append_rows_before_start\":0"));
    free(out);
    out = run_one_frame(run2, rows); /* the same ids again */
    assert_non_null(strstr(out, "\"rows\":{\"sensors\":2}"));
    assert_non_null(strstr(out, "\"duplicates\":{\"sensors\":0},\"append_rows_before_start\":2"));
    free(out);
    char *err = slurp(run2, "stderr");
    assert_non_null(strstr(err, "holds 2 rows of earlier runs"));
    free(err);
    assert_int_equal(count_lines(rows), 4);
    tu_rmtree(dir);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_sink_cli PATH-TO-qwp-sink\n");
        return 2;
    }
    EXE = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help_and_bad_fault),
        cmocka_unit_test(run_with_fault_file_and_summary),
        cmocka_unit_test(periodic_stats),
        cmocka_unit_test(acknowledged_rows_survive_sigkill),
        cmocka_unit_test(unwritable_append_file_withholds_oks),
        cmocka_unit_test(torn_last_line_is_cut),
        cmocka_unit_test(restart_names_the_rows_before_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
