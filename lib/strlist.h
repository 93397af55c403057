/* A growable list of strings it owns (each malloc'd), with their lengths in
 * bytes: two arrays of one capacity.
 *
 *   strs  [ s0 | s1 | ... | s(n-1) | unused ... ]   cap entries
 *   lens  [ l0 | l1 | ... | l(n-1) | unused ... ]
 *
 * Used where symbol-dictionary entries are collected one by one: recovery's
 * rebuild from frames, the CLI's row decoder. */
#ifndef QSF_STRLIST_H
#define QSF_STRLIST_H

#include "grow.h"
#include "qsf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct qsf_strlist {
    char **strs;
    uint32_t *lens;
    uint32_t n, cap;
} qsf_strlist;

/* Frees every string and both arrays; the list is empty again. */
static inline void qsf_strlist_free(qsf_strlist *l) {
    for (uint32_t i = 0; i < l->n; i++)
        free(l->strs[i]);
    free(l->strs);
    free(l->lens);
    memset(l, 0, sizeof *l);
}

/* Appends s (the list owns it from then on) of len bytes. QSF_E_NOMEM leaves
 * the list as it was and s the caller's. */
static inline int qsf_strlist_push(qsf_strlist *l, char *s, uint32_t len) {
    if (l->n == l->cap) { /* the capacity moves once both arrays grew */
        uint32_t cap = l->cap, cap_lens = l->cap;
        char **ns = qsf_grow(l->strs, &cap, 16);
        if (ns)
            l->strs = ns;
        uint32_t *nl = ns ? qsf_grow(l->lens, &cap_lens, 16) : NULL;
        if (!nl)
            return QSF_E_NOMEM;
        l->lens = nl;
        l->cap = cap;
    }
    l->strs[l->n] = s;
    l->lens[l->n++] = len;
    return QSF_OK;
}

#endif
