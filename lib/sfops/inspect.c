/* Read-only slot inspection (inspect.h): runs the recovery scan and chain rules
 * in dry-run mode on a private copy of the state and reads the side files
 * without the handles that would repair them. */
#include "sfops/inspect.h"

#include "bytes.h"
#include "err.h"
#include "os/os.h"
#include "sf/recover_view.h"
#include "sfops/openable.h"
#include "sf/sfio.h"
#include "sf/sidefile.h"
#include "sfops/slotdir.h"
#include "sfops/srcpos_view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_line(char lines[][200], uint32_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_line(char lines[][200], uint32_t *n, const char *fmt, ...) {
    if (*n >= QSF_INSPECT_MAX_NOTES)
        return;
    if (*n == QSF_INSPECT_MAX_NOTES - 1) { /* never drop lines silently */
        snprintf(lines[(*n)++], 200, "(more lines left out)");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lines[(*n)++], 200, fmt, ap);
    va_end(ap);
}

#define PROBLEM(in, ...) add_line((in)->problems, &(in)->nproblems, __VA_ARGS__)
#define NOTE(in, ...)    add_line((in)->notes, &(in)->nnotes, __VA_ARGS__)

/* ---- side files, read as they are ---- */

static int read_image(int dirfd, const char *dir, const char *name, uint8_t img[8192],
                      uint64_t *size, bool *present, qsf_errinfo *err) {
    int fd = qsf_open_regular(dirfd, name, O_RDONLY, size);
    *present = fd >= 0;
    if (fd < 0)
        return errno == ENOENT ? QSF_OK : qsf_file_err(err, errno, "cannot open", dir, name);
    int rc = *size == 8192 || *size == QSF_AKW_COMPACT_SIZE
                 ? qsf_read_at(fd, img, *size, 0, dir, name, err)
                 : QSF_OK;
    QSF_OS->close(fd);
    return rc;
}

static int look_manifest(const qsf_slot *s, qsf_slot_inspection *in, qsf_errinfo *err) {
    uint8_t img[8192];
    uint64_t size = 0;
    int rc =
        read_image(s->dirfd, s->path, QSF_NAME_MANIFEST, img, &size, &in->manifest_present, err);
    if (rc != QSF_OK || !in->manifest_present)
        return rc;
    in->manifest_valid = size == 8192 && qsf_sfm_pick(img, &in->manifest_generation, &in->head_base,
                                                      &in->active_base) == 0;
    if (!in->manifest_valid)
        PROBLEM(in, "%s has a wrong size or no valid record (would be renamed .corrupt)",
                QSF_NAME_MANIFEST);
    return QSF_OK;
}

static int look_watermark(const qsf_slot *s, qsf_slot_inspection *in, qsf_errinfo *err) {
    uint8_t img[8192];
    int rc = read_image(s->dirfd, s->path, QSF_NAME_WATERMARK, img, &in->watermark_size,
                        &in->watermark_present, err);
    if (rc != QSF_OK || !in->watermark_present)
        return rc;
    in->watermark_valid = qsf_akw_read_image(img, in->watermark_size, &in->watermark_generation,
                                             &in->watermark_fsn) == 0;
    if (in->watermark_size != 8192 && in->watermark_size != QSF_AKW_COMPACT_SIZE)
        PROBLEM(in, "%s is %llu bytes, neither 8192 nor 16 (damaged; would be reset)",
                QSF_NAME_WATERMARK, (unsigned long long) in->watermark_size);
    return QSF_OK;
}

static int look_dict(const qsf_slot *s, qsf_slot_inspection *in, qsf_symdict *d, qsf_errinfo *err) {
    int rc = qsf_symdict_open(d, s->dirfd, s->path, err); /* never truncates */
    if (rc != QSF_OK)
        return rc;
    in->dict_present = d->fd >= 0 || !d->self_sufficient;
    in->dict_usable = !d->self_sufficient;
    in->dict_entries = qsf_symdict_size(d);
    in->dict_chunks = d->chunks;
    in->dict_bytes = d->valid_end;
    in->dict_torn_bytes = d->torn_bytes;
    if (d->torn_bytes)
        PROBLEM(in, "%s: %llu torn bytes after offset %llu (cut before the next append)",
                QSF_NAME_SYMDICT, (unsigned long long) d->torn_bytes,
                (unsigned long long) d->valid_end);
    return QSF_OK;
}

