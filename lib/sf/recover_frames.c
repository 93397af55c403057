/* Recovery step 11 (sf-format.md §8.11): one ordered pass over every recovered
 * frame, with pread, reading the 12-byte QWP header and the delta symbol
 * section. It finds the commit boundary (the last frame without
 * FLAG_DEFER_COMMIT) and rebuilds the dictionary from .symbol-dict plus the
 * sections; a mismatch, or a replayed frame that needs ids nobody can supply,
 * makes the slot unreplayable (fail closed, never guessed).
 *
 *   QWP header: [QWP1][ver u8][flags u8][tables u16][payload_len u32]
 *   delta section (flags & 0x08): start varint, count varint,
 *                                 count x (len varint, UTF-8 bytes)
 */
#include "recover_int.h"

#include "bytes.h"
#include "err.h"
#include "log.h"
#include "qwp/utf8.h"
#include "sf/symdict.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QWP_HEADER          12
#define QWP_FLAG_DEFER      0x01
#define QWP_FLAG_DELTA_DICT 0x08

/* A growable list of strings (entries learned from frames, or one section). */
typedef struct strlist {
    char **strs;
    uint32_t *lens;
    uint32_t n, cap;
} strlist;

typedef struct fa_ctx {
    rc_state *st;
    rc_reader r;
    uint32_t file_n; /* entries that came from .symbol-dict */
    strlist learned; /* entries learned from frames, ids file_n.. */
    int64_t commit;  /* last committing FSN, or INT64_MIN */
    int64_t gap_fsn; /* lowest replayable-if-committed FSN that needs missing ids */
    int64_t gap_start;
    uint32_t gap_have;
    bool mismatch;
    char why[200];
} fa_ctx;

static void strlist_free(strlist *l) {
    for (uint32_t i = 0; i < l->n; i++)
        free(l->strs[i]);
    free(l->strs);
    free(l->lens);
    memset(l, 0, sizeof *l);
}

static int strlist_push(strlist *l, char *s, uint32_t len) {
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        char **ns = realloc(l->strs, cap * sizeof *ns);
        if (ns)
            l->strs = ns;
        uint32_t *nl = ns ? realloc(l->lens, cap * sizeof *nl) : NULL;
        if (!nl)
            return QSF_E_NOMEM;
        l->lens = nl;
        l->cap = cap;
    }
    l->strs[l->n] = s;
    l->lens[l->n++] = len;
    return QSF_OK;
}

static uint32_t known(const fa_ctx *c) {
    return c->file_n + c->learned.n;
}

static const char *known_entry(const fa_ctx *c, uint32_t id, uint32_t *len) {
    if (id < c->file_n)
        return qsf_symdict_entry(&c->st->out->symdict, id, len);
    *len = c->learned.lens[id - c->file_n];
    return c->learned.strs[id - c->file_n];
}

/* ---- reading one delta section ---- */

/* Reads a varint at *pos, bounded by end. 0 or -1 (truncated / malformed). */
static int read_varint(fa_ctx *c, uint64_t *pos, uint64_t end, uint64_t *v, qsf_errinfo *err,
                       int *rc) {
    const uint8_t *p;
    size_t got;
    uint64_t want = end - *pos < QSF_VARINT_MAX ? end - *pos : QSF_VARINT_MAX;
    *rc = rc_read(&c->r, *pos, (size_t) want, &p, &got, err);
    if (*rc != QSF_OK)
        return -1;
    size_t n = qsf_get_varint(p, p + got, v);
    if (n == 0)
        return -1;
    *pos += n;
    return 0;
}

/* Copies len bytes at pos into a new NUL-terminated string. */
static int read_string(fa_ctx *c, uint64_t pos, uint64_t len, char **out, qsf_errinfo *err) {
    char *s = malloc((size_t) len + 1);
    if (!s)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a %llu-byte symbol",
                           (unsigned long long) len);
    for (uint64_t done = 0; done < len;) {
        const uint8_t *p;
        size_t got;
        int rc = rc_read(&c->r, pos + done,
                         (size_t) (len - done < QSF_RECOVER_BUF ? len - done : QSF_RECOVER_BUF), &p,
                         &got, err);
        if (rc != QSF_OK || got == 0) {
            free(s);
            return rc != QSF_OK ? rc : qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "short symbol");
        }
        memcpy(s + done, p, got);
        done += got;
    }
    s[len] = '\0';
    *out = s;
    return QSF_OK;
}

