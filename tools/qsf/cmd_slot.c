/* qsf slot: list, look at, dump, drain and set aside frames of store-and-
 * forward slots. Each subcommand lives in slot_<name>.c and is one line of
 * the table below. */
#include "cmd.h"
#include "out.h"
#include "slot.h"

#include "log.h"
#include "os/os.h"
#include "sf/sfa.h"
#include "sfops/slotdir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const slot_sub *const subs[] = {
    &slot_list_cmd, &slot_inspect_cmd, &slot_verify_cmd,
    &slot_dump_cmd, &slot_drain_cmd,   &slot_set_aside_cmd,
};
#define N_SUBS (sizeof subs / sizeof subs[0])

static void slot_usage(FILE *out) {
    fprintf(out, "usage: qsf slot <subcommand> [arguments]\n\nsubcommands:\n");
    for (size_t i = 0; i < N_SUBS; i++)
        fprintf(out, "  %-10s %s\n", subs[i]->name, subs[i]->summary);
    fprintf(out, "\nA slot is <sf_dir>/<sender_id>; <sf_dir> is its group root.\n"
                 "Run 'qsf slot <subcommand> --help' for its usage and exit codes.\n"
                 "docs/OPERATIONS.md describes the slot files and the incident playbook.\n");
}

void slot_quiet_log(void) {
    if (!getenv("QSF_LOG"))
        qsf_log_set(NULL, NULL, QSF_LOG_ERROR);
}

bool slot_failed_reason(const char *slot, char *buf, size_t cap) {
    return qsf_slot_read_line(slot, QSF_NAME_FAILED, buf, cap) != 0;
}

const char *slot_verdict_word(const qsf_slot_inspection *in) {
    if (in->dir_kind == QSF_DIR_GROUP_ROOT || in->dir_kind == QSF_DIR_NOT_SLOT)
        return "not a slot";
    if (in->verdict != QSF_OK)
        return "fails";
    return in->nproblems ? "repairs" : "ok";
}

int slot_refuse_busy(const char *cmd, const char *slot, const char *what) {
    qsf_lock_state ls;
    qsf_slot_lock_state(slot, &ls);
    if (!ls.held)
        return 0;
    fprintf(stderr, "%s: slot ", cmd);
    out_str(stderr, slot);
    fprintf(stderr, " is in use by pid %ld: %s\n", ls.holder_pid, what);
    return QSF_EXIT_BUSY;
}

void slot_error(const char *cmd, const char *msg) {
    fprintf(stderr, "%s: ", cmd);
    out_str(stderr, msg);
    fputc('\n', stderr);
}

int64_t slot_now_us(void) {
    return QSF_OS->wall_us();
}

static int run(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        slot_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? QSF_EXIT_USAGE : QSF_EXIT_OK;
    }
    for (size_t i = 0; i < N_SUBS; i++) {
        if (strcmp(argv[1], subs[i]->name) != 0)
            continue;
        if (qsf_cmd_wants_help(argc - 1, argv + 1)) {
            subs[i]->usage(stdout);
            return QSF_EXIT_OK;
        }
        slot_quiet_log();
        return subs[i]->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "qsf slot: unknown subcommand '%s'\n\n", argv[1]);
    slot_usage(stderr);
    return QSF_EXIT_USAGE;
}

const struct qsf_cmd qsf_cmd_slot = {"slot",
                                     "list, inspect, verify, dump, drain and set aside frames of "
                                     "store-and-forward slots",
                                     run};
