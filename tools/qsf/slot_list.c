/* qsf slot list SF_DIR [--json]: every slot under a group root, quarantined
 * ones included, with its state, who holds it, what it has left to send and
 * how old that is. Read only, like inspect. */
#include "cmd.h"
#include "json.h"
#include "out.h"
#include "slot.h"

#include "args.h"
#include "err.h"
#include "os/dirlist.h"
#include "sfops/dump.h"
#include "sfops/slotdir.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void list_usage(FILE *out) {
    fprintf(out, "usage: qsf slot list <sf_dir> [--json]\n"
                 "\n"
                 "Lists every slot under the group root <sf_dir> (the sf_dir of the senders'\n"
                 "connect strings), quarantined <sender_id>.unreplayable-<N> ones included: its\n"
                 "state (ok, repairs: an open would repair it, fails: an open would fail,\n"
                 "failed: a drainer gave up on it (.failed), quarantined, drained: nothing left),\n"
                 "the pid holding its lock, the frames and bytes left to send and the age of the\n"
                 "oldest of them. Only reads, like 'qsf slot inspect'.\n"
                 "Exit codes: 0 listed, 1 the directory could not be read, 2 not a group root,\n"
                 "64 bad command line.\n");
}

typedef struct entry {
    char name[256], path[1200];
    bool quarantined, failed;
    const char *state;
    qsf_lock_state lock;
    uint64_t frames, bytes;
    int64_t oldest_us;
    char error[QSF_ERRINFO_MSG_MAX]; /* the slot could not be read */
} entry;

static int count_pending(void *user, const qsf_dump_frame *f) {
    entry *e = user;
    if (f->state == QSF_FRAME_PENDING) {
        e->frames++;
        e->bytes += 8 + (uint64_t) f->len;
    }
    return 0;
}

static const char *state_of(const entry *e, const qsf_slot_inspection *in) {
    if (e->quarantined)
        return "quarantined";
    if (e->failed)
        return "failed";
    if (in->dir_kind == QSF_DIR_DRAINED)
        return "drained";
    return slot_verdict_word(in);
}

static void look(entry *e, const char *sf_dir, const char *name) {
    char reason[8];
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->path, sizeof e->path, "%s/%s", sf_dir, name);
    qsf_slot_dir_name(name, &e->quarantined);
    e->failed = slot_failed_reason(e->path, reason, sizeof reason);
    qsf_slot_lock_state(e->path, &e->lock);
    qsf_walk_opts o = {
        .from = -1, .to = -1, .pending_only = true, .frame = count_pending, .user = e};
    qsf_slot_inspection in;
    qsf_slot_times t;
    qsf_errinfo err;
    e->oldest_us = -1;
    if (qsf_slot_walk(e->path, &o, &in, &t, &err) != QSF_OK) {
        snprintf(e->error, sizeof e->error, "%s", err.msg);
        e->state = "unreadable";
        return;
    }
    e->state = state_of(e, &in);
    e->oldest_us = t.oldest_pending_us;
    qsf_slot_inspection_free(&in);
}

static void print_entry(const entry *e, int64_t now) {
    char lock[32] = "-", bytes[32], age[40] = "-";
    if (e->lock.held)
        snprintf(lock, sizeof lock, "pid %ld", e->lock.holder_pid);
    out_bytes(bytes, sizeof bytes, e->bytes);
    if (e->oldest_us >= 0)
        out_age(age, sizeof age - 4, now > e->oldest_us ? now - e->oldest_us : 0);
    if (e->oldest_us >= 0)
        strcat(age, " ago");
    out_str(stdout, e->name);
    printf("%*s %-12s %-10s %10" PRIu64 " %10s  %s\n",
           (int) (strlen(e->name) < 28 ? 28 - strlen(e->name) : 0), "", e->state, lock, e->frames,
           bytes, age);
    if (e->error[0]) {
        printf("  ");
        out_str(stdout, e->error);
        printf("\n");
    }
}

