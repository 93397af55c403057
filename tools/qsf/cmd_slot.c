/* qsf slot: look at a store-and-forward slot directory without changing it.
 *   inspect <slot-dir>  segments, FSN range, torn bytes, watermark, manifest,
 *                       dictionary, and what an open would fail on or repair
 *   verify <slot-dir>   exit 0 only if an open would succeed and change nothing
 * Neither command takes the slot lock; both are safe next to a live sender. */
#include "cmd.h"

#include "qsf.h"
#include "log.h"
#include "sf/inspect.h"
#include "sf/slotdir.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

static void slot_usage(FILE *out) {
    fprintf(out, "usage: qsf slot inspect <slot-dir>\n"
                 "       qsf slot verify <slot-dir>\n"
                 "\n"
                 "<slot-dir> is <sf_dir>/<sender_id>. Both commands only read: no lock is\n"
                 "taken and no file is changed.\n"
                 "inspect prints the segments (FSN range, frames, torn bytes), the manifest,\n"
                 "the ack watermark, the symbol dictionary, and what opening the slot would\n"
                 "fail on, repair or delete.\n"
                 "verify prints the same findings and exits 0 only if opening the slot would\n"
                 "succeed without repairing anything.\n"
                 "Exit codes: 0 ok, 1 the slot could not be read, 2 problems found,\n"
                 "64 bad command line.\n");
}

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
        char name[QSF_TEXT_ESCAPED_MAX(sizeof f->info.name)];
        qsf_cmd_escaped(name, sizeof name, f->info.name);
        if (f->corrupt) {
            printf("  %-24s %-8s size %llu\n", name, role(in, f),
                   (unsigned long long) f->info.file_size);
            continue;
        }
        printf("  %-24s %-8s base %lld  frames %llu  append %llu/%llu  flags 0x%02x", name,
               role(in, f), (long long) f->info.base_seq, (unsigned long long) f->info.frame_count,
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
    else if (in->watermark_size != 8192)
        printf("watermark: %llu bytes (legacy form, not trusted)\n",
               (unsigned long long) in->watermark_size);
    else if (!in->watermark_valid)
        printf("watermark: no valid record\n");
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

static void print_lines(const char *title, const char lines[][200], uint32_t n) {
    char line[QSF_TEXT_ESCAPED_MAX(200)];
    if (n == 0)
        return;
    printf("%s:\n", title);
    for (uint32_t i = 0; i < n; i++)
        printf("  - %s\n", qsf_cmd_escaped(line, sizeof line, lines[i]));
}

static int report(const char *dir, bool strict) {
    if (!getenv("QSF_LOG")) /* the findings are printed; keep the library's warnings out */
        qsf_log_set(NULL, NULL, QSF_LOG_ERROR);
    qsf_slot_inspection in;
    qsf_errinfo err;
    char shown_dir[4096], msg[QSF_TEXT_ESCAPED_MAX(sizeof err.msg)];
    qsf_cmd_escaped(shown_dir, sizeof shown_dir, dir);
    if (qsf_slot_inspect(dir, &in, &err) != QSF_OK) {
        fprintf(stderr, "qsf: cannot inspect %s: %s\n", shown_dir,
                qsf_cmd_escaped(msg, sizeof msg, err.msg));
        return QSF_EXIT_FAIL;
    }
    if (in.dir_kind == QSF_DIR_GROUP_ROOT || in.dir_kind == QSF_DIR_NOT_SLOT) {
        printf("slot: %s\nverdict: not a slot: %s\n", shown_dir,
               qsf_cmd_escaped(msg, sizeof msg, in.verdict_msg));
        qsf_slot_inspection_free(&in);
        return QSF_EXIT_INVALID;
    }
    printf("slot: %s\n", shown_dir);
    if (in.verdict == QSF_OK)
        printf("verdict: %s\n", in.nproblems ? "opens, after repairs" : "ok");
    else
        printf("verdict: open fails with %s: %s\n", qsf_err_name(in.verdict),
               qsf_cmd_escaped(msg, sizeof msg, in.verdict_msg));
    print_files(&in);
    print_side_files(&in);
    print_lines("problems", in.problems, in.nproblems);
    print_lines("notes", in.notes, in.nnotes);
    bool bad = in.verdict != QSF_OK || in.nproblems > 0;
    qsf_slot_inspection_free(&in);
    return strict && bad ? QSF_EXIT_INVALID : QSF_EXIT_OK;
}

static int run(int argc, char **argv) {
    bool help = argc < 2 || qsf_cmd_wants_help(argc, argv);
    bool known = argc >= 2 && (strcmp(argv[1], "inspect") == 0 || strcmp(argv[1], "verify") == 0);
    if (!help && known && argc == 3)
        return report(argv[2], strcmp(argv[1], "verify") == 0);
    if (!help && !known)
        fprintf(stderr, "qsf slot: unknown subcommand '%s'\n", argv[1]);
    slot_usage(help && argc >= 2 ? stdout : stderr);
    return help && argc >= 2 ? QSF_EXIT_OK : QSF_EXIT_USAGE;
}

const struct qsf_cmd qsf_cmd_slot = {"slot", "inspect or verify a store-and-forward slot", run};
