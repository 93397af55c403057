/* examples/resume_file.c killed with SIGKILL again and again while it streams
 * a file into the sink, then run to the end: each run must resume at or after
 * the last line a killed run reported flushed (nothing published is read
 * again), and the sink must end with every line, each line number once once
 * duplicates are removed (DEDUP), the duplicates coming only from the slot's
 * replay of what the server had not acknowledged. Kills follow the child's
 * own "flushed through line N" reports, never a timer. */
#include "itest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINES 20000
#define KILLS 6

static const char *exe;
static qsink *sink_now; /* for the log line of each run */

/* A child running the example with its stdout on *out. */
static pid_t start(const char *conf, const char *file, FILE **out) {
    int p[2];
    assert_int_equal(pipe(p), 0);
    /* a small pipe keeps the child close behind its reports: it blocks on
     * its own output, so a kill lands inside the stream, not after it */
    (void) fcntl(p[0], F_SETPIPE_SZ, 4096);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl(exe, exe, conf, file, "10", (char *) NULL);
        _exit(127);
    }
    close(p[1]);
    *out = fdopen(p[0], "r");
    assert_non_null(*out);
    return pid;
}

/* The number after `label` at the start of line, or -1. */
static int64_t after(const char *line, const char *label) {
    size_t n = strlen(label);
    return strncmp(line, label, n) == 0 ? strtoll(line + n, NULL, 10) : -1;
}

/* Runs the example until it reported `flushes` flushes (then SIGKILL), or to
 * its end (flushes < 0). Checks that it resumed at or after `published`;
 * returns the last line it reported flushed. */
static int64_t run_once(const char *conf, const char *file, int flushes, int64_t published,
                        int64_t *done) {
    FILE *out;
    pid_t pid = start(conf, file, &out);
    char line[256];
    int64_t last = published, resumed = -1;
    int seen = 0;
    while (fgets(line, sizeof line, out)) {
        int64_t v;
        if ((v = after(line, "resuming at line ")) >= 0) {
            resumed = v;
            if (v < published)
                fail_msg("resumed at line %" PRId64 ", but line %" PRId64 " was flushed", v,
                         published);
        } else if ((v = after(line, "flushed through line ")) >= 0) {
            last = v;
            if (++seen == flushes)
                kill(pid, SIGKILL);
        } else if ((v = after(line, "done: ")) >= 0) {
            *done = v;
        }
    }
    fclose(out);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (flushes < 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        fail_msg("the last run failed: status %d", status);
    print_message("# run resumed at line %" PRId64 ", flushed through %" PRId64
                  "%s; sink rows %" PRId64 " dups %" PRId64 "\n",
                  resumed, last, flushes < 0 ? "" : ", then killed", qsink_rows(sink_now, "lines"),
                  qsink_duplicates(sink_now, "lines", "line"));
    return last;
}

static void resumes_exactly_after_kill_9(void **state) {
    (void) state;
    char file[700];
    snprintf(file, sizeof file, "%s/input.txt", it_dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    for (int i = 0; i < LINES; i++)
        fprintf(f, "line %d %.*s\n", i, i % 40, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN");
    assert_int_equal(fclose(f), 0);

    qsink *sink = it_sink(NULL);
    sink_now = sink;
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=loader;", it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    int64_t published = 0, done = -1;
    int kills = 0;
    for (; kills < KILLS && published < LINES; kills++)
        published = run_once(conf, file, 5 + 60 * kills, published, &done);
    run_once(conf, file, -1, published, &done);
    assert_int_equal(done, LINES);

    int64_t rows = qsink_rows(sink, "lines");
    int64_t dups = qsink_duplicates(sink, "lines", "line");
    print_message("# %" PRId64 " rows, %" PRId64 " duplicates, %d kills\n", rows, dups, kills);
    assert_true(kills >= 3);              /* the kills land inside the stream */
    assert_int_equal(rows - dups, LINES); /* every line once, as DEDUP keeps it */
    uint8_t *seen = calloc(LINES, 1);
    assert_non_null(seen);
    for (int64_t r = 0; r < rows; r++) {
        char v[32];
        assert_int_equal(qsink_cell(sink, "lines", r, "line", v, sizeof v), 0);
        int64_t id = atoll(v);
        assert_true(id >= 0 && id < LINES);
        seen[id] = 1;
    }
    for (int64_t id = 0; id < LINES; id++)
        if (!seen[id])
            fail_msg("line %" PRId64 " never arrived", id);
    free(seen);
    qsink_stop(sink);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_resume_file PATH-OF-resume_file\n");
        return 2;
    }
    exe = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(resumes_exactly_after_kill_9, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
