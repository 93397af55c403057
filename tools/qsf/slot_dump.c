/* qsf slot dump SLOT [--from FSN] [--limit N] [--rows] [--json] [--rejected]:
 * the frames of a slot in FSN order as recovery reads them (sfops/dump.h), with
 * what an open does with each, and with --rows their tables and rows. Read
 * only, like inspect. */
#include "cmd.h"
#include "json.h"
#include "out.h"
#include "rows.h"
#include "slot.h"
#include "slot_srcpos.h"

#include "args.h"
#include "err.h"
#include "qwp/peek.h"
#include "sfops/dump.h"
#include "sfops/rejected.h"
#include "sfops/slotdir.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void dump_usage(FILE *out) {
    fprintf(out,
            "usage: qsf slot dump <slot-dir> [--from FSN] [--limit N] [--rows] [--json]\n"
            "       qsf slot dump <slot-dir> --rejected [--rows] [--json]\n"
            "\n"
            "Prints the slot's frames in FSN order: FSN, what an open does with it (acked,\n"
            "pending: will be sent, retired: a flush given up, never sent, cut: an interrupted\n"
            "flush an open removes), segment file and offset, size, CRC and QWP flags.\n"
            "--from     start at this FSN (default: the first frame on disk)\n"
            "--limit    print at most N frames\n"
            "--rows     decode each frame into its tables and rows; symbols are resolved\n"
            "           through .symbol-dict and the frames' own delta sections\n"
            "--json     one JSON object per frame and line\n"
            "--rejected the frames set aside in .rejected instead (qsf slot set-aside)\n"
            "Only reads, like 'qsf slot inspect'.\n"
            "Exit codes: 0 dumped, 1 the slot could not be read, 2 not a slot or no chain of\n"
            "frames (see qsf slot inspect), 64 bad command line.\n");
}

typedef struct dump {
    bool rows, as_json;
    rows_dec *dec;
    const char *state;             /* overrides the frame's (set-aside frames) */
    const qsf_slot_inspection *in; /* its srcpos: shown beside their frames */
} dump;

/* ---- one frame ---- */

static const char *kind_of(const qsf_dump_frame *f) {
    if (!f->intact)
        return "destroyed: damaged bytes, an open stores a placeholder";
    if (f->placeholder)
        return "placeholder (stands for a frame given up)";
    if (f->empty_commit)
        return "empty commit (carries nothing)";
    return f->qwp ? NULL : "not a QWP message";
}

static void text_frame(const dump *d, const qsf_dump_frame *f) {
    printf("FSN %" PRId64 "  %s  ", f->fsn, d->state ? d->state : qsf_frame_state_name(f->state));
    if (f->segment) {
        out_str(stdout, f->segment);
        printf("@%" PRIu64 "  ", f->offset);
    }
    const char *k = kind_of(f);
    if (f->intact)
        printf("%u bytes  crc 0x%08x  ", f->len, f->crc);
    if (k)
        printf("%s\n", k);
    else
        printf("flags 0x%02x%s%s, %u tables\n", f->flags, f->flags & 0x01 ? " defer-commit" : "",
               f->flags & 0x04 ? " gorilla" : "", f->tables);
}

static void text_row(const qsf_qwp_dtable *t, uint32_t row) {
    char v[4096];
    printf("    ");
    for (uint32_t c = 0; c < t->col_count; c++) {
        bool null, num;
        uint32_t nlen;
        const char *name = rows_col_name(&t->cols[c], &nlen);
        rows_value(&t->cols[c], row, v, sizeof v, &null, &num);
        printf(c ? " " : "");
        out_text(stdout, name, nlen);
        printf("=");
        out_str(stdout, v);
    }
    printf("\n");
}

static void text_rows(const qsf_qwp_msg *m) {
    for (uint32_t i = 0; i < qsf_qwp_msg_table_count(m); i++) {
        const qsf_qwp_dtable *t = qsf_qwp_msg_table(m, i);
        printf("  table ");
        out_text(stdout, t->name, t->name_len);
        printf(": %u rows\n", t->row_count);
        for (uint32_t r = 0; r < t->row_count; r++)
            text_row(t, r);
    }
}

