/* qsf slot set-aside SLOT --fsn A[..B] --reason TEXT [--json]: the explicit
 * way past frames the server rejects for good (sfops/setaside.h). The frames
 * are copied into <slot>/.rejected with an audit line (who, when, why, the FSN
 * span, the rows), durably, and only then replaced in the slot, which then
 * continues after them. Nothing else ever drops a frame. */
#include "cmd.h"
#include "json.h"
#include "out.h"
#include "rows.h"
#include "slot.h"

#include "args.h"
#include "err.h"
#include "sfops/dump.h"
#include "sfops/setaside.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void setaside_usage(FILE *out) {
    fprintf(out,
            "usage: qsf slot set-aside <slot-dir> --fsn A[..B] --reason TEXT [--json]\n"
            "\n"
            "Moves the frames FSN A..B out of the way: they are copied into <slot-dir>/.rejected\n"
            "with an audit line (who, when, why, the FSN span, the tables and rows), made\n"
            "durable, and only then replaced in the slot by placeholders that carry nothing,\n"
            "so the slot continues with FSN B+1 and no client ever sends them again. A crash\n"
            "at any point loses nothing; running the same command again finishes an\n"
            "interrupted set-aside without a second copy.\n"
            "Use it for a frame the server rejects for good (e.g. SCHEMA_MISMATCH): qsf slot\n"
            "drain names its FSN. A..B must be whole flushes above the acknowledged FSN (the\n"
            "message names the span when it is not). The slot must not be in use.\n"
            "--reason   why, one line (kept in the audit line)\n"
            "--json     print the result as one JSON object\n"
            "Exit codes: 0 set aside, 1 failed (I/O; nothing changed, or run it again),\n"
            "2 the span or the slot is invalid, 3 the slot is in use (its pid is named),\n"
            "64 bad command line.\n");
}

/* ---- what the frames hold, for the audit line ---- */

typedef struct tally {
    rows_dec *dec;
    char names[16][64];
    uint64_t rows[16];
    uint32_t n, more, undecoded;
} tally;

static void count(tally *t, const char *name, uint32_t len, uint64_t rows) {
    for (uint32_t i = 0; i < t->n; i++)
        if (strlen(t->names[i]) == len && memcmp(t->names[i], name, len) == 0) {
            t->rows[i] += rows;
            return;
        }
    if (t->n == 16) {
        t->more++;
        return;
    }
    snprintf(t->names[t->n], sizeof t->names[0], "%.*s", (int) len, name);
    t->rows[t->n++] = rows;
}

static int on_frame(void *user, const qsf_dump_frame *f) {
    tally *t = user;
    char why[200];
    const qsf_qwp_msg *m = f->intact && f->qwp && f->tables
                               ? rows_decode(t->dec, f->payload, f->len, why, sizeof why)
                               : NULL;
    t->undecoded += f->intact && f->qwp && f->tables && !m;
    for (uint32_t i = 0; m && i < qsf_qwp_msg_table_count(m); i++) {
        const qsf_qwp_dtable *d = qsf_qwp_msg_table(m, i);
        count(t, d->name, d->name_len, d->row_count);
    }
    return 0;
}

static int on_dict(void *user, uint32_t id, const char *s, uint32_t len) {
    return rows_add_symbol(((tally *) user)->dec, id, s, len) == 0 ? 0 : QSF_E_NOMEM;
}

/* "tables: trades 1000 rows, quotes 5 rows" (printable only: it goes into the
 * audit line, which is one line). */
