/* Options of a subcommand: "--name value" or "--name=value", flags, and the
 * positional arguments, checked against a table. Errors are printed (naming
 * the option) and return QSF_EXIT_USAGE. */
#ifndef QSF_TOOL_ARGS_H
#define QSF_TOOL_ARGS_H

#include <stdbool.h>
#include <stdint.h>

enum arg_kind {
    ARG_FLAG = 0, /* bool */
    ARG_STR = 1,  /* const char * */
    ARG_I64 = 2,  /* int64_t, >= 0 */
    ARG_SPAN = 3, /* int64_t[2]: "A" or "A..B", 0 <= A <= B */
};

typedef struct arg_opt {
    const char *name; /* without the leading "--" */
    int kind;
    void *dst;
    bool *seen; /* may be NULL */
} arg_opt;

/* Parses argv[1..argc) (argv[0] is the subcommand) into the table and up to
 * npos positional arguments, all of which must be given. `cmd` names the
 * subcommand in messages ("qsf slot dump"). Returns 0 or QSF_EXIT_USAGE. */
int args_parse(const char *cmd, int argc, char **argv, const arg_opt *opts, int nopts,
               const char **pos, int npos);

/* "A" or "A..B" into span[0..1]; false when it is neither. */
bool args_span(const char *s, int64_t span[2]);

#endif