static void json_row(json *j, const qsf_qwp_dtable *t, uint32_t row) {
    char v[4096];
    json_obj(j, NULL);
    for (uint32_t c = 0; c < t->col_count; c++) {
        bool null, num;
        uint32_t nlen;
        const char *name = rows_col_name(&t->cols[c], &nlen);
        char key[QSF_QWP_MAX_NAME_LEN + 1];
        snprintf(key, sizeof key, "%.*s", (int) nlen, name);
        rows_value(&t->cols[c], row, v, sizeof v, &null, &num);
        if (null)
            json_null(j, key);
        else if (num && strspn(v, "-+0123456789.eE") == strlen(v)) /* not nan, inf */
            json_number(j, key, v);
        else
            json_str(j, key, v);
    }
    json_end_obj(j);
}

static void json_data(json *j, const qsf_qwp_msg *m) {
    json_arr(j, "data");
    for (uint32_t i = 0; i < qsf_qwp_msg_table_count(m); i++) {
        const qsf_qwp_dtable *t = qsf_qwp_msg_table(m, i);
        json_obj(j, NULL);
        json_strn(j, "table", t->name, t->name_len);
        json_arr(j, "rows");
        for (uint32_t r = 0; r < t->row_count; r++)
            json_row(j, t, r);
        json_end_arr(j);
        json_end_obj(j);
    }
    json_end_arr(j);
}

static void json_frame(const dump *d, const qsf_dump_frame *f, const qsf_qwp_msg *m,
                       const char *why) {
    json j;
    json_begin(&j, stdout);
    json_obj(&j, NULL);
    json_int(&j, "fsn", f->fsn);
    json_str(&j, "state", d->state ? d->state : qsf_frame_state_name(f->state));
    json_bool(&j, "intact", f->intact);
    json_str(&j, "segment", f->segment);
    json_uint(&j, "offset", f->offset);
    json_uint(&j, "len", f->len);
    json_uint(&j, "crc", f->crc);
    json_bool(&j, "qwp", f->qwp);
    json_uint(&j, "flags", f->flags);
    json_uint(&j, "tables", f->tables);
    json_bool(&j, "placeholder", f->placeholder);
    json_bool(&j, "empty_commit", f->empty_commit);
    const qsf_srcpos_rec *pos = d->state ? NULL : slot_positions_at(d->in, f->fsn);
    if (pos)
        slot_json_position(&j, pos);
    if (m)
        json_data(&j, m);
    else if (why)
        json_str(&j, "decode_error", why);
    json_end_obj(&j);
    json_finish(&j);
}

static int on_frame(void *user, const qsf_dump_frame *f) {
    dump *d = user;
    char why[1200] = "";
    const qsf_qwp_msg *m = NULL;
    bool decode = d->rows && f->intact && f->qwp && f->tables > 0;
    if (decode)
        m = rows_decode(d->dec, f->payload, f->len, why, sizeof why);
    if (d->as_json) {
        json_frame(d, f, m, decode && !m ? why : NULL);
        return 0;
    }
    text_frame(d, f);
    const qsf_srcpos_rec *pos = d->state ? NULL : slot_positions_at(d->in, f->fsn);
    if (pos)
        slot_print_position(pos);
    if (m)
        text_rows(m);
    else if (decode) {
        printf("  not decoded: ");
        out_str(stdout, why);
        printf("\n");
    }
    return 0;
}

static int on_dict(void *user, uint32_t id, const char *s, uint32_t len) {
    dump *d = user;
    return rows_add_symbol(d->dec, id, s, len) == 0 ? 0 : QSF_E_NOMEM;
}

/* ---- the frames of .rejected ---- */

typedef struct rej_ctx {
    dump *d;
    const qsf_rejected_rec *rec;
    int64_t fsn;
} rej_ctx;

static int on_rejected(void *user, uint32_t crc, const uint8_t *payload, uint32_t len) {
    rej_ctx *c = user;
    qsf_qwp_hdr h;
    bool qwp = qsf_qwp_peek_header(payload, len, &h) == QSF_QWP_PEEK_OK;
    qsf_dump_frame f = {.fsn = c->fsn++,
                        .intact = true,
                        .len = len,
                        .crc = crc,
                        .payload = payload,
                        .qwp = qwp,
                        .flags = qwp ? h.flags : 0,
                        .tables = qwp ? h.table_count : 0,
                        .placeholder = qwp && qsf_qwp_peek_is_placeholder(&h),
                        .empty_commit = qwp && !(h.flags & 0x01) && h.table_count == 0};
    return on_frame(c->d, &f);
}

