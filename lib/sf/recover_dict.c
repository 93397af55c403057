/* Recovery step 11 (docs/FORMAT.md §6.9): during the one ordered pass over
 * every FSN of the chain (recover_groups.c), each intact frame's delta symbol
 * section, read with lib/qwp/peek, goes into the dictionary rebuilt from
 * .symbol-dict plus the sections. A section that starts past the known ids
 * needs entries that only lost frames or a lost end of .symbol-dict defined:
 * it adds nothing, and the walk gives the frame's flush up when it would be
 * sent (recover_groups.c), so only what cannot be replayed is lost. A section
 * that redefines a known id with another string makes the slot unreplayable
 * (fail closed, never guessed). */
#include "recover_int.h"

#include "bytes.h"
#include "err.h"
#include "log.h"
#include "qwp/types.h"
#include "qwp/utf8.h"
#include "sf/symdict.h"
#include "strlist.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growable list of strings (entries learned from frames, or one section). */

struct rc_dict {
    const qsf_symdict *file; /* .symbol-dict as opened (out->symdict) */
    uint32_t file_n;         /* entries that came from .symbol-dict */
    qsf_strlist learned;     /* entries learned from frames, ids file_n.. */
    bool mismatch;
    char why[200];
};
typedef struct rc_dict fa_ctx;

static uint32_t known(const fa_ctx *c) {
    return c->file_n + c->learned.n;
}

static const char *known_entry(const fa_ctx *c, uint32_t id, uint32_t *len) {
    if (id < c->file_n)
        return qsf_symdict_entry(c->file, id, len);
    *len = c->learned.lens[id - c->file_n];
    return c->learned.strs[id - c->file_n];
}

/* ---- reading one delta section ---- */

/* Copies len bytes at pos into a new NUL-terminated string. */
static int read_string(rc_reader *r, uint64_t pos, uint64_t len, char **out, qsf_errinfo *err) {
    char *s = malloc((size_t) len + 1);
    if (!s)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory for a %llu-byte symbol",
                           (unsigned long long) len);
    for (uint64_t done = 0; done < len;) {
        const uint8_t *p;
        size_t got;
        int rc = qsf_rc_read(r, pos + done,
                             (size_t) (len - done < QSF_RECOVER_BUF ? len - done : QSF_RECOVER_BUF),
                             &p, &got, err);
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
static int read_section(rc_reader *r, const rc_slot *slot, uint64_t *start, qsf_strlist *sec,
                        bool *bad, qsf_errinfo *err) {
    rc_delta d;
    int rc = qsf_rc_delta_open(r, slot, &d, bad, err);
    if (rc != QSF_OK || *bad)
        return rc;
    *start = d.start;
    *bad = d.start > QSF_SYMDICT_MAX_ENTRIES || d.count > QSF_SYMDICT_MAX_ENTRIES - d.start;
    while (!*bad && rc == QSF_OK && d.i < d.count) {
        uint64_t str, len;
        rc = qsf_rc_delta_next(r, &d, &str, &len, bad, err);
        if (rc != QSF_OK || *bad)
            break;
        char *s = NULL;
        rc = read_string(r, str, len, &s, err);
        if (rc != QSF_OK)
            break;
        if (!qsf_utf8_valid(s, (size_t) len) ||
            qsf_strlist_push(sec, s, (uint32_t) len) != QSF_OK) {
            *bad = true;
            free(s);
        }
    }
    return rc;
}

/* ---- applying a section (docs/FORMAT.md §6.9 rules) ---- */

/* A section past the known ids (*unknown) adds nothing: its ids cannot be
 * placed, and every later section that needs them is past the known ids too. */
static void apply_section(fa_ctx *c, int64_t fsn, uint64_t start, qsf_strlist *sec,
                          rc_unknown_syms *unknown) {
    uint32_t d = known(c);
    if (start > d) {
        *unknown = (rc_unknown_syms){.found = true, .start = start, .known = d};
        return;
    }
    for (uint32_t i = 0; i < sec->n; i++) {
        uint32_t id = (uint32_t) start + i, len = 0;
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
        if (qsf_strlist_push(&c->learned, sec->strs[i], sec->lens[i]) == QSF_OK)
            sec->strs[i] = NULL; /* ownership moved */
        else if (!c->mismatch) {
            c->mismatch = true;
            snprintf(c->why, sizeof c->why, "out of memory rebuilding the dictionary");
        }
    }
}

static int analyse_section(fa_ctx *c, rc_reader *r, const rc_slot *s, rc_unknown_syms *unknown,
                           qsf_errinfo *err) {
    qsf_strlist sec = {0};
    uint64_t start = 0;
    bool bad = false;
    int rc = read_section(r, s, &start, &sec, &bad, err);
    if (rc == QSF_OK && bad)
        QSF_LOGW("frame FSN %lld in %s/%s: malformed delta symbol section; treated as having "
                 "none (the server will judge the frame)",
                 (long long) s->fsn, r->dir, r->name);
    if (rc == QSF_OK && !bad)
        apply_section(c, s->fsn, start, &sec, unknown);
    qsf_strlist_free(&sec);
    return rc;
}

static void mark_unreplayable(const fa_ctx *c, qsf_slot_recovered *out) {
    out->data_loss = true;
    snprintf(out->data_loss_reason, sizeof out->data_loss_reason, "unreplayable: %s", c->why);
}

int qsf_rc_dict_begin(rc_state *st, qsf_errinfo *err) {
    st->plan.dict = calloc(1, sizeof *st->plan.dict);
    if (!st->plan.dict)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to rebuild the dictionary");
    st->plan.dict->file = &st->out->symdict;
    st->plan.dict->file_n = qsf_symdict_size(&st->out->symdict);
    return QSF_OK;
}

int qsf_rc_dict_frame(struct rc_dict *d, rc_reader *r, const rc_slot *s, const rc_frame_kind *k,
                      rc_unknown_syms *unknown, qsf_errinfo *err) {
    *unknown = (rc_unknown_syms){0};
    if (!d || !k->qwp || !(k->flags & QSF_QWP_FLAG_DELTA_SYMBOL_DICT))
        return QSF_OK;
    return analyse_section(d, r, s, unknown, err);
}

int qsf_rc_dict_finish(rc_state *st, qsf_errinfo *err) {
    fa_ctx *c = st->plan.dict;
    qsf_slot_recovered *out = st->out;
    int rc = QSF_OK;
    if (c->mismatch)
        mark_unreplayable(c, out);
    else if (c->learned.n > 0 && !st->dry_run) /* learned entries: one chunk in the file */
        rc = qsf_symdict_append(&out->symdict, c->file_n, c->learned.n,
                                (const char *const *) c->learned.strs, c->learned.lens, err);
    return rc;
}

uint32_t qsf_rc_dict_known(const rc_state *st) {
    return st->plan.dict ? known(st->plan.dict) : qsf_symdict_size(&st->out->symdict);
}

const char *qsf_rc_dict_entry(const rc_state *st, uint32_t id, uint32_t *len) {
    if (!st->plan.dict)
        return qsf_symdict_entry(&st->out->symdict, id, len);
    return id < known(st->plan.dict) ? known_entry(st->plan.dict, id, len) : NULL;
}

void qsf_rc_dict_free(rc_state *st) {
    if (!st->plan.dict)
        return;
    qsf_strlist_free(&st->plan.dict->learned);
    free(st->plan.dict);
    st->plan.dict = NULL;
}
