/* What the Arrow import (lib/chunk/arrow_*.c) keeps in a chunk and needs of
 * it beyond the public typed calls: the per-column QuestDB types asked for
 * with qsf_chunk_arrow_type (kept across qsf_chunk_clear, freed with the
 * chunk), and a snapshot of the chunk's columns so that a record batch adds
 * all of its columns or none. */
#ifndef QSF_CHUNK_ARROW_H
#define QSF_CHUNK_ARROW_H

#include "qsf.h"

#include <stddef.h>

typedef struct qsf_arrow_types qsf_arrow_types;

/* The chunk's slot for its type table (NULL until the first
 * qsf_chunk_arrow_type). qsf_chunk_free calls qsf_arrow_types_free on it. */
qsf_arrow_types **qsf_chunk_arrow_types(qsf_chunk *c);
void qsf_arrow_types_free(qsf_arrow_types *t);

/* The QSF_TYPE_* asked for column `name`, QSF_TYPE_AUTO when none. */
int qsf_arrow_types_get(const qsf_arrow_types *t, const char *name, size_t len);

/* The chunk's columns, row count and designated timestamp as they are now
 * (NULL: out of memory). Restore forgets every column added and the
 * designated timestamp set since, and frees the mark; drop only frees it. */
typedef struct qsf_chunk_mark qsf_chunk_mark;
qsf_chunk_mark *qsf_chunk_mark_take(const qsf_chunk *c);
void qsf_chunk_mark_restore(qsf_chunk *c, qsf_chunk_mark *m);
void qsf_chunk_mark_drop(qsf_chunk_mark *m);

#endif