/* ---- chain verdict (dry run of recovery) ---- */

static void note_fates(const qsf_rv_result *st, qsf_slot_inspection *in) {
    const qsf_rv_file *active = st->active >= 0 ? &st->files[st->active] : NULL;
    if (st->legacy)
        NOTE(in, "no %s: an open migrates the slot (creates it, stamps MANIFEST_REQUIRED)",
             QSF_NAME_MANIFEST);
    if (st->rerun)
        PROBLEM(in, "a sealed segment has non-zero bytes after its last frame (would be zeroed)");
    if (active && active->residue_end > 0)
        PROBLEM(in, "%s: torn tail of %llu bytes after offset %llu (would be zeroed)",
                active->info.name, (unsigned long long) active->torn_bytes,
                (unsigned long long) active->info.last_good);
    for (uint32_t i = 0; i < st->nfiles; i++) {
        const qsf_rv_file *s = &st->files[i];
        if (s == active)
            continue;
        if (s->fate == QSF_RV_QUARANTINE)
            PROBLEM(in, "%s: %s (would be renamed %s.corrupt)", s->info.name,
                    s->corrupt ? "corrupt" : "torn and empty", s->info.name);
        else if (s->fate == QSF_RV_DEBRIS)
            PROBLEM(in, "%s: no header and nothing but zeros, no data (would be removed)",
                    s->info.name);
        else if (s->fate == QSF_RV_DELETE)
            NOTE(in, "%s: %s (would be deleted)", s->info.name,
                 s->info.frame_count ? "acknowledged leftover below headBase" : "clean spare");
        in->debris += s->fate == QSF_RV_DEBRIS;
    }
    for (uint32_t i = 0; i < st->ntmp; i++)
        PROBLEM(in, "%s: left by an interrupted rewrite (would be removed)", st->tmp[i]);
    in->debris += st->ntmp;
}

/* ---- what the plan would repair or give up ---- */

static void note_manifest(const qsf_rv_result *st, const qsf_manifest *m, qsf_slot_inspection *in) {
    if (st->new_head >= 0)
        PROBLEM(in,
                "manifest headBase %lld lies above unacknowledged frames: would be lowered to "
                "%lld (the data are kept)",
                (long long) m->head_base, (long long) st->new_head);
    if (st->new_active >= 0)
        PROBLEM(in,
                "manifest activeBase %lld lies below a segment that continues the chain: "
                "would be raised to %lld",
                (long long) m->active_base, (long long) st->new_active);
    in->manifest_mismatch = st->new_head >= 0 || st->new_active >= 0;
}

static void note_span(const qsf_rv_span *sp, qsf_slot_inspection *in) {
    if (sp->destroyed > 0) {
        PROBLEM(in, "%.40s: %.90s: %s%llu frames destroyed, FSN %lld..%lld given up", sp->segment,
                sp->what, sp->exact ? "" : "at most ", (unsigned long long) sp->destroyed,
                (long long) sp->from, (long long) sp->to);
        in->losses++;
    }
    in->frames_lost += (uint64_t) (sp->to - sp->from + 1);
}