static void detail_of(const char *path, const int64_t span[2], char *out, size_t cap) {
    tally t = {.dec = rows_new()};
    out[0] = '\0';
    qsf_walk_opts o = {.from = span[0],
                       .to = span[1],
                       .payloads = true,
                       .dict = on_dict,
                       .frame = on_frame,
                       .user = &t};
    qsf_slot_inspection in;
    if (t.dec && qsf_slot_walk(path, &o, &in, NULL, NULL) == QSF_OK) {
        size_t o2 = (size_t) snprintf(out, cap, "tables:");
        for (uint32_t i = 0; i < t.n && o2 < cap; i++)
            o2 += (size_t) snprintf(out + o2, cap - o2, "%s %s %" PRIu64 " rows", i ? "," : "",
                                    t.names[i], t.rows[i]);
        if (t.more && o2 < cap)
            o2 += (size_t) snprintf(out + o2, cap - o2, ", %u more tables", t.more);
        if (t.undecoded && o2 < cap)
            snprintf(out + o2, cap - o2, ", %u frames not decoded", t.undecoded);
        qsf_slot_inspection_free(&in);
    }
    for (char *c = out; *c; c++)
        if ((unsigned char) *c < 0x20 || *c == 0x7f)
            *c = '?';
    if (strcmp(out, "tables:") == 0)
        out[0] = '\0';
    rows_free(t.dec);
}

/* ---- the command ---- */

static int exit_for(int rc) {
    if (rc == QSF_E_LOCKED)
        return QSF_EXIT_BUSY;
    return rc == QSF_E_INVAL || rc == QSF_E_CORRUPT ? QSF_EXIT_INVALID : QSF_EXIT_FAIL;
}

static void print_result(const char *path, const int64_t span[2], const qsf_setaside_result *r,
                         bool as_json) {
    if (as_json) {
        json j;
        json_begin(&j, stdout);
        json_obj(&j, NULL);
        json_str(&j, "slot", path);
        json_int(&j, "from_fsn", span[0]);
        json_int(&j, "to_fsn", span[1]);
        json_uint(&j, "frames", r->frames);
        json_uint(&j, "bytes", r->bytes);
        json_uint(&j, "rows", r->rows);
        json_uint(&j, "frames_not_counted", r->uncounted);
        json_bool(&j, "resumed", r->resumed);
        json_uint(&j, "segments_rewritten", r->rewritten);
        json_strn(&j, "audit", r->audit, strcspn(r->audit, "\n"));
        json_end_obj(&j);
        json_finish(&j);
        return;
    }
    printf("%s", r->resumed ? "finished an interrupted set-aside: " : "");
    out_text(stdout, r->audit, strcspn(r->audit, "\n"));
    printf("\nkept in ");
    out_str(stdout, path);
    printf("/%s; the slot continues after FSN %" PRId64 "\n", QSF_NAME_REJECTED, span[1]);
}

static int run_setaside(int argc, char **argv) {
    int64_t span[2] = {-1, -1};
    const char *reason = NULL, *path = NULL;
    bool as_json = false, has_span = false;
    arg_opt opts[] = {{"fsn", ARG_SPAN, span, &has_span},
                      {"reason", ARG_STR, &reason, NULL},
                      {"json", ARG_FLAG, &as_json, NULL}};
    int rc = args_parse("qsf slot set-aside", argc, argv, opts, 3, &path, 1);
    if (rc)
        return rc;
    if (!has_span || !reason) {
        fprintf(stderr, "qsf slot set-aside: --fsn and --reason are required (see --help)\n");
        return QSF_EXIT_USAGE;
    }
    rc = slot_refuse_busy("qsf slot set-aside", path,
                          "stop it first: frames are never taken "
                          "from a slot in use");
    if (rc)
        return rc;
    char detail[800];
    detail_of(path, span, detail, sizeof detail);
    qsf_setaside_req req = {
        .from = span[0], .to = span[1], .reason = reason, .detail = detail[0] ? detail : NULL};
    qsf_setaside_result res;
    qsf_errinfo err;
    rc = qsf_slot_set_aside(path, &req, &res, &err);
    if (rc != QSF_OK) {
        slot_error("qsf slot set-aside", err.msg);
        return exit_for(rc);
    }
    print_result(path, span, &res, as_json);
    return QSF_EXIT_OK;
}

const slot_sub slot_set_aside_cmd = {"set-aside",
                                     "keep frames the server rejects for good in .rejected, and "
                                     "go on without them",
                                     setaside_usage, run_setaside};