static void print_text(const char *sf_dir, const entry *v, uint32_t n, int64_t now) {
    uint64_t frames = 0, bytes = 0;
    uint32_t failed = 0, busy = 0;
    printf("group: ");
    out_str(stdout, sf_dir);
    printf("\n%-28s %-12s %-10s %10s %10s  %s\n", "SLOT", "STATE", "LOCK", "PENDING", "BYTES",
           "OLDEST");
    for (uint32_t i = 0; i < n; i++) {
        print_entry(&v[i], now);
        frames += v[i].frames;
        bytes += v[i].bytes;
        failed += v[i].failed || v[i].quarantined;
        busy += v[i].lock.held;
    }
    char b[32];
    out_bytes(b, sizeof b, bytes);
    printf("slots: %u, pending %" PRIu64 " frames (%s), %u failed or quarantined, %u in use\n", n,
           frames, b, failed, busy);
}

static void print_json(const char *sf_dir, const entry *v, uint32_t n, int64_t now) {
    json j;
    json_begin(&j, stdout);
    json_obj(&j, NULL);
    json_str(&j, "group", sf_dir);
    json_arr(&j, "slots");
    for (uint32_t i = 0; i < n; i++) {
        const entry *e = &v[i];
        json_obj(&j, NULL);
        json_str(&j, "name", e->name);
        json_str(&j, "path", e->path);
        json_str(&j, "state", e->state);
        json_bool(&j, "quarantined", e->quarantined);
        json_bool(&j, "failed", e->failed);
        json_bool(&j, "in_use", e->lock.held);
        if (e->lock.held)
            json_int(&j, "holder_pid", e->lock.holder_pid);
        else
            json_null(&j, "holder_pid");
        json_uint(&j, "pending_frames", e->frames);
        json_uint(&j, "pending_bytes", e->bytes);
        if (e->oldest_us >= 0)
            json_double(&j, "oldest_age_s", (double) (now - e->oldest_us) / 1e6);
        else
            json_null(&j, "oldest_age_s");
        json_str(&j, "error", e->error[0] ? e->error : NULL);
        json_end_obj(&j);
    }
    json_end_arr(&j);
    json_end_obj(&j);
    json_finish(&j);
}

static int not_a_group(const char *sf_dir, int kind) {
    fprintf(stderr, "qsf slot list: ");
    out_str(stderr, sf_dir);
    if (kind == QSF_DIR_SLOT || kind == QSF_DIR_DRAINED) {
        fprintf(stderr, " is a slot, not a group root: see qsf slot inspect ");
        out_str(stderr, sf_dir);
        fprintf(stderr, "\n");
    } else
        fprintf(stderr, " is not a group root: it holds no slot and no .slot-locks\n");
    return QSF_EXIT_INVALID;
}

static int run_list(int argc, char **argv) {
    bool as_json = false;
    const char *sf_dir = NULL;
    arg_opt opts[] = {{"json", ARG_FLAG, &as_json, NULL}};
    int rc = args_parse("qsf slot list", argc, argv, opts, 1, &sf_dir, 1);
    if (rc)
        return rc;
    int kind;
    uint32_t nslots;
    char **names = NULL;
    uint32_t n = 0;
    qsf_errinfo err;
    if (qsf_dir_kind(sf_dir, &kind, &nslots, &err) != QSF_OK ||
        (kind == QSF_DIR_GROUP_ROOT && qsf_group_slots(sf_dir, &names, &n, &err) != QSF_OK)) {
        slot_error("qsf slot list", err.msg);
        return QSF_EXIT_FAIL;
    }
    if (kind != QSF_DIR_GROUP_ROOT)
        return not_a_group(sf_dir, kind);
    entry *v = calloc(n ? n : 1, sizeof *v);
    if (!v) {
        qsf_dir_names_free(names, n);
        fprintf(stderr, "qsf slot list: out of memory\n");
        return QSF_EXIT_FAIL;
    }
    for (uint32_t i = 0; i < n; i++)
        look(&v[i], sf_dir, names[i]);
    int64_t now = slot_now_us();
    if (as_json)
        print_json(sf_dir, v, n, now);
    else
        print_text(sf_dir, v, n, now);
    free(v);
    qsf_dir_names_free(names, n);
    return QSF_EXIT_OK;
}

const slot_sub slot_list_cmd = {"list", "every slot under a group root (sf_dir), with its state",
                                list_usage, run_list};
