/* FIFO of wireSeq runs (see wiremap.h). */
#include "io/wiremap.h"
#include "qsf_assert.h"

#include <stdlib.h>
#include <string.h>

void qsf_wiremap_init(qsf_wiremap *m) {
    memset(m, 0, sizeof *m);
}

void qsf_wiremap_free(qsf_wiremap *m) {
    free(m->runs);
    memset(m, 0, sizeof *m);
}

void qsf_wiremap_reset(qsf_wiremap *m) {
    m->head = m->count = 0;
    m->next_wire = 0;
}

static qsf_wire_run *at(const qsf_wiremap *m, size_t i) {
    return &m->runs[(m->head + i) % m->cap];
}

static int grow(qsf_wiremap *m) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    qsf_wire_run *nr = malloc(cap * sizeof *nr);
    if (!nr)
        return -1;
    for (size_t i = 0; i < m->count; i++)
        nr[i] = *at(m, i);
    free(m->runs);
    m->runs = nr;
    m->cap = cap;
    m->head = 0;
    return 0;
}

int64_t qsf_wiremap_push(qsf_wiremap *m, int64_t fsn) {
    if (m->count) {
        qsf_wire_run *last = at(m, m->count - 1);
        bool extends = fsn < 0 ? last->first_fsn < 0
                               : last->first_fsn >= 0 && last->first_fsn + last->n == fsn;
        if (extends && last->first_wire + last->n == m->next_wire) {
            last->n++;
            return m->next_wire++;
        }
    }
    if (m->count == m->cap && grow(m) < 0)
        return -1;
    *at(m, m->count++) = (qsf_wire_run){m->next_wire, fsn < 0 ? -1 : fsn, 1};
    return m->next_wire++;
}

int qsf_wiremap_cover(qsf_wiremap *m, int64_t fsn) {
    qsf_wire_run *last = m->count ? at(m, m->count - 1) : NULL;
    if (!last || last->first_fsn < 0 || last->first_wire + last->n != m->next_wire)
        return -1;
    qsf_assert(fsn > last->first_fsn + last->n - 1); /* it stands for a later FSN */
    if (last->n == 1) {
        last->first_fsn = fsn;
        return 0;
    }
    if (m->count == m->cap && grow(m) < 0)
        return -1;
    last = at(m, m->count - 1); /* grow moved it */
    last->n--;
    *at(m, m->count++) = (qsf_wire_run){m->next_wire - 1, fsn, 1};
    return 0;
}

int64_t qsf_wiremap_lookup(const qsf_wiremap *m, int64_t wire) {
    for (size_t i = 0; i < m->count; i++) {
        const qsf_wire_run *r = at(m, i);
        if (wire >= r->first_wire && wire < r->first_wire + r->n)
            return r->first_fsn < 0 ? -1 : r->first_fsn + (wire - r->first_wire);
    }
    return -2;
}

int64_t qsf_wiremap_ack(qsf_wiremap *m, int64_t wire) {
    int64_t fsn = -1;
    while (m->count) {
        qsf_wire_run *r = at(m, 0);
        if (wire < r->first_wire)
            break;
        int64_t covered = wire - r->first_wire + 1; /* frames of this run covered */
        if (covered >= r->n) {
            if (r->first_fsn >= 0)
                fsn = r->first_fsn + r->n - 1;
            m->head = (m->head + 1) % m->cap;
            m->count--;
            continue;
        }
        if (r->first_fsn >= 0) {
            fsn = r->first_fsn + covered - 1;
            r->first_fsn += covered;
        }
        r->first_wire += covered;
        r->n -= covered;
        break;
    }
    return fsn;
}