static void note_plan(const qsf_rv_result *st, const qsf_manifest *m, qsf_slot_inspection *in) {
    note_manifest(st, m, in);
    for (uint32_t i = 0; i < st->nfiles; i++)
        if (st->files[i].rewrite) {
            PROBLEM(in, "%s: would be rewritten with placeholders (a copy kept as .corrupt)%s",
                    st->files[i].info.name,
                    st->files[i].unsalvaged ? "; part of it could not be searched" : "");
            in->rewrites++;
        }
    for (uint32_t i = 0; i < st->nspans; i++) {
        const qsf_rv_span *sp = &st->spans[i];
        note_span(sp, in);
        PROBLEM(in,
                "FSN %lld..%lld: a flush with damaged or given-up frames; never sent (%llu "
                "intact frames, %llu rows%s)",
                (long long) sp->from, (long long) sp->to, (unsigned long long) sp->retired,
                (unsigned long long) sp->rows, sp->uncounted ? " counted" : "");
        in->retired_spans++;
    }
    const qsf_rv_span *c = &st->cut;
    if (c->from > c->to)
        return;
    if (c->destroyed > 0)
        note_span(c, in);
    in->aborted_frames = (uint64_t) (c->to - c->from + 1);
    /* An interrupted flush alone is no damage: it is what killing a producer
     * inside a transaction leaves (docs/DURABILITY.md), and the open cuts it
     * as documented. A note, so verify still passes and says what goes. */
    add_line(c->destroyed > 0 ? in->problems : in->notes,
             c->destroyed > 0 ? &in->nproblems : &in->nnotes,
             "an interrupted flush of %llu frames (FSN %lld..%lld, %llu rows%s) was never "
             "committed (the next open cuts it: an aborted transaction)",
             (unsigned long long) in->aborted_frames, (long long) c->from, (long long) c->to,
             (unsigned long long) c->rows, c->uncounted ? " counted" : "");
}

static void seed_and_analyse(qsf_rv *v, const qsf_rv_result *st, qsf_slot_recovered *out,
                             qsf_slot_inspection *in, qsf_errinfo *err) {
    bool ignored = false;
    out->acked_fsn = qsf_rv_seed_acked(v, out->segments[0].base_seq, out->published_fsn, &ignored);
    in->acked_fsn = out->acked_fsn;
    if (ignored)
        PROBLEM(in, "watermark %lld is above the last FSN %lld (would be ignored)",
                (long long) qsf_rv_watermark(v), (long long) out->published_fsn);
    if (qsf_rv_dict_finish(v, err) != QSF_OK) {
        in->verdict = err->code;
        snprintf(in->verdict_msg, sizeof in->verdict_msg, "%s", err->msg);
        return;
    }
    /* the last committing frame; frames after it (above acked) would be cut */
    out->commit_boundary_fsn = st->cut.from <= st->cut.to ? st->cut.from - 1 : out->published_fsn;
    in->commit_boundary_fsn = out->commit_boundary_fsn;
    in->unreplayable = out->data_loss;
    if (out->data_loss)
        PROBLEM(in, "%.150s (an open would quarantine the slot)", out->data_loss_reason);
}

/* A failure of the chain rules is the verdict (what an open would fail
 * with); running out of memory is the inspection's own error. *stop: the
 * inspection goes no further. */
static int verdict_of(int rc, const qsf_errinfo *e, qsf_slot_inspection *in, bool *stop,
                      qsf_errinfo *err) {
    *stop = rc != QSF_OK;
    if (rc == QSF_E_NOMEM)
        return qsf_err_set(err, rc, 0, 0, "%s", e->msg);
    if (rc != QSF_OK) {
        in->verdict = rc;
        snprintf(in->verdict_msg, sizeof in->verdict_msg, "%s", e->msg);
    }
    return QSF_OK;
}

/* The plan's findings so far; running out of memory is the inspection's own
 * error. */
static int result_of(qsf_rv *v, const qsf_rv_result **res, qsf_errinfo *err) {
    *res = qsf_rv_findings(v);
    return *res ? QSF_OK : qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the plan's result");
}