static int dump_rejected(dump *d, const char *path, qsf_errinfo *err) {
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return qsf_err_set(err, QSF_E_IO, 0, 0, "cannot open %s", path);
    qsf_rejected_list l;
    int rc = qsf_rejected_read(dfd, path, &l, err);
    d->state = "set-aside";
    for (uint32_t i = 0; rc == QSF_OK && i < l.n; i++) {
        const qsf_rejected_rec *r = &l.v[i];
        if (r->kind != QSF_RJR_SET_ASIDE)
            continue;
        if (!d->as_json) {
            printf("# %s ", r->done ? "[done]" : "[NOT DONE]");
            out_text(stdout, r->audit, strcspn(r->audit, "\n"));
            printf("\n");
        }
        rej_ctx c = {.d = d, .rec = r, .fsn = r->from};
        rc = qsf_rejected_frames(dfd, path, r, on_rejected, &c, err);
    }
    if (rc == QSF_OK && !l.present && !d->as_json)
        printf("no %s: nothing was set aside\n", QSF_NAME_REJECTED);
    qsf_rejected_list_free(&l);
    close(dfd);
    return rc;
}

/* ---- the command ---- */

static int walk(dump *d, const char *path, int64_t from, int64_t limit, bool rejected,
                qsf_errinfo *err, qsf_slot_inspection *in) {
    /* with --rejected only the dictionary is wanted from the slot: from > to */
    qsf_walk_opts o = {.from = rejected ? INT64_MAX : from,
                       .to = -1,
                       .limit = (uint64_t) limit,
                       .payloads = d->rows,
                       .dict = d->rows ? on_dict : NULL,
                       .frame = on_frame,
                       .user = d};
    d->in = in; /* filled in before the first frame */
    int rc = qsf_slot_walk(path, &o, in, NULL, err);
    if (rc == QSF_OK && rejected)
        rc = dump_rejected(d, path, err);
    return rc;
}

static int refused(const char *path, const qsf_slot_inspection *in) {
    fprintf(stderr, "qsf slot dump: ");
    out_str(stderr, path);
    fprintf(stderr, ": %s: ",
            in->dir_kind == QSF_DIR_GROUP_ROOT || in->dir_kind == QSF_DIR_NOT_SLOT
                ? "not a slot"
                : "no chain of frames (see qsf slot inspect)");
    out_str(stderr, in->verdict_msg);
    fprintf(stderr, "\n");
    return QSF_EXIT_INVALID;
}

static int run_dump(int argc, char **argv) {
    dump d = {0};
    int64_t from = -1, limit = 0;
    bool rejected = false;
    const char *path = NULL;
    arg_opt opts[] = {{"from", ARG_I64, &from, NULL},
                      {"limit", ARG_I64, &limit, NULL},
                      {"rows", ARG_FLAG, &d.rows, NULL},
                      {"json", ARG_FLAG, &d.as_json, NULL},
                      {"rejected", ARG_FLAG, &rejected, NULL}};
    int rc = args_parse("qsf slot dump", argc, argv, opts, 5, &path, 1);
    if (rc)
        return rc;
    d.dec = d.rows ? rows_new() : NULL;
    qsf_slot_inspection in = {0}; /* freed on every path: --rejected may fail after the walk */
    qsf_errinfo err;
    rc = d.rows && !d.dec ? qsf_err_set(&err, QSF_E_NOMEM, 0, 0, "out of memory")
                          : walk(&d, path, from, limit, rejected, &err, &in);
    int exit_code = QSF_EXIT_OK;
    if (rc != QSF_OK) {
        slot_error("qsf slot dump", err.msg);
        exit_code = QSF_EXIT_FAIL;
    } else if (in.verdict != QSF_OK)
        exit_code = refused(path, &in);
    qsf_slot_inspection_free(&in);
    rows_free(d.dec);
    return exit_code;
}

const slot_sub slot_dump_cmd = {
    "dump", "the frames in FSN order; with --rows their tables and rows", dump_usage, run_dump};
