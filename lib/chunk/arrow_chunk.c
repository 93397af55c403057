/* The Arrow import's hold on the chunk object (lib/chunk/chunk_arrow.h): the
 * slot of its per-chunk state, and the mark that lets a record batch
 * add all of its columns or none. */
#include "chunk/chunk_arrow.h"
#include "chunk/chunk_int.h"

#include <stdlib.h>
#include <string.h>

qsf_arrow_state **qsf_chunk_arrow_state(qsf_chunk *c) {
    return &c->arrow;
}

/* What a record batch can change in the chunk: the columns appended (the
 * column array only grows, so restoring the count forgets them), the row count
 * and what fixed it, and the designated timestamp. */
struct qsf_chunk_mark {
    uint32_t ncols;
    size_t rows;
    bool counted;
    char counter[sizeof((qsf_chunk *) 0)->counter];
    bool has_ts, ts_nanos;
    const int64_t *ts;
    size_t ts_off;
    int64_t ts_mult;
};

qsf_chunk_mark *qsf_chunk_mark_take(const qsf_chunk *c) {
    qsf_chunk_mark *m = malloc(sizeof *m);
    if (m == NULL)
        return NULL;
    *m = (qsf_chunk_mark){c->ncols,    c->rows, c->counted, {0},       c->has_ts,
                          c->ts_nanos, c->ts,   c->ts_off,  c->ts_mult};
    memcpy(m->counter, c->counter, sizeof m->counter);
    return m;
}

void qsf_chunk_mark_restore(qsf_chunk *c, qsf_chunk_mark *m) {
    c->ncols = m->ncols;
    c->rows = m->rows;
    c->counted = m->counted;
    memcpy(c->counter, m->counter, sizeof m->counter);
    c->has_ts = m->has_ts;
    c->ts_nanos = m->ts_nanos;
    c->ts = m->ts;
    c->ts_off = m->ts_off;
    c->ts_mult = m->ts_mult;
    free(m);
}

void qsf_chunk_mark_drop(qsf_chunk_mark *m) {
    free(m);
}
