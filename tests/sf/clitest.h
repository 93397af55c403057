/* Running the qsf tool from a test and comparing what it prints with
 * tests/golden/cli/ (tests/golden/README.md): the output with what depends on
 * when the test runs replaced by placeholders (ages, pids, the user, uid and
 * host of an audit line, a set-aside's own time). QSF_UPDATE_GOLDEN=1 writes
 * the files instead. */
#ifndef QSF_CLITEST_H
#define QSF_CLITEST_H

/* The tool's path (argv[1] of the test, made absolute: the tool runs in
 * another directory). Returns 0, or 2 after printing why. */
int ct_init(int argc, char **argv);

/* `cd <dir> && qsf <args>`, stdout and stderr together into ct_out; returns
 * the exit code. */
int ct_run(const char *dir, const char *args);
extern char ct_out[1 << 16];

/* ct_run with the tool killed (SIGKILL) after `seconds`: a command that hangs
 * returns 137 instead of stalling the test. */
int ct_run_limited(const char *dir, int seconds, const char *args);

/* ct_run with `prefix` before the tool (e.g. "setpriv --reuid=nobody ..."). */
int ct_run_prefixed(const char *dir, const char *prefix, const char *args);

/* The placeholders into ct_out, then ct_out must be tests/golden/cli/<name>. */
void ct_expect_golden(const char *name);

#endif
