/* The Arrow import's hold on the chunk object (lib/chunk/chunk_arrow.h): the
 * slot of the per-column type table, and the mark that lets a record batch
 * add all of its columns or none. */
#include "chunk/chunk_arrow.h"
#include "chunk/chunk_int.h"

#include <stdlib.h>

qsf_arrow_types **qsf_chunk_arrow_types(qsf_chunk *c) {
    return &c->arrow_types;
}

/* The chunk's header as it was; the column array itself only grows (columns
 * are appended), so restoring the count forgets the columns added since. */
struct qsf_chunk_mark {
    struct qsf_chunk saved;
};

qsf_chunk_mark *qsf_chunk_mark_take(const qsf_chunk *c) {
    qsf_chunk_mark *m = malloc(sizeof *m);
    if (m != NULL)
        m->saved = *c;
    return m;
}

void qsf_chunk_mark_restore(qsf_chunk *c, qsf_chunk_mark *m) {
    qsf_chunk_col *cols = c->cols;
    uint32_t cap = c->cols_cap;
    *c = m->saved;
    c->cols = cols;
    c->cols_cap = cap;
    free(m);
}

void qsf_chunk_mark_drop(qsf_chunk_mark *m) {
    free(m);
}
