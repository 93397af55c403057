/* Subcommands of the qsf tool. Each command group lives in its own cmd_<group>.c
 * and is registered with one line in the table of main.c. */
#ifndef QSF_TOOL_CMD_H
#define QSF_TOOL_CMD_H

#include <stdio.h>

/* Exit codes shared by every command. */
enum {
    QSF_EXIT_OK = 0,
    QSF_EXIT_FAIL = 1,    /* the operation failed (I/O, resources) */
    QSF_EXIT_INVALID = 2, /* the input (connect string, slot, FSN span) is invalid */
    QSF_EXIT_BUSY = 3,    /* the slot is in use by another process (its lock is held) */
    QSF_EXIT_USAGE = 64,  /* bad command line (EX_USAGE) */
};

struct qsf_cmd {
    const char *name;
    const char *summary;
    /* argv[0] is the group name ("conf"); returns a QSF_EXIT_* code */
    int (*run)(int argc, char **argv);
};

extern const struct qsf_cmd qsf_cmd_conf;
extern const struct qsf_cmd qsf_cmd_slot;

/* True if argv holds -h or --help. */
int qsf_cmd_wants_help(int argc, char **argv);

/* s escaped for printing into buf (cut to fit cap); returns buf. Every file
 * name and message a command prints goes through it: a name found in a
 * directory may hold a newline or a terminal escape. */
const char *qsf_cmd_escaped(char *buf, size_t cap, const char *s);

#endif
