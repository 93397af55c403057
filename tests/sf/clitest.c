/* Running the qsf tool from a test (clitest.h). */
#include "clitest.h"

#include "testutil.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

char ct_out[1 << 16];
static char qsf_bin[4096];

int ct_init(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <path to qsf>\n", argv[0]);
        return 2;
    }
    if (!realpath(argv[1], qsf_bin)) {
        perror(argv[1]);
        return 2;
    }
    return 0;
}

static int run_cmd(const char *cmd) {
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(ct_out, 1, sizeof ct_out - 1, p);
    ct_out[n] = '\0';
    int st = pclose(p);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

int ct_run(const char *dir, const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>&1", dir, qsf_bin, args);
    return run_cmd(cmd);
}

int ct_run_prefixed(const char *dir, const char *prefix, const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s 2>&1", dir, prefix, qsf_bin, args);
    return run_cmd(cmd);
}

int ct_run_limited(const char *dir, int seconds, const char *args) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "timeout -s KILL %d", seconds);
    return ct_run_prefixed(dir, prefix, args);
}

/* Replaces every match of pattern in ct_out by `with`. */
static void replace(const char *pattern, const char *with) {
    regex_t re;
    assert_int_equal(regcomp(&re, pattern, REG_EXTENDED), 0);
    static char buf[sizeof ct_out];
    size_t o = 0;
    const char *s = ct_out;
    regmatch_t m;
    while (regexec(&re, s, 1, &m, s == ct_out ? 0 : REG_NOTBOL) == 0 && m.rm_eo > 0) {
        o += (size_t) snprintf(buf + o, sizeof buf - o, "%.*s%s", (int) m.rm_so, s, with);
        s += m.rm_eo;
    }
    snprintf(buf + o, sizeof buf - o, "%s", s);
    memcpy(ct_out, buf, strlen(buf) + 1);
    regfree(&re);
}

static void normalize(void) {
    replace("[0-9]+[dhms]( [0-9]+[dhms])? ago", "<AGE> ago");
    replace("_age_s\":[0-9.e+-]+", "_age_s\":<AGE>");
    replace("pid [0-9]+", "pid <PID>");
    replace("pid\":[0-9]+", "pid\":<PID>");
    replace("by [^ ]+ \\(uid [0-9]+\\) on [^,]+, pid", "by <USER> (uid <UID>) on <HOST>, pid");
    replace("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z set aside", "<NOW> set aside");
    replace("\"at_us\":[0-9]+", "\"at_us\":<NOW>");
}

void ct_expect_golden(const char *name) {
    normalize();
    char path[1200];
    snprintf(path, sizeof path, "%s/tests/golden/cli/%s", getenv("QSF_SOURCE_ROOT"), name);
    if (getenv("QSF_UPDATE_GOLDEN")) {
        tu_write_file(path, ct_out, strlen(ct_out));
        return;
    }
    size_t n;
    uint8_t *want = tu_read_file(path, &n);
    if (n != strlen(ct_out) || memcmp(want, ct_out, n) != 0)
        fail_msg("%s differs; got:\n%s", name, ct_out);
    free(want);
}
