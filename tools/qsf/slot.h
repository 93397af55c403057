/* The subcommands of `qsf slot`, one file each (slot_<name>.c), registered in
 * the table of cmd_slot.c; and what several of them share. */
#ifndef QSF_TOOL_SLOT_H
#define QSF_TOOL_SLOT_H

#include "sfops/inspect.h"
#include "sfops/lockstate.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct slot_sub {
    const char *name;
    const char *summary;
    void (*usage)(FILE *out);
    /* argv[0] is the subcommand's name; returns a QSF_EXIT_* code */
    int (*run)(int argc, char **argv);
} slot_sub;

extern const slot_sub slot_list_cmd, slot_inspect_cmd, slot_verify_cmd, slot_dump_cmd,
    slot_drain_cmd, slot_set_aside_cmd;

/* The library's warnings stay out of the tool's output unless QSF_LOG asks. */
void slot_quiet_log(void);

/* <slot>/.failed's reason (first line, at most cap - 1 bytes) into buf; false
 * when there is none. A .failed that is no regular file (a FIFO) is there:
 * true, and buf says it cannot be read. */
bool slot_failed_reason(const char *slot, char *buf, size_t cap);

/* The verdict word of an inspection: "ok", "repairs", "fails", "not a slot". */
const char *slot_verdict_word(const qsf_slot_inspection *in);

/* Refuses a slot whose lock another process holds: prints why (naming the
 * pid) and returns QSF_EXIT_BUSY; 0 when it is free. */
int slot_refuse_busy(const char *cmd, const char *slot, const char *what);

/* "<cmd>: <msg>" on stderr (msg is foreign text: a path, a server's words). */
void slot_error(const char *cmd, const char *msg);

/* The wall clock in microseconds. */
int64_t slot_now_us(void);

#endif