static int run_chain(qsf_rv *v, qsf_slot_recovered *out, qsf_slot_inspection *in,
                     qsf_errinfo *err) {
    qsf_errinfo e;
    const qsf_rv_result *res;
    bool empty = false, stop;
    int rc = verdict_of(qsf_rv_chain(v, &empty, &e), &e, in, &stop, err);
    if (stop)
        return rc;
    rc = result_of(v, &res, err);
    if (rc != QSF_OK)
        return rc;
    note_fates(res, in);
    if (empty) {
        NOTE(in, "no live segment (none valid, or only spares of an interrupted drained "
                 "close): an open starts a fresh slot");
        return QSF_OK;
    }
    rc = look_dict(&out->slot, in, &out->symdict, &e);
    if (rc == QSF_OK)
        rc = qsf_rv_plan(v, in->watermark_valid ? in->watermark_fsn : -1, &e);
    rc = verdict_of(rc, &e, in, &stop, err);
    if (stop)
        return rc;
    rc = result_of(v, &res, err);
    if (rc == QSF_OK)
        note_plan(res, &out->manifest, in);
    if (rc == QSF_OK)
        rc = qsf_rv_publish(v, err);
    if (rc == QSF_OK)
        seed_and_analyse(v, res, out, in, &e);
    return rc;
}

/* ---- assembling the report ---- */

static bool is_live(const qsf_rv_result *st, const qsf_rv_file *s) {
    return (st->active >= 0 && s == &st->files[st->active]) ||
           (s->fate == QSF_RV_KEEP && !s->corrupt && s->info.frame_count > 0);
}

static int collect_files(qsf_rv *v, const qsf_slot_recovered *out, qsf_slot_inspection *in,
                         qsf_errinfo *err) {
    const qsf_rv_result *st;
    int rc = result_of(v, &st, err);
    if (rc != QSF_OK)
        return rc;
    in->files = calloc(st->nfiles ? st->nfiles : 1, sizeof *in->files);
    if (!in->files)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for the file list");
    for (uint32_t i = 0; i < out->segment_count; i++) { /* live chain first */
        qsf_inspect_file *f = &in->files[in->nfiles++];
        f->info = out->segments[i];
        f->live = true;
        in->frames += f->info.frame_count;
        in->bytes += f->info.last_good - QSF_SFA_HEADER_SIZE;
    }
    in->live = out->segment_count;
    for (uint32_t i = 0; i < st->nfiles; i++) {
        const qsf_rv_file *s = &st->files[i];
        in->torn_bytes += s->torn_bytes;
        for (uint32_t k = 0; k < in->live; k++)
            if (strcmp(in->files[k].info.name, s->info.name) == 0)
                in->files[k].torn_bytes = s->torn_bytes;
        if (out->segment_count && is_live(st, s))
            continue;
        qsf_inspect_file *f = &in->files[in->nfiles++];
        f->info = s->info;
        f->corrupt = s->corrupt;
        f->torn_bytes = s->torn_bytes;
    }
    if (in->live) {
        in->first_fsn = out->segments[0].base_seq;
        in->last_fsn = out->published_fsn;
    }
    return QSF_OK;
}

static void inspection_init(qsf_slot_inspection *in) {
    memset(in, 0, sizeof *in);
    in->last_fsn = in->acked_fsn = in->commit_boundary_fsn = -1;
}

/* The manifest handle the chain rules read: a read-only descriptor and the
 * values of the picked record. */
static void fake_manifest(qsf_slot_recovered *out, const qsf_slot_inspection *in) {
    if (!in->manifest_valid)
        return;
    out->manifest.fd = qsf_open_regular(out->slot.dirfd, QSF_NAME_MANIFEST, O_RDONLY, NULL);
    out->manifest.generation = in->manifest_generation;
    out->manifest.head_base = in->head_base;
    out->manifest.active_base = in->active_base;
}

static int scan(qsf_rv *v, qsf_slot_recovered *out, qsf_slot_inspection *in, qsf_errinfo *err) {
    qsf_errinfo e;
    int rc = qsf_rv_scan(v, &e);
    if (rc == QSF_E_UNSUPPORTED) {
        in->verdict = rc;
        snprintf(in->verdict_msg, sizeof in->verdict_msg, "%s", e.msg);
        return QSF_OK;
    }
    if (rc != QSF_OK)
        qsf_err_copy(err, &e);
    if (rc == QSF_OK)
        rc = look_manifest(&out->slot, in, err);
    if (rc == QSF_OK)
        rc = look_watermark(&out->slot, in, err);
    if (rc == QSF_OK) {
        fake_manifest(out, in);
        rc = run_chain(v, out, in, err);
    }
    return rc;
}

