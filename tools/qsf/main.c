/* qsf - command-line tool for qsf configurations and slots.
 * Dispatch is table-driven: a command group is one line in `commands`. */
#include "cmd.h"

#include "qsf.h"

#include <string.h>

static const struct qsf_cmd *const commands[] = {
    &qsf_cmd_conf,
    &qsf_cmd_slot,
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

int qsf_cmd_wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    return 0;
}

static void usage(FILE *out) {
    fprintf(out, "usage: qsf <command> [arguments]   (qsf %s)\n\ncommands:\n", qsf_version());
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out,
            "\nRun 'qsf <command> --help' for the command's usage.\n"
            "Exit codes: 0 ok, 1 failure, 2 invalid input, 3 slot in use, 64 bad command line.\n");
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? QSF_EXIT_USAGE : QSF_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("qsf %s\n", qsf_version());
        return QSF_EXIT_OK;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i]->name) == 0)
            return commands[i]->run(argc - 1, argv + 1);
    fprintf(stderr, "qsf: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return QSF_EXIT_USAGE;
}