/* Parses the whole section into *sec (validated before anything is applied,
 * like the server, which leaves its dictionary unchanged on a bad frame).
 * Returns QSF_OK with *bad set when the section is malformed. */
static int read_section(fa_ctx *c, uint64_t pos, uint64_t end, uint64_t *start, strlist *sec,
                        bool *bad, qsf_errinfo *err) {
    uint64_t count, len;
    int rc = QSF_OK;
    *bad = read_varint(c, &pos, end, start, err, &rc) != 0 ||
           read_varint(c, &pos, end, &count, err, &rc) != 0 || count > end - pos ||
           *start > QSF_SYMDICT_MAX_ENTRIES || count > QSF_SYMDICT_MAX_ENTRIES - *start;
    for (uint64_t i = 0; !*bad && rc == QSF_OK && i < count; i++) {
        if (read_varint(c, &pos, end, &len, err, &rc) != 0 || len > end - pos) {
            *bad = true;
            break;
        }
        char *s = NULL;
        rc = read_string(c, pos, len, &s, err);
        if (rc != QSF_OK)
            break;
        if (!qsf_utf8_valid(s, (size_t) len) || strlist_push(sec, s, (uint32_t) len) != QSF_OK) {
            *bad = true;
            free(s);
        }
        pos += len;
    }
    return rc;
}

/* ---- applying a section (§8.11 rules) ---- */

static void apply_section(fa_ctx *c, int64_t fsn, uint64_t start, strlist *sec) {
    uint32_t d = known(c);
    if (start > d) {
        /* Needs ids nobody can supply; fatal only if the frame will be replayed. */
        if (fsn > c->st->out->acked_fsn && fsn < c->gap_fsn) {
            c->gap_fsn = fsn;
            c->gap_start = (int64_t) start;
            c->gap_have = d;
        }
        return;
    }
    for (uint32_t i = 0; i < sec->n; i++) {
        uint32_t id = (uint32_t) start + i, len;
        if (id < known(c)) {
            const char *k = known_entry(c, id, &len);
            if (!c->mismatch && (len != sec->lens[i] || memcmp(k, sec->strs[i], len) != 0)) {
                c->mismatch = true;
                snprintf(c->why, sizeof c->why,
                         "frame FSN %lld redefines symbol id %u with a different string",
                         (long long) fsn, id);
            }
            continue;
        }
        if (strlist_push(&c->learned, sec->strs[i], sec->lens[i]) == QSF_OK)
            sec->strs[i] = NULL; /* ownership moved */
        else if (!c->mismatch) {
            c->mismatch = true;
            snprintf(c->why, sizeof c->why, "out of memory rebuilding the dictionary");
        }
    }
}

static int analyse_section(fa_ctx *c, int64_t fsn, uint64_t pos, uint64_t end, qsf_errinfo *err) {
    strlist sec = {0};
    uint64_t start = 0;
    bool bad = false;
    int rc = read_section(c, pos, end, &start, &sec, &bad, err);
    if (rc == QSF_OK && bad)
        QSF_LOGW("frame FSN %lld in %s/%s: malformed delta symbol section; treated as having "
                 "none (the server will judge the frame)",
                 (long long) fsn, c->r.dir, c->r.name);
    if (rc == QSF_OK && !bad)
        apply_section(c, fsn, start, &sec);
    strlist_free(&sec);
    return rc;
}