/* A group root or a directory without slot files is no slot: the verdict
 * says what it is, and nothing is scanned (*stop). */
static int check_kind(const char *path, qsf_slot_inspection *in, bool *stop, qsf_errinfo *err) {
    int rc = qsf_dir_kind(path, &in->dir_kind, &in->group_slots, err);
    *stop = rc != QSF_OK || in->dir_kind == QSF_DIR_GROUP_ROOT || in->dir_kind == QSF_DIR_NOT_SLOT;
    if (rc != QSF_OK || !*stop)
        return rc;
    in->verdict = QSF_E_INVAL;
    if (in->dir_kind == QSF_DIR_GROUP_ROOT)
        snprintf(in->verdict_msg, sizeof in->verdict_msg,
                 "%s is a group root (sf_dir) holding %u slots, not a slot: see qsf slot list %s",
                 path, in->group_slots, path);
    else
        snprintf(in->verdict_msg, sizeof in->verdict_msg,
                 "%s is not a slot: it holds no segment, side file or .lock", path);
    return QSF_OK;
}

/* The source positions an open would report: with a live chain the plan was
 * made (qsf_rv_publish follows it), and its frames are checked. */
static void look_srcpos(qsf_rv *v, const char *slot_path, qsf_slot_inspection *in) {
    qsf_errinfo e;
    int64_t published = in->live ? in->last_fsn : -1;
    in->srcpos_rc =
        qsf_slot_srcpos_view(v, in->live > 0, slot_path, published, in->acked_fsn, &in->srcpos, &e);
    if (in->srcpos_rc != QSF_OK)
        snprintf(in->srcpos_msg, sizeof in->srcpos_msg, "%s", e.msg);
}

int qsf_slot_inspect(const char *slot_path, qsf_slot_inspection *in, qsf_errinfo *err) {
    return qsf_slot_inspect_with(slot_path, in, NULL, NULL, err);
}

int qsf_slot_inspect_with(const char *slot_path, qsf_slot_inspection *in, qsf_inspect_visit_fn fn,
                          void *user, qsf_errinfo *err) {
    inspection_init(in);
    qsf_slot_recovered *out = calloc(1, sizeof *out);
    qsf_rv *v = NULL;
    if (!out || qsf_rv_open(&v, out, NULL) != QSF_OK) {
        free(out);
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to inspect %s", slot_path);
    }
    qsf_symdict_init(&out->symdict);
    out->manifest.fd = out->watermark.fd = -1;
    out->slot.sf_dirfd = out->slot.lock_fd = out->slot.logical_lock_fd = -1;
    snprintf(out->slot.path, sizeof out->slot.path, "%s", slot_path);
    out->slot.dirfd = QSF_OS->open(slot_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    int rc = out->slot.dirfd >= 0
                 ? QSF_OK
                 : qsf_err_set(err, QSF_E_IO, 0, errno, "cannot open slot directory %s: %s",
                               slot_path, strerror(errno));
    bool stop = false;
    if (rc == QSF_OK)
        rc = check_kind(slot_path, in, &stop, err);
    if (rc == QSF_OK && !stop)
        rc = scan(v, out, in, err);
    if (rc == QSF_OK && !stop)
        rc = collect_files(v, out, in, err);
    if (rc == QSF_OK && !stop) /* what the plan needs of the file system */
        qsf_slot_open_verdict(slot_path, in);
    if (rc == QSF_OK && !stop)
        look_srcpos(v, slot_path, in);
    if (rc == QSF_OK && !stop && fn)
        rc = fn(v, &out->slot, in, user, err);
    qsf_slot_release(out);
    qsf_rv_close(v);
    free(out);
    if (rc != QSF_OK)
        qsf_slot_inspection_free(in);
    return rc;
}

void qsf_slot_inspection_free(qsf_slot_inspection *in) {
    qsf_srcpos_view_free(&in->srcpos);
    free(in->files);
    in->files = NULL;
    in->nfiles = 0;
}
