/* qsf slot inspect | verify SLOT [--json]: what an open of the slot would
 * find, repair or fail on (sfops/inspect.h), who holds its lock, what is left to
 * send (frames, bytes, tables and rows, how old), why it was given up
 * (.failed) and what was set aside (.rejected). Read only: no lock is taken,
 * no file changes; safe next to a running sender. */
#include "cmd.h"
#include "json.h"
#include "out.h"
#include "rows.h"
#include "slot.h"
#include "slot_srcpos.h"

#include "args.h"
#include "err.h"
#include "sfops/dump.h"
#include "sfops/rejected.h"
#include "sfops/slotdir.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage_of(FILE *out, const char *sub) {
    fprintf(out,
            "usage: qsf slot %s <slot-dir> [--json]\n"
            "\n"
            "<slot-dir> is <sf_dir>/<sender_id> (or a quarantined <sender_id>.unreplayable-<N>).\n"
            "Only reads: no lock is taken and no file is changed, so it is safe next to a\n"
            "running sender.\n"
            "Prints the verdict (what opening the slot would fail on, repair or delete), the\n"
            "lock holder's pid and whether it runs, the segments, manifest, watermark and\n"
            "dictionary, what is left to send (frames, bytes, tables and rows, the age of the\n"
            "oldest and newest data), the reason in .failed and the set-asides in .rejected.\n"
            "--json prints the same as one JSON object.\n"
            "%s"
            "Exit codes: 0 %s, 1 the slot could not be read, 2 %s,\n"
            "64 bad command line.\n",
            sub,
            strcmp(sub, "verify") == 0
                ? "verify exits 0 only if an open would succeed without repairing or giving up\n"
                  "anything. Cutting an interrupted flush (an aborted transaction, which\n"
                  "killing a transaction=on producer leaves) is no repair: a note says it.\n"
                : "",
            strcmp(sub, "verify") == 0 ? "the slot opens as it is" : "inspected",
            strcmp(sub, "verify") == 0 ? "problems found, or not a slot" : "not a slot");
}

static void inspect_usage(FILE *out) {
    usage_of(out, "inspect");
}

static void verify_usage(FILE *out) {
    usage_of(out, "verify");
}

/* ---- what the walk over the pending frames adds ---- */

typedef struct table_rows {
    char name[128];
    uint64_t rows, frames;
} table_rows;

typedef struct pending {
    uint64_t frames, bytes, retired, cut;
    int64_t first, last;
    table_rows *tables;
    uint32_t ntables;
    uint64_t undecoded; /* frames the decoder could not read */
    char why[400];      /* the first reason */
    rows_dec *dec;
} pending;

static void add_rows(pending *p, const char *name, uint32_t len, uint64_t rows) {
    for (uint32_t i = 0; i < p->ntables; i++)
        if (strlen(p->tables[i].name) == len && memcmp(p->tables[i].name, name, len) == 0) {
            p->tables[i].rows += rows;
            p->tables[i].frames++;
            return;
        }
    table_rows *n = realloc(p->tables, (p->ntables + 1) * sizeof *n);
    if (!n)
        return;
    p->tables = n;
    table_rows *t = &n[p->ntables++];
    snprintf(t->name, sizeof t->name, "%.*s", (int) len, name);
    t->rows = rows;
    t->frames = 1;
}

static void decode_pending(pending *p, const qsf_dump_frame *f) {
    char why[200];
    const qsf_qwp_msg *m = rows_decode(p->dec, f->payload, f->len, why, sizeof why);
    if (!m) {
        if (p->undecoded++ == 0)
            snprintf(p->why, sizeof p->why, "FSN %" PRId64 ": %s", f->fsn, why);
        return;
    }
    for (uint32_t i = 0; i < qsf_qwp_msg_table_count(m); i++) {
        const qsf_qwp_dtable *t = qsf_qwp_msg_table(m, i);
        add_rows(p, t->name, t->name_len, t->row_count);
    }
}

static int on_dict(void *user, uint32_t id, const char *s, uint32_t len) {
    pending *p = user;
    return rows_add_symbol(p->dec, id, s, len) == 0 ? 0 : QSF_E_NOMEM;
}

static int on_frame(void *user, const qsf_dump_frame *f) {
    pending *p = user;
    if (f->state == QSF_FRAME_RETIRED)
        p->retired++;
    else if (f->state == QSF_FRAME_CUT)
        p->cut++;
    if (f->state != QSF_FRAME_PENDING)
        return 0;
    if (p->frames++ == 0)
        p->first = f->fsn;
    p->last = f->fsn;
    p->bytes += 8 + (uint64_t) f->len;
    if (f->intact)
        decode_pending(p, f);
    return 0;
}

