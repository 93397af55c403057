/* Helpers of the example tests: run an example program as a child process
 * with its stdout captured, and check what it delivered to an in-process
 * qwp-sink. */
#ifndef QSF_EXRUN_H
#define QSF_EXRUN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs argv (argv[0] is the program's path, the list ends with NULL) with the
 * extra environment entries of env ("NAME=value", NULL-terminated; env may be
 * NULL), its stdout captured into out (NUL-terminated, truncated to cap), its
 * stderr left to the test's. Returns the exit code, 128 + the signal when a
 * signal ended it, or -1 when it could not be started. */
int ex_run(const char *const argv[], const char *const env[], char *out, size_t cap);

/* Prints text on stdout as TAP comments ("# " before every line), so that
 * a child's output can go into a test's log. */
void ex_print_comment(const char *text);

/* The integer after the first occurrence of `label` in text (e.g. "rows lost"),
 * or INT64_MIN when the label is not there. */
int64_t ex_number_after(const char *text, const char *label);

#ifdef __cplusplus
}
#endif

#endif