/* One frame: payload at [pos, pos + len). */
static int analyse_frame(fa_ctx *c, int64_t fsn, uint64_t pos, uint32_t len, qsf_errinfo *err) {
    const uint8_t *p;
    size_t got = 0;
    int rc = len >= QWP_HEADER ? rc_read(&c->r, pos, QWP_HEADER, &p, &got, err) : QSF_OK;
    if (rc != QSF_OK)
        return rc;
    if (got < QWP_HEADER || qsf_get_u32(p) != QSF_QWP_MAGIC) {
        QSF_LOGI("frame FSN %lld in %s/%s is not a QWP message; treated as an opaque committing "
                 "frame",
                 (long long) fsn, c->r.dir, c->r.name);
        c->commit = fsn;
        return QSF_OK;
    }
    uint8_t flags = p[5];
    if (!(flags & QWP_FLAG_DEFER))
        c->commit = fsn;
    if (flags & QWP_FLAG_DELTA_DICT)
        return analyse_section(c, fsn, pos + QWP_HEADER, pos + len, err);
    return QSF_OK;
}

static int analyse_segment(fa_ctx *c, const qsf_seg_info *si, qsf_errinfo *err) {
    int rc = rc_reader_open(&c->r, &c->st->out->slot, si->name, c->st->buf, O_RDONLY, err);
    uint64_t off = QSF_SFA_HEADER_SIZE;
    for (uint64_t k = 0; rc == QSF_OK && k < si->frame_count; k++) {
        const uint8_t *p;
        size_t got;
        rc = rc_read(&c->r, off, QSF_SFA_FRAME_OVERHEAD, &p, &got, err);
        if (rc != QSF_OK)
            break;
        uint32_t len = qsf_get_u32(p + 4);
        if (got < QSF_SFA_FRAME_OVERHEAD || off + QSF_SFA_FRAME_OVERHEAD + len > si->last_good) {
            rc = qsf_err_set(err, QSF_E_IO, 0, 0, "segment %s/%s changed during recovery", c->r.dir,
                             si->name);
            break;
        }
        rc = analyse_frame(c, si->base_seq + (int64_t) k, off + QSF_SFA_FRAME_OVERHEAD, len, err);
        off += QSF_SFA_FRAME_OVERHEAD + len;
    }
    rc_reader_close(&c->r);
    return rc;
}

/* With no committing frame in the chain, everything recovered is an aborted
 * tail: the boundary sits just below the first recovered FSN. */
static int64_t boundary(const fa_ctx *c) {
    const qsf_slot_recovered *out = c->st->out;
    if (c->commit != INT64_MIN)
        return c->commit;
    return out->segment_count ? out->segments[0].base_seq - 1 : -1;
}

static void mark_unreplayable(fa_ctx *c) {
    qsf_slot_recovered *out = c->st->out;
    out->data_loss = true;
    if (c->mismatch)
        snprintf(out->data_loss_reason, sizeof out->data_loss_reason, "unreplayable: %s", c->why);
    else
        snprintf(out->data_loss_reason, sizeof out->data_loss_reason,
                 "unreplayable: frame FSN %lld needs symbol ids from %lld but only %u are known",
                 (long long) c->gap_fsn, (long long) c->gap_start, c->gap_have);
}

int rc_analyse_frames(rc_state *st, qsf_errinfo *err) {
    qsf_slot_recovered *out = st->out;
    fa_ctx c = {.st = st, .commit = INT64_MIN, .gap_fsn = INT64_MAX};
    c.file_n = qsf_symdict_size(&out->symdict);
    int rc = QSF_OK;
    for (uint32_t i = 0; rc == QSF_OK && i < out->segment_count; i++)
        if (out->segments[i].frame_count > 0)
            rc = analyse_segment(&c, &out->segments[i], err);
    if (rc == QSF_OK) {
        out->commit_boundary_fsn = boundary(&c);
        if (c.mismatch || c.gap_fsn <= out->commit_boundary_fsn)
            mark_unreplayable(&c);
        else if (c.learned.n > 0 && !st->dry_run) /* learned entries: one chunk in the file */
            rc = qsf_symdict_append(&out->symdict, c.file_n, c.learned.n,
                                    (const char *const *) c.learned.strs, c.learned.lens, err);
    }
    strlist_free(&c.learned);
    return rc;
}