/* ---- everything the report shows ---- */

typedef struct report {
    const char *path;
    qsf_slot_inspection in;
    qsf_slot_times times;
    pending p;
    qsf_lock_state lock;
    bool failed;
    char failed_reason[1024];
    qsf_rejected_list rejected;
    char rejected_err[QSF_ERRINFO_MSG_MAX];
    int64_t now_us;
} report;

static void read_rejected(report *r) {
    int dfd = open(r->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    qsf_errinfo e;
    if (dfd >= 0 && qsf_rejected_read(dfd, r->path, &r->rejected, &e) != QSF_OK)
        snprintf(r->rejected_err, sizeof r->rejected_err, "%s", e.msg);
    if (dfd >= 0)
        close(dfd);
}

static int gather(report *r, qsf_errinfo *err) {
    r->p.dec = rows_new();
    if (!r->p.dec)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory");
    qsf_walk_opts o = {.from = -1,
                       .to = -1,
                       .payloads = true,
                       .pending_only = true,
                       .dict = on_dict,
                       .frame = on_frame,
                       .user = &r->p};
    int rc = qsf_slot_walk(r->path, &o, &r->in, &r->times, err);
    if (rc != QSF_OK)
        return rc;
    qsf_slot_lock_state(r->path, &r->lock);
    r->failed = slot_failed_reason(r->path, r->failed_reason, sizeof r->failed_reason);
    read_rejected(r);
    r->now_us = slot_now_us();
    return QSF_OK;
}

static void report_free(report *r) {
    qsf_slot_inspection_free(&r->in);
    rows_free(r->p.dec);
    free(r->p.tables);
    qsf_rejected_list_free(&r->rejected);
}

/* ---- text ---- */

static const char *role(const qsf_slot_inspection *in, const qsf_inspect_file *f) {
    if (f->corrupt)
        return "corrupt";
    if (f->live)
        return f->info.active ? "active" : "sealed";
    if (in->verdict != QSF_OK) /* no chain was formed: say what the file holds */
        return f->info.frame_count ? "data" : "empty";
    return f->info.frame_count ? "leftover" : "spare";
}

static void print_files(const qsf_slot_inspection *in) {
    printf("segments: %u live", in->live);
    if (in->last_fsn >= in->first_fsn && in->live)
        printf(", FSN %lld..%lld", (long long) in->first_fsn, (long long) in->last_fsn);
    printf(" (%llu frames, %llu bytes), torn %llu bytes\n", (unsigned long long) in->frames,
           (unsigned long long) in->bytes, (unsigned long long) in->torn_bytes);
    for (uint32_t i = 0; i < in->nfiles; i++) {
        const qsf_inspect_file *f = &in->files[i];
        printf("  ");
        out_str(stdout, f->info.name);
        printf("%*s %-8s ", (int) (strlen(f->info.name) < 24 ? 24 - strlen(f->info.name) : 0), "",
               role(in, f));
        if (f->corrupt) {
            printf("size %llu\n", (unsigned long long) f->info.file_size);
            continue;
        }
        printf("base %lld  frames %llu  append %llu/%llu  flags 0x%02x",
               (long long) f->info.base_seq, (unsigned long long) f->info.frame_count,
               (unsigned long long) f->info.last_good, (unsigned long long) f->info.file_size,
               f->info.flags);
        if (f->torn_bytes)
            printf("  torn %llu", (unsigned long long) f->torn_bytes);
        printf("\n");
    }
}

static void print_side_files(const qsf_slot_inspection *in) {
    if (!in->manifest_present)
        printf("manifest: absent\n");
    else if (!in->manifest_valid)
        printf("manifest: present but invalid\n");
    else
        printf("manifest: generation %lld, headBase %lld, activeBase %lld\n",
               (long long) in->manifest_generation, (long long) in->head_base,
               (long long) in->active_base);
    if (!in->watermark_present)
        printf("watermark: absent\n");
    else if (in->watermark_size != 8192 && in->watermark_size != 16)
        printf("watermark: %llu bytes (damaged, not trusted)\n",
               (unsigned long long) in->watermark_size);
    else if (!in->watermark_valid) /* 16 zero bytes: made by a client, not written yet */
        printf("watermark: %s\n",
               in->watermark_size == 16 ? "16-byte form, no value yet" : "no valid record");
    else if (in->watermark_size == 16)
        printf("watermark: 16-byte form, fsn %lld\n", (long long) in->watermark_fsn);
    else
        printf("watermark: generation %lld, fsn %lld\n", (long long) in->watermark_generation,
               (long long) in->watermark_fsn);
    if (!in->dict_usable)
        printf("dictionary: absent or unusable (frames must be self-sufficient)\n");
    else
        printf("dictionary: %u entries in %u chunks, %llu bytes, torn %llu bytes\n",
               in->dict_entries, in->dict_chunks, (unsigned long long) in->dict_bytes,
               (unsigned long long) in->dict_torn_bytes);
    if (in->verdict == QSF_OK && in->live)
        printf("on open: ackedFsn %lld, commit boundary FSN %lld\n", (long long) in->acked_fsn,
               (long long) in->commit_boundary_fsn);
}

static void print_time(const char *what, int64_t us, int64_t now) {
    char when[48], age[32];
    out_time(when, sizeof when, us);
    out_age(age, sizeof age, now > us ? now - us : 0);
    printf("%s %s (%s ago)", what, when, age);
}

static void print_pending(const report *r) {
    const pending *p = &r->p;
    printf("pending: %llu frames, %llu bytes", (unsigned long long) p->frames,
           (unsigned long long) p->bytes);
    if (p->frames)
        printf(", FSN %lld..%lld", (long long) p->first, (long long) p->last);
    if (p->retired || p->cut)
        printf("; never sent: %llu retired, %llu of an interrupted flush",
               (unsigned long long) p->retired, (unsigned long long) p->cut);
    printf("\n");
    if (r->times.oldest_pending_us >= 0 || r->times.newest_write_us >= 0) {
        printf("data:");
        if (r->times.oldest_pending_us >= 0)
            print_time(" oldest pending written at or after", r->times.oldest_pending_us,
                       r->now_us);
        if (r->times.newest_write_us >= 0)
            print_time(r->times.oldest_pending_us >= 0 ? "; newest written" : " newest written",
                       r->times.newest_write_us, r->now_us);
        printf("\n");
    }
    for (uint32_t i = 0; i < p->ntables; i++) {
        printf(i == 0 ? "tables:\n  " : "  ");
        out_str(stdout, p->tables[i].name);
        printf("  %llu rows in %llu frames\n", (unsigned long long) p->tables[i].rows,
               (unsigned long long) p->tables[i].frames);
    }
    if (p->undecoded) {
        printf("not decoded: %llu frames (", (unsigned long long) p->undecoded);
        out_str(stdout, p->why);
        printf(")\n");
    }
}

static void print_lock_and_markers(const report *r) {
    char lock[200];
    qsf_lock_state_describe(&r->lock, lock, sizeof lock);
    printf("lock: %s\n", lock);
    if (r->failed) {
        printf("failed: ");
        out_str(stdout, r->failed_reason);
        printf("\n");
    }
}

static void print_rejected(const report *r) {
    if (r->rejected_err[0]) {
        printf("rejected: ");
        out_str(stdout, r->rejected_err);
        printf("\n");
    }
    uint32_t sets = 0;
    for (uint32_t i = 0; i < r->rejected.n; i++)
        sets += r->rejected.v[i].kind == QSF_RJR_SET_ASIDE;
    if (sets)
        printf("rejected: %u set-asides in %s\n", sets, QSF_NAME_REJECTED);
    for (uint32_t i = 0; i < r->rejected.n; i++) {
        const qsf_rejected_rec *x = &r->rejected.v[i];
        if (x->kind != QSF_RJR_SET_ASIDE)
            continue;
        printf("  - %s ", x->done ? "[done]" : "[NOT DONE: run the same set-aside again]");
        out_text(stdout, x->audit, strcspn(x->audit, "\n"));
        printf("\n");
    }
}

static void print_lines(const char *title, const char lines[][200], uint32_t n) {
    if (n == 0)
        return;
    printf("%s:\n", title);
    for (uint32_t i = 0; i < n; i++) {
        printf("  - ");
        out_str(stdout, lines[i]);
        printf("\n");
    }
}

static bool no_slot(const qsf_slot_inspection *in) {
    return in->dir_kind == QSF_DIR_GROUP_ROOT || in->dir_kind == QSF_DIR_NOT_SLOT;
}

static void print_text(const report *r) {
    const qsf_slot_inspection *in = &r->in;
    printf("slot: ");
    out_str(stdout, r->path);
    printf("\n");
    if (no_slot(in)) {
        printf("verdict: not a slot: ");
        out_str(stdout, in->verdict_msg);
        printf("\n");
        return;
    }
    if (in->verdict == QSF_OK)
        printf("verdict: %s\n", in->nproblems ? "opens, after repairs" : "ok");
    else
        printf("verdict: open fails with %s: ", qsf_err_name(in->verdict));
    if (in->verdict != QSF_OK) {
        out_str(stdout, in->verdict_msg);
        printf("\n");
    }
    if (in->dir_kind == QSF_DIR_DRAINED)
        printf("drained: no segment left, nothing to send\n");
    print_lock_and_markers(r);
    print_files(in);
    print_side_files(in);
    slot_print_source_positions(r->path, in);
    print_pending(r);
    print_rejected(r);
    print_lines("problems", in->problems, in->nproblems);
    print_lines("notes", in->notes, in->nnotes);
}

/* ---- JSON ---- */

static void json_files(json *j, const qsf_slot_inspection *in) {
    json_arr(j, "segments");
    for (uint32_t i = 0; i < in->nfiles; i++) {
        const qsf_inspect_file *f = &in->files[i];
        json_obj(j, NULL);
        json_str(j, "name", f->info.name);
        json_str(j, "role", role(in, f));
        json_uint(j, "size", f->info.file_size);
        if (!f->corrupt) {
            json_int(j, "base_fsn", f->info.base_seq);
            json_uint(j, "frames", f->info.frame_count);
            json_uint(j, "append_offset", f->info.last_good);
            json_uint(j, "flags", f->info.flags);
            json_uint(j, "torn_bytes", f->torn_bytes);
        }
        json_end_obj(j);
    }
    json_end_arr(j);
}

static void json_side_files(json *j, const qsf_slot_inspection *in) {
    json_obj(j, "manifest");
    json_bool(j, "present", in->manifest_present);
    json_bool(j, "valid", in->manifest_valid);
    if (in->manifest_valid) {
        json_int(j, "generation", in->manifest_generation);
        json_int(j, "head_base", in->head_base);
        json_int(j, "active_base", in->active_base);
    }
    json_end_obj(j);
    json_obj(j, "watermark");
    json_bool(j, "present", in->watermark_present);
    if (in->watermark_present) /* the form: 16 (the Java client's) or 8192 (dual-slot) */
        json_uint(j, "size", in->watermark_size);
    json_bool(j, "valid", in->watermark_valid);
    if (in->watermark_valid) {
        json_int(j, "generation", in->watermark_generation);
        json_int(j, "fsn", in->watermark_fsn);
    }
    json_end_obj(j);
    json_obj(j, "dictionary");
    json_bool(j, "usable", in->dict_usable);
    json_uint(j, "entries", in->dict_entries);
    json_uint(j, "chunks", in->dict_chunks);
    json_uint(j, "bytes", in->dict_bytes);
    json_uint(j, "torn_bytes", in->dict_torn_bytes);
    json_end_obj(j);
}

static void json_lock(json *j, const report *r) {
    char d[200];
    qsf_lock_state_describe(&r->lock, d, sizeof d);
    json_obj(j, "lock");
    json_bool(j, "known", r->lock.known);
    json_bool(j, "held", r->lock.held);
    if (r->lock.held)
        json_int(j, "holder_pid", r->lock.holder_pid);
    else
        json_null(j, "holder_pid");
    json_int(j, "last_pid", r->lock.pid_file);
    json_bool(j, "last_pid_running", r->lock.pid_alive);
    json_str(j, "description", d);
    json_end_obj(j);
    json_str(j, "failed", r->failed ? r->failed_reason : NULL);
}

static void json_age(json *j, const char *at, const char *age, int64_t us, int64_t now) {
    if (us < 0) {
        json_null(j, at);
        json_null(j, age);
        return;
    }
    json_int(j, at, us);
    json_double(j, age, (double) (now > us ? now - us : 0) / 1e6);
}

static void json_pending(json *j, const report *r) {
    const pending *p = &r->p;
    json_obj(j, "pending");
    json_uint(j, "frames", p->frames);
    json_uint(j, "bytes", p->bytes);
    if (p->frames) {
        json_int(j, "from_fsn", p->first);
        json_int(j, "to_fsn", p->last);
    }
    json_uint(j, "retired_frames", p->retired);
    json_uint(j, "cut_frames", p->cut);
    json_age(j, "oldest_written_at_or_after_us", "oldest_age_s", r->times.oldest_pending_us,
             r->now_us);
    json_age(j, "newest_written_us", "newest_age_s", r->times.newest_write_us, r->now_us);
    json_arr(j, "tables");
    for (uint32_t i = 0; i < p->ntables; i++) {
        json_obj(j, NULL);
        json_str(j, "name", p->tables[i].name);
        json_uint(j, "rows", p->tables[i].rows);
        json_uint(j, "frames", p->tables[i].frames);
        json_end_obj(j);
    }
    json_end_arr(j);
    json_uint(j, "frames_not_decoded", p->undecoded);
    json_str(j, "not_decoded_reason", p->undecoded ? p->why : NULL);
    json_end_obj(j);
}

static void json_rejected(json *j, const report *r) {
    json_str(j, "rejected_error", r->rejected_err[0] ? r->rejected_err : NULL);
    json_arr(j, "rejected");
    for (uint32_t i = 0; i < r->rejected.n; i++) {
        const qsf_rejected_rec *x = &r->rejected.v[i];
        if (x->kind != QSF_RJR_SET_ASIDE)
            continue;
        json_obj(j, NULL);
        json_int(j, "from_fsn", x->from);
        json_int(j, "to_fsn", x->to);
        json_int(j, "at_us", x->at_us);
        json_uint(j, "frames", x->frames);
        json_uint(j, "rows", x->rows);
        json_uint(j, "frames_not_counted", x->uncounted);
        json_bool(j, "done", x->done);
        json_strn(j, "audit", x->audit, strcspn(x->audit, "\n"));
        json_end_obj(j);
    }
    json_end_arr(j);
}

static void json_lines(json *j, const char *key, const char lines[][200], uint32_t n) {
    json_arr(j, key);
    for (uint32_t i = 0; i < n; i++)
        json_str(j, NULL, lines[i]);
    json_end_arr(j);
}

static void print_json(const report *r) {
    const qsf_slot_inspection *in = &r->in;
    json j;
    json_begin(&j, stdout);
    json_obj(&j, NULL);
    json_str(&j, "slot", r->path);
    json_str(&j, "verdict", slot_verdict_word(in));
    json_str(&j, "verdict_code", in->verdict == QSF_OK ? NULL : qsf_err_name(in->verdict));
    json_str(&j, "verdict_message", in->verdict == QSF_OK ? NULL : in->verdict_msg);
    json_bool(&j, "drained", in->dir_kind == QSF_DIR_DRAINED);
    json_lock(&j, r);
    json_files(&j, in);
    json_uint(&j, "frames", in->frames);
    json_uint(&j, "bytes", in->bytes);
    json_uint(&j, "torn_bytes", in->torn_bytes);
    if (in->live && in->last_fsn >= in->first_fsn) {
        json_int(&j, "first_fsn", in->first_fsn);
        json_int(&j, "last_fsn", in->last_fsn);
    }
    json_side_files(&j, in);
    slot_json_source_positions(&j, r->path, in);
    json_int(&j, "acked_fsn", in->acked_fsn);
    json_int(&j, "commit_boundary_fsn", in->commit_boundary_fsn);
    json_bool(&j, "unreplayable", in->unreplayable);
    json_pending(&j, r);
    json_rejected(&j, r);
    json_lines(&j, "problems", in->problems, in->nproblems);
    json_lines(&j, "notes", in->notes, in->nnotes);
    json_end_obj(&j);
    json_finish(&j);
}

/* ---- the commands ---- */

static int report_on(const char *sub, int argc, char **argv, bool strict) {
    char cmd[32];
    snprintf(cmd, sizeof cmd, "qsf slot %s", sub);
    bool as_json = false;
    const char *path = NULL;
    arg_opt opts[] = {{"json", ARG_FLAG, &as_json, NULL}};
    int rc = args_parse(cmd, argc, argv, opts, 1, &path, 1);
    if (rc)
        return rc;
    report r = {.path = path};
    qsf_errinfo err;
    if (gather(&r, &err) != QSF_OK) {
        fprintf(stderr, "qsf: cannot inspect ");
        out_str(stderr, path);
        fprintf(stderr, ": ");
        out_str(stderr, err.msg);
        fprintf(stderr, "\n");
        report_free(&r);
        return QSF_EXIT_FAIL;
    }
    if (as_json)
        print_json(&r);
    else
        print_text(&r);
    bool none = no_slot(&r.in), bad = r.in.verdict != QSF_OK || r.in.nproblems > 0;
    report_free(&r);
    return none || (strict && bad) ? QSF_EXIT_INVALID : QSF_EXIT_OK;
}

static int run_inspect(int argc, char **argv) {
    return report_on("inspect", argc, argv, false);
}

static int run_verify(int argc, char **argv) {
    return report_on("verify", argc, argv, true);
}

const slot_sub slot_inspect_cmd = {"inspect",
                                   "what an open would find, the lock holder, what is left to "
                                   "send",
                                   inspect_usage, run_inspect};
const slot_sub slot_verify_cmd = {"verify", "exit 0 only if the slot opens as it is", verify_usage,
                                  run_verify};
